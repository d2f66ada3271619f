"""Table responses and OpenAPI documents over HTTP (issue 25): what ``kubectl get`` and ``kubectl explain`` read."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from support import widget_crd

from fakeapi.http import Endpoint, serve
from fakeapi.http.tables import human_duration, wants_table
from fakeapi.server.apiserver import APIServer

WAIT = 10.0
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
KUBECTL = shutil.which("kubectl")


def _served(**options: float) -> Iterator[tuple[APIServer, Endpoint]]:
    api = APIServer()
    crd = widget_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "description": "the mode"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1}]
    api.register_crd(crd)
    with serve(api, cluster=True, **options) as ep:
        assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
        yield api, ep


@pytest.fixture
def served() -> Iterator[tuple[APIServer, Endpoint]]:
    yield from _served()


@pytest.fixture
def served_short() -> Iterator[tuple[APIServer, Endpoint]]:
    """:func:`served`, where a watch's ``timeoutSeconds=1`` ends it after 0.2 s (a test reading a watch to its end)."""
    yield from _served(timeout_scale=0.2)


def get(ep: Endpoint, path: str, accept: str = "application/json") -> tuple[int, Any]:
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        conn.request("GET", path, headers={"Accept": accept})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, json.loads(body) if body else None
    finally:
        conn.close()


def columns(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


def test_wants_table_reads_the_accept_header() -> None:
    assert wants_table(TABLE)
    assert not wants_table("application/json")
    assert not wants_table("application/json, application/json;as=Table;v=v1;g=meta.k8s.io")
    assert not wants_table("")


def test_human_duration_is_go_s() -> None:
    cases = {0: "0s", 119: "119s", 120: "2m", 150: "2m30s", 600: "10m", 3 * 3600: "3h", 3 * 3600 + 60: "3h1m",
             9 * 3600: "9h", 50 * 3600: "2d2h", 30 * 86400: "30d", 800 * 86400: "2y70d", 3000 * 86400: "8y"}
    for seconds, text in cases.items():
        assert human_duration(timedelta(seconds=seconds)) == text, seconds
    assert human_duration(timedelta(seconds=-5)) == "<invalid>"


def test_pods_as_a_table(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}})
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
    ep.cluster.advance("150s")
    code, table = get(ep, "/api/v1/namespaces/default/pods", TABLE)
    assert code == 200 and table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert columns(table) == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
                              "Readiness Gates"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    [row] = table["rows"]
    assert row["cells"] == ["p", "2/2", "Running", "0", "2m30s", "<none>", "fakeapi-node", "<none>", "<none>"]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "p"
    assert table["metadata"]["resourceVersion"]
    _, full = get(ep, "/api/v1/namespaces/default/pods?includeObject=Object", TABLE)
    assert full["rows"][0]["object"]["kind"] == "Pod"
    _, bare = get(ep, "/api/v1/namespaces/default/pods/p?includeObject=None", TABLE)
    assert "object" not in bare["rows"][0]
    _, plain = get(ep, "/api/v1/namespaces/default/pods/p")
    assert plain["kind"] == "Pod"


def test_custom_resources_get_their_printer_columns(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                "spec": {"mode": "a", "replicas": 3}})
    _, table = get(ep, "/apis/example.com/v1/namespaces/default/widgets", TABLE)
    assert columns(table) == ["Name", "Mode", "Replicas"]
    assert table["columnDefinitions"][1]["description"] == "the mode"
    assert table["columnDefinitions"][2]["type"] == "integer" and table["columnDefinitions"][2]["priority"] == 1
    assert table["rows"][0]["cells"] == ["w", "a", 3]


def test_kinds_without_columns(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.register_crd({**widget_crd(), "metadata": {"name": "gadgets.example.com"}, "spec": {
        **widget_crd()["spec"], "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"}}})
    api.create({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "default"},
                "spec": {"mode": "a"}})
    _, table = get(ep, "/apis/example.com/v1/namespaces/default/gadgets", TABLE)
    assert columns(table) == ["Name", "Age"] and table["columnDefinitions"][1]["type"] == "date"
    assert table["rows"][0]["cells"] == ["g", "2026-01-01T00:00:00Z"]
    _, roles = get(ep, "/apis/rbac.authorization.k8s.io/v1/clusterroles", TABLE)
    assert columns(roles) == ["Name", "Created At"]


def test_workload_and_service_columns(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    assert ep.cluster is not None
    while True:  # (the served Deployment and ReplicaSet controllers and the kubelet: until nothing more is written)
        rv = api.resource_version
        assert ep.cluster.wait_idle(WAIT)
        if api.resource_version == rv:
            break
    _, table = get(ep, "/apis/apps/v1/namespaces/default/deployments", TABLE)
    assert columns(table) == ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    assert table["rows"][0]["cells"] == ["web", "2/2", 2, 2, "0s", "c", "nginx", "app=web"]
    _, svcs = get(ep, "/api/v1/namespaces/default/services/kubernetes", TABLE)
    assert svcs["rows"][0]["cells"] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP", "0s", "<none>"]
    _, nodes = get(ep, "/api/v1/nodes", TABLE)
    assert nodes["rows"][0]["cells"][:2] == ["fakeapi-node", "Ready"]


def test_a_watch_sends_tables(served_short: tuple[APIServer, Endpoint]) -> None:
    api, ep = served_short
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}})
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}})
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1",
                     headers={"Accept": TABLE})
        lines = [json.loads(line) for line in conn.getresponse().read().splitlines() if line.strip()]
    finally:
        conn.close()
    tables = [e["object"] for e in lines if e["type"] == "ADDED"]
    assert {t["kind"] for t in tables} == {"Table"}
    assert "columnDefinitions" in tables[0] and all("columnDefinitions" not in t for t in tables[1:])
    assert sorted(t["rows"][0]["cells"][0] for t in tables) == ["a", "b", "kube-root-ca.crt"]


def test_openapi_v3_documents_carry_the_schemas(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    _, index = get(ep, "/openapi/v3")
    _, core = get(ep, index["paths"]["api/v1"]["serverRelativeURL"])
    schemas = core["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["type"] == "object" and "enum" not in pod["properties"]["kind"]
    assert pod["properties"]["spec"]["$ref"] == "#/components/schemas/io.k8s.api.core.v1.PodSpec"
    assert "io.k8s.api.core.v1.Container" in schemas and "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    _, widgets = get(ep, index["paths"]["apis/example.com/v1"]["serverRelativeURL"])
    widget = widgets["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert widget["properties"]["spec"]["properties"]["mode"]["enum"] == ["a", "b"]
    assert widget["properties"]["metadata"]["$ref"].endswith("meta.v1.ObjectMeta")


def test_openapi_v2_is_served_as_json(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, doc = get(ep, "/openapi/v2")
    assert code == 200 and doc["swagger"] == "2.0"
    assert doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]["$ref"] == (
        "#/definitions/io.k8s.api.apps.v1.DeploymentSpec")
    assert "com.example.v1.Widget" in doc["definitions"]
    assert "/api/v1/namespaces/{namespace}/pods/{name}" in doc["paths"]
    code, status = get(ep, "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert code == 406 and status["reason"] == "NotAcceptable"


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_explain_and_get_columns(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served

    def kubectl(*args: str) -> str:
        assert KUBECTL is not None
        out = subprocess.run([KUBECTL, "--kubeconfig", ep.kubeconfig_path, "--request-timeout=10s", *args],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "FIELD: image <string>" in kubectl("explain", "pods.spec.containers.image")
    assert "mode\t<string>" in kubectl("explain", "widgets.spec")
    api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                "spec": {"mode": "b", "replicas": 1}})
    assert kubectl("get", "widgets").split("\n")[0].split() == ["NAME", "MODE"]
    assert kubectl("get", "widgets", "-o", "wide").split("\n")[1].split() == ["w", "b", "1"]
    assert kubectl("get", "nodes").split("\n")[1].split()[:2] == ["fakeapi-node", "Ready"]
