"""AllowUnconditionalUpdate: a PUT without ``metadata.resourceVersion`` is applied to the stored
version for the kinds whose upstream strategy allows it, and is a 422 for the others.

Upstream: the store's ``Update`` (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go)
asks the update strategy; when it says no and the body has no resourceVersion, it answers
``NewInvalid(GroupKind{Group: <group>, Kind: <resource>}, name, metadata.resourceVersion: Invalid
value: 0: must be specified for an update)``. The status subresource's store asks the status
strategy, which for every kind served here answers as the main one does. The table below holds every
served kind, so a kind added without a decision fails :func:`test_the_table_covers_every_served_kind`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.builtin import STRATEGIES

NS = "default"
_TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "a"}},
                             "spec": {"containers": [{"name": "a", "image": "x:1"}]}}
_SELECTOR: dict[str, Any] = {"matchLabels": {"app": "a"}}
_JOB_POD: dict[str, Any] = {"spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "x:1"}]}}
_RBAC = "rbac.authorization.k8s.io/v1"

#: kind -> (apiVersion, namespaced, a valid body's fields, upstream AllowUnconditionalUpdate)
TABLE: dict[str, tuple[str, bool, dict[str, Any], bool]] = {
    # pkg/registry/core/*/strategy.go
    "Namespace": ("v1", False, {}, True),
    "Pod": ("v1", True, {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}, True),
    "Secret": ("v1", True, {"data": {"k": "dg=="}}, True),
    "ConfigMap": ("v1", True, {"data": {"k": "v"}}, True),
    "PersistentVolumeClaim": ("v1", True, {"spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}, True),
    "Service": ("v1", True, {"spec": {"ports": [{"port": 80}]}}, True),
    "ServiceAccount": ("v1", True, {}, True),
    "Event": ("v1", True, {"involvedObject": {"kind": "Pod", "name": "p", "namespace": NS}}, True),
    "ReplicationController": ("v1", True, {"spec": {"selector": {"app": "a"}, "template": _TEMPLATE}}, True),
    "Node": ("v1", False, {}, True),
    # pkg/registry/rbac/*/strategy.go
    "Role": (_RBAC, True, {"rules": []}, True),
    "RoleBinding": (_RBAC, True, {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                              "name": "r"}}, True),
    "ClusterRole": (_RBAC, False, {"rules": []}, True),
    "ClusterRoleBinding": (_RBAC, False, {"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                      "kind": "ClusterRole", "name": "r"}}, True),
    # pkg/registry/coordination/lease/strategy.go
    "Lease": ("coordination.k8s.io/v1", True, {"spec": {"holderIdentity": "a"}}, False),
    # pkg/registry/apps/*/strategy.go
    "Deployment": ("apps/v1", True, {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}}, True),
    "ReplicaSet": ("apps/v1", True, {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}}, True),
    "StatefulSet": ("apps/v1", True, {"spec": {"serviceName": "s", "selector": _SELECTOR,
                                               "template": _TEMPLATE}}, True),
    "DaemonSet": ("apps/v1", True, {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}}, True),
    # pkg/registry/batch/*/strategy.go
    "Job": ("batch/v1", True, {"spec": {"template": _JOB_POD}}, True),
    "CronJob": ("batch/v1", True, {"spec": {"schedule": "0 3 * * *",
                                            "jobTemplate": {"spec": {"template": _JOB_POD}}}}, True),
    # pkg/registry/networking/*/strategy.go
    "Ingress": ("networking.k8s.io/v1", True, {"spec": {"defaultBackend": {"service": {
        "name": "a", "port": {"number": 80}}}}}, True),
    "NetworkPolicy": ("networking.k8s.io/v1", True, {"spec": {"podSelector": {}}}, True),
    # pkg/registry/policy/poddisruptionbudget/strategy.go
    "PodDisruptionBudget": ("policy/v1", True, {"spec": {"minAvailable": 1, "selector": _SELECTOR}}, False),
    # pkg/registry/certificates/certificates/strategy.go
    "CertificateSigningRequest": ("certificates.k8s.io/v1", False, {"spec": {
        "request": "aGVsbG8=", "signerName": "kubernetes.io/kube-apiserver-client",
        "usages": ["client auth"]}}, True),
    # pkg/registry/storage/csistoragecapacity/strategy.go
    "CSIStorageCapacity": ("storage.k8s.io/v1", True, {"storageClassName": "standard"}, False),
    # staging/src/k8s.io/kube-aggregator/pkg/registry/apiservice/strategy.go
    "APIService": ("apiregistration.k8s.io/v1", False, {"spec": {
        "group": "example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}}, False),
    # staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go
    "CustomResourceDefinition": ("apiextensions.k8s.io/v1", False, {"spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"kind": "Gadget", "plural": "gadgets"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}, False),
    # staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go (and
    # status_strategy.go, which embeds it): every custom resource
    "Widget": ("example.com/v1", True, {"spec": {"size": 1}}, False),
}

_NAMES = {"APIService": "v1.example.com", "CustomResourceDefinition": "gadgets.example.com"}

_WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def _stored(kind: str) -> tuple[APIServer, dict[str, Any]]:
    """A server holding one object of ``kind`` (as read back, resourceVersion and all)."""
    api_version, namespaced, fields, _ = TABLE[kind]
    api = APIServer()
    if kind == "Widget":
        api.create(_WIDGETS)
    name = _NAMES.get(kind, "x")
    meta: dict[str, Any] = {"name": name, "namespace": NS} if namespaced else {"name": name}
    api.create({"apiVersion": api_version, "kind": kind, "metadata": meta, **copy.deepcopy(fields)})
    return api, api.get(kind, name, NS if namespaced else None, api_version=api_version)


def _expect_422(api: APIServer, body: dict[str, Any], resource: str, group: str, **kw: Any) -> None:
    """The store's answer to an update without a resourceVersion the strategy does not allow."""
    name = body["metadata"]["name"]
    with pytest.raises(ApiError) as info:
        api.update(body, **kw)
    status = info.value.status
    qualified = f"{resource}.{group}" if group else resource
    assert info.value.code == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == (f'{qualified} "{name}" is invalid: metadata.resourceVersion: Invalid value: 0: '
                                 "must be specified for an update")
    details = {"name": name, "kind": resource, "causes": [{
        "reason": "FieldValueInvalid", "message": "Invalid value: 0: must be specified for an update",
        "field": "metadata.resourceVersion"}]}
    if group:
        details["group"] = group
    assert status["details"] == details


def test_the_table_covers_every_served_kind() -> None:
    """Every built-in kind has an upstream decision here (and custom resources, as Widget)."""
    assert set(TABLE) == {s.spec.kind for s in STRATEGIES} | {"Widget"}


@pytest.mark.parametrize("kind", sorted(TABLE))
def test_put_without_resource_version(kind: str) -> None:
    """Accepted on the stored version (a new resourceVersion) or the store's 422, as upstream."""
    api, stored = _stored(kind)
    allowed = TABLE[kind][3]
    body = copy.deepcopy(stored)
    del body["metadata"]["resourceVersion"]
    body["metadata"].setdefault("labels", {})["changed"] = "yes"
    k = api.kinds.find(kind, TABLE[kind][0])
    assert k is not None
    if not allowed:
        _expect_422(api, body, k.plural, k.group)
        assert api.get(kind, stored["metadata"]["name"], stored["metadata"].get("namespace"),
                       api_version=TABLE[kind][0]) == stored  # nothing written
        return
    out = api.update(body)
    assert out["metadata"]["labels"]["changed"] == "yes"
    assert int(out["metadata"]["resourceVersion"]) > int(stored["metadata"]["resourceVersion"])


#: the kinds served with the status subresource (the Widget CRD declares it)
_WITH_STATUS = sorted([s.spec.kind for s in STRATEGIES if s.spec.status] + ["Widget"])


@pytest.mark.parametrize("kind", _WITH_STATUS)
def test_status_put_without_resource_version(kind: str) -> None:
    """The status strategy decides as the main one for every kind with the status subresource."""
    api, stored = _stored(kind)
    k = api.kinds.find(kind, TABLE[kind][0])
    assert k is not None and k.status_subresource
    body = copy.deepcopy(stored)
    del body["metadata"]["resourceVersion"]
    if not TABLE[kind][3]:
        _expect_422(api, body, k.plural, k.group, subresource="status")
        return
    out = api.update(body, subresource="status")
    assert int(out["metadata"]["resourceVersion"]) >= int(stored["metadata"]["resourceVersion"])


def test_an_empty_resource_version_counts_as_none() -> None:
    """``resourceVersion: ""`` is the zero version: a Lease without one is refused as without the field."""
    api, stored = _stored("Lease")
    body = copy.deepcopy(stored)
    body["metadata"]["resourceVersion"] = ""
    _expect_422(api, body, "leases", "coordination.k8s.io")


def test_a_patch_of_a_lease_needs_no_resource_version() -> None:
    """A patch applies to the stored object, whose resourceVersion it carries: no 422 for a Lease."""
    api, stored = _stored("Lease")
    out = api.patch("Lease", "x", {"spec": {"holderIdentity": "b"}}, namespace=NS)
    assert out["spec"]["holderIdentity"] == "b"
    assert int(out["metadata"]["resourceVersion"]) > int(stored["metadata"]["resourceVersion"])


@pytest.mark.parametrize(("kind", "allowed"), [("Lease", False), ("ConfigMap", True)])
def test_a_patch_that_clears_the_resource_version_meets_the_same_rule(kind: str, allowed: bool) -> None:
    """The store checks the patched object's resourceVersion as a PUT's: a merge patch setting it to
    null leaves none, so a Lease answers the 422 and a ConfigMap is updated unconditionally."""
    api, stored = _stored(kind)
    patch = {"metadata": {"resourceVersion": None, "labels": {"changed": "yes"}}}
    if not allowed:
        k = api.kinds.find(kind, TABLE[kind][0])
        assert k is not None
        with pytest.raises(ApiError) as info:
            api.patch(kind, "x", patch, namespace=NS)
        assert info.value.code == 422
        assert info.value.message == (f'{k.qualified_resource} "x" is invalid: metadata.resourceVersion: '
                                      "Invalid value: 0: must be specified for an update")
        return
    out = api.patch(kind, "x", patch, namespace=NS)
    assert out["metadata"]["labels"]["changed"] == "yes"
    assert int(out["metadata"]["resourceVersion"]) > int(stored["metadata"]["resourceVersion"])


def test_server_side_apply_to_a_lease_needs_no_resource_version() -> None:
    """An applied configuration merges into the live object and keeps its resourceVersion."""
    api = APIServer()
    cfg = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": NS},
           "spec": {"holderIdentity": "a"}}
    api.patch("Lease", "l", cfg, namespace=NS, patch_type="apply", field_manager="m")
    cfg["spec"]["holderIdentity"] = "b"
    out = api.patch("Lease", "l", cfg, namespace=NS, patch_type="apply", field_manager="m")
    assert api.last_code == 200 and out["spec"]["holderIdentity"] == "b"
