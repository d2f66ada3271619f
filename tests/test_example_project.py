"""The example project (examples/greeter) installs and passes: its own pytest run and ``fakeapi run``.

The project is copied to a temporary folder and installed there with pip
(``--target``, ``--no-deps``, ``--no-build-isolation``, no index: nothing is
fetched), which writes its ``fakeapi.bundles`` entry point, so the bundle is
found exactly as in a user's environment. fakeapi itself comes from this
checkout (PYTHONPATH). Nothing is written outside the temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "greeter"
#: The pytest plugin by module name unless an installed fakeapi registers it through its entry point.
#: Plugins of the environment the example's own run does without (each would load in that run:
#: hypothesis's imports its whole package at the end; issue 22). Harmless when not installed.
QUIET = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:benchmark"]
PLUGIN = [] if any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")) else [
    "-p", "fakeapi.harness.plugin"]


def _env(*paths: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FAKEAPI_PLUGINS", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (*paths, REPO))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(copy of the project, folder it is installed into)``."""
    root = tmp_path_factory.mktemp("greeter")
    project = root / "greeter"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    target = root / "site"
    r = _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
              "--disable-pip-version-check", "--no-cache-dir", "--root-user-action=ignore", "--target", str(target), str(project)],
             root, _env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "greeter-0.1.0.dist-info" / "entry_points.txt").read_text().count("greeter.bundle:bundle") == 1
    return project, target


def test_the_example_projects_own_pytest_run_passes(installed: tuple[Path, Path]) -> None:
    project, target = installed
    r = _run([sys.executable, "-m", "pytest", "-q", *QUIET, *PLUGIN], project, _env(target))
    assert r.returncode == 0, r.stdout + r.stderr
    # 2 plain tests, 3 cases, the crash variants of the robust case (one per controller write: 2)
    assert "7 passed" in r.stdout, r.stdout


def test_fakeapi_run_over_the_example_cases_finds_the_bundle_by_its_entry_point(
        installed: tuple[Path, Path]) -> None:
    project, target = installed
    r = _run([sys.executable, "-m", "fakeapi.cli", "run", "fixtures/"], project, _env(target))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout, r.stdout
    assert "crash@1..2: 2 passed" in r.stdout, r.stdout


def test_fakeapi_run_loads_the_bundle_from_a_module_with_p(tmp_path: Path) -> None:
    project = tmp_path / "greeter"  # a source checkout, not installed
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    r = _run([sys.executable, "-m", "fakeapi.cli", "run", "fixtures/"], project, _env(project))
    assert r.returncode == 1 and "unknown bundle `greeter`" in r.stdout, r.stdout  # not installed: not found
    r = _run([sys.executable, "-m", "fakeapi.cli", "run", "-p", "greeter.bundle", "fixtures/"], project,
             _env(project))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout, r.stdout
