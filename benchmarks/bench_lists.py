"""Lists and watches cost what they return (issue 22): the curve at 1k, 10k and 100k objects.

Run: ``python benchmarks/bench_lists.py`` (``--sizes 1000,10000`` for others; ``--quick``: fewer rounds).

The store holds N ConfigMaps, spread over 100 namespaces, all labelled ``app=web`` and each
``shard=<i mod N/10>`` (so a shard is 10 objects). Each query returns a few objects, so its
cost should not grow with N:

- ``label 10 of N``: ``app=web,shard=7`` cluster-wide (the store reads the smallest index set
  and checks the other term on it: ``app=web`` selects everything and costs nothing);
- ``name= in ns`` / ``name= all ns``: a ``metadata.name`` field selector (an index lookup);
- ``namespace= field``: a ``metadata.namespace`` field selector cluster-wide (N/100 objects,
  read from the namespace's run of keys; the per-object figure is printed);
- ``limit=10 page``: the first page and a page from the middle (by its continue token);
- ``page all by 500``: paging through everything, per object (O(N log N) in all);
- ``watch name=``: a watch from the current state with a ``metadata.name`` field selector.

Each figure is the best of several rounds (the least disturbed). The last column is the growth
from the smallest size to the largest, which is 1.0 for a query that costs what it returns
(the noise of a shared machine moves it by a few tenths).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fakeapi import APIServer  # noqa: E402


def _best(fn: Callable[[], object], rounds: int, calls: int) -> float:
    """Seconds per call, the best of ``rounds`` rounds of ``calls`` calls."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def _server(n: int) -> APIServer:
    api = APIServer(managed_fields=False, garbage_collector=False)
    for i in range(100):
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i:02d}"}})
    shards = max(1, n // 10)
    # (created in an order that is not the key order: the key index takes inserts anywhere)
    for j in range(n):
        i = (j * 7919) % n
        api.create({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i:06d}", "namespace": f"ns-{i % 100:02d}",
                                 "labels": {"app": "web", "shard": str(i % shards)}},
                    "data": {"k": "v"}})
    return api


def _queries(api: APIServer, n: int) -> dict[str, tuple[Callable[[], object], int]]:
    """name -> (the query, how many objects it returns)."""
    mid = api.list("ConfigMap", limit=n // 2)["metadata"]["continue"]

    def page_all() -> int:
        seen, token = 0, None
        while True:
            out = api.list("ConfigMap", limit=500, continue_=token)
            seen += len(out["items"])
            token = out["metadata"].get("continue")
            if not token:
                return seen

    def watch_name() -> int:
        with api.watch("ConfigMap", field_selector="metadata.name=cm-000042") as w:
            return len(w.poll())

    q: dict[str, tuple[Callable[[], object], int]] = {
        "label 10 of N": (lambda: api.list("ConfigMap", label_selector="app=web,shard=7"), 10),
        "name= in ns": (lambda: api.list("ConfigMap", "ns-42", field_selector="metadata.name=cm-000042"), 1),
        "name= all ns": (lambda: api.list("ConfigMap", field_selector="metadata.name=cm-000042"), 1),
        "namespace= field": (lambda: api.list("ConfigMap", field_selector="metadata.namespace=ns-42"), n // 100),
        "limit=10 first page": (lambda: api.list("ConfigMap", limit=10), 10),
        "limit=10 mid page": (lambda: api.list("ConfigMap", limit=10, continue_=mid), 10),
        "page all by 500": (page_all, n),
        "watch name=": (watch_name, 1),
    }
    for name, (fn, expected) in q.items():
        got = fn()
        count = got if isinstance(got, int) else len(got["items"])  # type: ignore[index]
        assert count == expected, (name, count, expected)
    return q


def main() -> None:
    """Build a store of each size and print each query's cost per call (and per object returned)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rounds = 3 if args.quick else 5
    table: dict[str, list[float]] = {}
    returned: dict[str, int] = {}
    for n in sizes:
        t = time.perf_counter()
        api = _server(n)
        build = time.perf_counter() - t
        print(f"N={n:>7}: store built in {build:.2f} s ({build / n * 1e6:.1f} us per create)", flush=True)
        for name, (fn, count) in _queries(api, n).items():
            calls = 1 if name == "page all by 500" else 20
            per = _best(fn, rounds if name != "page all by 500" or n <= 10_000 else 2, calls)
            per_item = name in ("page all by 500", "namespace= field")
            table.setdefault(name, []).append(per / count if per_item else per)
            returned[name] = count
    head = "".join(f"{f'N={n:,}':>14}" for n in sizes)
    print(f"\n{'query (us per call; *: per object returned)':<46}{head}{'growth':>9}")
    for name, row in table.items():
        star = "*" if name in ("page all by 500", "namespace= field") else " "
        cells = "".join(f"{v * 1e6:>14.1f}" for v in row)
        print(f"{name + star:<46}{cells}{row[-1] / row[0]:>8.2f}x")
    print(f"\n(N grows {sizes[-1] // sizes[0]}x; a query that costs what it returns keeps a growth near 1x)")


if __name__ == "__main__":
    main()
