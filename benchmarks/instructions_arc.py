"""Instructions per ARC lifecycle, counted by valgrind: a figure the machine's speed does not move.

Wall times on the shared 2-core machine swing by 2x from minute to minute; the number of
instructions the lifecycle of ``bench_arc.py`` executes does not. Run
``python benchmarks/instructions_arc.py`` (needs ``valgrind``: ``apt-get install valgrind``;
``--managed-fields=off``: a server that keeps no managedFields).
It runs the interpreter under cachegrind twice, with 3 clusters built each time, once running
no lifecycle and once running one per cluster, and prints the difference per lifecycle. The hash
seed is fixed (string hashes move dict layouts, and so the count by about 1 M from run to run), and
a full collection runs after the clusters are built: the collector's passes during the lifecycles
are then theirs, whatever the setup allocated (a cheaper setup otherwise moves the count by
several million).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fakeapi.buildinfo import build_description  # noqa: E402

CLUSTERS = 3

CHILD = """
import sys
sys.path.insert(0, {here!r})
sys.path.insert(0, {root!r})
from bench_arc import lifecycle
from reconcilers.testing import ArcCluster
lifecycle()  # warm up: schemas, Go types, imports
clusters = [ArcCluster(check_invariants=False, managed_fields={managed}) for _ in range({clusters})]
import gc
gc.collect()  # (the lifecycles start with empty young generations, whatever the setup allocated)
for c in clusters[:{runs}]:
    lifecycle(c)
"""


def count(runs: int, managed_fields: bool = True) -> int:
    """Instructions (cachegrind ``I refs``) of a child interpreter running ``runs`` lifecycles."""
    code = CHILD.format(here=str(HERE), root=str(HERE.parent), clusters=CLUSTERS, runs=runs, managed=managed_fields)
    # a fixed hash seed: string hashes (so dict and set layouts) are the same in every run
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    res = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    m = re.search(r"I\s+refs:\s+([\d,]+)", res.stderr)
    if m is None:
        raise RuntimeError("no instruction count in valgrind's output:\n" + res.stderr[-2000:])
    return int(m.group(1).replace(",", ""))


def main() -> None:
    """Print the instructions of one lifecycle (cluster setup and start-up excluded)."""
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    managed = "--managed-fields=off" not in sys.argv[1:]
    base, full = count(0, managed), count(CLUSTERS, managed)
    print(f"lifecycle: {(full - base) / CLUSTERS / 1e6:.0f} M instructions per run "
          f"(cachegrind; {CLUSTERS} runs, setup and start-up subtracted; fakeapi build: {build_description()}; "
          f"managedFields {'on' if managed else 'off'})")


if __name__ == "__main__":
    main()
