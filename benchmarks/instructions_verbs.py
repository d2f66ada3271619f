"""Instructions per verb on built-in kinds, as a ratio to a JSON round trip of the kind's sample: figures the
machine's load does not move.

Run: ``python benchmarks/instructions_verbs.py`` (needs ``valgrind``; ``--kinds K1,K2`` or ``--kinds all``: every
built-in kind, each with a sample in benchmarks/samples.py; ``--jobs 2``: two kinds at a time; ``--n``: calls per
verb). One child interpreter per kind runs under callgrind and calls ``os.getpgrp()`` between phases; callgrind
dumps its counters before each such call (``--dump-before=getpgrp``), so each dump holds exactly one phase: the
floor (``FLOOR_N`` round trips ``json.loads(json.dumps(sample))`` of the sample as a client sends it) or ``n``
calls of one verb. Each figure is a phase's instructions per call divided by the floor's.

Verbs: create, get, list (per item returned, of a list of every object of the kind in the namespace), update,
merge patch, strategic merge patch and JSON patch (each sets one label), server-side apply (the sample with one
label changed, as a client re-applies its configuration), delete. Targets (issue 22): a Pod update <= 6x the round
trip; every verb <= 10x.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Calls per verb, and round trips for the floor (more: a small object's round trip is a few thousand instructions).
N = 300
FLOOR_N = 1000
#: The phases after the floor, in the order the child runs them.
VERBS = ("create", "get", "list", "update", "merge patch", "strategic merge patch", "json patch", "apply", "delete")

CHILD = """
import copy, json, os, sys
sys.path.insert(0, {here!r})
sys.path.insert(0, {root!r})
from samples import NS, builtin_sample
from fakeapi import APIServer
api = APIServer()
api.create({{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": NS}}}})
kind, n, floor_n = {kind!r}, {n}, {floor_n}
k = api.resolve_kind(kind)
ns = NS if k.namespaced else None
bodies = [builtin_sample(kind, f"b-{{i}}") for i in range(n)]
names = [b["metadata"]["name"] for b in bodies]
sample = builtin_sample(kind, "w-0")  # (the floor: the object as a client sends it)
name = api.create(copy.deepcopy(sample))["metadata"]["name"]
applied = builtin_sample(kind, "w-1")
applied["metadata"].setdefault("labels", {{}})
aname = applied["metadata"]["name"]
for i in range(20):  # (warm: schemas compiled, caches filled, every verb's code run once)
    api.patch(kind, name, {{"metadata": {{"labels": {{"w": "p" + str(i)}}}}}}, namespace=ns)
    api.patch(kind, name, {{"metadata": {{"labels": {{"w": "s" + str(i)}}}}}}, namespace=ns, patch_type="strategic")
    api.patch(kind, name, [{{"op": "add", "path": "/metadata/labels/w", "value": "j" + str(i)}}], namespace=ns,
              patch_type="json")
    applied["metadata"]["labels"]["w"] = str(i)
    api.patch(kind, aname, copy.deepcopy(applied), namespace=ns, patch_type="apply", field_manager="bench")
    cur = api.get(kind, name, ns)
    cur["metadata"].setdefault("labels", {{}})["w"] = str(i)
    cur = api.update(cur)
    api.list(kind, ns)
    if i < 3:  # (a delete too: its first call imports what a server's first delete needs)
        api.delete(kind, api.create(builtin_sample(kind, f"x-{{i}}"))["metadata"]["name"], ns)
    json.loads(json.dumps(sample))
os.getpgrp()
for i in range(floor_n):
    json.loads(json.dumps(sample))
os.getpgrp()
for i in range(n):
    api.create(bodies[i])
os.getpgrp()
for i in range(n):
    api.get(kind, names[i], ns)
os.getpgrp()
items = 0
for i in range(3):
    items += len(api.list(kind, ns)["items"])
os.getpgrp()
for i in range(n):
    cur["metadata"]["labels"]["i"] = str(i)
    cur = api.update(cur)
os.getpgrp()
for i in range(n):
    api.patch(kind, name, {{"metadata": {{"labels": {{"i": "m" + str(i)}}}}}}, namespace=ns)
os.getpgrp()
for i in range(n):
    api.patch(kind, name, {{"metadata": {{"labels": {{"i": "s" + str(i)}}}}}}, namespace=ns, patch_type="strategic")
os.getpgrp()
for i in range(n):
    api.patch(kind, name, [{{"op": "add", "path": "/metadata/labels/i", "value": "j" + str(i)}}], namespace=ns,
              patch_type="json")
os.getpgrp()
configs = []
for i in range(n):
    c = copy.deepcopy(applied)
    c["metadata"]["labels"]["i"] = str(i)
    configs.append(c)
os.getpgrp()
for i in range(n):
    api.patch(kind, aname, configs[i], namespace=ns, patch_type="apply", field_manager="bench")
os.getpgrp()
for i in range(n):
    api.delete(kind, names[i], ns)
os.getpgrp()
print(items)
"""


def _phases(kind: str, n: int) -> tuple[list[int], int]:
    """Instructions of each phase of the child for ``kind`` (dump order), and the items its lists returned."""
    code = CHILD.format(here=str(HERE), root=str(HERE.parent), kind=kind, n=n, floor_n=FLOOR_N)
    with tempfile.TemporaryDirectory(prefix="instr-verbs-") as tmp:
        out = os.path.join(tmp, "cg.out")
        res = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getpgrp", f"--callgrind-out-file={out}",
                              sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": "0"})
        if res.returncode != 0:
            raise RuntimeError(f"{kind}: {res.stderr[-3000:]}")
        dumps = sorted((int(p.name.rsplit(".", 1)[1]), p) for p in Path(tmp).glob("cg.out.*"))
        totals = []
        for _, path in dumps:
            m = re.search(r"^totals:\s+(\d+)", path.read_text(errors="replace"), re.M)
            if m is None:
                raise RuntimeError(f"{kind}: no totals in {path.name}")
            totals.append(int(m.group(1)))
    return totals, int(res.stdout.split()[-1])


def ratios(kind: str, n: int = N) -> tuple[float, dict[str, float]]:
    """(instructions of one round trip of ``kind``'s sample, each verb's instructions per call over it)."""
    totals, items = _phases(kind, n)
    # dumps: [setup, floor, create, get, list, update, merge, strategic, json, (apply configs), apply, delete]
    phases = totals[1:]
    floor = phases[0] / FLOOR_N
    per = dict(zip(("create", "get", "list", "update", "merge patch", "strategic merge patch", "json patch",
                    "configs", "apply", "delete"), phases[1:], strict=True))
    out = {v: per[v] / (items if v == "list" else n) / floor for v in VERBS}
    return floor, out


def target(kind: str, verb: str) -> float:
    """Issue 22's target for ``verb`` on ``kind``, as a ratio to the round trip."""
    return 6.0 if (kind, verb) == ("Pod", "update") else 10.0


def main() -> None:
    """Print each kind's round trip and each verb's ratio to it, marking the cells over target."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kinds", default="Pod", help="comma-separated built-in kinds (default Pod; all: every sample's)")
    p.add_argument("--jobs", type=int, default=1, help="kinds measured at a time")
    p.add_argument("--n", type=int, default=N, help="calls per verb")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    sys.path.insert(0, str(HERE))
    from samples import SAMPLE_KINDS
    kinds = list(SAMPLE_KINDS) if args.kinds == "all" else args.kinds.split(",")
    unknown = [k for k in kinds if k not in SAMPLE_KINDS]
    if unknown:
        sys.exit(f"no sample for {', '.join(unknown)} (benchmarks/samples.py has {', '.join(SAMPLE_KINDS)})")
    short = {"merge patch": "merge", "strategic merge patch": "smp", "json patch": "json"}
    print(f"instructions per call / a JSON round trip of the sample ({args.n} calls per verb; target 10x, "
          "Pod update 6x; * marks a miss)")
    print(f"{'kind':<26}{'trip':>7}" + "".join(f"{short.get(v, v):>8}" for v in VERBS), flush=True)
    misses = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for kind, (floor, got) in zip(kinds, pool.map(lambda k: ratios(k, args.n), kinds)):
            cells = ""
            for v in VERBS:
                miss = got[v] > target(kind, v)
                cells += f"{got[v]:>6.1f}x{'*' if miss else ' '}"
                if miss:
                    misses.append(f"{kind} {v} {got[v]:.1f}x")
            print(f"{kind:<26}{floor / 1e3:>6.0f}k" + cells, flush=True)
    print("misses: " + ("; ".join(misses) if misses else "none"))


if __name__ == "__main__":
    main()
