"""Connections without a thread each: a selector for idle ones, a bounded pool of workers for requests.

``http.server.ThreadingHTTPServer`` gives every connection a thread for its whole
life: 800 idle keep-alive connections are 800 threads, and a client that sends
its headers a byte at a time holds its thread for as long as it likes. Here:

* an idle connection (between requests, or before its first) waits in one
  selector thread, costing no thread; when bytes arrive it is handed to a
  worker of a pool of at most ``max_workers`` threads, which serves one
  request and gives the connection back;
* a connection idle for ``idle_timeout`` seconds is closed (Go's
  ``http.Server.IdleTimeout``: 90 s in kube-apiserver);
* a request must be read whole (request line, headers and body) within
  ``read_timeout`` seconds of its first byte, else its socket is shut down
  (kube-apiserver's ``ReadHeaderTimeout`` is 32 s);
* at most ``max_connections`` are open at once: a connection over that is
  closed as soon as it is accepted;
* work waits in the pool's queue when every worker is busy (a watch holds
  its worker while it streams).

The dispatcher knows nothing of HTTP: ``serve_one(conn)`` serves one request
on a connection and says whether to keep it open.
"""

from __future__ import annotations

import contextlib
import queue
import selectors
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

#: Defaults: Go's IdleTimeout and ReadHeaderTimeout as kube-apiserver sets them.
DEFAULT_IDLE_TIMEOUT = 90.0
DEFAULT_READ_TIMEOUT = 32.0
DEFAULT_MAX_WORKERS = 64
DEFAULT_MAX_CONNECTIONS = 1024
#: How often the selector wakes to expire idle connections and slow reads (seconds).
TICK = 0.25


@dataclass(eq=False)
class Connection:
    """One accepted connection and what the dispatcher tracks of it."""

    sock: socket.socket
    address: Any
    #: Set by the owner (the HTTP handler of this connection, made on its first request).
    state: Any = None
    idle_since: float = field(default_factory=time.monotonic)
    #: When the request being read must be read by (None: not reading).
    read_deadline: float | None = None
    closed: bool = False

    def done_reading(self) -> None:
        """The request is read whole: its read deadline no longer applies."""
        self.read_deadline = None


class ConnectionDispatcher:
    """A selector thread and a bounded worker pool serving the connections given to :meth:`add`."""

    def __init__(self, serve_one: Callable[[Connection], bool], *, max_workers: int = DEFAULT_MAX_WORKERS,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS, idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, name: str = "fakeapi-http",
                 on_close: Callable[[Connection], None] | None = None) -> None:
        self.serve_one = serve_one
        self.on_close = on_close
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.read_timeout = read_timeout
        self.pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=f"{name}-worker")
        self.selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._all: set[Connection] = set()
        self._returns: queue.SimpleQueue[Connection] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"{name}-selector", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public

    def add(self, sock: socket.socket, address: Any) -> None:
        """Take a newly accepted connection (closed at once when over ``max_connections`` or stopping)."""
        with self._lock:
            full = len(self._all) >= self.max_connections or self._stopping.is_set()
            conn = Connection(sock, address)
            if not full:
                self._all.add(conn)
        if full:
            _close_socket(sock)
            return
        self._give_back(conn)

    @property
    def open_connections(self) -> int:
        """How many connections are open."""
        with self._lock:
            return len(self._all)

    def close(self, timeout: float = 5.0) -> None:
        """Stop: close every connection (shutting down those being served) and end the threads (bounded wait)."""
        self._stopping.set()
        self._wake()
        self._thread.join(timeout)
        with self._lock:
            conns = list(self._all)
        for c in conns:
            with contextlib.suppress(OSError):
                c.sock.shutdown(socket.SHUT_RDWR)
        self.pool.shutdown(wait=False, cancel_futures=True)
        end = time.monotonic() + timeout
        for t in list(getattr(self.pool, "_threads", ())):
            t.join(max(0.0, end - time.monotonic()))
        for c in conns:
            self._close(c)
        with contextlib.suppress(OSError):
            self.selector.close()
        for s in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()

    # ---------------------------------------------------------------- internals

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _give_back(self, conn: Connection) -> None:
        """Return a connection to the selector to wait for its next request."""
        conn.idle_since = time.monotonic()
        conn.read_deadline = None
        self._returns.put(conn)
        self._wake()

    def _close(self, conn: Connection) -> None:
        if conn.closed:
            return
        conn.closed = True
        with self._lock:
            self._all.discard(conn)
        if self.on_close is not None:
            with contextlib.suppress(Exception):
                self.on_close(conn)
        _close_socket(conn.sock)

    def _loop(self) -> None:
        idle: set[Connection] = set()
        sel = self.selector
        while not self._stopping.is_set():
            try:
                events = sel.select(TICK)
            except (OSError, ValueError):
                break
            for key, _ in events:
                conn = key.data
                if conn is None:
                    with contextlib.suppress(OSError):
                        while self._wake_r.recv(4096):
                            pass
                    continue
                with contextlib.suppress(KeyError, ValueError, OSError):
                    sel.unregister(conn.sock)
                idle.discard(conn)
                self._dispatch(conn)
            while True:
                try:
                    conn = self._returns.get_nowait()
                except queue.Empty:
                    break
                if conn.closed:
                    continue
                pending = getattr(conn.sock, "pending", None)
                if pending is not None and pending() > 0:  # (TLS: bytes already decrypted and waiting)
                    self._dispatch(conn)
                    continue
                try:
                    sel.register(conn.sock, selectors.EVENT_READ, conn)
                except (KeyError, ValueError, OSError):
                    self._close(conn)
                    continue
                idle.add(conn)
            now = time.monotonic()
            for conn in [c for c in idle if now - c.idle_since > self.idle_timeout]:
                idle.discard(conn)
                with contextlib.suppress(KeyError, ValueError, OSError):
                    sel.unregister(conn.sock)
                self._close(conn)
            with self._lock:
                busy = [c for c in self._all if c.read_deadline is not None and c.read_deadline < now]
            for conn in busy:  # a request read too slowly: its worker's read fails and the worker lets go
                conn.read_deadline = None
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)
        for conn in list(idle):
            self._close(conn)

    def _dispatch(self, conn: Connection) -> None:
        conn.read_deadline = time.monotonic() + self.read_timeout
        try:
            self.pool.submit(self._work, conn)
        except RuntimeError:  # (shut down)
            self._close(conn)

    def _work(self, conn: Connection) -> None:
        keep = False
        try:
            keep = self.serve_one(conn) and not self._stopping.is_set()
        except Exception:  # (serve_one answers what it can; a failure here only ends the connection)
            keep = False
        if keep:
            self._give_back(conn)
        else:
            self._close(conn)


def _close_socket(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()

