"""Cold start: ``import fakeapi`` and the first ``APIServer()`` in a fresh interpreter (issue 22).

Run: ``python benchmarks/bench_cold.py`` (``--runs N``: pairs of runs, 15 by default;
``--base DIR``: another source tree, e.g. ``git archive main | tar -x -C /tmp/coldbase``, measured
in turn with this checkout, run for run, so that both see the same machine).

Targets: <= 100 ms with a bytecode cache (as an installed package runs), <= 150 ms without one
(every project module compiled from source: a fresh checkout, or ``PYTHONDONTWRITEBYTECODE=1``).
The two are measured as pairs, one of each in turn, so both see the same machine; each child
also times a JSON round trip of the benchmarks' sample Pod right after, and the figure is
printed as a ratio to it too (the machine's speed swings 2x; the ratio does not). With valgrind
installed the instructions of each (the child's whole run, interpreter start-up included, less
a child that only starts up) are counted too: a figure the machine's load does not move.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
t0 = time.perf_counter()
from fakeapi import APIServer
APIServer()
t1 = time.perf_counter()
import json
from samples import POD
best = min(_rt() for _rt in [lambda: (lambda t: (json.loads(json.dumps(POD)), time.perf_counter() - t)[1])(time.perf_counter())
                              for _ in range(200)])
print(t1 - t0, best)
"""

#: A child that starts up and does nothing (its instructions are subtracted).
EMPTY = "pass"


def _env(cache: str | None) -> dict[str, str]:
    """The child's environment: bytecode read from and written to ``cache``, or (None) the project
    compiled from source each time (the interpreter's own and the dependencies' bytecode is used
    as installed, as a fresh checkout runs)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def _copy_of_project(dst: Path, src: Path = ROOT) -> Path:
    """A copy of the sources of ``src`` without any bytecode (so "no cache" compiles every project module)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    for name in ("fakeapi", "benchmarks"):
        shutil.copytree(src / name, dst / name, ignore=skip)
    return dst


def _child(root: Path, cache: str | None) -> tuple[float, float]:
    code = CHILD.format(root=str(root), here=str(root / "benchmarks"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env(cache))
    secs, rt = (float(x) for x in out.stdout.split())
    return secs, rt


def _instructions(code: str, cache: str | None) -> int:
    res = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**_env(cache), "PYTHONHASHSEED": "0"})
    m = re.search(r"I\s+refs:\s+([\d,]+)", res.stderr)
    if m is None:
        raise RuntimeError(res.stderr[-2000:])
    return int(m.group(1).replace(",", ""))


Runs = list[tuple[float, float]]


def _summary(label: str, runs: Runs, target: float) -> str:
    secs = [t for t, _ in runs]
    ratios = [t / rt for t, rt in runs]
    med = statistics.median(secs)
    return (f"import + first APIServer(), {label:<17}: median {med * 1e3:6.1f} ms (min {min(secs) * 1e3:.1f}), "
            f"{statistics.median(ratios):6.0f}x the Pod JSON round trip; target {target * 1e3:.0f} ms "
            f"{'ok' if med <= target else 'MISS'}")


def _tree_instructions(root: Path, cache: str) -> tuple[int, int]:
    """The instructions of a child of ``root``, bytecode cached and without, start-up subtracted."""
    code = "\n".join(CHILD.format(root=str(root), here=str(root / "benchmarks")).splitlines()[:7])
    base_c, base_f = _instructions(EMPTY, cache), _instructions(EMPTY, None)
    return _instructions(code, cache) - base_c, _instructions(code, None) - base_f


def main() -> None:
    """Alternate runs with and without a bytecode cache; print medians, ratios and instructions."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--base", type=Path, default=None,
                   help="another source tree (holding fakeapi/ and benchmarks/) to measure in turn with this one")
    args = p.parse_args()
    if args.base is not None and not (args.base / "fakeapi" / "__init__.py").is_file():
        p.error(f"--base {args.base}: no fakeapi package there (try: git archive main | tar -x -C DIR)")
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        trees = [("this checkout", _copy_of_project(Path(tmp) / "src"), str(Path(tmp) / "pycache"))]
        if args.base is not None:
            trees.append(("base", _copy_of_project(Path(tmp) / "base", args.base), str(Path(tmp) / "pycache-base")))
        for _, root, cache in trees:
            _child(root, cache)  # (fills the cache)
        cached: dict[str, Runs] = {name: [] for name, _, _ in trees}
        fresh: dict[str, Runs] = {name: [] for name, _, _ in trees}
        for _ in range(args.runs):
            for name, root, cache in trees:
                cached[name].append(_child(root, cache))
            for name, root, _ in trees:
                fresh[name].append(_child(root, None))
        for name, _, _ in trees:
            if len(trees) > 1:
                print(f"{name}:")
            for label, runs, target in (("bytecode cached", cached[name], 0.100), ("no bytecode cache", fresh[name], 0.150)):
                print(_summary(label, runs, target))
        if len(trees) > 1:
            for label, by_tree in (("bytecode cached", cached), ("no bytecode cache", fresh)):
                pairs = [a / b for (a, _), (b, _) in zip(by_tree[trees[0][0]], by_tree["base"])]
                print(f"this checkout / base, {label:<17}: median of the run-by-run ratios {statistics.median(pairs):.3f}")
        if shutil.which("valgrind") is not None:
            for name, root, cache in trees:
                ic, inc = _tree_instructions(root, cache)
                print(f"instructions{'' if len(trees) == 1 else ' (' + name + ')'} (cachegrind, interpreter start-up "
                      f"subtracted): {ic / 1e6:.0f} M bytecode cached, {inc / 1e6:.0f} M without a cache")


if __name__ == "__main__":
    main()
