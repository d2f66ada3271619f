"""``import fakeapi`` loads no HTTP front end until a server serves (cold start, issue 22)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, urllib.request, json
from fakeapi import APIServer
assert "fakeapi.http" not in sys.modules, "import fakeapi loaded the HTTP front end"
api = APIServer()
api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
with api.serve() as endpoint:
    assert "fakeapi.http" in sys.modules
    with urllib.request.urlopen(endpoint.url + "/api/v1/namespaces/default/configmaps/c") as r:
        print(json.load(r)["metadata"]["name"])
"""


def test_the_http_front_end_is_loaded_when_a_server_first_serves() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "c"


LAZY_CHILD = """
import sys
from fakeapi import APIServer
api = APIServer()
lazy = ["fakeapi.registry.apps.validation", "fakeapi.registry.networking.validation", "fakeapi.registry.core.validation",
        "fakeapi.registry.batch.validation", "fakeapi.machinery.selectors", "fakeapi.registry.apiextensions.crd",
        "fakeapi.codec.semantic", "fakeapi.host", "fakeapi.http", "fakeapi.harness"]
print(",".join(m for m in lazy if m in sys.modules))
import fakeapi.registry.apps.strategy as apps
from fakeapi.machinery.lazymodule import LazyModule
assert isinstance(apps.validation, LazyModule)
pod = {"containers": [{"name": "c", "image": "i"}]}
api.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod}}})
assert apps.validation is sys.modules["fakeapi.registry.apps.validation"], apps.validation
assert apps.core_validation is sys.modules["fakeapi.registry.core.validation"]
from fakeapi import semantic_equal
print(semantic_equal({"a": "1"}, {"a": "1"}))
"""


def test_the_first_server_loads_no_validation_of_kinds_it_never_writes() -> None:
    """``APIServer()`` creates four Namespaces: the other groups' validation (and the selectors it
    uses), the CRD rules and semantic equality are imported when first used, and then stand in
    the strategy modules' globals as the plain modules."""
    out = subprocess.run([sys.executable, "-c", LAZY_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["", "True"]
