"""The compiled build (``FAKEAPI_MYPYC=1``, see setup.py) behaves exactly as the pure-Python one.

mypyc compiles the same sources, but it checks annotations at run time, makes compiled
classes' methods read-only and keeps class attributes of exception classes out of reach:
each of these once changed what a caller saw. So this test builds a compiled copy of the
checkout and checks it three ways: every fixture case passes; the unit tests of the
compiled modules (and of the server's answers to bad input) pass; and an ARC lifecycle makes
the very same API calls and ends in the very same stored objects, byte for byte, as a pure
copy. One test, so that ``pytest -n auto`` builds the copy once.

The build itself is cached outside the repository, keyed by a hash of the sources, the
interpreter and mypy (tests/build_cache.py): a run on sources that were built before copies
the extensions; any change to the sources builds again.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from build_cache import compiled_build, install_build

ROOT = Path(__file__).resolve().parent.parent

#: the tests of the compiled modules, and of the server's behaviour at its boundaries
UNIT_TESTS = [
    "tests/test_defaults.py", "tests/test_go_codec.py", "tests/test_go_decode.py", "tests/test_gomodel.py",
    "tests/test_jsonutil.py", "tests/test_metavalidation.py", "tests/test_patches.py",
    "tests/test_schema_validation.py", "tests/test_selectors.py", "tests/test_semantic.py",
    "tests/test_structural.py", "tests/test_snapshots.py", "tests/test_server_errors.py",
    "tests/test_server_fidelity.py",
    # (this one swaps a module function by monkeypatching, which compiled callers do not see: it
    # checks the pure code only, and the pure run checks it)
    "--deselect", "tests/test_patches.py::test_strategic_merge_by_key_index_gives_what_the_scan_gives",
]

#: an ARC lifecycle (benchmarks/bench_arc.py), printed as its API calls and final stored objects
LIFECYCLE = """
import json, sys
sys.path.insert(0, "benchmarks")
from bench_arc import lifecycle
from reconcilers.testing import ArcCluster
a = ArcCluster(check_invariants=False)
lifecycle(a)
for c in a.api.trace.calls:
    print(c.render())
for _, table in sorted(a.api.store.tables.items()):
    for key in table.keys:
        print(json.dumps(table.entries[key].obj))
"""


def _compiler() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def _compiled_names() -> list[str]:
    """The modules setup.py compiles, read from its source (running it would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "COMPILED" for t in targets):
                assert node.value is not None
                paths: list[str] = ast.literal_eval(node.value)
                return sorted(p.removesuffix(".py").replace("/", ".") for p in paths)
    raise AssertionError("setup.py has no COMPILED list")


def _copy(dst: Path) -> Path:
    """The checkout's sources without any compiled extension (a pure copy)."""
    skip = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "build", "*.egg-info")
    for name in ("fakeapi", "reconcilers", "fixtures", "tests", "benchmarks"):
        shutil.copytree(ROOT / name, dst / name, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "conftest.py"):
        shutil.copy2(ROOT / name, dst / name)
    return dst


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(cwd), "PYTHONHASHSEED": "0", **env}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=1800)


@pytest.mark.slow_first
@pytest.mark.skipif(_compiler() is None, reason="no C compiler: the compiled build cannot be made here")
def test_the_compiled_build_behaves_as_the_pure_one(tmp_path: Path) -> None:
    pytest.importorskip("mypyc", reason="mypy (the test extra) brings mypyc")
    pure = _copy(tmp_path / "pure")
    compiled = _copy(tmp_path / "compiled")
    flags = {"FAKEAPI_MYPYC": "1", "FAKEAPI_MYPYC_OPT": "0"}  # (the semantics do not depend on the C optimisation level)
    build, _ = compiled_build(pure, lambda tree: _run(["setup.py", "-q", "build_ext", "--inplace"], tree, **flags),
                              **flags)
    install_build(build, compiled)

    # every module setup.py names is compiled in the copy, and nothing in the pure one
    probe = "from fakeapi.buildinfo import compiled_modules, stale_modules; print(compiled_modules(), stale_modules())"
    out = _run(["-c", probe], compiled)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{_compiled_names()} []"
    assert _run(["-c", probe], pure).stdout.strip() == "[] []"

    fixtures = _run(["-m", "fakeapi.cli", "run", "fixtures/"], compiled)
    assert fixtures.returncode == 0, fixtures.stdout[-5000:] + fixtures.stderr[-3000:]

    units = _run(["-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *UNIT_TESTS], compiled)
    assert units.returncode == 0, units.stdout[-5000:] + units.stderr[-3000:]
    assert " passed" in units.stdout and " failed" not in units.stdout

    a, b = _run(["-c", LIFECYCLE], pure), _run(["-c", LIFECYCLE], compiled)
    assert a.returncode == 0 and b.returncode == 0, a.stderr[-3000:] + b.stderr[-3000:]
    assert len(a.stdout.splitlines()) > 400  # (the calls and the objects: something was compared)
    assert a.stdout == b.stdout
