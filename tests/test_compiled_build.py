"""The compiled build (``FAKEAPI_MYPYC=1``, see setup.py) behaves exactly as the pure-Python one.

mypyc compiles the same sources, but it checks annotations at run time, makes compiled
classes' methods read-only and keeps class attributes of exception classes out of reach:
each of these once changed what a caller saw. So these tests build a compiled copy of the
checkout and check it: every module setup.py names is compiled; every fixture case passes
(the corpus in :data:`CHUNKS` parts, each a test of its own); the unit tests of the compiled
modules (and of the server's answers to bad input) pass; and an ARC lifecycle makes the very
same API calls and ends in the very same stored objects, byte for byte, as a pure copy.

The compiled copy runs every case but not the cases' robustness variants (``--no-robustness``):
a variant replays its case with the controllers restarted after a write, which is the harness's
and the host's work (pure Python in both builds), and measured with branch coverage the variants
reach no line and no branch of a compiled module that the cases themselves do not (``coverage run
--branch --include=<setup.py's COMPILED> -m fakeapi.cli run fixtures/``, with and without
``--no-robustness``: the same lines and arcs). The pure run of the suite runs the variants; here
they would be 60% of the corpus's time for nothing the compiled modules do differently.

The build itself is cached outside the repository, keyed by a hash of the sources, the
interpreter and mypy (tests/build_cache.py): a run on sources that were built before copies
the extensions; any change to the sources builds again, once: ``pytest -n auto`` spreads these
tests over its workers, and the cache's lock makes the first to ask build while the others wait.
The first test builds (marked ``slow_first``, it starts at once); the others are marked
``after_build`` and run last, when the build is done and a worker is free, rather than
waiting on the lock while the rest of the suite could run.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from build_cache import compiled_build, install_build

from fakeapi.cli import fixture_files

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


def _setup_list(name: str) -> list[str]:
    """The list assigned to ``name`` at the top of setup.py, read from its source (running it would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                assert node.value is not None
                value: list[str] = ast.literal_eval(node.value)
                return value
    raise AssertionError(f"setup.py has no {name} list")


def _compiled_names() -> list[str]:
    """The modules setup.py compiles."""
    return sorted(p.removesuffix(".py").replace("/", ".") for p in _setup_list("COMPILED"))


def _requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower()


def test_a_compiled_build_installs_the_type_stubs_the_project_is_checked_with() -> None:
    # An isolated build (``FAKEAPI_MYPYC=1 pip install .``) type-checks the compiled modules with only
    # the build requirements installed: without a stub package the project's own check has, mypy sees
    # that import as untyped, and ``warn_unused_ignores`` fails the build on an ignore the stubs need.
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    stubs = {_requirement_name(s) for s in extra if _requirement_name(s).startswith("types-")}
    build = {_requirement_name(s) for s in _setup_list("BUILD_REQUIRES")}
    assert stubs and "mypy" in build and stubs <= build, (stubs, build)


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


F = TypeVar("F", bound=Callable[..., None])


def needs_build(test: F) -> F:
    """Skip ``test`` where the compiled build cannot be made (no C compiler, or no mypyc)."""
    test = pytest.mark.skipif(_compiler() is None, reason="no C compiler: the compiled build cannot be made here")(test)
    return pytest.mark.skipif(importlib.util.find_spec("mypyc") is None, reason="mypy (the test extra) brings mypyc")(test)


#: (the semantics depend on neither the C optimisation level nor the debug information: the fastest build)
FLAGS = {"FAKEAPI_MYPYC": "1", "FAKEAPI_MYPYC_OPT": "0", "FAKEAPI_MYPYC_DEBUG": "0"}
#: the fixture corpus runs on the compiled copy in this many parts (tests of their own, spread over the workers)
CHUNKS = 2


def _compiled(tmp_path: Path) -> Path:
    """A compiled copy of the checkout: a pure copy, then the build's extensions from the cache
    (built from that copy, which it leaves pure, when the cache has no build of these sources)."""
    compiled = _copy(tmp_path / "compiled")
    build, _ = compiled_build(compiled, lambda tree: _run(["setup.py", "-q", "build_ext", "--inplace"], tree, **FLAGS),
                              **FLAGS)
    install_build(build, compiled)
    return compiled


def _chunks() -> list[list[str]]:
    """The corpus's files (as ``fakeapi run fixtures/`` finds them) in :data:`CHUNKS` parts of about
    the same size in bytes, a stable partition (the largest file first into the smallest part)."""
    files = sorted(fixture_files([str(ROOT / "fixtures")]), key=lambda f: (-f.stat().st_size, f))
    parts: list[tuple[int, list[str]]] = [(0, []) for _ in range(CHUNKS)]
    for f in files:
        i = min(range(CHUNKS), key=lambda j: (parts[j][0], j))
        parts[i] = (parts[i][0] + f.stat().st_size, [*parts[i][1], f.relative_to(ROOT).as_posix()])
    return [sorted(names) for _, names in parts]


def test_the_corpus_parts_are_the_whole_corpus() -> None:
    names = [n for part in _chunks() for n in part]
    whole = [f.relative_to(ROOT).as_posix() for f in fixture_files([str(ROOT / "fixtures")])]
    assert sorted(names) == sorted(whole) and len(names) == len(set(names)) and all(_chunks())


@pytest.mark.slow_first
@needs_build
def test_every_module_setup_py_names_is_compiled_and_none_in_the_pure_copy(tmp_path: Path) -> None:
    pure, compiled = _copy(tmp_path / "pure"), _compiled(tmp_path)
    probe = "from fakeapi.buildinfo import compiled_modules, stale_modules; print(compiled_modules(), stale_modules())"
    out = _run(["-c", probe], compiled)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{_compiled_names()} []"
    assert _run(["-c", probe], pure).stdout.strip() == "[] []"


@pytest.mark.after_build
@needs_build
@pytest.mark.parametrize("part", range(CHUNKS), ids=lambda i: f"part{i + 1}of{CHUNKS}")
def test_the_fixture_corpus_passes_on_the_compiled_build(part: int, tmp_path: Path) -> None:
    compiled = _compiled(tmp_path)
    names = _chunks()[part]
    fixtures = _run(["-m", "fakeapi.cli", "run", "--no-robustness", *names], compiled)
    assert fixtures.returncode == 0, fixtures.stdout[-5000:] + fixtures.stderr[-3000:]
    assert " passed, 0 failed" in fixtures.stdout, fixtures.stdout[-2000:]


@pytest.mark.after_build
@needs_build
def test_the_unit_tests_pass_on_the_compiled_build(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path)
    units = _run(["-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *UNIT_TESTS], compiled)
    assert units.returncode == 0, units.stdout[-5000:] + units.stderr[-3000:]
    assert " passed" in units.stdout and " failed" not in units.stdout


@pytest.mark.after_build
@needs_build
def test_an_arc_lifecycle_is_the_same_on_the_compiled_build(tmp_path: Path) -> None:
    pure, compiled = _copy(tmp_path / "pure"), _compiled(tmp_path)
    a, b = _run(["-c", LIFECYCLE], pure), _run(["-c", LIFECYCLE], compiled)
    assert a.returncode == 0 and b.returncode == 0, a.stderr[-3000:] + b.stderr[-3000:]
    assert len(a.stdout.splitlines()) > 400  # (the calls and the objects: something was compared)
    assert a.stdout == b.stdout
