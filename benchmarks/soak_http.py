"""Soak the HTTP server with mixed clients for a fixed time; print what was served and what it cost.

    python benchmarks/soak_http.py [--seconds 20] [--normal 4] [--slow 40] [--idle 200] [--bad 2]

One fakeapi served on a free loopback port (port 0, 127.0.0.1 only) with short
timeouts (read 2 s, idle 5 s) so that they act within the run, its trace kept
bounded as ``fakeapi serve`` keeps it, and clients in threads of this process:

* normal: keep-alive connections doing create, get, list, update, delete of
  ConfigMaps; every answer must be the expected 2xx (anything else, or a
  dropped connection, is an error); their latencies give p50/p99;
* slow: connections that send their headers a byte every 0.5 s and never
  finish (slowloris); the server must cut each at its read timeout;
* idle: connections that send one request, then hold the connection open;
  the server must close them at its idle timeout (they then reconnect);
* bad: malformed and hostile bodies (broken JSON, a YAML alias bomb, deep
  nesting, a huge Content-Length, a form post, a lone surrogate escape, an
  unknown method); each must be answered with its 4xx (a 5xx or no answer
  is an error).

Every loop stops at the deadline and after at most ``--max-requests`` requests
per client. Printed: requests served by kind, errors (should be 0), p50/p99
of the normal requests, slow and idle connections cut by the server, the
process's RSS and thread count at start and end.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakeapi.serve_cmd import housekeeping
from fakeapi.server.apiserver import APIServer

HOST = "127.0.0.1"


def rss_mib() -> float:
    """This process's resident set size (MiB), from /proc."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class Tally:
    """Counters and latencies shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def add(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def error(self, text: str) -> None:
        with self.lock:
            self.counts["errors"] += 1
            if len(self.errors) < 20:
                self.errors.append(text)


def read_response(f: Any) -> tuple[int, bytes]:
    """One HTTP/1.1 response from a socket file: status code and body."""
    status = f.readline()
    if not status:
        raise ConnectionError("closed without an answer")
    code = int(status.split()[1])
    length = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return code, f.read(length)


def send(sock: socket.socket, method: str, path: str, body: bytes = b"", ctype: str = "application/json",
         extra: str = "") -> None:
    head = (f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n")
    sock.sendall(head.encode() + body)


def normal_client(port: int, idx: int, deadline: float, limit: int, t: Tally) -> None:
    """Keep-alive CRUD of ConfigMaps; each answer must be the expected success."""
    base = "/api/v1/namespaces/default/configmaps"
    sock = f = None
    n = 0
    while time.monotonic() < deadline and n < limit:
        try:
            if sock is None:
                sock = socket.create_connection((HOST, port), timeout=10)
                f = sock.makefile("rb")
            name = f"c{idx}-{n}"
            obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"n": str(n)}}
            steps = [("POST", base, json.dumps(obj).encode(), 201), ("GET", f"{base}/{name}", b"", 200),
                     ("GET", f"{base}?limit=5", b"", 200)]
            for method, path, body, want in steps:
                start = time.perf_counter()
                send(sock, method, path, body)
                code, payload = read_response(f)
                t.latencies.append(time.perf_counter() - start)
                n += 1
                t.add("normal requests")
                if code != want:
                    t.error(f"normal {method} {path}: {code} {payload[:120]!r}")
            start = time.perf_counter()
            send(sock, "DELETE", f"{base}/{name}")
            code, payload = read_response(f)
            t.latencies.append(time.perf_counter() - start)
            n += 1
            t.add("normal requests")
            if code != 200:
                t.error(f"normal DELETE: {code} {payload[:120]!r}")
        except (OSError, ConnectionError, ValueError) as e:
            t.error(f"normal client {idx}: {type(e).__name__}: {e}")
            if sock is not None:
                sock.close()
            sock = f = None
    if sock is not None:
        sock.close()


def slow_client(port: int, deadline: float, limit: int, t: Tally) -> None:
    """Slowloris: headers a byte at a time, never finished; the server must cut the connection."""
    n = 0
    while time.monotonic() < deadline and n < limit:
        n += 1
        try:
            with socket.create_connection((HOST, port), timeout=10) as sock:
                t.add("slow connections")
                sock.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while time.monotonic() < deadline:
                    sock.sendall(b"X")
                    time.sleep(0.5)
        except OSError:
            t.add("slow connections cut by the server")


def idle_client(port: int, deadline: float, limit: int, t: Tally) -> None:
    """One request, then the connection held idle until the server closes it."""
    n = 0
    while time.monotonic() < deadline and n < limit:
        n += 1
        try:
            with socket.create_connection((HOST, port), timeout=1.0) as sock:
                f = sock.makefile("rb")
                send(sock, "GET", "/version")
                code, _ = read_response(f)
                t.add("idle requests")
                if code != 200:
                    t.error(f"idle GET /version: {code}")
                while time.monotonic() < deadline:
                    try:
                        if sock.recv(1) == b"":
                            t.add("idle connections closed by the server")
                            break
                    except TimeoutError:
                        continue
        except (OSError, ConnectionError, ValueError) as e:
            t.error(f"idle client: {type(e).__name__}: {e}")


def _bomb() -> bytes:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nx:\n  a0: &a0 [l, l, l, l, l, l, l, l, l]\n"
    for i in range(1, 10):
        text += f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n"
    return text.encode()


COLLECTION = "/api/v1/namespaces/default/configmaps"
#: (method, path, body, content type, the status it must get)
BAD = [
    ("POST", COLLECTION, b'{"apiVersion": "v1", "kind": ', "application/json", 400),
    ("POST", COLLECTION, _bomb(), "application/yaml", 400),
    ("POST", COLLECTION, b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":' + b"[" * 3000
     + b"]" * 3000 + b"}", "application/json", 400),
    ("POST", COLLECTION, b"a=1&b=2", "application/x-www-form-urlencoded", 415),
    ("PATCH", COLLECTION + "/missing", b'{"data":{"a":"\\ud800"}}', "text/plain", 415),
    ("BREW", COLLECTION, b"", "application/json", 405),
    ("DELETE", "/api/v1/namespaces", b"", "application/json", 405),
]


def bad_client(port: int, deadline: float, limit: int, t: Tally) -> None:
    """Hostile requests, each on its own connection: each must get its 4xx."""
    n = 0
    while time.monotonic() < deadline and n < limit:
        method, path, body, ctype, want = BAD[n % len(BAD)]
        n += 1
        try:
            with socket.create_connection((HOST, port), timeout=10) as sock:
                f = sock.makefile("rb")
                send(sock, method, path, body, ctype)
                code, payload = read_response(f)
            t.add("bad requests")
            if code != want:
                t.error(f"bad {method} {ctype}: {code} (wanted {want}) {payload[:120]!r}")
            with socket.create_connection((HOST, port), timeout=10) as sock:  # a huge Content-Length
                f = sock.makefile("rb")
                sock.sendall(b"PUT /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             b"Content-Type: application/json\r\nContent-Length: 99999999999999\r\n\r\n")
                code, _ = read_response(f)
            t.add("bad requests")
            if code != 413:
                t.error(f"huge Content-Length: {code}")
        except (OSError, ConnectionError, ValueError) as e:
            t.error(f"bad client: {type(e).__name__}: {e}")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, in milliseconds."""
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1] * 1000 if len(values) > 1 \
        else values[0] * 1000


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--normal", type=int, default=4)
    p.add_argument("--slow", type=int, default=40)
    p.add_argument("--idle", type=int, default=200)
    p.add_argument("--bad", type=int, default=2)
    p.add_argument("--max-requests", type=int, default=100_000, help="per client")
    args = p.parse_args(argv)
    args.seconds = min(args.seconds, 600.0)

    api = APIServer()
    t = Tally()
    rss_start, threads_start = rss_mib(), threading.active_count()
    stop = threading.Event()
    housekeeping(api, stop, interval=1.0)  # (as ``fakeapi serve`` runs: the trace bounded)
    with api.serve(HOST, 0, read_timeout=2.0, idle_timeout=5.0, max_workers=32) as ep:
        deadline = time.monotonic() + args.seconds
        workers = (
            [threading.Thread(target=normal_client, args=(ep.port, i, deadline, args.max_requests, t))
             for i in range(args.normal)]
            + [threading.Thread(target=slow_client, args=(ep.port, deadline, args.max_requests, t))
               for _ in range(args.slow)]
            + [threading.Thread(target=idle_client, args=(ep.port, deadline, args.max_requests, t))
               for _ in range(args.idle)]
            + [threading.Thread(target=bad_client, args=(ep.port, deadline, args.max_requests, t))
               for _ in range(args.bad)]
        )
        for w in workers:
            w.daemon = True
            w.start()
        peak_threads = 0
        samples: list[str] = []
        next_sample = time.monotonic() + 10
        while any(w.is_alive() for w in workers) and time.monotonic() < deadline + 15:
            peak_threads = max(peak_threads, threading.active_count())
            if time.monotonic() >= next_sample:
                samples.append(f"{rss_mib():.0f}")
                next_sample += 10
            time.sleep(0.25)
        for w in workers:
            w.join(max(0.0, deadline + 15 - time.monotonic()))
        rss_end = rss_mib()
        stop.set()
    client_threads = len(workers)
    print(f"soak: {args.seconds:.0f} s, clients: {args.normal} normal, {args.slow} slow, {args.idle} idle, "
          f"{args.bad} bad")
    for key in sorted(k for k in t.counts if k != "errors"):
        print(f"  {key}: {t.counts[key]}")
    print(f"  errors: {t.counts['errors']}")
    for e in t.errors:
        print(f"    {e}")
    print(f"  normal request latency: p50 {percentile(t.latencies, 0.50):.2f} ms, "
          f"p99 {percentile(t.latencies, 0.99):.2f} ms")
    print(f"  RSS: {rss_start:.1f} MiB at start, {rss_end:.1f} MiB at end (every 10 s: {', '.join(samples)} MiB)")
    print(f"  threads: {threads_start} at start, peak {peak_threads} with {client_threads} client threads "
          f"(server: at most {peak_threads - threads_start - client_threads} beyond them)")
    return 1 if t.counts["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
