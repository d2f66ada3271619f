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
patch media types, and ``components.schemas`` holds the schemas of its kinds
and every definition they reach (:mod:`fakeapi.http.openapi_schemas`), so
``kubectl explain`` works, custom kinds included. ``/openapi/v2`` is the
Swagger 2.0 document of every kind, as JSON (a client asking only for the
protobuf form is answered 406, as a server without it would).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fakeapi.http.discovery import kubernetes_version
from fakeapi.http.openapi_schemas import schemas_for
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


def group_version_document(registry: KindRegistry, group: str, version: str, *,
                           schemas: bool = True) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group/version, or None when it is not served."""
    kinds = [k for k in registry.all() if k.group == group and k.version == version]
    if not kinds:
        return None
    doc = _paths_document(kinds, group, version)
    if schemas:
        doc["components"] = {"schemas": schemas_for(kinds, "#/components/schemas/")}
    return doc


def v2_document(registry: KindRegistry) -> dict[str, Any]:
    """``/openapi/v2``: every served path and the definitions of every kind (Swagger 2.0)."""
    kinds = registry.all()
    paths: dict[str, Any] = {}
    for gv in sorted({(k.group, k.version) for k in kinds}):
        paths.update(_paths_document([k for k in kinds if (k.group, k.version) == gv], *gv)["paths"])
    major, minor, patch = kubernetes_version()
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": f"v{major}.{minor}.{patch}+fakeapi"},
            "paths": paths, "definitions": schemas_for(kinds, "#/definitions/")}


def _paths_document(kinds: list[Kind], group: str, version: str) -> dict[str, Any]:
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


def _hash(doc: dict[str, Any], kinds: list[Kind]) -> str:
    """The document's hash: its paths and the schemas of its custom kinds (built-in schemas never change)."""
    h = hashlib.sha512(json.dumps(doc, sort_keys=True).encode())
    for k in kinds:
        if not k.builtin:
            h.update(json.dumps(k.schema, sort_keys=True).encode())
    return h.hexdigest().upper()


def index(registry: KindRegistry) -> dict[str, Any]:
    """``/openapi/v3``: each served group/version and the URL of its document (with a content hash)."""
    gvs = sorted({(k.group, k.version) for k in registry.all()})
    paths: dict[str, Any] = {}
    for group, version in gvs:
        doc = group_version_document(registry, group, version, schemas=False)
        if doc is not None:
            rel = _gv_path(group, version)
            kinds = [k for k in registry.all() if k.group == group and k.version == version]
            paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={_hash(doc, kinds)}"}
    return {"paths": paths}
