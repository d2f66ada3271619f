"""Instructions per Pod write, as a ratio to a JSON round trip of the Pod: figures the machine's load does not move.

Run: ``python benchmarks/instructions_verbs.py`` (needs ``valgrind``; ``--kinds K1,K2`` or ``--kinds all``:
other built-in kinds, every one with a sample in benchmarks/samples.py for ``all``). Each figure is the difference of two cachegrind runs of a child interpreter,
one doing the setup only and one doing the setup and ``N`` calls, divided by ``N`` and by the
instructions of one ``json.loads(json.dumps(obj))`` of the benchmarks' sample (counted the same
way) of the sample as a client sends it (benchmarks/samples.py). Targets (issue 22): a Pod update <= 6x the round trip; every verb <= 10x.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Calls per figure, and round trips per floor (more: a small object's round trip is a few
#: thousand instructions, and the two children's counts differ by a few million).
N = 1000
FLOOR_N = 10_000

SETUP = """
import sys, json, copy
sys.path.insert(0, {here!r})
sys.path.insert(0, {root!r})
from samples import NS, POD, builtin_sample
from fakeapi import APIServer
api = APIServer()
api.create({{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": NS}}}})
kind = {kind!r}
bodies = [builtin_sample(kind, f"b-{{i}}") for i in range({n} + 2)]
k = api.resolve_kind(kind)
ns = NS if k.namespaced else None
first = api.create(copy.deepcopy(bodies[-1]))
name = first["metadata"]["name"]
sample = copy.deepcopy(bodies[-1])  # (the floor: the object as a client sends it)
for i in range(20):  # (warm: schemas compiled, caches filled)
    api.patch(kind, name, {{"metadata": {{"labels": {{"w": "p" + str(i)}}}}}}, namespace=ns)
    cur = api.get(kind, name, ns)
    cur["metadata"].setdefault("labels", {{}})["w"] = str(i)
    cur = api.update(cur)
    json.loads(json.dumps(sample))
"""

BODY = {
    "round trip": "for i in range({floor_n}):\n    json.loads(json.dumps(sample))\n",
    "create": "for i in range({n}):\n    api.create(bodies[i])\n",
    "update": ("for i in range({n}):\n    cur['metadata'].setdefault('labels', {{}})['i'] = str(i)\n"
               "    cur = api.update(cur)\n"),
    "merge patch": ("for i in range({n}):\n"
                    "    api.patch(kind, name, {{'metadata': {{'labels': {{'i': 'p' + str(i)}}}}}}, namespace=ns)\n"),
}


def _count(code: str) -> int:
    res = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    m = re.search(r"I\s+refs:\s+([\d,]+)", res.stderr)
    if m is None:
        raise RuntimeError(res.stderr[-2000:])
    return int(m.group(1).replace(",", ""))


def per_call(kind: str, verb: str) -> float:
    """Instructions per call of ``verb`` on ``kind``'s sample (``"round trip"``: the floor)."""
    setup = SETUP.format(here=str(HERE), root=str(HERE.parent), kind=kind, n=N)
    base = _count(setup)
    calls = FLOOR_N if verb == "round trip" else N
    return (_count(setup + BODY[verb].format(n=N, floor_n=FLOOR_N)) - base) / calls


def main() -> None:
    """Print each verb's instructions per call and its ratio to the round trip."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kinds", default="Pod", help="comma-separated built-in kinds (default Pod; all: every sample's)")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    sys.path.insert(0, str(HERE))
    from samples import SAMPLE_KINDS
    for kind in SAMPLE_KINDS if args.kinds == "all" else args.kinds.split(","):
        floor = per_call(kind, "round trip")
        cells = []
        for verb in ("create", "update", "merge patch"):
            ratio = per_call(kind, verb) / floor
            target = 6.0 if (kind, verb) == ("Pod", "update") else 10.0
            cells.append(f"{verb} {ratio:.1f}x ({'ok' if ratio <= target else 'MISS'}: {target:.0f}x)")
        print(f"{kind}: round trip {floor / 1e3:.0f} k instructions; " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
