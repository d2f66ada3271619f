"""fakeapi over HTTP versus KMock, through the official ``kubernetes`` client (``python benchmarks/bench_http.py``).

The same workload runs against each server, one after the other, in the same command:

* a watch of the namespace's ConfigMaps, opened first and running throughout (its own
  connection and thread), which must see every ADDED, MODIFIED and DELETED event;
* create N ConfigMaps (labelled ``group=i%10``), get each, list with a label selector
  (one list per group value), merge-patch each, delete each.

Each server runs in its own process (so its CPU is not shared with the client's
interpreter); the client is ``kubernetes.client.CoreV1Api`` over keep-alive HTTP.
Printed: per phase requests per second, the overall requests per second of the
N*4 + 10 calls, the watch's events, and the ratio fakeapi / KMock. fakeapi does more
per request: resourceVersions, uid, timestamps, schema validation of ConfigMaps, label
selectors and watch history, where KMock stores and echoes JSON (it ignores label
selectors, so its lists return every object; its watch ignores ``timeoutSeconds``).

KMock (PyPI ``kmock``) is run as its ``KubernetesEmulator`` behind ``kmock.Server``
(aiohttp) on a free loopback port. It keeps every request it served and matches each
new request by filtering that history, so its cost per request grows with the number
of requests already served; ``--kmock-n`` (default: N) sizes its run separately.

Not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

NS = "bench"
GROUPS = 10
WATCH_BOUND = 600.0  # seconds: the longest the watch may wait for its last event


# ------------------------------------------------------------------ servers (child processes)


def _fakeapi_server(conn: Connection) -> None:
    from fakeapi.http import serve
    from fakeapi.server.apiserver import APIServer

    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    with serve(api) as ep:
        conn.send(ep.url)
        conn.recv()  # block until told to stop


def _kmock_server(conn: Connection) -> None:
    import kmock

    async def main() -> None:
        emulator = kmock.KubernetesEmulator()
        emulator.resources["v1/configmaps"] = kmock.ResourceInfo(
            kind="ConfigMap", singular="configmap", namespaced=True,
            verbs={"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"})
        async with emulator, kmock.Server(emulator) as server:
            conn.send(str(server.url).rstrip("/"))
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)

    asyncio.run(main())


@dataclass
class ServerProcess:
    """A server in a child process; ``url`` once it listens."""

    target: Callable[[Connection], None]
    url: str = ""
    proc: Any = None
    conn: Any = None

    def __enter__(self) -> ServerProcess:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=self.target, args=(child,), daemon=True)
        self.proc.start()
        if not self.conn.poll(60):
            raise RuntimeError("the server did not start within 60 s")
        self.url = self.conn.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self.conn.send("stop")
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(10)


# ------------------------------------------------------------------ the workload (this process)


@dataclass
class Result:
    """Timings of one run."""

    name: str
    n: int
    phases: dict[str, tuple[int, float]] = field(default_factory=dict)  # phase -> (requests, seconds)
    events: Counter[str] = field(default_factory=Counter)
    watch_lag: float = 0.0  # seconds from the last DELETE's answer to the watch's last event
    watch_complete: bool = False

    @property
    def requests(self) -> int:
        return sum(r for r, _ in self.phases.values())

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.phases.values())

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _client(url: str) -> Any:
    from kubernetes import client

    cfg = client.Configuration()
    cfg.host = url
    cfg.api_key = {"authorization": "Bearer fakeapi"}
    return client.ApiClient(cfg)


def run_workload(name: str, url: str, n: int) -> Result:
    """Watch, then create/get/list/patch/delete ``n`` ConfigMaps through CoreV1Api."""
    from kubernetes import client, watch

    result = Result(name, n)
    api_client = _client(url)
    v1 = client.CoreV1Api(api_client)
    watch_client = _client(url)
    wv1 = client.CoreV1Api(watch_client)
    connected = threading.Event()
    done = threading.Event()
    last_event = [0.0]
    listed = v1.list_namespaced_config_map(NS)
    start_rv = listed.metadata.resource_version if listed.metadata is not None else None
    resume = start_rv if start_rv and start_rv.isdigit() else None

    def listing(*args: Any, **kwargs: Any) -> Any:
        resp = wv1.list_namespaced_config_map(*args, **kwargs)
        connected.set()  # the response headers are in: the watch is registered
        return resp

    def watcher() -> None:
        w = watch.Watch(return_type=client.V1ConfigMap)
        kwargs: dict[str, Any] = {"timeout_seconds": int(WATCH_BOUND)}
        if resume:
            kwargs["resource_version"] = resume
        try:
            for ev in w.stream(listing, NS, **kwargs):
                result.events[ev["type"]] += 1
                last_event[0] = time.perf_counter()
                if result.events["DELETED"] >= n:
                    result.watch_complete = True
                    w.stop()
                    break
        finally:
            done.set()

    t = threading.Thread(target=watcher, daemon=True)
    t.start()
    if not connected.wait(30):
        raise RuntimeError(f"{name}: the watch did not connect")

    def phase(label: str, calls: int, fn: Callable[[int], Any]) -> None:
        t0 = time.perf_counter()
        for i in range(calls):
            fn(i)
        result.phases[label] = (calls, time.perf_counter() - t0)

    def cm_name(i: int) -> str:
        return f"cm-{i:05d}"

    # apiVersion, kind and namespace in the body: KMock's watch filters events by the body's namespace
    phase("create", n, lambda i: v1.create_namespaced_config_map(NS, client.V1ConfigMap(
        api_version="v1", kind="ConfigMap",
        metadata=client.V1ObjectMeta(name=cm_name(i), namespace=NS, labels={"bench": "yes", "group": str(i % GROUPS)}),
        data={"i": str(i)})))
    phase("get", n, lambda i: v1.read_namespaced_config_map(cm_name(i), NS))
    phase("list (selector)", GROUPS, lambda i: v1.list_namespaced_config_map(NS, label_selector=f"group={i}"))
    phase("patch", n, lambda i: v1.patch_namespaced_config_map(
        cm_name(i), NS, {"data": {"i": f"{i}-patched"}}, _content_type="application/merge-patch+json"))
    phase("delete", n, lambda i: v1.delete_namespaced_config_map(cm_name(i), NS))
    finished = time.perf_counter()
    done.wait(WATCH_BOUND)
    result.watch_lag = max(0.0, last_event[0] - finished)
    api_client.close()
    watch_client.close()
    return result


def report(r: Result) -> None:
    """Print one server's figures."""
    print(f"\n{r.name}  (N={r.n})")
    for label, (calls, secs) in r.phases.items():
        print(f"  {label:<16} {calls:>6} requests  {secs:8.2f} s  {calls / secs:9.1f} req/s")
    print(f"  {'all':<16} {r.requests:>6} requests  {r.seconds:8.2f} s  {r.rps:9.1f} req/s")
    seen = ", ".join(f"{k} {v}" for k, v in sorted(r.events.items()))
    state = "complete" if r.watch_complete else "INCOMPLETE"
    print(f"  watch: {seen} ({state}; last event {r.watch_lag * 1000:.0f} ms after the last delete)")


def main(argv: list[str] | None = None) -> int:
    """Run the workload against fakeapi and KMock and print the figures and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=1000, help="ConfigMaps in the workload (default 1000)")
    parser.add_argument("--kmock-n", type=int, default=None, help="ConfigMaps in KMock's run (default: -n)")
    parser.add_argument("--only", choices=("fakeapi", "kmock"), default=None, help="run against one server only")
    args = parser.parse_args(argv)
    results: dict[str, Result] = {}
    if args.only in (None, "fakeapi"):
        with ServerProcess(_fakeapi_server) as srv:
            results["fakeapi"] = run_workload("fakeapi", srv.url, args.n)
        report(results["fakeapi"])
    if args.only in (None, "kmock"):
        try:
            import kmock  # noqa: F401
        except ImportError:
            print("\nKMock: not installed (pip install kmock)")
        else:
            with ServerProcess(_kmock_server) as srv:
                results["kmock"] = run_workload("KMock", srv.url, args.kmock_n or args.n)
            report(results["kmock"])
    if len(results) == 2:
        f, k = results["fakeapi"], results["kmock"]
        print(f"\nfakeapi {f.rps:.1f} req/s (N={f.n}), KMock {k.rps:.1f} req/s (N={k.n}): "
              f"ratio {f.rps / k.rps:.1f}x (target >= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
