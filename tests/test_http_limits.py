"""The HTTP server stays up and is safe to leave running (issue 24): limits, timeouts, access.

Each test talks raw HTTP/1.1 to a server on a free loopback port (port 0), so
what is checked is what goes over the wire: status lines, metav1.Status bodies,
connections closed or kept. Timeouts are made short for the tests; waits are
bounded by socket timeouts, never by sleeps.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from support import with_bytecode_cache

from fakeapi.http.server import Endpoint
from fakeapi.machinery.bodycheck import MAX_REQUEST_BYTES
from fakeapi.server.apiserver import APIServer

CM = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"k":"v"}}'


@pytest.fixture
def served() -> Iterator[tuple[APIServer, Endpoint]]:
    """A server with short timeouts (idle 2 s, read 1 s) and a small pool."""
    api = APIServer()
    with api.serve(idle_timeout=2.0, read_timeout=1.0, max_workers=4, max_connections=64) as ep:
        yield api, ep


#: The timeouts of the tests that wait for one to pass: short, so the wait is short, yet long enough that
#: a loaded machine serves a request well within it (each test waits for the timeout once).
SHORT = 0.5


@pytest.fixture
def short_timeouts() -> Iterator[tuple[APIServer, Endpoint]]:
    """A server whose idle and read timeouts are :data:`SHORT` (the pool and limits as in ``served``)."""
    api = APIServer()
    with api.serve(idle_timeout=SHORT, read_timeout=SHORT, max_workers=4, max_connections=64) as ep:
        yield api, ep


def connect(ep: Endpoint, timeout: float = 10.0) -> socket.socket:
    """A raw client connection."""
    return socket.create_connection((ep.host, ep.port), timeout=timeout)


def request(sock: socket.socket, method: str, path: str, body: bytes = b"", *, host: str = "127.0.0.1",
            headers: dict[str, str] | None = None) -> None:
    """Send one request (Content-Length set from the body unless given)."""
    hs = {"Host": host, **({"Content-Length": str(len(body))} if body or method in ("POST", "PUT") else {}),
          **(headers or {})}
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hs.items()) + "\r\n"
    sock.sendall(head.encode() + body)


def response(sock: socket.socket) -> tuple[int, dict[str, str], Any]:
    """Read one response: status, headers (lower-case names), the JSON body (or text)."""
    f = sock.makefile("rb")
    status = f.readline()
    assert status.startswith(b"HTTP/1.1 "), status
    code = int(status.split()[1])
    headers: dict[str, str] = {}
    while True:
        line = f.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    raw = f.read(int(headers.get("content-length", "0")))
    try:
        return code, headers, json.loads(raw)
    except ValueError:
        return code, headers, raw.decode(errors="replace")


def closed_by_server(sock: socket.socket) -> bool:
    """The server closed the connection (EOF or reset), within the socket's timeout."""
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def roundtrip(ep: Endpoint, method: str, path: str, body: bytes = b"", **kw: Any) -> tuple[int, dict[str, str], Any]:
    """One request on a new connection."""
    with connect(ep) as s:
        request(s, method, path, body, **kw)
        return response(s)


def test_a_body_over_the_request_limit_is_413_before_it_is_read(served: tuple[APIServer, Endpoint]) -> None:
    """kube-apiserver's MaxRequestBodyBytes (3 MiB): a 413 Status naming the limit; nothing stored."""
    api, ep = served
    rv = api.resource_version
    with connect(ep) as s:
        request(s, "POST", "/api/v1/namespaces/default/configmaps", b"",
                headers={"Content-Length": str(50 * 1024 * 1024), "Content-Type": "application/json"})
        code, _, status = response(s)
        assert closed_by_server(s)
    assert code == 413
    assert status["reason"] == "RequestEntityTooLarge"
    assert status["message"] == f"Request entity too large: limit is {MAX_REQUEST_BYTES}"
    assert api.resource_version == rv


def test_a_huge_content_length_is_answered_not_a_dead_thread(served: tuple[APIServer, Endpoint]) -> None:
    """A Content-Length of 10**30 gets a 413 answer, and the server goes on serving."""
    _, ep = served
    with connect(ep) as s:
        request(s, "PUT", "/api/v1/namespaces/default/configmaps/x", headers={"Content-Length": "1" + "0" * 30})
        assert response(s)[0] == 413
    assert roundtrip(ep, "GET", "/api/v1/namespaces")[0] == 200


def test_a_chunked_body_over_the_limit_is_413(served: tuple[APIServer, Endpoint]) -> None:
    """The limit holds for chunked bodies too."""
    _, ep = served
    with connect(ep) as s:
        request(s, "POST", "/api/v1/namespaces/default/configmaps",
                headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"})
        s.sendall(b"%x\r\n" % (MAX_REQUEST_BYTES + 1))
        assert response(s)[0] == 413


def test_an_object_over_the_etcd_limit_is_refused_as_kube_apiserver_passes_on_etcds_error(
        served: tuple[APIServer, Endpoint]) -> None:
    """Under the request limit but over etcd's 1.5 MiB: 500 ``etcdserver: request is too large``; nothing stored."""
    api, ep = served
    big = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                      "data": {"k": "x" * (2 * 1024 * 1024)}}).encode()
    rv = api.resource_version
    code, _, status = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", big,
                                headers={"Content-Type": "application/json"})
    assert (code, status["message"], status.get("reason", "")) == (500, "etcdserver: request is too large", "")
    assert api.resource_version == rv


def test_an_unknown_method_is_405_method_not_allowed(served: tuple[APIServer, Endpoint]) -> None:
    """kube-apiserver answers a method it has no route for with 405 (not http.server's 501)."""
    _, ep = served
    code, _, status = roundtrip(ep, "BREW", "/api/v1/namespaces")
    assert code == 405
    assert status["reason"] == "MethodNotAllowed"
    assert status["message"] == "the server does not allow this method on the requested resource"


def test_deleting_the_namespaces_collection_is_405_and_changes_nothing(served: tuple[APIServer, Endpoint]) -> None:
    """The namespace storage has no DeleteCollection: 405, default namespaces stay Active; discovery agrees."""
    api, ep = served
    rv = api.resource_version
    code, _, status = roundtrip(ep, "DELETE", "/api/v1/namespaces")
    assert (code, status["reason"]) == (405, "MethodNotAllowed")
    assert api.resource_version == rv
    assert all(n["status"]["phase"] == "Active" for n in api.list("Namespace")["items"])
    _, _, resources = roundtrip(ep, "GET", "/api/v1")
    verbs = {r["name"]: r["verbs"] for r in resources["resources"]}
    assert "deletecollection" not in verbs["namespaces"]
    assert "deletecollection" in verbs["configmaps"]


def test_a_handler_error_is_answered_with_a_500_status(served: tuple[APIServer, Endpoint],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug below the REST layer's own catch still gets a metav1.Status 500, not a dropped connection."""
    _, ep = served
    import fakeapi.http.server as http_server

    def broken(self: Any, req: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(http_server.AccessPolicy, "check", broken)
    code, _, status = roundtrip(ep, "GET", "/api/v1/namespaces")
    assert code == 500
    assert status["kind"] == "Status" and "RuntimeError: boom" in status["message"]


def test_a_slow_request_is_cut_off_at_the_read_timeout(short_timeouts: tuple[APIServer, Endpoint]) -> None:
    """Headers sent a piece at a time (slowloris) do not hold a worker past the read timeout (0.5 s here)."""
    _, ep = short_timeouts
    with connect(ep, timeout=15.0) as s:
        s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.sendall(b"X-Slow: 1\r\n")  # (and never the blank line)
        assert closed_by_server(s)
    assert roundtrip(ep, "GET", "/api/v1/namespaces")[0] == 200


def test_an_idle_connection_is_closed_at_the_idle_timeout(short_timeouts: tuple[APIServer, Endpoint]) -> None:
    """A keep-alive connection left idle is closed by the server (0.5 s here), after serving its request."""
    _, ep = short_timeouts
    with connect(ep, timeout=15.0) as s:
        request(s, "GET", "/api/v1/namespaces")
        assert response(s)[0] == 200
        assert closed_by_server(s)


def test_idle_connections_take_no_thread_each(served: tuple[APIServer, Endpoint]) -> None:
    """Forty open idle connections: the thread count stays within the pool's bound, and requests are served."""
    _, ep = served
    before = threading.active_count()
    socks = [connect(ep) for _ in range(40)]
    try:
        for s in socks[:8]:  # (some of them in use, keep-alive)
            request(s, "GET", "/api/v1/namespaces")
            assert response(s)[0] == 200
        assert threading.active_count() <= before + 4  # (at most the pool's 4 workers)
        assert roundtrip(ep, "GET", "/version")[0] == 200
    finally:
        for s in socks:
            s.close()


def test_watches_do_not_starve_the_pool() -> None:
    """More open watches than workers: each adds a worker while it streams, so requests are still served."""
    api = APIServer()
    with api.serve(max_workers=2) as ep:
        watches = [connect(ep) for _ in range(5)]
        try:
            for s in watches:
                request(s, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=60")
                assert s.makefile("rb").readline().startswith(b"HTTP/1.1 200")
            assert roundtrip(ep, "GET", "/api/v1/namespaces")[0] == 200
        finally:
            for s in watches:
                s.close()


def test_a_connection_over_the_cap_is_closed_at_once() -> None:
    """``max_connections``: the connection over the cap is closed without an answer; the others are served."""
    api = APIServer()
    with api.serve(max_connections=3, idle_timeout=30.0) as ep:
        held = [connect(ep) for _ in range(3)]
        try:
            for s in held:
                request(s, "GET", "/version")
                assert response(s)[0] == 200
            with connect(ep) as extra:
                assert closed_by_server(extra)
        finally:
            for s in held:
                s.close()


# ---------------------------------------------------------------------------------------------- access


@pytest.fixture
def with_token() -> Iterator[tuple[APIServer, Endpoint]]:
    """A server that requires the bearer token ``s3cret``."""
    api = APIServer()
    with api.serve(token="s3cret") as ep:
        yield api, ep


@pytest.mark.parametrize("auth", [None, "Bearer wrong", "Basic czNjcmV0", "Bearer"])
def test_with_a_token_set_a_request_without_it_is_401(with_token: tuple[APIServer, Endpoint],
                                                      auth: str | None) -> None:
    """No token, another token, another scheme: kube-apiserver's 401 Status, and no Secret is read."""
    api, ep = with_token
    api.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
                "stringData": {"password": "hunter2"}})
    headers = {"Authorization": auth} if auth else {}
    code, _, status = roundtrip(ep, "GET", "/api/v1/namespaces/default/secrets", headers=headers)
    assert code == 401
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_with_the_token_requests_are_served_and_the_kubeconfig_carries_it(
        with_token: tuple[APIServer, Endpoint]) -> None:
    """The right token is served; the kubeconfig written has it, so the official client just works."""
    from kubernetes import client, config

    _, ep = with_token
    assert roundtrip(ep, "GET", "/api/v1/namespaces", headers={"Authorization": "Bearer s3cret"})[0] == 200
    assert ep.kubeconfig()["users"][0]["user"]["token"] == "s3cret"
    c = config.new_client_from_config(config_file=ep.kubeconfig_path)
    try:
        names = {n.metadata.name for n in client.CoreV1Api(c).list_namespace().items}
    finally:
        c.close()
    assert "default" in names


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:80", "127.0.0.1.nip.io", "10.0.0.1"])
def test_a_host_header_that_does_not_name_the_server_is_403(served: tuple[APIServer, Endpoint], host: str) -> None:
    """DNS rebinding: a page whose name resolves to 127.0.0.1 sends its own name as Host: refused."""
    _, ep = served
    code, _, status = roundtrip(ep, "GET", "/api/v1/namespaces", host=host)
    assert (code, status["reason"]) == (403, "Forbidden")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST:1234", "127.0.0.1:80", "[::1]:8080"])
def test_loopback_host_headers_are_served(served: tuple[APIServer, Endpoint], host: str) -> None:
    """Loopback names and addresses (with any port) name the server."""
    _, ep = served
    assert roundtrip(ep, "GET", "/version", host=host)[0] == 200


@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                   "text/plain", "text/plain;charset=UTF-8"])
def test_a_browser_form_post_is_415_and_stores_nothing(served: tuple[APIServer, Endpoint], ctype: str) -> None:
    """A cross-origin form post (the media types a browser sends without a preflight) cannot write."""
    api, ep = served
    rv = api.resource_version
    code, _, status = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", CM % b"form",
                                headers={"Content-Type": ctype})
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"].startswith("the body of the request was in an unknown format - accepted media types")
    assert api.resource_version == rv


def test_a_body_without_content_type_is_json_unless_a_browser_sent_it(served: tuple[APIServer, Endpoint]) -> None:
    """As kube-apiserver, no Content-Type reads as JSON (the official client's creates); with an Origin: 415."""
    api, ep = served
    assert roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", CM % b"plain")[0] == 201
    code, _, _ = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", CM % b"browser",
                           headers={"Origin": "https://evil.example.com"})
    assert code == 415
    assert {c["metadata"]["name"] for c in api.list("ConfigMap", "default")["items"]} == {"plain"}


def test_a_lone_surrogate_escape_is_read_as_go_reads_it_and_lists_keep_working(
        served: tuple[APIServer, Endpoint]) -> None:
    """``"\\ud800"`` in a JSON body becomes U+FFFD (Go's decoder), so the object stays readable."""
    _, ep = served
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"a":"\\ud800"}}'
    code, _, obj = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", body,
                             headers={"Content-Type": "application/json"})
    assert code == 201 and obj["data"] == {"a": "\ufffd"}
    code, _, listing = roundtrip(ep, "GET", "/api/v1/namespaces/default/configmaps")
    assert code == 200 and listing["items"][0]["data"] == {"a": "\ufffd"}


def test_a_yaml_alias_bomb_body_is_a_fast_400(served: tuple[APIServer, Endpoint]) -> None:
    """A few hundred bytes that would expand to 387 million scalars: 400 with go-yaml's message, nothing stored."""
    api, ep = served
    bomb = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nx:\n  a0: &a0 [l, l, l, l, l, l, l, l, l]\n"
    for i in range(1, 10):
        bomb += f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n"
    rv = api.resource_version
    code, _, status = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", bomb.encode(),
                                headers={"Content-Type": "application/yaml"})
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "yaml: document contains excessive aliasing" in status["message"]
    assert api.resource_version == rv


@pytest.mark.parametrize("ctype,body", [
    ("application/json", b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":' + b"[" * 10000
     + b"]" * 10000 + b"}"),
    ("application/json", b"[" * 100000 + b"]" * 100000),
    ("application/yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: " + b"[" * 100000),
])
def test_deep_nesting_is_a_400_bad_request_not_a_recursion_error(served: tuple[APIServer, Endpoint], ctype: str,
                                                                 body: bytes) -> None:
    """Nesting past the bound: a clean 400 over HTTP (never a 500 RecursionError or a crash)."""
    _, ep = served
    code, _, status = roundtrip(ep, "POST", "/api/v1/namespaces/default/configmaps", body,
                                headers={"Content-Type": ctype})
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "max depth" in status["message"]


def test_serve_refuses_a_non_loopback_host_without_a_token(capsys: pytest.CaptureFixture[str]) -> None:
    """``fakeapi serve --host 0.0.0.0`` warns and exits 2 unless given --token or --insecure-allow-any-host."""
    from fakeapi import serve_cmd

    assert serve_cmd.main(["--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "warning: --host 0.0.0.0 serves beyond this machine" in err and "needs --token" in err
    parser = __import__("argparse").ArgumentParser()
    serve_cmd.add_arguments(parser)
    assert serve_cmd.access_problem(parser.parse_args(["--host", "0.0.0.0", "--token", "t"])) is None
    assert serve_cmd.access_problem(parser.parse_args(["--host", "0.0.0.0", "--insecure-allow-any-host"])) is None
    assert serve_cmd.access_problem(parser.parse_args(["--host", "::1"])) is None
    assert "warning" in capsys.readouterr().err  # (the other two still warn)


def test_fakeapi_serve_with_a_token_writes_it_to_the_kubeconfig_and_requires_it(tmp_path: Any) -> None:
    """``fakeapi serve --token T``: 401 without it, served with it, and the kubeconfig written carries it."""
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "fakeapi.serve_cmd", "--token", "t0ken", "--kubeconfig",
                             str(kubeconfig)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=with_bytecode_cache(dict(os.environ)))
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # "fakeapi: serving http://127.0.0.1:PORT"
        assert first.startswith("fakeapi: serving http://127.0.0.1:"), first + (proc.stderr.read() if proc.stderr else "")
        port = int(first.rsplit(":", 1)[1])
        ep = Endpoint(url=first.split()[-1], host="127.0.0.1", port=port, kubeconfig_path=str(kubeconfig))
        assert roundtrip(ep, "GET", "/api/v1/namespaces")[0] == 401
        assert roundtrip(ep, "GET", "/api/v1/namespaces", headers={"Authorization": "Bearer t0ken"})[0] == 200
        assert yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"] == "t0ken"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_served_process_keeps_its_trace_bounded() -> None:
    """``fakeapi serve`` trims the trace it would otherwise grow by one record per request."""
    from fakeapi.serve_cmd import trim_trace

    api = APIServer()
    for _ in range(50):
        api.list("Namespace")
    trim_trace(api, keep=10)
    assert len(api.trace.calls) == 10 and len(api.trace.entries) == 10
    assert api.trace.calls[-1].verb == "list"


def test_serve_makes_a_token_unless_told_not_to() -> None:
    """A served cluster authenticates by default (a token made at start); ``--no-token`` accepts any."""
    import argparse

    from fakeapi import serve_cmd

    parser = argparse.ArgumentParser()
    serve_cmd.add_arguments(parser)
    made = serve_cmd.served_token(parser.parse_args([]))
    assert made is not None and len(made) >= 32
    assert made != serve_cmd.served_token(parser.parse_args([]))
    assert serve_cmd.served_token(parser.parse_args(["--token", "t0"])) == "t0"
    assert serve_cmd.served_token(parser.parse_args(["--no-token"])) is None
