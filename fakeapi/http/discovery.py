"""Discovery documents: ``/version``, ``/api``, ``/apis``, ``/apis/{group}`` and the resource lists.

Built from the server's :class:`~fakeapi.registry.kinds.KindRegistry` on every request,
so kinds served by a CustomResourceDefinition appear as soon as it is created
and disappear when it is deleted. The shapes are those of kube-apiserver
(``metav1.APIVersions``, ``APIGroupList``, ``APIGroup``, ``APIResourceList``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from fakeapi.registry.kinds import Kind, KindRegistry
from fakeapi.registry.verbs import serves_deletecollection  # (issue 24: namespaces have none)

#: The verbs of a resource served with every REST verb (what kube-apiserver lists for CRs).
RESOURCE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
#: The verbs of a ``status`` subresource.
STATUS_VERBS = ["get", "patch", "update"]

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of kube-aware version ordering (``v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > foo``).

    Same order as ``k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings``:
    GA before beta before alpha, higher major (then minor) first, anything else
    last in lexical order.
    """
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    rank = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (rank, -int(m.group(1)), -int(m.group(3) or 0), "")


@lru_cache(maxsize=1)
def kubernetes_version() -> tuple[int, int, int]:
    """The Kubernetes version whose built-in schemas the server uses (what ``/version`` reports)."""
    try:
        from fakeapi.machinery.openapi import schema_dir

        m = re.match(r"^v(\d+)\.(\d+)\.(\d+)", schema_dir().name)
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
    except Exception:  # kubernetes-validate missing or unreadable: a plausible default
        pass
    return (1, 34, 0)


def version_info() -> dict[str, Any]:
    """``/version``: a ``version.Info`` (gitVersion carries ``+fakeapi`` as build metadata)."""
    major, minor, patch = kubernetes_version()
    return {
        "major": str(major),
        "minor": str(minor),
        "gitVersion": f"v{major}.{minor}.{patch}+fakeapi",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the legacy core group's versions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_versions(kinds: list[Kind]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for k in kinds:
        if not k.group:
            continue
        versions = groups.setdefault(k.group, [])
        if k.version not in versions:
            versions.append(k.version)
    for versions in groups.values():
        versions.sort(key=version_priority)
    return groups


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: KindRegistry) -> dict[str, Any]:
    """``/apis``: every named group with its versions, the preferred (highest priority) first."""
    groups = _group_versions(registry.all())
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(g, vs) for g, vs in groups.items()],
    }


def api_group(registry: KindRegistry, group: str) -> dict[str, Any] | None:
    """``/apis/{group}``, or None when the group is not served."""
    versions = _group_versions(registry.all()).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(group, versions)}


def _resource(kind: Kind, name: str, verbs: list[str], *, singular: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "singularName": singular,
        "namespaced": kind.namespaced,
        "kind": kind.kind,
        "verbs": list(verbs),
    }
    return out


def api_resource_list(registry: KindRegistry, group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/{group}/{version}``: an ``APIResourceList``, or None when not served.

    Each kind is listed with its verbs, scope, kind, singular and short names
    (and categories when a CRD gave some), followed by its subresources
    (``pods/status``, ``namespaces/finalize``) with their own verbs.
    """
    kinds = [k for k in registry.all() if k.group == group and k.version == version]
    if not kinds and group:
        return None
    resources: list[dict[str, Any]] = []
    for k in sorted(kinds, key=lambda k: k.plural):
        verbs = RESOURCE_VERBS if serves_deletecollection(k) else [v for v in RESOURCE_VERBS if v != "deletecollection"]
        main = _resource(k, k.plural, verbs, singular=k.singular)
        if k.short_names:
            main["shortNames"] = list(k.short_names)
        categories = k.extra.get("categories")
        if categories:
            main["categories"] = list(categories)
        resources.append(main)
        if k.builtin and k.kind == "Namespace" and not k.group:
            resources.append(_resource(k, f"{k.plural}/finalize", ["update"], singular=""))
        if k.status_subresource:
            resources.append(_resource(k, f"{k.plural}/status", STATUS_VERBS, singular=""))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
