"""A/B the ARC lifecycle's wall time between two checkouts (or two settings), in one time window.

The shared 2-core machine changes speed from minute to minute, so two ``bench_arc.py`` runs made
minutes apart cannot tell a few percent apart. This alternates fresh interpreters of A and B
(each warms up, then times 5 lifecycles, as ``bench_arc.py`` does) for a number of rounds, so
both sides see the same machine, and prints each side's median, 25th percentile and minimum.

Run ``python benchmarks/ab_arc.py ROOT_A[:on|off] ROOT_B[:on|off] [--rounds N]``, where ROOT
is a checkout's directory and ``on``/``off`` its managedFields setting (default ``on``); for
example ``git worktree add /tmp/before HEAD~3`` and ``python benchmarks/ab_arc.py /tmp/before .``.
Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import gc, json, sys, time
root, managed = sys.argv[1], sys.argv[2] == "on"
sys.path.insert(0, root + "/benchmarks")
sys.path.insert(0, root)
import bench_arc
from reconcilers.testing import ArcCluster
bench_arc.lifecycle(ArcCluster(check_invariants=False, managed_fields=managed))  # warm up
out = []
for _ in range(5):
    cluster = ArcCluster(check_invariants=False, managed_fields=managed)
    gc.collect()
    t0 = time.perf_counter()
    bench_arc.lifecycle(cluster)
    out.append(time.perf_counter() - t0)
print(json.dumps(out))
"""


def side(spec: str) -> tuple[str, str]:
    """``ROOT[:on|off]`` as (absolute root, setting)."""
    root, _, setting = spec.partition(":")
    setting = setting or "on"
    if setting not in ("on", "off"):
        raise SystemExit(f"{spec}: the setting after ':' is on or off")
    return str(Path(root).resolve()), setting


def batch(root: str, setting: str) -> list[float]:
    """Five timed lifecycles of ``root`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", CHILD, root, setting], capture_output=True, text=True, check=True)
    times: list[float] = json.loads(done.stdout)
    return times


def main() -> None:
    """Alternate the two sides for ``--rounds`` rounds and print their summaries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    sides = [side(args.a), side(args.b)]
    results: list[list[float]] = [[], []]
    for _ in range(args.rounds):
        for i, (root, setting) in enumerate(sides):
            results[i] += batch(root, setting)
    for (root, setting), times in zip(sides, results):
        times.sort()
        print(f"{root} (managedFields {setting}): median {statistics.median(times) * 1000:.1f} ms, "
              f"p25 {times[len(times) // 4] * 1000:.1f} ms, min {times[0] * 1000:.1f} ms over {len(times)} lifecycles")


if __name__ == "__main__":
    main()
