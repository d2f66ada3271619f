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
