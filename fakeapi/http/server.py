"""The HTTP transport: a threading HTTP/1.1 server on loopback, chunked watch streams, kubeconfig.

:func:`serve` is the entry point::

    with fakeapi.http.serve(api) as endpoint:
        kubernetes.config.load_kube_config(config_file=endpoint.kubeconfig_path)
        kubernetes.client.CoreV1Api().list_namespace()

It uses only the standard library (``http.server.ThreadingHTTPServer``): one
thread per connection, keep-alive, ``TCP_NODELAY``. Requests are translated by
:class:`~fakeapi.http.rest.RestAPI`; every verb takes ``api.lock``, and watch
threads block in :meth:`~fakeapi.server.watch.Watch.wait` on the server's condition,
so the in-process host and any number of HTTP clients can share the server.
Leaving the ``with`` block ends every open watch and connection and removes
the temporary kubeconfig.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, urlsplit

import yaml

from fakeapi.http import pool
from fakeapi.http.guard import AccessPolicy
from fakeapi.http.rest import DEFAULT_WATCH_TIMEOUT, Request, Response, RestAPI, WatchResponse, encode
from fakeapi.machinery import bodycheck, errors
from fakeapi.server import hooks

if TYPE_CHECKING:
    from fakeapi.http.tls import ClusterCA, KeyPair
    from fakeapi.server.apiserver import APIServer
    from fakeapi.server.watch import WatchEvent

#: How often an idle watch wakes to notice a vanished client or a shutdown (seconds).
WATCH_POLL_SLICE = 1.0
#: How often a watch with ``allowWatchBookmarks`` gets a BOOKMARK (kube-apiserver: about a minute).
DEFAULT_BOOKMARK_INTERVAL = 60.0
#: The name used for the cluster, user and context of the written kubeconfig.
KUBECONFIG_NAME = "fakeapi"
#: The bearer token written to the kubeconfig of a server started without one (which accepts any, or none).
KUBECONFIG_TOKEN = "fakeapi"


class ServedCluster(Protocol):
    """The controllers and node running beside a served server (:class:`fakeapi.host.cluster.ServedCluster`)."""

    def start(self) -> Any:
        """Run the cluster's loop in a background thread."""

    def stop(self, timeout: float = 5.0) -> None:
        """End the loop."""

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until the work the writes so far made due is done."""

    def advance(self, duration: Any) -> None:
        """Move the virtual clock on, running what falls due."""

    def read_log(self, namespace: str, name: str, container: str) -> list[tuple[datetime, str]]:
        """What a container wrote."""


def register_cluster(factory: Callable[..., ServedCluster]) -> None:
    """Install what ``serve(..., cluster=True)`` runs beside the server (:func:`fakeapi.server.hooks.register_cluster`)."""
    hooks.register_cluster(factory)


@dataclass(frozen=True)
class Endpoint:
    """Where a served fakeapi listens, and a kubeconfig that points at it."""

    #: ``http://127.0.0.1:PORT``
    url: str
    host: str
    port: int
    #: A kubeconfig file (cluster, user with a token, context ``fakeapi``, namespace ``default``).
    kubeconfig_path: str
    #: The controllers, node and clock of the served cluster (``serve(..., cluster=True)``), else None.
    cluster: ServedCluster | None = None
    #: The CA that signed the serving certificate, PEM (``serve(..., tls=True)``), else None.
    ca_pem: bytes | None = None
    #: The client certificate and key the kubeconfig carries (with TLS), else None.
    client_cert: KeyPair | None = None

    #: The bearer token the server requires (None: it requires none).
    token: str | None = None

    def kubeconfig(self) -> dict[str, Any]:
        """The kubeconfig document as a dict (the content of :attr:`kubeconfig_path`)."""
        return kubeconfig_document(self.url, token=self.token, ca_pem=self.ca_pem, client_cert=self.client_cert)


def kubeconfig_document(url: str, *, namespace: str = "default", token: str | None = None,
                        ca_pem: bytes | None = None, client_cert: KeyPair | None = None) -> dict[str, Any]:
    """A kubeconfig for ``url``: the server's token (or one a server without a token accepts); with
    ``ca_pem`` (TLS) the CA to trust and, with ``client_cert``, a client certificate too, else
    ``insecure-skip-tls-verify``."""
    import base64

    cluster: dict[str, Any] = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    else:
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {"token": token or KUBECONFIG_TOKEN}
    if client_cert is not None:
        user["client-certificate-data"] = base64.b64encode(client_cert.cert_pem).decode()
        user["client-key-data"] = base64.b64encode(client_cert.key_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": KUBECONFIG_NAME, "cluster": cluster}],
        "users": [{"name": KUBECONFIG_NAME, "user": user}],
        "contexts": [{"name": KUBECONFIG_NAME,
                      "context": {"cluster": KUBECONFIG_NAME, "user": KUBECONFIG_NAME, "namespace": namespace}}],
        "current-context": KUBECONFIG_NAME,
    }


def write_kubeconfig(path: str | os.PathLike[str], url: str, *, namespace: str = "default",
                     token: str | None = None, ca_pem: bytes | None = None,
                     client_cert: KeyPair | None = None) -> str:
    """Write a kubeconfig for ``url`` to ``path`` (mode 0600) and return the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_document(url, namespace=namespace, token=token, ca_pem=ca_pem,
                                              client_cert=client_cert), sort_keys=False)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return str(p)


def _warning_header(text: str) -> str:
    """``299 - "text"``: the Warning header kube-apiserver sends (quoted, ASCII-escaped)."""
    return "299 - " + json.dumps(text, ensure_ascii=True)


def _event_line(event: WatchEvent, resp: WatchResponse) -> bytes:
    obj = event.object if resp.convert is None else resp.convert(event.object)
    if resp.frame is not None:
        return resp.frame(event.type, obj)
    return encode({"type": event.type, "object": obj})  # (one line: encode ends it)


class _Handler(BaseHTTPRequestHandler):
    """One connection: parses requests and writes responses or watch streams."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: FakeAPIHTTPServer
    #: The dispatcher's record of this connection (fakeapi.http.pool).
    conn: pool.Connection
    #: The status line and headers of the current response were sent (a late failure cannot answer).
    _answered = False

    @classmethod
    def for_connection(cls, conn: pool.Connection, server: FakeAPIHTTPServer) -> _Handler:
        """A handler kept with its connection across requests (``setup`` only: the pool calls
        :meth:`handle_one_request` once per request)."""
        h = cls.__new__(cls)
        h.request, h.client_address, h.server, h.conn = conn.sock, conn.address, server, conn
        h.timeout = server.read_timeout  # type: ignore[misc]  # (every blocking socket read or write is bounded)
        h.setup()
        if conn.prebuffered:  # (each request is read from what the selector read, then the socket)
            h.rfile.close()
        return h

    def __getattr__(self, name: str) -> Any:
        """Any other method (``do_FOO``) is served too: the REST layer answers 405 as kube-apiserver does."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def version_string(self) -> str:
        """The ``Server`` header."""
        return "fakeapi"

    def do_GET(self) -> None:
        """Every method goes through :meth:`_serve` (the REST layer answers 405 where it must)."""
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors raised by ``http.server`` itself (malformed request line, headers...) as a metav1.Status."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # an unparsable request line: still answer with a status line
            self.request_version = "HTTP/1.0"
        text = message or self.responses.get(code, ("error",))[0]
        reason = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge",
                  414: "RequestURITooLong", 431: "BadRequest", 501: "MethodNotAllowed"}.get(code, "")
        body = encode(errors.status_body(code, reason, text))
        self.send_response(code, message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Request logging, only when the server is verbose."""
        if self.server.verbose:
            super().log_message(format, *args)

    def _read_body(self) -> bytes:
        """The request body (Content-Length or chunked), at most ``max_body`` bytes (_BodyTooLarge past it)."""
        limit = self.server.max_body
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            total = 0
            while True:
                size_line = self.rfile.readline(65537)
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size < 0:
                    raise ValueError("negative chunk size")
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > limit:
                    raise _BodyTooLarge()
                chunk = self.rfile.read(size)
                if len(chunk) < size:
                    raise ValueError("truncated chunk")
                parts.append(chunk)
                self.rfile.readline(65537)
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        n = int(length)
        if n < 0:
            raise ValueError("negative Content-Length")
        if n > limit:
            raise _BodyTooLarge()
        body = self.rfile.read(n)
        if len(body) < n:
            raise ValueError("truncated body")
        return body

    def _serve(self) -> None:
        """Serve one request; whatever fails is answered (a 500 Status at worst), never a dropped connection."""
        try:
            self._serve_request()
        except Exception as e:  # (issue 24: a bug in a handler still gets an answer)
            self.close_connection = True
            if not self._answered:
                with contextlib.suppress(Exception):
                    err = errors.internal(f"Internal error occurred: {type(e).__name__}: {e}")
                    self._send(Response(500, encode(err.status)))
            if self.server.verbose:
                raise

    def _serve_request(self) -> None:
        self._answered = False
        try:
            body = self._read_body()
        except _BodyTooLarge:
            self.close_connection = True  # (the body is not read: the connection cannot be reused)
            self._send(Response(413, encode(errors.status_body(
                413, "RequestEntityTooLarge", f"Request entity too large: limit is {self.server.max_body}"))))
            return
        except (ValueError, OverflowError):
            self.close_connection = True
            self._send(Response(400, encode(errors.status_body(400, "BadRequest", "malformed request body"))))
            return
        finally:
            conn = getattr(self, "conn", None)
            if conn is not None:
                conn.done_reading()
        url = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = Request(self.command, url.path, parse_qs(url.query, keep_blank_values=True), headers, body)
        denied = self.server.guard.check(  # (issue 24: token, Host header, body media type)
            req, authenticated=self._authenticated_otherwise(req))
        if denied is not None:
            self._send(denied)
            return
        resp = self.server.rest.handle(req)
        if isinstance(resp, WatchResponse):
            self._stream(resp)
        else:
            self._send(resp)

    def _send(self, resp: Response) -> None:
        self._answered = True
        self.send_response(resp.code)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(len(resp.body)))
        self.send_header("Cache-Control", "no-cache, private")
        for w in resp.warnings:
            self.send_header("Warning", _warning_header(w))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp.body)

    def _authenticated_otherwise(self, req: Request) -> bool:
        """Is the request authenticated other than by the server's token, as kube-apiserver's other
        authenticators would: a client certificate the server's CA signed (TLS verified it), or a
        ServiceAccount token this server issued that has not expired?"""
        if self.server.guard.token is None:
            return False
        peer = getattr(self.connection, "getpeercert", None)
        if peer is not None and peer():
            return True
        scheme, _, given = req.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or given.count(".") != 2:
            return False
        from fakeapi.http.tokens import issuer_for

        return issuer_for(self.server.api).claims(self.server.api, given.strip()) is not None

    def _stream(self, resp: WatchResponse) -> None:
        with self.server.dispatcher.long_running():  # (issue 24: a watch does not hold a pool worker)
            self._stream_events(resp)

    def _stream_events(self, resp: WatchResponse) -> None:
        self._answered = True
        self.send_response(200)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        for w in resp.warnings:
            self.send_header("Warning", _warning_header(w))
        self.end_headers()
        try:
            complete = self.server.pump(resp, self._write_chunk, self._client_gone)
            if complete:
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.close_connection = True
        except OSError:
            self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _client_gone(self) -> bool:
        """True when the peer closed its side (readable with nothing to read)."""
        sock = self.connection
        try:
            if hasattr(select, "poll"):
                p = select.poll()
                p.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
                ready = bool(p.poll(0))
            else:  # pragma: no cover - non-POSIX
                ready = bool(select.select([sock], [], [], 0)[0])
            # (the raw socket's peek: a TLS socket refuses flags, and its pending bytes are still encrypted)
            return ready and socket.socket.recv(sock, 1, socket.MSG_PEEK) == b""
        except OSError:
            return True


class _BodyTooLarge(Exception):
    """The request body is over the server's limit (kube-apiserver's 3 MiB)."""


class FakeAPIHTTPServer(ThreadingHTTPServer):
    """An HTTP server for one :class:`~fakeapi.server.apiserver.APIServer` through :class:`RestAPI`.

    Connections are served by a :class:`~fakeapi.http.pool.ConnectionDispatcher` (a selector for
    idle ones, a bounded pool of workers, idle and read timeouts), not by a thread each.
    """

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, api: APIServer, host: str = "127.0.0.1", port: int = 0, *,
                 bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
                 watch_timeout: float = DEFAULT_WATCH_TIMEOUT, timeout_scale: float = 1.0, verbose: bool = False,
                 token: str | None = None, allowed_hosts: tuple[str, ...] = (),
                 max_workers: int = pool.DEFAULT_MAX_WORKERS, max_connections: int = pool.DEFAULT_MAX_CONNECTIONS,
                 idle_timeout: float = pool.DEFAULT_IDLE_TIMEOUT, read_timeout: float = pool.DEFAULT_READ_TIMEOUT,
                 max_body: int = bodycheck.MAX_REQUEST_BYTES, ssl_context: ssl.SSLContext | None = None) -> None:
        if not timeout_scale > 0:
            raise ValueError(f"timeout_scale must be a positive number of seconds, not {timeout_scale!r}")
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.api = api
        self.verbose = verbose
        # --- issue 24: limits and access ---
        self.token = token
        self.read_timeout = read_timeout
        self.max_body = max_body
        self.guard = AccessPolicy(host, token, frozenset(allowed_hosts))
        if token is not None:
            from fakeapi.http.tokens import issuer_for

            issuer_for(api).add_static_token(token)  # (a TokenReview of it names the administrator)
        self.dispatcher = pool.ConnectionDispatcher(
            self._serve_one, max_workers=max_workers, max_connections=max_connections,
            idle_timeout=idle_timeout, read_timeout=read_timeout, on_close=_finish_handler)
        # --- end issue 24 ---
        self.bookmark_interval = bookmark_interval
        self.stopping = threading.Event()
        try:
            super().__init__((host, port), _Handler)
        except BaseException:
            self.dispatcher.close(0)
            raise
        self.tls = ssl_context is not None
        if ssl_context is not None:  # (the handshake happens in a pool worker, on the first request: _serve_one)
            self.socket = ssl_context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        bound_host, bound_port = self.server_address[:2]
        self.host = str(bound_host)
        self.port = int(bound_port)
        self.rest = RestAPI(api, server_address=f"{self.host}:{self.port}", watch_timeout=watch_timeout,
                            timeout_scale=timeout_scale)

    @property
    def url(self) -> str:
        """``http://host:port`` or ``https://…`` (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def server_bind(self) -> None:
        """Bind without the reverse DNS lookup ``HTTPServer.server_bind`` makes."""
        import socketserver

        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand a new connection to the dispatcher (no thread of its own: fakeapi.http.pool)."""
        if self.stopping.is_set():
            self.shutdown_request(request)
            return
        self.dispatcher.add(request, client_address)

    def _serve_one(self, conn: pool.Connection) -> bool:
        """Serve one request of ``conn`` in a pool worker; True to keep the connection open."""
        h = conn.state
        if h is None:
            if isinstance(conn.sock, ssl.SSLSocket):  # (TLS: the handshake, bounded by the read timeout)
                try:
                    conn.sock.settimeout(self.read_timeout)
                    conn.sock.do_handshake()
                except (OSError, ValueError):  # (a client that gave up, or spoke plain HTTP)
                    return False
            h = conn.state = _Handler.for_connection(conn, self)
        h.close_connection = True
        if conn.prebuffered:
            h.rfile = conn.reader()
        try:
            h.handle_one_request()
            h.wfile.flush()
        except OSError:  # (the client went away, or its read was too slow: the socket was shut down)
            return False
        keep = not h.close_connection and not self.stopping.is_set()
        if keep and conn.prebuffered:
            conn.sock.setblocking(False)
            conn.keep_unread(h.rfile)  # (bytes of a next request already read stay with the connection)
        return keep

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connection errors (a client that went away) are not worth a traceback unless verbose."""
        if self.verbose:
            super().handle_error(request, client_address)

    # ------------------------------------------------------------------ watch

    def pump(self, resp: WatchResponse, write: Callable[[bytes], None], gone: Callable[[], bool]) -> bool:
        """Stream a watch until its timeout, an ERROR event, the client leaving or shutdown.

        Returns True when the stream ended normally (the terminating chunk may be sent).
        """
        w = resp.watch
        api = self.api
        now = time.monotonic()
        deadline = now + resp.timeout
        interval = self.bookmark_interval
        next_bookmark = now + interval if resp.bookmarks and interval > 0 else float("inf")
        try:
            with api.lock:
                events = w.poll(copy=False)
            while True:
                if events:
                    write(b"".join(_event_line(e, resp) for e in events))
                    if any(e.type == "ERROR" for e in events):
                        return True
                now = time.monotonic()
                if self.stopping.is_set() or w.closed:
                    return False
                if now >= deadline:
                    break
                if now >= next_bookmark:
                    write(self._drain_with_bookmark(resp))
                    next_bookmark = now + interval
                if gone():
                    return False
                events = w.wait(min(deadline, next_bookmark, now + WATCH_POLL_SLICE) - now)
            if resp.bookmarks:
                write(self._drain_with_bookmark(resp))
            return True
        finally:
            w.close()

    def _drain_with_bookmark(self, resp: WatchResponse) -> bytes:
        """The watch's pending events followed by a BOOKMARK, taken atomically under the server lock.

        A bookmark promises "you have seen everything up to this resourceVersion": a write
        committed between draining the events and reading the revision would be skipped by
        a client that resumes from the bookmark, so both happen under ``api.lock``.
        """
        with self.api.lock:
            events = resp.watch.poll(copy=False)
            bm = resp.watch.bookmark()
        if bm is not None:
            events.append(bm)
        return b"".join(_event_line(e, resp) for e in events)

    # -------------------------------------------------------------- lifecycle

    def start(self) -> threading.Thread:
        """Accept connections in a daemon thread."""
        t = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.1},
                             name=f"fakeapi-http-accept-{self.port}", daemon=True)
        t.start()
        self._accept_thread = t
        return t

    def close(self, timeout: float = 5.0) -> None:
        """Stop accepting, end open watches and connections, and wait (bounded) for their threads."""
        self.stopping.set()
        if getattr(self, "_accept_thread", None) is not None:
            self.shutdown()
        self.server_close()
        self.api.wake_watchers()
        self.dispatcher.close(timeout)


@contextlib.contextmanager
def serve(
    api: APIServer,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    kubeconfig_path: str | os.PathLike[str] | None = None,
    namespace: str = "default",
    bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
    watch_timeout: float = DEFAULT_WATCH_TIMEOUT,
    timeout_scale: float = 1.0,
    verbose: bool = False,
    tls: bool = False,
    cluster: bool | ServedCluster = False,
    wall_clock: bool = False,
    **limits: Any,
) -> Iterator[Endpoint]:
    """Serve ``api``'s Kubernetes REST API over HTTP for the duration of the ``with`` block.

    ``port=0`` picks a free port. The kubeconfig is written to ``kubeconfig_path``,
    or to a temporary directory removed on exit; its context's namespace is
    ``namespace``. ``bookmark_interval`` spaces the BOOKMARK events of watches
    that allow them; ``watch_timeout`` is the duration of a watch without
    ``timeoutSeconds``, and ``timeout_scale`` the wall seconds one of its
    seconds lasts (1.0; a test waiting for a watch to end shortens it).
    ``verbose`` logs each request to stderr.

    ``tls``: serve HTTPS with a CA and serving certificate made now (:mod:`fakeapi.http.tls`); the
    kubeconfig trusts the CA and carries a client certificate besides the token. ``cluster``: run the
    garbage collector, namespace controller, kubelet and namespace bootstrap beside the server
    (:class:`~fakeapi.host.cluster.ServedCluster`; or pass one), the clock following wall time when
    ``wall_clock``, else moved only by ``endpoint.cluster.advance``.

    Access and limits (keywords of :class:`FakeAPIHTTPServer`): ``token`` (requests must carry it as a
    bearer token; the kubeconfig does), ``allowed_hosts`` (more names the Host header may give),
    ``max_workers``, ``max_connections``, ``idle_timeout``, ``read_timeout`` and ``max_body``
    (kube-apiserver's 3 MiB request limit by default).
    """
    ca: ClusterCA | None = None
    if tls or cluster is True:
        from fakeapi.http.tls import ClusterCA

        ca = ClusterCA()
    ctx: ssl.SSLContext | None = None
    client_cert: KeyPair | None = None
    if tls and ca is not None:
        from fakeapi.http.tls import serving_hosts

        ctx = ca.server_context(serving_hosts(host))
        client_cert = ca.client_pair()
    served: ServedCluster | None = None
    if cluster is True:
        assert ca is not None
        served = hooks.cluster_factory()(api, wall_clock=wall_clock, ca_pem=ca.cert_pem.decode())
    elif cluster is not False:
        served = cluster
    httpd = FakeAPIHTTPServer(api, host, port, bookmark_interval=bookmark_interval,
                              watch_timeout=watch_timeout, timeout_scale=timeout_scale, verbose=verbose,
                              ssl_context=ctx, **limits)
    tmpdir: str | None = None
    try:
        if kubeconfig_path is None:
            tmpdir = tempfile.mkdtemp(prefix="fakeapi-")
            kubeconfig_path = os.path.join(tmpdir, "kubeconfig")
        ca_pem = ca.cert_pem if ctx is not None and ca is not None else None
        path = write_kubeconfig(kubeconfig_path, httpd.url, namespace=namespace, token=httpd.token, ca_pem=ca_pem,
                                client_cert=client_cert)
        if served is not None:
            httpd.rest.subresources.logs = served.read_log
            served.start()
        httpd.start()
        yield Endpoint(url=httpd.url, host=httpd.host, port=httpd.port, kubeconfig_path=path, cluster=served,
                       ca_pem=ca_pem, client_cert=client_cert, token=httpd.token)
    finally:
        httpd.close()
        if served is not None:
            served.stop()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _finish_handler(conn: pool.Connection) -> None:
    """A connection closes: flush and close its handler's files."""
    h = conn.state
    if h is not None:
        with contextlib.suppress(Exception):
            h.finish()
