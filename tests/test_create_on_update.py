"""AllowCreateOnUpdate: a PUT to a missing object creates it (201) for the kinds whose upstream
strategy allows it (pkg/registry/<group>/<resource>/strategy.go), and is a 404 for the others."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError

_NS = "default"

#: (kind, apiVersion, namespaced, a valid body's fields, upstream AllowCreateOnUpdate)
CASES: list[tuple[str, str, bool, dict[str, Any], bool]] = [
    ("Lease", "coordination.k8s.io/v1", True, {"spec": {"holderIdentity": "a"}}, True),
    ("Event", "v1", True, {"involvedObject": {"kind": "Pod", "name": "p", "namespace": _NS}}, True),
    ("Service", "v1", True, {"spec": {"ports": [{"port": 80}]}}, True),
    ("Role", "rbac.authorization.k8s.io/v1", True, {"rules": []}, True),
    ("ClusterRole", "rbac.authorization.k8s.io/v1", False, {"rules": []}, True),
    ("RoleBinding", "rbac.authorization.k8s.io/v1", True,
     {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}}, True),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", False,
     {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}}, True),
    ("ConfigMap", "v1", True, {"data": {"a": "b"}}, False),
    ("Secret", "v1", True, {}, False),
    ("ServiceAccount", "v1", True, {}, False),
    ("Namespace", "v1", False, {}, False),
    ("ReplicationController", "v1", True, {}, False),
    ("Deployment", "apps/v1", True, {}, False),
    ("Ingress", "networking.k8s.io/v1", True, {}, False),
]


def _body(kind: str, api_version: str, namespaced: bool, fields: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x"}
    if namespaced:
        meta["namespace"] = _NS
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


@pytest.mark.parametrize(("kind", "api_version", "namespaced", "fields", "creates"), CASES,
                         ids=[c[0] for c in CASES])
def test_put_to_missing_object(kind: str, api_version: str, namespaced: bool, fields: dict[str, Any],
                               creates: bool) -> None:
    """201 and a new object (uid, creationTimestamp, resourceVersion) or 404 NotFound, as upstream."""
    api = APIServer()
    body = _body(kind, api_version, namespaced, fields)
    if not creates:
        with pytest.raises(ApiError) as info:
            api.update(body)
        assert info.value.code == 404
        assert info.value.status["reason"] == "NotFound"
        return
    out = api.update(body)
    assert api.last_code == 201
    meta = out["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] and meta["resourceVersion"].isdigit()
    stored = api.get(kind, "x", _NS if namespaced else None, api_version=api_version)
    assert stored["metadata"]["uid"] == meta["uid"]
    # a second PUT is an ordinary update (200) of what the first created (with its resourceVersion:
    # a Lease's strategy allows no unconditional update)
    again = api.update({**body, "metadata": {**body["metadata"], "labels": {"a": "b"},
                                             "resourceVersion": meta["resourceVersion"]}})
    assert api.last_code == 200 and again["metadata"]["uid"] == meta["uid"]


def test_create_on_update_ignores_the_bodys_resource_version() -> None:
    """The created object gets a resourceVersion of its own."""
    api = APIServer()
    body = _body("Lease", "coordination.k8s.io/v1", True, {})
    body["metadata"]["resourceVersion"] = "999"
    out = api.update(body)
    assert api.last_code == 201 and out["metadata"]["resourceVersion"] != "999"


def test_status_put_to_missing_service_is_not_found() -> None:
    """Only the main resource is created on update; a missing object's status is a 404."""
    api = APIServer()
    with pytest.raises(ApiError) as info:
        api.update(_body("Service", "v1", True, {"spec": {"ports": [{"port": 80}]}}), subresource="status")
    assert info.value.code == 404


def test_custom_resources_are_not_created_on_update() -> None:
    """CustomResourceStrategy keeps AllowCreateOnUpdate false."""
    from fakeapi.registry.strategy import CUSTOM_RESOURCE
    assert CUSTOM_RESOURCE.allow_create_on_update is False


def test_http_put_answers_201_then_200() -> None:
    """Over HTTP the created-on-update PUT answers 201 Created, the next PUT 200, a ConfigMap 404."""
    import http.client
    import json

    from fakeapi.http import serve

    api = APIServer()
    lease = _body("Lease", "coordination.k8s.io/v1", True, {"spec": {"holderIdentity": "a"}})
    path = f"/apis/coordination.k8s.io/v1/namespaces/{_NS}/leases/x"
    cm_path = f"/api/v1/namespaces/{_NS}/configmaps/x"
    with serve(api) as ep:
        codes = []
        for p in (path, path, cm_path):
            body = lease if p == path else _body("ConfigMap", "v1", True, {})
            conn = http.client.HTTPConnection(ep.host, ep.port, timeout=10)
            try:
                conn.request("PUT", p, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                answer = json.loads(resp.read())
                codes.append(resp.status)
            finally:
                conn.close()
            if p == path:  # the next PUT names the version it replaces (no unconditional update for a Lease)
                lease = {**lease, "metadata": {**lease["metadata"],
                                               "resourceVersion": answer["metadata"]["resourceVersion"]}}
    assert codes == [201, 200, 404]
