"""Harness overhead: per-case cost and collection time of many fixture files.

Run: ``python benchmarks/bench_harness.py`` (``--files N`` to change the 500).

Prints, measured on this machine in this run:

- per-case overhead: parse and validate a case, build a fresh API server and
  host, store ``given``, settle, check one expectation, no steps (target
  ≤ 5 ms), with its parts;
- collection time of N generated fixture files (target ≤ 2 s for 500), both
  in-process (load + validate every file) and as ``pytest --collect-only``
  in a subprocess (pytest's own start-up included);
- for reference, one full run of the shipped ARC example when the ``arc``
  bundle is installed;
- with ``--instructions``: the instructions (cachegrind) per run of every tenth case of the
  corpus (``--every N``; ``--root DIR``: another checkout's code and corpus, for an A/B pair), a
  figure the machine's load does not move;
- with ``--corpus``: the repository's own fixture corpus (``fixtures/``) run in
  this one process as its pytest run does (snapshot guard on, robustness
  variants planned from the plain runs), its CPU split into loading, planning,
  per-case setup (server, host, bundles), ``given``, settles (the controllers'
  API calls), operations, expectations and the guard's end check, and where its
  API calls go (by verb and caller) — issue 22's item 2.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fakeapi.harness.loader import load_file, load_text  # noqa: E402
from fakeapi.harness.runner import run_case  # noqa: E402

SMALL_CASE = """\
name: a namespace and a config map
tags: [bench]
given:
  - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: demo}, data: {k: v}}
expect:
  - object: {kind: ConfigMap, metadata: {name: c, namespace: demo}, data: {k: v}}
"""

FILE_TEMPLATE = """\
# yaml-language-server: $schema=../fixture.schema.json
name: generated case {i} creates a widget
description: a generated case of realistic size
tags: [generated]
given:
  - {{apiVersion: v1, kind: Namespace, metadata: {{name: ns{i}}}}}
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {{name: widgets.example.com}}
    spec:
      group: example.com
      names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
      scope: Namespaced
      versions:
        - name: v1
          served: true
          storage: true
          subresources: {{status: {{}}}}
          schema:
            openAPIV3Schema:
              type: object
              properties:
                spec: {{type: object, properties: {{replicas: {{type: integer}}}}}}
                status: {{type: object, properties: {{ready: {{type: boolean}}}}}}
steps:
  - name: create it
    do:
      - create: {{apiVersion: example.com/v1, kind: Widget, metadata: {{name: w{i}, namespace: ns{i}}}, spec: {{replicas: {i}}}}}
      - status: {{kind: Widget, namespace: ns{i}, name: w{i}, status: {{ready: true}}}}
    expect:
      - object: {{kind: Widget, metadata: {{name: w{i}, namespace: ns{i}}}, status: {{ready: true}}}}
  - do:
      - patch: {{kind: Widget, namespace: ns{i}, name: w{i}, patch: {{spec: {{replicas: 0}}}}}}
      - advance: 5m
    settle: {{for: 1m}}
expect:
  - object: {{kind: Widget, metadata: {{name: w{i}, namespace: ns{i}}}, spec: {{replicas: {{$lte: 0}}}}}}
  - count: {{kind: Widget, namespace: ns{i}, equals: 1}}
  - calls: {{verb: patch, kind: Widget, since: case, equals: 2}}
---
name: generated case {i} second document
given:
  - {{apiVersion: v1, kind: Namespace, metadata: {{name: other{i}}}}}
expect:
  - absent: {{kind: ConfigMap, namespace: other{i}, name: nothing}}
"""


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall times of ``repeat`` calls, in seconds."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def ms(xs: list[float]) -> str:
    """Median and p90 in milliseconds."""
    xs = sorted(xs)
    return f"median {statistics.median(xs) * 1e3:.2f} ms, p90 {xs[int(len(xs) * 0.9)] * 1e3:.2f} ms"


def per_case(repeat: int) -> None:
    from fakeapi.host import Host
    from fakeapi.server.apiserver import APIServer

    case = load_text(SMALL_CASE, "bench.yaml")[0]
    assert run_case(case).passed
    load = timed(lambda: load_text(SMALL_CASE, "bench.yaml"), repeat)
    server = timed(lambda: Host(APIServer()), repeat)
    run = timed(lambda: run_case(case), repeat)
    total = timed(lambda: run_case(load_text(SMALL_CASE, "bench.yaml")[0]), repeat)
    print("per-case overhead (no steps; target <= 5 ms):")
    print(f"  load + validate one case       {ms(load)}")
    print(f"  build API server + host        {ms(server)}")
    print(f"  run (given, settle, 1 expect)  {ms(run)}")
    print(f"  total: load + run              {ms(total)}")


def collection(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = root / "cases"
        cases.mkdir()
        for i in range(n):
            (cases / f"case_{i:04d}.yaml").write_text(FILE_TEMPLATE.format(i=i))
        files = sorted(cases.glob("*.yaml"))
        rounds = []
        count = 0
        for _ in range(3):  # best of three: the machine may be busy
            t0 = time.perf_counter()
            count = sum(len(load_file(f)) for f in files)
            rounds.append(time.perf_counter() - t0)
        in_process = min(rounds)
        (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\nfakeapi_fixtures = ["cases/**/*.yaml"]\n')
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        from importlib.metadata import entry_points

        plugin = [] if any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")) else [
            "-p", "fakeapi.harness.plugin"]
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin]
        t0 = time.perf_counter()
        subprocess.run([*base, "--version"], cwd=root, env=env, capture_output=True, check=True)
        startup = time.perf_counter() - t0
        collect = float("inf")
        last = ""
        for _ in range(2):
            t0 = time.perf_counter()
            proc = subprocess.run([*base, "--collect-only"], cwd=root, env=env, capture_output=True, text=True)
            took = time.perf_counter() - t0
            if took < collect:
                collect = took
                last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
        print(f"collection of {n} generated fixture files ({count} cases; target <= 2 s for 500):")
        print(f"  in-process load + validate     {in_process:.3f} s ({in_process / n * 1e3:.2f} ms per file)")
        print(f"  pytest --collect-only, whole   {collect:.3f} s (pytest's own figure: {last})")
        print(f"  pytest start-up (--version)    {startup:.3f} s")


def arc_example() -> None:
    from fakeapi.harness.bundles import get_bundle

    path = ROOT.parent / "shared" / "examples" / "arc_two_jobs.yaml"
    if not path.exists() or get_bundle("arc") is None:
        print("ARC example: skipped (arc bundle or example not available)")
        return
    case = load_file(path)[0]
    run_case(case)
    runs = timed(lambda: run_case(case), 20)
    print(f"ARC example (two jobs, {len(case.steps)} steps): {ms(runs)}")


def corpus() -> None:
    """The shipped corpus in one process: the CPU of each part of a case, and where the API calls go."""
    import collections
    import gc
    from typing import Any

    os.environ["FAKEAPI_CHECK_SNAPSHOTS"] = "1"  # (as the project's own run: conftest.py)
    from fakeapi.harness import bundles, runner
    from fakeapi.harness.plugins import load_plugin
    from fakeapi.harness.robustness import plan_for_collection, take_plain
    from fakeapi.host.host import Host
    from fakeapi.server.apiserver import APIServer

    if bundles.get_bundle("arc") is None:
        load_plugin("reconcilers.bundle")
    spent: dict[str, float] = collections.defaultdict(float)
    clock = time.process_time
    undo: list[tuple[Any, str, Any]] = []

    def timing(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += clock() - t0

        undo.append((owner, name, original))
        setattr(owner, name, timed_call)

    files = sorted((ROOT / "fixtures").glob("**/*.yaml"))
    t0 = clock()
    cases = [c for f in files for c in load_file(f, f.relative_to(ROOT).as_posix())]
    t_load = clock() - t0
    t0 = clock()
    work: list[tuple[Any, Any]] = []
    for c in cases:
        work.append((c, None))
        work.extend((c, v) for v in plan_for_collection(c, budget=runner.DEFAULT_BUDGET).variants)
    t_plan = clock() - t0
    gc.collect()
    gc.freeze()  # (as the plugin does once collection is done)
    timing(APIServer, "__init__", "API server (4 default namespaces)")
    timing(Host, "__init__", "host")
    for name in sorted({b for c in cases for b in c.bundles}):
        bundle = bundles.get_bundle(name)
        if bundle is not None:
            timing(bundle, "install", f"bundle {name} install (CRDs, controllers, informers)")
    timing(runner.CaseRun, "_given", "given (stored as the user)")
    timing(runner.CaseRun, "_settle", "settles (reconciles: the controllers' API calls)")
    timing(runner.CaseRun, "_operation", "step operations")
    timing(runner.CaseRun, "_expectations", "expectations")
    timing(APIServer, "check_snapshots", "snapshot guard's end check")
    calls: collections.Counter[str] = collections.Counter()
    reconciles = ran = reused = failed = 0
    try:
        t0 = clock()
        for c, v in work:
            result = take_plain(c, runner.DEFAULT_BUDGET) if v is None else None
            if result is not None:
                reused += 1
                continue
            result = runner.run_case(c, v)
            ran += 1
            failed += not result.passed
            if result.api is not None:
                reconciles += len(result.api.trace.reconciles)
                for call in result.api.trace.calls:
                    who = "controller" if call.reconcile is not None else call.actor.partition("/")[2] or call.actor
                    calls[f"{call.verb} by {who}"] += 1
        t_run = clock() - t0
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)
        gc.unfreeze()
    total = t_load + t_plan + t_run
    print(f"corpus: {len(files)} files, {len(cases)} cases, {len(work)} items ({len(work) - len(cases)} robustness "
          f"variants); {ran} runs here, {reused} plain verdicts taken from the planning run; {failed} failed")
    print(f"  CPU {total:.2f} s in one process: load {t_load:.2f} s, plan (the plain runs of robustness cases) "
          f"{t_plan:.2f} s, runs {t_run:.2f} s ({t_run / max(ran, 1) * 1e3:.2f} ms each)")
    accounted = sum(spent.values())
    for label, v in [*sorted(spent.items(), key=lambda kv: -kv[1]), ("the rest of the run (the harness's own work, GC)", t_run - accounted)]:
        print(f"    {label:52} {v:6.2f} s  {v / t_run:6.1%}  {v / max(ran, 1) * 1e3:6.2f} ms/run")
    n = sum(calls.values())
    print(f"  API calls: {n} ({n / max(ran, 1):.1f} per run), {reconciles / max(ran, 1):.1f} reconciles per run; "
          "by verb and caller:")
    for what, k in calls.most_common(12):
        print(f"    {what:52} {k:6d}  {k / n:6.1%}")


INSTRUCTIONS_CHILD = """
import gc, os, sys
os.environ["FAKEAPI_CHECK_SNAPSHOTS"] = "1"
sys.path.insert(0, {root!r})
from pathlib import Path
from fakeapi.harness import bundles, runner
from fakeapi.harness.loader import load_file
from fakeapi.harness.plugins import load_plugin
if bundles.get_bundle("arc") is None:
    load_plugin("reconcilers.bundle")
root = Path({root!r})
files = sorted((root / "fixtures").glob("**/*.yaml"))
cases = [c for f in files for c in load_file(f, f.relative_to(root).as_posix())][::{every}]
for c in cases:  # warm up: schemas, Go types, templates, imports
    assert runner.run_case(c).passed, c.name
gc.collect()
gc.freeze()  # (as the plugin does once collection is done)
for c in cases[:{runs}]:
    runner.run_case(c)
"""


LOAD_CHILD = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from fakeapi.harness.loader import load_file
root = Path({root!r})
files = sorted((root / "fixtures").glob("**/*.yaml"))
load_file(files[0])  # (imports, the format's validators)
if {load}:
    cases = [c for f in files for c in load_file(f, f.relative_to(root).as_posix())]
"""


def corpus_instructions(root: Path, every: int) -> None:
    """Instructions (cachegrind) per run of every ``every``-th case of the corpus in ``root``, and of loading
    the corpus's files: load-free figures.

    Two child interpreters load the corpus and run the chosen cases once each (warming up), one then
    stops and the other runs them all again; the difference over the number of cases is the figure
    (start-up, loading and first runs subtracted). The hash seed is fixed, as in instructions_arc.py.
    """
    import re
    import shutil

    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")

    def count(runs: int, template: str = INSTRUCTIONS_CHILD, load: bool = True) -> int:
        code = template.format(root=str(root), every=every, runs=runs, load=load)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        res = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                              sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
        m = re.search(r"I\s+refs:\s+([\d,]+)", res.stderr)
        if res.returncode != 0 or m is None:
            raise RuntimeError("the child failed or valgrind printed no count:\n" + res.stderr[-2000:])
        return int(m.group(1).replace(",", ""))

    probe = INSTRUCTIONS_CHILD.format(root=str(root), every=every, runs=0).replace(
        "gc.collect()", "print(len(cases))\ngc.collect()")
    n = int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root,
                           env={**os.environ, "PYTHONHASHSEED": "0"}).stdout.split()[-1])
    base, full = count(0), count(n)
    print(f"corpus cases ({root}): {(full - base) / n / 1e6:.2f} M instructions per run "
          f"(cachegrind; every {every}th case, {n} cases, plain runs, snapshot guard on; start-up, loading "
          "and a first run of each subtracted)")
    bare, loaded = count(0, LOAD_CHILD, False), count(0, LOAD_CHILD, True)
    print(f"loading the corpus's files ({root}): {(loaded - bare) / 1e6:.0f} M instructions (cachegrind; "
          "what each pytest process does before planning, start-up subtracted)")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--corpus", action="store_true",
                        help="only the split of the repository's fixture corpus (issue 22, item 2)")
    parser.add_argument("--instructions", action="store_true",
                        help="only the instructions (valgrind) per run of a fixed sample of the corpus's cases")
    parser.add_argument("--every", type=int, default=10, help="with --instructions: the sample, every Nth case")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="with --instructions: the checkout whose corpus and code run (default this one)")
    args = parser.parse_args()
    if args.instructions:
        corpus_instructions(args.root.resolve(), args.every)
        return
    if args.corpus:
        corpus()
        return
    per_case(args.repeat)
    collection(args.files)
    arc_example()


if __name__ == "__main__":
    main()
