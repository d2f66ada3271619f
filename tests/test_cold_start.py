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
at_startup = set(sys.modules)  # a site .pth file may import certifi, and with it zipfile and tempfile
from fakeapi import APIServer
api = APIServer()
lazy = ["fakeapi.registry.apps.validation", "fakeapi.registry.networking.validation", "fakeapi.registry.core.validation",
        "fakeapi.registry.batch.validation", "fakeapi.machinery.selectors", "fakeapi.registry.apiextensions.crd",
        "fakeapi.codec.semantic", "fakeapi.host", "fakeapi.http", "fakeapi.harness",
        "fakeapi.machinery.typedapply", "fakeapi.machinery.serverapply", "fakeapi.registry.core.defaults", "fakeapi.codec.godecode",
        "fakeapi.machinery.quantity", "fakeapi.registry.apiextensions.crdsnapshot", "fakeapi.codec.fromunstructured",
        "fakeapi.codec.snapshots", "jsonschema_rs", "zipfile", "tempfile"]
print(",".join(m for m in lazy if m in sys.modules and m not in at_startup))
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
    uses), the CRD rules, semantic equality, server-side apply's typed walks, the core group's
    defaults but a Namespace's, the Go decoder, quantities, CRD snapshots, the unstructured
    converter's errors, (unless switched on) the snapshot check and the schema validator (jsonschema-rs, whose
    extension imports email, socket and decimal) are imported when first used (nor importlib.resources: zipfile,
    tempfile, unless the interpreter's own start-up already loaded them), and then stand in the strategy modules'
    globals as the plain modules."""
    out = subprocess.run([sys.executable, "-c", LAZY_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["", "True"]


FIRST_USE_CHILD = """
import sys
from fakeapi import APIServer
api = APIServer()
first = ["fakeapi.machinery.serverapply", "fakeapi.machinery.typedapply", "fakeapi.codec.godecode",
         "fakeapi.machinery.quantity"]
assert not [m for m in first if m in sys.modules], [m for m in first if m in sys.modules]
cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}}
api.patch("ConfigMap", "c", cm, namespace="default", patch_type="apply", field_manager="m")
assert "fakeapi.machinery.typedapply" in sys.modules
import fakeapi.server.patch as patch_verb
assert patch_verb.serverapply is sys.modules["fakeapi.machinery.serverapply"], patch_verb.serverapply
assert "fakeapi.codec.godecode" not in sys.modules
from fakeapi import Client
got = Client(api, "reader").get("ConfigMap", "c", "default")
assert api.decoded is api.decoded and type(api.decoded).__module__ == "fakeapi.codec.godecode"
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "0.5"}}}]}}
made = api.create(pod)
print(got["data"]["a"], [e["manager"] for e in got["metadata"]["managedFields"]],
      made["spec"]["containers"][0]["resources"]["limits"]["cpu"], "fakeapi.machinery.quantity" in sys.modules)
"""


def test_apply_the_go_decoder_and_quantities_are_loaded_on_first_use() -> None:
    """A server's first apply imports apply's field manager and typed walks (the patch verb's stand-in
    then becomes the module), its first client read the Go decoder (one cache, kept), its first quantity the
    quantity module: each answers as it would have imported eagerly."""
    out = subprocess.run([sys.executable, "-c", FIRST_USE_CHILD], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                                           "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "1 ['m'] 500m True"
