"""A minimal ``/openapi/v3``: enough for kubectl to find out that the server validates fields itself.

kubectl (``create -f``, ``apply -f``, ``replace -f`` with the default
``--validate=strict``) downloads ``/openapi/v3`` and looks, in the document of
the object's group/version, for the PATCH operation of its kind (by the
``x-kubernetes-group-version-kind`` extension) and a ``fieldValidation`` query
parameter on it; when it is there, it sends ``fieldValidation=Strict`` and
lets the server validate. Without the document it refuses to send anything
("failed to download openapi").

So each group/version document lists, per served kind, the object path with
its PATCH (and PUT, GET, DELETE) operation, those query parameters and the
patch media types. Schemas (``components``) are not served: ``kubectl
explain`` and client-side schema validation are not supported.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fakeapi.http.discovery import kubernetes_version
from fakeapi.registry.kinds import Kind, KindRegistry

_QUERY = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _params() -> list[dict[str, Any]]:
    return [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}} for n in _QUERY]


def _operation(kind: Kind, verb: str, media: list[str] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": f"{verb}{kind.kind}",
        "parameters": _params(),
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
    }
    if media:
        op["requestBody"] = {"content": {m: {"schema": {"type": "object"}} for m in media}, "required": True}
    return op


def group_version_document(registry: KindRegistry, group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group/version (paths only), or None when it is not served."""
    kinds = [k for k in registry.all() if k.group == group and k.version == version]
    if not kinds:
        return None
    base = "/" + _gv_path(group, version)
    paths: dict[str, Any] = {}
    for k in sorted(kinds, key=lambda k: k.plural):
        scope = "/namespaces/{namespace}" if k.namespaced else ""
        # no strategic merge here: kubectl then computes its patches without needing schemas
        patch_media = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
        paths[f"{base}{scope}/{k.plural}"] = {
            "get": _operation(k, "list"),
            "post": _operation(k, "post", ["application/json", "application/yaml"]),
        }
        paths[f"{base}{scope}/{k.plural}/{{name}}"] = {
            "get": _operation(k, "get"),
            "put": _operation(k, "put", ["application/json", "application/yaml"]),
            "patch": _operation(k, "patch", patch_media),
            "delete": _operation(k, "delete"),
        }
    major, minor, patch = kubernetes_version()
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": f"v{major}.{minor}.{patch}+fakeapi"},
            "paths": paths}


def _hash(doc: dict[str, Any]) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()


def index(registry: KindRegistry) -> dict[str, Any]:
    """``/openapi/v3``: each served group/version and the URL of its document (with a content hash)."""
    gvs = sorted({(k.group, k.version) for k in registry.all()})
    paths: dict[str, Any] = {}
    for group, version in gvs:
        doc = group_version_document(registry, group, version)
        if doc is not None:
            rel = _gv_path(group, version)
            paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={_hash(doc)}"}
    return {"paths": paths}
