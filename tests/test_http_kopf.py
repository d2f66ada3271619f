"""A kopf operator against a served fakeapi cluster over HTTPS (issue 25).

The operator runs unmodified in its own process (``python -m kopf run``, its
default login through the kubeconfig), with peering through kopf's own
KopfPeering CRD. It has a create handler that makes an owned ConfigMap
(``kopf.adopt``) and a delete handler, so the test sees kopf's finalizer, its
status patches (handler results and its progress annotations), the child's
collection by the served garbage collector once the owner is gone, and the
peering object's status. The test waits on the server's own watches
(``Watch.wait`` on a condition, bounded), never on a sleep.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import widget_crd, with_bytecode_cache

from fakeapi.http import serve
from fakeapi.server.apiserver import APIServer

pytestmark = pytest.mark.skipif(importlib.util.find_spec("kopf") is None, reason="kopf is not installed")

WAIT = 60.0  # seconds: the bound of every wait (kopf starts a process and its own asyncio loop)

OPERATOR = '''
import kopf
import kubernetes


@kopf.on.create("example.com", "v1", "widgets")
def created(spec, name, namespace, body, patch, **_):
    child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-child"},
             "data": {"mode": spec.get("mode", "")}}
    kopf.adopt(child, owner=body)
    kubernetes.config.load_kube_config()
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, child)
    patch.status["phase"] = "Ready"
    return {"child": child["metadata"]["name"]}


@kopf.on.update("example.com", "v1", "widgets", field="spec.mode")
def mode_changed(new, **_):
    return {"mode": new}


@kopf.on.delete("example.com", "v1", "widgets")
def deleted(name, **_):
    return None
'''


def peering_crd(kind: str, plural: str, scope: str) -> dict[str, Any]:
    """kopf's peering CRDs (its docs' ``peering.yaml``)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.kopf.dev"},
            "spec": {"group": "kopf.dev", "scope": scope,
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"status": {
                             "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def wait_for(api: APIServer, kind: str, namespace: str | None, done: Callable[[], bool], what: str) -> None:
    """Block on the server's watch of ``kind`` until ``done()`` holds (bounded by WAIT)."""
    w = api.watch(kind, namespace)
    try:
        end = time.monotonic() + WAIT
        while not done():
            left = end - time.monotonic()
            assert left > 0, f"timed out waiting for {what}"
            w.wait(min(left, 1.0))
    finally:
        w.close()


def test_a_kopf_operator_runs_against_the_served_cluster(tmp_path: Path) -> None:
    api = APIServer()
    crd = widget_crd()  # (kopf keeps handler results in status: its schema keeps unknown fields, as kopf's docs say)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"] = {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}
    api.register_crd(crd)
    api.register_crd(peering_crd("KopfPeering", "kopfpeerings", "Namespaced"))
    api.register_crd(peering_crd("ClusterKopfPeering", "clusterkopfpeerings", "Cluster"))
    api.create({"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": "default",
                                                                                  "namespace": "default"}})
    (tmp_path / "operator.py").write_text(OPERATOR)
    with serve(api, cluster=True, tls=True, wall_clock=True) as ep:
        env = with_bytecode_cache({**os.environ, "KUBECONFIG": ep.kubeconfig_path})
        proc = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--namespace=default", "--peering=default",
                                 "--verbose", str(tmp_path / "operator.py")],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            api.create({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w", "namespace": "default"}, "spec": {"mode": "a"}})

            def widget() -> dict[str, Any]:
                return api.get("Widget", "w", "default")

            wait_for(api, "Widget", "default", lambda: (widget().get("status") or {}).get("created") is not None,
                     "the create handler's result in status")
            w = widget()
            assert w["status"]["created"] == {"child": "w-child"} and w["status"]["phase"] == "Ready"
            assert "kopf.zalando.org/KopfFinalizerMarker" in w["metadata"]["finalizers"]
            assert "kopf.zalando.org/last-handled-configuration" in w["metadata"]["annotations"]
            child = api.get("ConfigMap", "w-child", "default")
            assert child["metadata"]["ownerReferences"][0]["uid"] == w["metadata"]["uid"]
            api.patch("Widget", "w", {"spec": {"mode": "b"}}, namespace="default")
            wait_for(api, "Widget", "default", lambda: (widget().get("status") or {}).get("mode_changed/spec.mode") == {
                "mode": "b"}, "the update handler")
            peering = api.get("KopfPeering", "default", "default")
            assert peering.get("status"), "kopf keeps its identity in the peering object's status"
            api.delete("Widget", "w", "default")

            def gone(name: str, kind: str) -> Callable[[], bool]:
                return lambda: all(o["metadata"]["name"] != name for o in api.list(kind, "default")["items"])

            wait_for(api, "Widget", "default", gone("w", "Widget"), "kopf to remove its finalizer")
            wait_for(api, "ConfigMap", "default", gone("w-child", "ConfigMap"), "the owned ConfigMap to be collected")
        finally:
            proc.terminate()
            try:
                out, _ = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate(timeout=30)
        assert "Traceback" not in out and "[ERROR" not in out, out[-3000:]
