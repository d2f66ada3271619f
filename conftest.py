"""Wires the fixture harness into this repository's own test run.

An installed fakeapi registers its pytest plugin through the ``pytest11``
entry point, and ``fakeapi_fixtures`` in pyproject.toml makes every YAML file
under ``fixtures/`` a fixture file. When the package is only on the path (a
source checkout that was not pip-installed), load the plugin from here so
``pytest`` still collects the fixtures.

Where the environment asks for no bytecode beside the sources, the run keeps its bytecode in a cache
folder outside the checkout: tests/bytecode_cache.py does that, loaded as the plugin ``-p bytecode_cache``
(pyproject.toml) before installed plugins import fakeapi; at a run's end the main process removes from
that folder the bytecode of temporary folders that are gone.

The project's own run checks, in every server it makes, that stored snapshots are
never mutated (``FAKEAPI_CHECK_SNAPSHOTS``, see fakeapi/codec/snapshots.py): the write path
shares what it does not change, and a mutation anywhere would corrupt history.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

os.environ.setdefault("FAKEAPI_CHECK_SNAPSHOTS", "1")

if not any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")):
    pytest_plugins = ["fakeapi.harness.plugin"]
# Likewise the `arc` bundle, which an install finds through its `fakeapi.bundles` entry point.
if not any(ep.name == "arc" for ep in entry_points(group="fakeapi.bundles")):
    os.environ.setdefault("FAKEAPI_PLUGINS", "reconcilers.bundle")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``pytest -n N`` without a ``--dist`` of its own distributes by work stealing (pytest-xdist's
    ``worksteal``), not ``load``: a worker that runs out of tests takes half of another's, so the
    run does not end with one worker still going through a queue of long tests while the other
    idles. (Ahead of xdist's own hook, which would make an unset ``--dist`` ``load``.)"""
    if config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None) \
            and config.getoption("dist", "no") == "no":
        config.option.dist = "worksteal"


def pytest_runtest_teardown(item: object) -> None:
    """Fail a test that changed the shared empty field set (fakeapi.machinery.fieldpath.EMPTY, the node of
    every leaf of every managedFields set): sets are values, and a change there changes them all."""
    from fakeapi.machinery import fieldpath

    if fieldpath.EMPTY:
        bad = dict(fieldpath.EMPTY)
        fieldpath.EMPTY.clear()
        raise AssertionError(f"{item}: the shared empty field set was changed to {bad}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Collect once, then leave what is alive out of the collector (:func:`gc.freeze`) for the rest of the
    process. pytest ends a session by collecting five times over (so that ``__del__`` errors surface as
    warnings), which in a worker that ran a share of this suite walked its whole heap five times, a
    second of CPU or more; now the first of those walks is this one, which runs while pytest still
    catches ``__del__`` errors, and the other five walk only what was made after it."""
    import gc

    gc.collect()
    gc.freeze()
    from bytecode_cache import PREFIX, prune_stale_bytecode

    if sys.pycache_prefix == PREFIX and not hasattr(session.config, "workerinput"):  # (once, in the main process)
        import tempfile

        prune_stale_bytecode(Path(PREFIX), Path(tempfile.gettempdir()))  # (the bytecode of deleted temporary folders)
