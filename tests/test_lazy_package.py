"""``fakeapi`` and ``fakeapi.harness`` import their public names on first use (issue 22): each name is the
object of the module it lives in, ``import *`` gives them all, and the pytest plugin's own import (all a
pytest-xdist controller needs) loads neither the server nor the runner."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from support import with_bytecode_cache

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", ["fakeapi", "fakeapi.harness"])
def test_every_public_name_is_its_modules_object(package: str) -> None:
    pkg = importlib.import_module(package)
    homes = pkg._HOMES
    assert sorted(homes) == sorted(pkg.__all__)
    for name in pkg.__all__:
        assert getattr(pkg, name) is getattr(importlib.import_module(homes[name]), name), name
        assert name in dir(pkg)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pkg.nope  # noqa: B018
    star: dict[str, object] = {}
    exec(f"from {package} import *", star)
    assert {k for k in star if k != "__builtins__"} == set(pkg.__all__)


CHILD = """
import sys
import fakeapi.harness.plugin, fakeapi.harness.plugins
print(",".join(sorted(m for m in sys.modules if m.startswith("fakeapi"))))
from fakeapi import APIServer
api = APIServer()
print(type(api.gc).__module__, type(api.gc).__name__)
from fakeapi.server import hooks
from fakeapi.controllers.gc import GarbageCollector
assert hooks._collector is GarbageCollector  # (the package registered its own class once imported)
print(type(APIServer(garbage_collector=True).gc).__name__, APIServer(garbage_collector=False).gc)
"""


def test_the_plugin_loads_neither_the_server_nor_the_runner_and_servers_get_their_collector() -> None:
    env = with_bytecode_cache({"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    loaded, collector, again = out.stdout.strip().splitlines()
    assert set(loaded.split(",")) == {
        "fakeapi", "fakeapi.buildinfo", "fakeapi.machinery", "fakeapi.machinery.lazymodule",
        "fakeapi.server", "fakeapi.server.hooks", "fakeapi.server.clock",
        "fakeapi.harness", "fakeapi.harness.plugin", "fakeapi.harness.plugins", "fakeapi.harness.bundles",
        "fakeapi.harness.gcpolicy", "fakeapi.harness.planshare", "fakeapi.harness.settle"}
    assert collector == "fakeapi.controllers.gc GarbageCollector"
    assert again == "GarbageCollector None"
