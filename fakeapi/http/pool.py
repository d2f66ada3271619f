"""Connections without a thread each: a selector for idle ones, a bounded pool of workers for requests.

``http.server.ThreadingHTTPServer`` gives every connection a thread for its whole
life: 800 idle keep-alive connections are 800 threads, and a client that sends
its headers a byte at a time holds its thread for as long as it likes. Here:

* an idle connection (between requests, or before its first) waits in one
  selector thread, costing no thread; the selector reads the request's head
  (request line and headers) as it arrives, and only once it is whole is the
  connection handed to a worker of a pool of at most ``max_workers``
  threads, which serves the request and gives the connection back; so a
  client sending its headers a byte at a time holds no worker (a TLS
  connection is handed over as soon as it is readable: its bytes are
  encrypted);
* a connection idle for ``idle_timeout`` seconds is closed (Go's
  ``http.Server.IdleTimeout``: 90 s in kube-apiserver);
* a request's head must arrive within ``read_timeout`` seconds of its first
  byte (kube-apiserver's ``ReadHeaderTimeout`` is 32 s), and its body within
  ``read_timeout`` of the head, else the connection is closed;
* at most ``max_connections`` are open at once: a connection over that is
  closed as soon as it is accepted;
* work waits in the pool's queue when every worker is busy; a watch, which
  streams for up to half an hour, adds a worker to the pool while it
  streams (:meth:`ConnectionDispatcher.long_running`), so watches never
  starve short requests (``max_connections`` bounds them).

The dispatcher knows nothing of HTTP: ``serve_one(conn)`` serves one request
on a connection and says whether to keep it open.
"""

from __future__ import annotations

import contextlib
import io
import queue
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
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
#: The most the selector buffers of a request head before handing it over anyway (the handler then
#: answers 414/431 as ``http.server`` does for an over-long line or too many headers).
MAX_HEAD_BYTES = 256 * 1024


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
    #: Bytes of the next request read by the selector (its head), not yet given to the handler.
    buffer: bytearray = field(default_factory=bytearray)
    #: When the first byte of a request head still incomplete arrived (None: none pending).
    head_started: float | None = None

    @property
    def prebuffered(self) -> bool:
        """Does the selector read request heads itself (plain sockets; a TLS socket's bytes are encrypted)?"""
        return type(self.sock) is socket.socket

    def reader(self) -> io.BufferedReader:
        """A reader of the request: the bytes the selector read, then the socket (takes the buffer)."""
        prefix = bytes(self.buffer)
        self.buffer.clear()
        self.head_started = None
        return io.BufferedReader(_PrefixedSocket(prefix, self.sock))

    def keep_unread(self, reader: Any) -> None:
        """Before waiting again: move what ``reader`` holds of the next request into the buffer."""
        try:
            pending = reader.peek(1) if self.sock.gettimeout() == 0.0 else b""
        except (BlockingIOError, OSError, ValueError):
            pending = b""
        if pending:
            self.buffer += reader.read(len(pending))
            self.head_started = time.monotonic()

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

    @contextlib.contextmanager
    def long_running(self) -> Iterator[None]:
        """For the duration of a long-running response (a watch): one more worker in the pool."""
        pool: Any = self.pool
        with self._lock:
            pool._max_workers += 1  # (ThreadPoolExecutor starts threads up to it as work comes)
        if not pool._work_queue.empty():  # (work already waiting gets the new worker now)
            with contextlib.suppress(RuntimeError):
                pool._adjust_thread_count()
        try:
            yield
        finally:
            with self._lock:
                pool._max_workers -= 1

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
                if conn.prebuffered and not self._read_head(conn):
                    if conn.closed:
                        idle.discard(conn)
                    continue  # (the head is not whole yet: it stays with the selector)
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
                if conn.prebuffered and _head_complete(conn.buffer):  # (the next request came with the last)
                    self._dispatch(conn)
                    continue
                try:
                    sel.register(conn.sock, selectors.EVENT_READ, conn)
                except (KeyError, ValueError, OSError):
                    self._close(conn)
                    continue
                idle.add(conn)
            now = time.monotonic()
            for conn in [c for c in idle if now - c.idle_since > self.idle_timeout
                         or (c.head_started is not None and now - c.head_started > self.read_timeout)]:
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

    def _read_head(self, conn: Connection) -> bool:
        """Read what arrived of a request head (without blocking); True once it is whole (or too long).

        A connection the peer closed is closed here (returns False).
        """
        try:
            conn.sock.setblocking(False)
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.selector.unregister(conn.sock)
            self._close(conn)
            return False
        if conn.head_started is None:
            conn.head_started = time.monotonic()
        conn.buffer += data
        return _head_complete(conn.buffer) or len(conn.buffer) > MAX_HEAD_BYTES

    def _dispatch(self, conn: Connection) -> None:
        with contextlib.suppress(OSError):
            conn.sock.settimeout(self.read_timeout)  # (blocking again, each read bounded, for the worker)
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


def _head_complete(buffer: bytearray) -> bool:
    """Does ``buffer`` hold a whole request head (a blank line after the headers; blank lines before
    the request line are skipped as http.server skips them)?"""
    start = 0
    while buffer.startswith(b"\r\n", start) or buffer.startswith(b"\n", start):
        start += 2 if buffer.startswith(b"\r\n", start) else 1
    return buffer.find(b"\r\n\r\n", start) >= 0 or buffer.find(b"\n\n", start) >= 0


class _PrefixedSocket(io.RawIOBase):
    """A raw reader giving ``prefix`` first, then what the socket receives."""

    def __init__(self, prefix: bytes, sock: socket.socket) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._sock = sock

    def readable(self) -> bool:
        """A reader."""
        return True

    def readinto(self, b: Any) -> int | None:
        """Fill ``b`` from the prefix, then from the socket."""
        if self._prefix:
            n = min(len(b), len(self._prefix))
            b[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        try:
            return self._sock.recv_into(b)
        except BlockingIOError:
            return None


def _close_socket(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()

