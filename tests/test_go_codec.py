"""Round trips of the Go codec through ``fakeapi.host.client.Client(api, "ctrl")`` (reference §6.3, §7.1-7.2).

A user (kubectl, a fixture) sends JSON as written; a Go controller's client
marshals typed structs, so ``omitempty`` drops empty slices and maps. Built-in
kinds are also re-encoded by the server, whoever writes them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import pod

import fakeapi.codec.gomodel
from fakeapi.host.client import Client
from fakeapi.machinery import openapi
from fakeapi.registry.kinds import Kind
from fakeapi.server.apiserver import APIServer


def _runner_crd() -> dict[str, Any]:
    template = openapi.structural_from_definition("io.k8s.api.core.v1.PodTemplateSpec")
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "template": template}},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "runners.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Runner", "plural": "runners", "singular": "runner", "listKind": "RunnerList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": schema}}],
        },
    }


@pytest.fixture
def typed_api() -> tuple[APIServer, Kind]:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    kind = api.register_crd(_runner_crd())
    assert kind.schema is not None
    kind.go_type = fakeapi.codec.gomodel.go_type_from_structural(kind.schema)
    return api, kind


def _runner(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1", "kind": "Runner",
        "metadata": {"name": name, "namespace": "ns", "labels": {}},
        "spec": {"replicas": 0, "template": {"spec": {"containers": [
            {"name": "runner", "image": "ghcr.io/actions/runner", "env": [], "args": []}]}}},
    }


def _messy_pod(name: str = "p1") -> dict[str, Any]:
    p = pod(name, "default", labels={}, annotations={})
    c = p["spec"]["containers"][0]
    c["env"] = []
    c["securityContext"] = {}
    p["spec"]["tolerations"] = []
    p["spec"]["volumes"] = []
    return p


class TestBuiltinKinds:
    def test_pod_written_by_the_controller(self) -> None:
        api = APIServer()
        ctrl = Client(api, "ctrl")
        out = ctrl.create(_messy_pod())
        for got in (out, ctrl.get("Pod", "p1", "default"), api.get("Pod", "p1", "default")):
            c = got["spec"]["containers"][0]
            assert "env" not in c
            assert "labels" not in got["metadata"] and "annotations" not in got["metadata"]
            assert "tolerations" not in got["spec"] and "volumes" not in got["spec"]
            assert c["securityContext"] == {}

    def test_pod_written_by_a_user_is_re_encoded_by_the_server(self) -> None:
        api = APIServer()
        out = api.create(_messy_pod())
        c = out["spec"]["containers"][0]
        assert "env" not in c and "tolerations" not in out["spec"] and "labels" not in out["metadata"]
        assert c["securityContext"] == {}
        assert api.get("Pod", "p1", "default")["spec"]["containers"][0]["securityContext"] == {}

    def test_go_client_reads_typed_objects(self) -> None:
        api = APIServer()
        api.create(pod("p1", "default"))
        got = Client(api, "ctrl").get("Pod", "p1", "default")
        assert got["apiVersion"] == "v1" and got["kind"] == "Pod"
        items = Client(api, "ctrl").list("Pod", "default")
        assert [i["kind"] for i in items] == ["Pod"]

    def test_configmap_empty_data(self) -> None:
        api = APIServer()
        out = Client(api, "ctrl").create({"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "c", "namespace": "default"}, "data": {}})
        assert "data" not in out

    def test_update_through_the_client_is_a_no_op(self) -> None:
        api = APIServer()
        ctrl = Client(api, "ctrl")
        out = ctrl.create(_messy_pod())
        again = ctrl.update(out)
        assert again["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]


class TestCustomKinds:
    def test_user_write_keeps_empty_lists(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        out = api.create(_runner("by-user"))
        c = out["spec"]["template"]["spec"]["containers"][0]
        assert c["env"] == [] and c["args"] == []
        assert out["spec"]["replicas"] == 0
        assert api.get("Runner", "by-user", "ns")["spec"]["template"]["spec"]["containers"][0]["env"] == []

    def test_controller_write_drops_them(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        out = Client(api, "ctrl").create(_runner("by-ctrl"))
        stored = api.get("Runner", "by-ctrl", "ns")
        for got in (out, stored):
            c = got["spec"]["template"]["spec"]["containers"][0]
            assert "env" not in c and "args" not in c
            assert "replicas" not in got["spec"]
            assert "labels" not in got["metadata"]

    def test_controller_read_of_a_user_object(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        api.create(_runner("by-user"))
        got = Client(api, "ctrl").get("Runner", "by-user", "ns")
        # json.Unmarshal keeps [] as an empty non-nil slice: a strict comparison with what the
        # controller wrote (no env) differs, semantic equality does not
        assert got["spec"]["template"]["spec"]["containers"][0]["env"] == []
        # a controller that writes back what it read changes the stored bytes (the drift of the seed)
        before = api.get("Runner", "by-user", "ns")
        after = Client(api, "ctrl").update(got)
        assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
        assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1

    def test_untyped_client_sends_as_written(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        out = Client(api, "user", go_codec=False).create(_runner("raw"))
        assert out["spec"]["template"]["spec"]["containers"][0]["env"] == []

    def test_status_update_through_the_client(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        ctrl = Client(api, "ctrl")
        obj = ctrl.create(_runner("r"))
        obj["status"] = {"ready": True}
        out = ctrl.update_status(obj)
        assert out["status"] == {"ready": True}
        obj = ctrl.get("Runner", "r", "ns")
        obj["status"] = {"ready": False}  # false is omitempty: the Go client sends no "ready"
        out = ctrl.update_status(obj)
        assert "ready" not in (api.get("Runner", "r", "ns").get("status") or {})

    def test_patch_from_sends_the_go_diff(self, typed_api: tuple[APIServer, Kind]) -> None:
        api, _ = typed_api
        ctrl = Client(api, "ctrl")
        orig = ctrl.create(_runner("r"))
        mod = {**orig, "spec": {**orig["spec"], "replicas": 2}}
        out = ctrl.patch_from(orig, mod)
        assert out["spec"]["replicas"] == 2
        same = ctrl.patch_from(out, out)
        assert same["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]


# -- a Go client's create is stored without a second encoding ---------------------------------

_RICH_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rich", "namespace": "default", "labels": {"a": "1"}},
    "spec": {
        "initContainers": [{"name": "init", "image": "busybox:1", "command": ["true"]}],
        "containers": [{
            "name": "main", "image": "nginx:1.27", "env": [{"name": "X", "value": "1"}, {"name": "E", "value": ""}],
            "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP", "name": "dns"}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
            "livenessProbe": {"httpGet": {"path": "/", "port": 80}},
            "readinessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 0},
            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
            "securityContext": {"runAsNonRoot": False},
        }, {"name": "side", "image": "busybox:1", "args": [], "resources": {}}],
        "volumes": [
            {"name": "cfg", "configMap": {"name": "c"}},
            {"name": "sec", "secret": {"secretName": "s"}},
            {"name": "tmp", "emptyDir": {}},
            {"name": "dapi", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "proj", "projected": {"sources": [{"configMap": {"name": "c"}}]}},
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "nodeSelector": {},
        "restartPolicy": "",
    },
}


@pytest.mark.parametrize("body", [
    _RICH_POD,
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "default"},
     "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, "data": {"k": "dg=="}},
    # metadata the server skips checking and pruning in a Go client's body: the Go encoding has it in final form
    {"apiVersion": "v1", "kind": "Secret", "data": {"k": "dg=="}, "metadata": {
        "name": "m", "namespace": "default", "labels": {"a": "b"}, "annotations": {}, "finalizers": ["x.io/f"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u-1", "controller": True}],
        "generateName": "m-", "resourceVersion": "", "labelz": {"typo": "dropped"}, "deletionGracePeriodSeconds": None,
        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:data": {}}}]}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "default"},
     "secrets": [], "automountServiceAccountToken": False},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "default"},
     "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": []}]},
], ids=lambda b: f"{b['kind']}-{b['metadata']['name']}")
def test_go_client_create_stores_what_a_server_side_encoding_stores(body: dict[str, Any]) -> None:
    """Client.create sends go_encoded=True: the server skips encoding the defaulted body again. What it
    stores must be what it stores for the same Go-encoded body encoded again, key order included."""
    import json

    from fakeapi.codec.snapshots import SnapshotGuard
    from fakeapi.host.client import Client

    def stored(go_encoded: bool) -> dict[str, Any]:
        api = APIServer()
        api.snapshot_guard = SnapshotGuard()  # also checks each stored built-in decodes to itself
        kind = api.resolve_kind(body["kind"], body["apiVersion"])
        client = Client(api, "c")
        if go_encoded:
            client.create(copy.deepcopy(body))
        else:
            api.create(client.encode(copy.deepcopy(body), kind), actor="c")
        out = api.get(kind.kind, body["metadata"]["name"], body["metadata"].get("namespace"),
                      api_version=kind.api_version, shared=True)
        return {**out, "metadata": {k: v for k, v in out["metadata"].items() if k not in ("uid", "creationTimestamp")}}

    assert json.dumps(stored(True)) == json.dumps(stored(False))


def test_a_go_encoded_create_whose_metadata_is_not_as_go_encodes_it_is_caught() -> None:
    """The server trusts the metadata of a ``go_encoded`` body (no type check, no pruning walk); with
    the snapshot checks on (as in this test suite), a body that breaks that trust is reported."""
    from fakeapi.codec.snapshots import NotGoEncoded, SnapshotGuard
    from fakeapi.host.client import Client

    api = APIServer()
    api.snapshot_guard = SnapshotGuard()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}
    Client(api, "c").create(copy.deepcopy(secret))  # a real Go client's body: fine
    for meta in ({"labels": {"a": 1}}, {"labelz": {}}, {"finalizers": []}, {"annotations": None}):
        body = {**secret, "metadata": {"name": "t", "namespace": "default", **meta}}
        with pytest.raises(NotGoEncoded):
            api.create(body, go_encoded=True)
