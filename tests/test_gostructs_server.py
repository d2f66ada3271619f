"""What the server stores and returns, where only the upstream Go structs say what it is (issue 20).

Each case is a field whose encoding the OpenAPI schemas cannot tell: a Go pointer keeps a zero
value, a field without ``omitempty`` is sent as null, a nested JSONSchemaProps is re-encoded
(unknown keys dropped, zero bounds kept) and then enforced.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import expect_error, widget, widget_crd

from fakeapi.server.apiserver import APIServer

NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}


def _api() -> APIServer:
    api = APIServer()
    api.create(copy.deepcopy(NS))
    return api


def _bounded_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0, "uniqueItems": False, "notAKeyword": 1},
                    "tags": {"type": "array", "maxItems": 0, "items": {"type": "string", "minLength": 0}},
                    "sizes": {"type": "object", "additionalProperties": {"type": "integer", "maximum": 0}},
                    "closed": {"type": "object", "x-kubernetes-preserve-unknown-fields": False,
                               "properties": {"a": {"type": "string", "nullable": False}}},
                },
            },
        },
    }


STORED_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "maxItems": 0, "items": {"type": "string", "minLength": 0}},
                "sizes": {"type": "object", "additionalProperties": {"type": "integer", "maximum": 0}},
                "closed": {"type": "object", "x-kubernetes-preserve-unknown-fields": False,
                           "properties": {"a": {"type": "string"}}},
            },
        },
    },
}


def test_a_crd_schema_reads_back_as_kube_apiserver_stores_it() -> None:
    api = _api()
    created = api.create(widget_crd(schema=_bounded_schema()))
    got = api.get("CustomResourceDefinition", "widgets.example.com")
    for crd in (created, got):
        assert crd["spec"]["versions"][0]["schema"] == {"openAPIV3Schema": STORED_SCHEMA}
        assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}


@pytest.mark.parametrize(("spec", "message"), [
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
    ({"tags": ["a"]}, "spec.tags: Too many: 1: must have at most 0 items"),
    ({"sizes": {"x": 1}}, "spec.sizes.x: Invalid value: 1: spec.sizes.x in body should be less than or equal to 0"),
])
def test_the_stored_bounds_are_enforced(spec: dict[str, Any], message: str) -> None:
    api = _api()
    api.create(widget_crd(schema=_bounded_schema()))
    err = expect_error(lambda: api.create(widget(spec=spec)), 422, "Invalid")
    assert message in err.status["message"]


def test_the_zero_bounds_admit_zero() -> None:
    api = _api()
    api.create(widget_crd(schema=_bounded_schema()))
    out = api.create(widget(spec={"replicas": 0, "tags": [], "sizes": {"x": 0}, "closed": {"a": "x", "b": 1}}))
    # preserve-unknown-fields false: the unknown field is pruned
    assert out["spec"] == {"replicas": 0, "tags": [], "sizes": {"x": 0}, "closed": {"a": "x"}}


def test_a_role_without_rules_reads_back_rules_null() -> None:
    api = _api()
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "ns"}}
    created = api.create(role)
    assert "rules" in created and created["rules"] is None  # Rules []PolicyRule `json:"rules"`
    assert api.get("Role", "r", "ns")["rules"] is None


def test_a_pvc_data_source_keeps_api_group_null() -> None:
    api = _api()
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                    "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}}
    out = api.create(pvc)
    # TypedLocalObjectReference.APIGroup is *string `json:"apiGroup"`: nil is sent as null
    assert out["spec"]["dataSource"] == {"kind": "PersistentVolumeClaim", "name": "src", "apiGroup": None}


def test_pointer_zeros_in_a_projected_volume_survive() -> None:
    api = _api()
    volumes: list[dict[str, Any]] = [{"name": "v", "projected": {"defaultMode": 0, "defaultUser": 0, "sources": [
        {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600, "user": 0}},
        {"configMap": {"name": "cm", "items": [{"key": "k", "path": "p", "mode": 0, "user": 0}]}},
    ]}}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "c", "image": "i"}], "securityContext": {"runAsUser": 0},
                    "volumes": copy.deepcopy(volumes)}}
    out = api.create(copy.deepcopy(pod))
    # ProjectedVolumeSource.DefaultMode *int32, DefaultUser *int64; ServiceAccountTokenProjection.User
    # *int64; KeyToPath.Mode *int32, User *int64; PodSecurityContext.RunAsUser *int64: 0 is not nil
    assert out["spec"]["volumes"] == volumes
    assert out["spec"]["securityContext"] == {"runAsUser": 0}
