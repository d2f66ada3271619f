"""Protobuf over HTTP (issue 25): ``application/vnd.kubernetes.protobuf`` requests, answers, lists and watches.

Bodies are built and read with :mod:`fakeapi.http.protobuf` (the upstream
message layouts) and checked against the JSON form; ``kubectl create <kind>``,
whose typed clients speak protobuf, runs against a served cluster.
"""

from __future__ import annotations

import http.client
import json
import shutil
import struct
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from fakeapi.http import Endpoint, serve
from fakeapi.http import protobuf as pb
from fakeapi.server.apiserver import APIServer

WAIT = 10.0
PB = pb.MEDIA_TYPE
KUBECTL = shutil.which("kubectl")


def _served(**options: float) -> Iterator[tuple[APIServer, Endpoint]]:
    api = APIServer()
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


def request(ep: Endpoint, method: str, path: str, body: bytes | None = None, *,
            content_type: str = PB, accept: str = f"{PB},application/json") -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type, "Accept": accept})
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                 "containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "500m"}},
                                 "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}],
                 "volumes": [{"name": "v", "emptyDir": {}}]}}}}


def test_the_envelope_round_trips_the_special_types() -> None:
    obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "s", "creationTimestamp": "2026-01-01T00:00:00Z",
        "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1",
                           "time": "2026-01-01T00:00:00Z", "fieldsV1": {"f:data": {"f:a": {}}}}]},
        "data": {"a": "aGVsbG8="}, "type": "Opaque"}
    data = pb.encode(obj)
    assert data is not None and data.startswith(b"k8s\x00")
    assert pb.decode(data) == obj
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"},
             "eventTime": "2026-01-01T00:00:00.123456Z", "count": 3}
    assert pb.decode(pb.encode(event) or b"") == event
    assert pb.encode({"apiVersion": "example.com/v1", "kind": "Widget"}) is None


def test_accept_prefers_protobuf_only_when_listed_first() -> None:
    assert pb.accepts(f"{PB}, application/json")
    assert not pb.accepts(f"application/json, {PB}")
    assert not pb.accepts("")


def test_create_get_list_in_protobuf_store_what_json_stores(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    body = pb.encode({**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "namespace": "default"}})
    code, ctype, out = request(ep, "POST", "/apis/apps/v1/namespaces/default/deployments", body)
    assert code == 201 and ctype == PB, out
    created = pb.decode(out)
    assert created["kind"] == "Deployment" and created["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "50%"
    json_body = json.dumps({**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "name": "web-json"}}).encode()
    code, ctype, _ = request(ep, "POST", "/apis/apps/v1/namespaces/default/deployments", json_body,
                             content_type="application/json", accept="application/json")
    assert code == 201 and ctype == "application/json"
    a, b = (api.get("Deployment", n, "default") for n in ("web", "web-json"))
    for o in (a, b):
        for key in ("name", "uid", "resourceVersion", "managedFields", "creationTimestamp"):
            o["metadata"].pop(key)
        o.pop("status", None)  # (the served deployment controller's, naming each one's own ReplicaSet)
    assert a == b  # the same object stored either way
    code, ctype, out = request(ep, "GET", "/apis/apps/v1/namespaces/default/deployments")
    listing = pb.decode(out)
    assert code == 200 and listing["kind"] == "DeploymentList" and len(listing["items"]) == 2
    assert listing["metadata"]["resourceVersion"]


def test_errors_and_custom_kinds_stay_json_and_bad_bodies_are_400(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, ctype, out = request(ep, "GET", "/api/v1/namespaces/default/configmaps/none")
    assert code == 404 and pb.decode(out)["kind"] == "Status" and ctype == PB
    code, _, out = request(ep, "POST", "/api/v1/namespaces/default/configmaps", b"not protobuf")
    assert code == 400 and b"lacks the k8s" in out
    code, _, out = request(ep, "POST", "/api/v1/namespaces/default/configmaps", b"k8s\x00\xff\xff")
    assert code == 400


def test_delete_options_in_protobuf(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    options = pb.encode({"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"})
    code, _, out = request(ep, "DELETE", "/api/v1/namespaces/default/configmaps/c", options)
    assert code == 200, out
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
    assert api.list("ConfigMap", "default")["items"][0]["metadata"]["name"] == "kube-root-ca.crt"


def test_a_watch_in_protobuf_is_length_framed(served_short: tuple[APIServer, Endpoint]) -> None:
    api, ep = served_short
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                "data": {"k": "v"}})
    code, ctype, out = request(ep, "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0"
                               "&timeoutSeconds=1")
    assert code == 200 and ctype == pb.WATCH_MEDIA_TYPE
    events = []
    while out:
        (n,) = struct.unpack(">I", out[:4])
        frame, out = out[4:4 + n], out[4 + n:]
        msg = pb._new(pb._descriptor("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent"))
        msg.ParseFromString(frame)
        events.append((msg.type, pb.decode(msg.object.raw)))
    assert sorted((t, o["metadata"]["name"]) for t, o in events) == [("ADDED", "c"), ("ADDED", "kube-root-ca.crt")]
    assert next(o for _, o in events if o["metadata"]["name"] == "c")["data"] == {"k": "v"}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_create_typed_kinds() -> None:
    api = APIServer()
    with serve(api, cluster=True, tls=True) as ep:
        def kubectl(*args: str) -> str:
            assert KUBECTL is not None
            out = subprocess.run([KUBECTL, "--kubeconfig", ep.kubeconfig_path, "--request-timeout=10s", *args],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, (args, out.stderr)
            return out.stdout

        kubectl("create", "namespace", "team")
        kubectl("create", "configmap", "c", "--from-literal=a=b", "-n", "team")
        kubectl("create", "secret", "generic", "s", "--from-literal=a=b", "-n", "team")
        kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", "team")
        kubectl("create", "job", "j", "--image=busybox", "-n", "team")
        kubectl("create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", "-n", "team")
        kubectl("create", "serviceaccount", "robot", "-n", "team")
        kubectl("create", "role", "r", "--verb=get", "--resource=pods", "-n", "team")
        kubectl("create", "rolebinding", "rb", "--role=r", "--serviceaccount=team:robot", "-n", "team")
        kubectl("create", "service", "clusterip", "svc", "--tcp=80:8080", "-n", "team")
        kubectl("create", "ingress", "ing", "--rule=foo.com/bar=svc:80", "-n", "team")
        kubectl("create", "poddisruptionbudget", "pdb", "--selector=a=b", "--min-available=1", "-n", "team")
        assert kubectl("create", "token", "robot", "-n", "team").count(".") == 2
        assert kubectl("auth", "can-i", "delete", "nodes").strip() == "yes"
        assert "kubernetes-admin" in kubectl("auth", "whoami")
        assert json.loads(kubectl("get", "cm", "c", "-n", "team", "-o", "json"))["data"] == {"a": "b"}
        ing = api.get("Ingress", "ing", "team")
        assert ing["spec"]["rules"][0]["http"]["paths"][0]["path"] == "/bar"
        assert api.get("Deployment", "web", "team")["spec"]["replicas"] == 2
        kubectl("delete", "namespace", "team", "--timeout=30s")
