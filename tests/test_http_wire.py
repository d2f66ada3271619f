"""fakeapi over HTTP at the wire level (http.client): paths, codes, headers, chunked watches, lifecycle.

What client libraries hide: discovery document shapes, the 404 of wrong-scope
paths, ``Warning`` header syntax, chunked newline-delimited watch streams, the
final bookmark at ``timeoutSeconds``, ERROR events inside a 200 stream, body
versus query DeleteOptions, the ``serve`` command, and that shutting down ends
open watches. Each test has its own server on a free port; no sleeps.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import widget_crd, with_bytecode_cache

from fakeapi.http import Endpoint, RestAPI, serve
from fakeapi.http.discovery import version_priority
from fakeapi.http.rest import Request, Response, WatchResponse
from fakeapi.server.apiserver import APIServer

NS = "ns"


#: Wall seconds per second of ``timeoutSeconds`` for the tests that read a watch to its end (``served_short``).
SHORT = 0.2


def _served(**options: float) -> Iterator[tuple[APIServer, Endpoint]]:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    api.register_crd(widget_crd())
    with serve(api, **options) as ep:
        yield api, ep


@pytest.fixture
def served() -> Iterator[tuple[APIServer, Endpoint]]:
    """A server with namespace ``ns`` and the Widget CRD, served on a free port."""
    yield from _served()


@pytest.fixture
def served_short() -> Iterator[tuple[APIServer, Endpoint]]:
    """:func:`served`, where a watch's ``timeoutSeconds=1`` ends it after :data:`SHORT` seconds."""
    yield from _served(timeout_scale=SHORT)


def connect(ep: Endpoint, timeout: float = 10.0) -> http.client.HTTPConnection:
    """A connection to the endpoint (bounded socket timeout)."""
    return http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)


def call(ep: Endpoint, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, http.client.HTTPResponse, Any]:
    """One request on a fresh connection: (status, response, decoded JSON body or text)."""
    conn = connect(ep)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = text.decode()
    return resp.status, resp, decoded


def assert_status(body: dict[str, Any], code: int, reason: str | None, message: str | None = None) -> None:
    """A metav1.Status failure body."""
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["metadata"] == {}
    assert body["status"] == "Failure" and body["code"] == code
    if reason:
        assert body["reason"] == reason
    else:
        assert "reason" not in body
    if message is not None:
        assert body["message"] == message


CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"
W_PATH = f"/apis/example.com/v1/namespaces/{NS}/widgets"
NOT_FOUND = "the server could not find the requested resource"


# ------------------------------------------------------------------ discovery


def test_health_version_and_discovery_documents(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, resp, text = call(ep, "GET", "/healthz")
    assert code == 200 and text == "ok"
    code, resp, version = call(ep, "GET", "/version")
    assert code == 200 and resp.getheader("Content-Type") == "application/json"
    assert re.fullmatch(r"v1\.\d+\.\d+\+fakeapi", version["gitVersion"])
    _, _, apis = call(ep, "GET", "/api")
    assert apis["kind"] == "APIVersions" and apis["versions"] == ["v1"]
    assert apis["serverAddressByClientCIDRs"][0]["serverAddress"] == f"127.0.0.1:{ep.port}"
    _, _, groups = call(ep, "GET", "/apis")
    assert groups["kind"] == "APIGroupList"
    by_name = {g["name"]: g for g in groups["groups"]}
    assert by_name["example.com"]["preferredVersion"] == {"groupVersion": "example.com/v1", "version": "v1"}
    _, _, group = call(ep, "GET", "/apis/example.com")
    assert group["kind"] == "APIGroup" and group["name"] == "example.com"
    _, _, core = call(ep, "GET", "/api/v1")
    assert core["kind"] == "APIResourceList" and core["groupVersion"] == "v1"
    resources = {r["name"]: r for r in core["resources"]}
    assert resources["namespaces/finalize"]["verbs"] == ["update"]
    assert resources["pods/status"] == {"name": "pods/status", "singularName": "", "namespaced": True,
                                        "kind": "Pod", "verbs": ["get", "patch", "update"]}
    assert resources["configmaps"]["singularName"] == "configmap"
    _, _, widgets = call(ep, "GET", "/apis/example.com/v1")
    assert [r["name"] for r in widgets["resources"]] == ["widgets", "widgets/status"]
    for path in ("/apis/nothing.io", "/apis/example.com/v9", "/api/v2", "/nope"):
        code, _, body = call(ep, "GET", path)
        assert code == 404, path
        assert_status(body, 404, "NotFound", NOT_FOUND)


def test_openapi_v3_lets_kubectl_use_server_side_field_validation(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    _, _, index = call(ep, "GET", "/openapi/v3")
    url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/example.com/v1?hash=") and "api/v1" in index["paths"]
    code, _, doc = call(ep, "GET", url)
    assert code == 200 and doc["openapi"].startswith("3.")
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "example.com", "version": "v1", "kind": "Widget"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation").items()
    _, _, core = call(ep, "GET", "/openapi/v3/api/v1")
    assert "/api/v1/namespaces/{name}" in core["paths"]
    assert call(ep, "GET", "/openapi/v3/apis/nothing.io/v1")[0] == 404


def test_kube_aware_version_order() -> None:
    versions = ["v1alpha1", "foo10", "v11alpha2", "v2", "v1", "v10beta3", "v3beta1", "v11beta2", "v10", "foo1"]
    assert sorted(versions, key=version_priority) == [
        "v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v11alpha2", "v1alpha1", "foo1", "foo10"]


def test_discovery_follows_crds(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.delete("CustomResourceDefinition", "widgets.example.com")
    code, _, _ = call(ep, "GET", "/apis/example.com/v1")
    assert code == 404
    code, _, body = call(ep, "GET", W_PATH)
    assert code == 404 and body["message"] == NOT_FOUND


def test_discovery_and_requests_during_crd_churn() -> None:
    api = APIServer()
    failures: list[BaseException] = []

    def churn() -> None:
        try:
            for _ in range(20):
                api.register_crd(widget_crd())
                api.delete("CustomResourceDefinition", "widgets.example.com")
        except BaseException as e:
            failures.append(e)

    with serve(api) as ep:
        t = threading.Thread(target=churn)
        t.start()
        codes = set()
        conn = connect(ep)
        while t.is_alive():
            for path in ("/apis", "/apis/example.com/v1", "/openapi/v3", "/apis/example.com/v1/widgets"):
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                codes.add(resp.status)
        conn.close()
        t.join(30)
    assert not failures and codes <= {200, 404}


# ---------------------------------------------------------------- paths, codes


def test_create_is_201_and_defaults_type_meta(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, _, obj = call(ep, "POST", CM_PATH, {"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert code == 201 and obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert obj["metadata"]["namespace"] == NS
    code, _, body = call(ep, "POST", CM_PATH, {"metadata": {"name": "b", "resourceVersion": "5"}})
    assert code == 500
    assert_status(body, 500, None, "resourceVersion should not be set on objects to be created")
    code, _, body = call(ep, "POST", W_PATH, {"apiVersion": "example.com/v1", "kind": "Gadget",
                                              "metadata": {"name": "w"}})
    assert code == 422
    assert_status(body, 422, "Invalid", 'Widget.example.com "w" is invalid: kind: Invalid value: "Gadget": '
                                        "must be Widget")


def test_wrong_scope_and_unknown_paths_are_404(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    cases = [
        ("GET", "/api/v1/configmaps/a"),  # namespaced kind without a namespace
        ("POST", "/api/v1/configmaps"),
        ("DELETE", "/api/v1/configmaps"),
        ("GET", f"/api/v1/namespaces/{NS}/namespaces"),  # cluster-scoped kind with a namespace
        ("GET", f"/api/v1/namespaces/{NS}/configmaps/a/scale"),  # unknown subresource
        ("GET", f"/api/v1/namespaces/{NS}/configmaps/a/status/x"),
        ("GET", "/api/v1/nothings"),
        ("GET", "/apis/example.com/v1/widgets/w"),
    ]
    for method, path in cases:
        code, _, body = call(ep, method, path, {} if method == "POST" else None)
        assert code == 404, (method, path)
        assert_status(body, 404, "NotFound", NOT_FOUND)
    # every verb on /status of a kind without the subresource: "R name not found" (§3)
    code, _, body = call(ep, "GET", f"{CM_PATH}/a/status")
    assert code == 404
    assert_status(body, 404, "NotFound", 'configmaps "a" not found')
    # lists across namespaces are served
    code, _, listed = call(ep, "GET", "/api/v1/configmaps")
    assert code == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    code, _, body = call(ep, "PUT", CM_PATH, {})
    assert code == 405
    assert_status(body, 405, "MethodNotAllowed")


def test_body_errors_are_400(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    code, _, body = call(ep, "POST", CM_PATH, raw=b"{not json")
    assert code == 400 and body["reason"] == "BadRequest"
    code, _, body = call(ep, "POST", CM_PATH, [1, 2])
    assert code == 400 and body["reason"] == "BadRequest"
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    code, _, body = call(ep, "PUT", f"{CM_PATH}/a", {"data": {}})
    assert_status(body, 400, "BadRequest",
                  "the name of the object (a based on URL) was undeterminable: name must be provided")
    code, _, body = call(ep, "POST", CM_PATH, {"metadata": {"name": "c"}}, {"X": "1"}, raw=None)
    assert code == 201


def test_body_media_types(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    doc = b"metadata:\n  name: y\n  annotations:\n    at: 2024-01-02T03:04:05Z\ndata:\n  k: v\n"
    code, _, out = call(ep, "POST", CM_PATH, raw=doc, headers={"Content-Type": "application/yaml"})
    assert code == 201 and out["data"] == {"k": "v"}
    assert out["metadata"]["annotations"] == {"at": "2024-01-02T03:04:05Z"}  # a string, as YAML-to-JSON gives
    code, _, out = call(ep, "POST", CM_PATH, raw=b"\x0a\x02", headers={"Content-Type": "application/cbor"})
    assert_status(out, 415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                                                    "media types include: application/json, application/yaml, "
                                                    "application/vnd.kubernetes.protobuf")


def test_malformed_requests_get_a_status_body(served: tuple[APIServer, Endpoint]) -> None:
    import socket

    _, ep = served
    with socket.create_connection((ep.host, ep.port), timeout=10) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") or head.startswith(b"HTTP/1.0 400")
    assert_status(json.loads(body), 400, "BadRequest")


def test_patch_content_types(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    for ctype in ("application/json-patch+json", "application/merge-patch+json",
                  "application/strategic-merge-patch+json; charset=utf-8"):
        body: Any = [{"op": "add", "path": "/data", "value": {"t": ctype}}] if "json-patch" in ctype else \
            {"data": {"t": ctype}}
        code, _, out = call(ep, "PATCH", f"{CM_PATH}/a", body, {"Content-Type": ctype})
        assert code == 200 and out["data"]["t"] == ctype
    accepted = ("the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
                "application/apply-patch+yaml")
    for ctype in ("application/json", "text/plain"):
        code, _, out = call(ep, "PATCH", f"{CM_PATH}/a", {"data": {}}, {"Content-Type": ctype})
        assert code == 415
        assert_status(out, 415, "UnsupportedMediaType", accepted)
    code, _, out = call(ep, "PATCH", f"{CM_PATH}/a", raw=b"{", headers={"Content-Type": "application/merge-patch+json"})
    assert code == 400 and out["reason"] == "BadRequest"


def test_warning_headers_and_field_validation(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    body: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                            "spec": {"unknown": 1, "other": 2}}
    code, resp, _ = call(ep, "POST", W_PATH, body)
    assert code == 201
    assert sorted(resp.headers.get_all("Warning") or []) == ['299 - "unknown field \\"spec.other\\""',
                                                             '299 - "unknown field \\"spec.unknown\\""']
    body["metadata"]["name"] = "w2"
    code, resp, _ = call(ep, "POST", W_PATH + "?fieldValidation=Ignore", body)
    assert code == 201 and resp.headers.get_all("Warning") is None
    body["metadata"]["name"] = "w3"
    code, _, out = call(ep, "POST", W_PATH + "?fieldValidation=Strict", body)
    assert code == 400 and out["message"].startswith("strict decoding error: unknown field")
    code, _, out = call(ep, "POST", W_PATH + "?fieldValidation=Loose", body)
    assert code == 400 and out["reason"] == "BadRequest"
    code, _, out = call(ep, "POST", W_PATH + "?dryRun=Yes", body)
    assert_status(out, 422, "Invalid",
                  'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: '
                  'supported values: "All"')


def test_delete_options_body_wins_over_query(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    code, _, out = call(ep, "DELETE", f"{CM_PATH}/a?propagationPolicy=Foreground",
                        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"})
    assert code == 200 and out["metadata"]["finalizers"] == ["orphan"]
    code, _, out = call(ep, "DELETE", f"{CM_PATH}/a", {"preconditions": {"uid": "nope"}})
    assert code == 409 and out["reason"] == "Conflict" and out["details"]["kind"] == "ConfigMap"
    code, _, out = call(ep, "DELETE", f"{CM_PATH}/a", raw=b"[]")
    assert code == 400
    code, _, out = call(ep, "DELETE", f"{CM_PATH}/a?dryRun=All&propagationPolicy=Background")
    assert code == 200 and api.get("ConfigMap", "a", NS)["metadata"]["finalizers"] == ["orphan"]
    code, _, out = call(ep, "DELETE", f"{CM_PATH}/a?propagationPolicy=Background")
    assert code == 200 and out["status"] == "Success"
    code, _, out = call(ep, "DELETE", f"{CM_PATH}?orphanDependents=true&propagationPolicy=Orphan")
    assert code == 422 and out["reason"] == "Invalid"


def test_namespace_finalize_subresource(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    code, _, out = call(ep, "DELETE", "/api/v1/namespaces/gone")
    assert code == 200 and out["status"]["phase"] == "Terminating"
    code, _, out = call(ep, "PUT", "/api/v1/namespaces/gone/finalize",
                        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}, "spec": {}})
    assert code == 200
    code, _, _ = call(ep, "GET", "/api/v1/namespaces/gone")
    assert code == 404
    code, _, out = call(ep, "PATCH", "/api/v1/namespaces/default/finalize", {})
    assert code == 405


# ---------------------------------------------------------------------- watch


def read_events(resp: http.client.HTTPResponse, n: int | None = None) -> list[dict[str, Any]]:
    """Read watch events (one JSON object per line) until ``n`` of them, or the end of the stream."""
    events: list[dict[str, Any]] = []
    while n is None or len(events) < n:
        line = resp.readline()
        if not line:
            break
        events.append(json.loads(line))
    return events


def test_watch_is_a_chunked_json_stream_ending_at_timeout_with_a_bookmark(
        served_short: tuple[APIServer, Endpoint]) -> None:
    api, ep = served_short
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    conn = connect(ep)
    conn.request("GET", f"{CM_PATH}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true")
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Transfer-Encoding") == "chunked" and resp.getheader("Content-Type") == "application/json"
    events = read_events(resp)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"] == {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"resourceVersion": str(api.resource_version)}}
    # the stream ended cleanly: the connection is reusable
    conn.request("GET", "/version")
    again = conn.getresponse()
    assert again.status == 200 and json.loads(again.read())["major"] == "1"
    conn.close()


def test_periodic_bookmarks_never_run_ahead_of_events() -> None:
    api = APIServer()
    start = api.resource_version
    with serve(api, bookmark_interval=0.1) as ep:
        conn = connect(ep)
        conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=1"
                            f"&resourceVersion={start}")
        resp = conn.getresponse()

        def writer() -> None:  # every write of the test is a ConfigMap the watch matches
            for i in range(50):
                api.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": f"c{i}", "namespace": "default"}})

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        events = read_events(resp)
        t.join(10)
        conn.close()
    delivered = 0
    bookmarks = 0
    for e in events:
        rv = int(e["object"]["metadata"]["resourceVersion"])
        if e["type"] == "BOOKMARK":
            bookmarks += 1
            assert delivered == rv - start  # every write up to the bookmark's revision came before it
        else:
            delivered += 1
            assert e["type"] == "ADDED" and rv == start + delivered
    assert delivered == 50 and bookmarks >= 2 and events[-1]["type"] == "BOOKMARK"


def test_watch_sees_in_process_writes(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    start = api.resource_version
    conn = connect(ep)
    conn.request("GET", f"{W_PATH}?watch=1&resourceVersion={start}&timeoutSeconds=10")
    resp = conn.getresponse()  # headers arrive after the watch is registered
    api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": NS}})
    api.patch("Widget", "w", {"metadata": {"labels": {"a": "b"}}}, namespace=NS)
    api.delete("Widget", "w", NS)
    events = read_events(resp, 3)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == [start + 1, start + 2, start + 3]
    conn.close()


def test_watch_errors(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, _, out = call(ep, "GET", f"{CM_PATH}?watch=1&labelSelector=a%20in%20b")
    assert code == 400 and out["reason"] == "BadRequest"
    code, _, out = call(ep, "GET", f"{CM_PATH}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1")
    assert code == 422 and out["message"].startswith('ListOptions.meta.k8s.io "" is invalid')
    code, _, out = call(ep, "GET", f"{CM_PATH}?sendInitialEvents=true")
    assert code == 422


def test_expired_watch_is_an_error_event_in_a_200_stream() -> None:
    api = APIServer(watch_history=1)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for i in range(40):
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": NS}})
    with serve(api) as ep:
        conn = connect(ep)
        conn.request("GET", f"{CM_PATH}?watch=1&resourceVersion=3&timeoutSeconds=10")
        resp = conn.getresponse()
        assert resp.status == 200
        events = read_events(resp)
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["code"] == 410 and status["reason"] == "Expired"
        assert status["message"].startswith("too old resource version: 3 (")
        conn.close()


def test_legacy_watch_path_watches_one_object(served_short: tuple[APIServer, Endpoint]) -> None:
    api, ep = served_short
    for name in ("a", "b"):
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}})
    conn = connect(ep)
    conn.request("GET", f"/api/v1/watch/namespaces/{NS}/configmaps/b?timeoutSeconds=1")
    events = read_events(conn.getresponse())
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "b")]
    conn.close()


def test_send_initial_events_over_the_wire(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    conn = connect(ep)
    conn.request("GET", f"{CM_PATH}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                        "&allowWatchBookmarks=true&timeoutSeconds=10")
    resp = conn.getresponse()
    events = read_events(resp, 2)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": NS}})
    assert read_events(resp, 1)[0]["object"]["metadata"]["name"] == "b"
    conn.close()


# ------------------------------------------------------------------ lifecycle


def test_closing_the_server_ends_open_watches_and_connections() -> None:
    api = APIServer()
    ended = threading.Event()
    with serve(api) as ep:
        conn = connect(ep, timeout=30)
        conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=1")  # default timeout: 30 minutes
        resp = conn.getresponse()

        def drain() -> None:
            read_events(resp)
            ended.set()

        t = threading.Thread(target=drain, daemon=True)
        t.start()
        idle = connect(ep)
        idle.request("GET", "/version")
        idle.getresponse().read()  # a kept-alive idle connection
        began = time.monotonic()
    assert time.monotonic() - began < 5
    assert ended.wait(5)
    conn.close()
    idle.close()
    assert not os.path.exists(ep.kubeconfig_path)


def test_kubeconfig_file(tmp_path: Path) -> None:
    api = APIServer()
    target = tmp_path / "sub" / "kubeconfig"
    with serve(api, kubeconfig_path=target) as ep:
        doc = yaml.safe_load(target.read_text())
        assert doc == ep.kubeconfig()
        cluster = doc["clusters"][0]["cluster"]
        assert cluster == {"server": ep.url, "insecure-skip-tls-verify": True}
        assert doc["current-context"] == "fakeapi" and doc["contexts"][0]["context"]["namespace"] == "default"
        assert doc["users"][0]["user"]["token"]
        assert ep.url == f"http://127.0.0.1:{ep.port}" and ep.port > 0
    assert target.exists()  # a path the caller chose is left in place


def test_parallel_servers_get_distinct_ports() -> None:
    a, b = APIServer(), APIServer()
    with serve(a) as ea, serve(b) as eb:
        assert ea.port != eb.port
        call(ea, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "only-in-a"}})
        assert call(eb, "GET", "/api/v1/namespaces/default/configmaps/only-in-a")[0] == 404


def test_rest_api_without_sockets() -> None:
    rest = RestAPI(APIServer())
    out = rest.handle(Request("POST", "/api/v1/namespaces/default/configmaps", body=b'{"metadata":{"name":"x"}}'))
    assert isinstance(out, Response) and out.code == 201
    out = rest.handle(Request("GET", "/api/v1/namespaces/default/configmaps/x"))
    assert isinstance(out, Response) and json.loads(out.body)["metadata"]["name"] == "x"
    out = rest.handle(Request("GET", "/api/v1/namespaces/default/configmaps", {"watch": ["1"], "timeoutSeconds": ["1"]}))
    assert isinstance(out, WatchResponse) and out.timeout == 1.0 and not out.bookmarks
    out.watch.close()


def test_timeout_scale_shortens_timeout_seconds_only() -> None:
    """``timeout_scale`` is the wall length of one of ``timeoutSeconds``' seconds; a watch without them keeps
    ``watch_timeout``; a scale that is not a positive number is refused when the server is made."""
    rest = RestAPI(APIServer(), watch_timeout=30.0, timeout_scale=0.25)
    watch = {"watch": ["1"]}
    out = rest.handle(Request("GET", "/api/v1/namespaces/default/configmaps", {**watch, "timeoutSeconds": ["3"]}))
    assert isinstance(out, WatchResponse) and out.timeout == 0.75
    out.watch.close()
    out = rest.handle(Request("GET", "/api/v1/namespaces/default/configmaps", watch))
    assert isinstance(out, WatchResponse) and out.timeout == 30.0
    out.watch.close()
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="timeout_scale must be a positive number"), serve(APIServer(),
                                                                                               timeout_scale=bad):
            pass


# ------------------------------------------------------------------------ CLI


def test_serve_command_loads_manifests_and_serves(tmp_path: Path) -> None:
    crd = widget_crd()
    objects = [
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "team"},
         "spec": {"mode": "a"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"k": "v"}},
    ]
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(crd))
    kubeconfig = tmp_path / "kubeconfig"
    env = with_bytecode_cache({**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")]))})
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0", "--kubeconfig", str(kubeconfig),
         str(tmp_path / "objects.yaml"), str(tmp_path / "crd.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        m = re.match(r"fakeapi: serving (http://127\.0\.0\.1:(\d+))$", first.strip())
        assert m, first + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        assert f"kubeconfig {kubeconfig}" in proc.stdout.readline()
        assert "loaded 1 CRD(s) and 2 object(s)" in proc.stdout.readline()
        assert yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == m.group(1)
        ep = Endpoint(url=m.group(1), host="127.0.0.1", port=int(m.group(2)), kubeconfig_path=str(kubeconfig))
        # a served cluster authenticates: a token made at start, in the kubeconfig; any other is 401
        token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert call(ep, "GET", "/api/v1/namespaces", headers={"Authorization": "Bearer nope"})[0] == 401
        assert call(ep, "GET", "/api/v1/namespaces")[0] == 401
        code, _, w = call(ep, "GET", "/apis/example.com/v1/namespaces/team/widgets/w1", headers=auth)
        assert code == 200 and w["spec"] == {"mode": "a", "replicas": 1}
        code, _, c = call(ep, "GET", "/api/v1/namespaces/default/configmaps/settings", headers=auth)
        assert code == 200 and c["data"] == {"k": "v"}
        created = datetime.strptime(c["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert abs(datetime.now(UTC) - created) < timedelta(minutes=5)  # the clock follows wall time
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
