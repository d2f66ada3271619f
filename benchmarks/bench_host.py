"""Controller-host overhead and a churn scenario (``python benchmarks/bench_host.py``).

Measures, on this machine, with the wall clock (the host itself only uses the virtual one):

* the host's overhead per reconcile that makes no API call (queue, scheduling, trace record,
  result handling): target <= 30 us;
* the host's overhead per delivered watch event (informer cache update, event handler,
  predicates, queue add): target <= 20 us;
* a churn scenario: 1,000 objects created, each reconciled into one owned child, then all
  deleted, their children removed by the garbage collector; wall time and reconciles per second.

Not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from fakeapi.host import Context, Host, Request, Result, predicates
from fakeapi.machinery.errors import ApiError, is_not_found
from fakeapi.server.apiserver import APIServer

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                "status": {"type": "object", "properties": {"child": {"type": "string"}}},
            }}},
        }],
    },
}


def new_api() -> APIServer:
    api = APIServer()
    api.register_crd(WIDGET_CRD)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    return api


_SECOND = timedelta(seconds=1)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def bench_reconcile_overhead(n: int) -> float:
    """Seconds per reconcile of a no-op reconcile function (keys enqueued beforehand)."""
    api = new_api()
    host = Host(api)
    ctrl = host.controller("noop").for_("Widget").complete(lambda ctx, req: None)
    for i in range(n):
        ctrl.queue.add(Request("bench", f"w{i}"))
    elapsed, stats = timed(lambda: host.run_until_idle(max_reconciles=n))
    assert stats.reconciles == n, stats
    return float(elapsed) / n


def bench_requeue_overhead(n: int) -> float:
    """Seconds per reconcile of one key requeued after 1s, n times (includes moving the clock)."""
    api = new_api()
    host = Host(api)
    count = 0

    def tick(ctx: Context, req: Request) -> Result:
        nonlocal count
        count += 1
        return Result(requeue_after=None if count >= n else _SECOND)

    ctrl = host.controller("ticker").for_("Widget").complete(tick)
    ctrl.queue.add(Request("bench", "w"))
    elapsed, stats = timed(lambda: host.run_until_idle(max_reconciles=n + 1))
    assert stats.reconciles == n, stats
    return float(elapsed) / n


def bench_event_overhead(n: int) -> tuple[float, int]:
    """Seconds per delivered watch event (creates then updates of ConfigMaps), to two handlers."""
    api = new_api()
    host = Host(api, garbage_collector=False, kubelet=False)
    host.controller("watcher").for_("ConfigMap", predicates=predicates.resource_version_changed) \
        .owns("ConfigMap").complete(lambda ctx, req: None)
    for i in range(n):
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": "bench"},
                    "data": {"k": "v"}})
    for i in range(n):
        api.patch("ConfigMap", f"c{i}", {"data": {"k": "w"}}, namespace="bench")
    elapsed, events = timed(host.deliver)
    assert events == 2 * n, events
    return float(elapsed) / events, events


def churn(n: int) -> None:
    """n widgets, each reconciled into one owned ConfigMap, then all deleted; GC removes the children."""
    api = new_api()
    host = Host(api)

    def reconcile(ctx: Context, req: Request) -> None:
        try:
            w = ctx.client.get("Widget", req.name, req.namespace)
        except ApiError as e:
            if is_not_found(e):
                return
            raise
        if w["metadata"].get("deletionTimestamp"):
            return
        try:
            ctx.client.get("ConfigMap", req.name, req.namespace)
        except ApiError as e:
            if not is_not_found(e):
                raise
            ctx.client.create({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": req.name, "namespace": req.namespace, "ownerReferences": [{
                    "apiVersion": "example.com/v1", "kind": "Widget", "name": req.name,
                    "uid": w["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
                "data": {"size": str(w["spec"].get("size", 0))},
            })

    host.controller("widgets").for_("Widget").owns("ConfigMap").complete(reconcile)

    def create_all() -> Any:
        for i in range(n):
            api.create({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": f"w{i:04d}", "namespace": "bench"}, "spec": {"size": i}})
        return host.run_until_idle(max_reconciles=20 * n)

    def delete_all() -> Any:
        for i in range(n):
            api.delete("Widget", f"w{i:04d}", "bench")
        return host.run_until_idle(max_reconciles=20 * n)

    t_create, s_create = timed(create_all)
    children = len(api.list("ConfigMap", "bench")["items"])
    t_delete, s_delete = timed(delete_all)
    left = len(api.list("ConfigMap", "bench")["items"])
    total = t_create + t_delete
    reconciles = s_create.reconciles + s_delete.reconciles
    print(f"churn: {n} objects -> {children} children; after deletion {left} left")
    print(f"  create phase: {t_create:.3f}s, {s_create.reconciles} reconciles, {s_create.actor_runs} actor runs")
    print(f"  delete phase: {t_delete:.3f}s, {s_delete.reconciles} reconciles, {s_delete.actor_runs} actor runs")
    print(f"  total: {total:.3f}s wall, {reconciles} reconciles, {reconciles / total:,.0f} reconciles/s "
          f"(API calls included), {len(api.trace.calls)} API calls in the trace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="reconciles / events per overhead measurement")
    parser.add_argument("--churn", type=int, default=1_000, help="objects in the churn scenario")
    args = parser.parse_args()

    per_reconcile = min(bench_reconcile_overhead(args.n) for _ in range(3))
    print(f"reconcile overhead (no API call):      {per_reconcile * 1e6:6.1f} us/reconcile   (target <= 30)")
    per_requeue = min(bench_requeue_overhead(args.n // 4) for _ in range(3))
    print(f"requeue-after loop (clock moves each): {per_requeue * 1e6:6.1f} us/reconcile")
    per_event, events = min(bench_event_overhead(args.n // 2) for _ in range(3))
    print(f"delivered watch event:                 {per_event * 1e6:6.1f} us/event       (target <= 20; "
          f"{events} events, 2 handlers)")
    churn(args.churn)


if __name__ == "__main__":
    main()
