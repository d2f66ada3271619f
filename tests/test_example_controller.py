"""A worked example: testing a controller of your own with fakeapi (public API only).

The controller reconciles ``Greeting`` objects (a custom kind registered from
its CRD manifest): for each one it keeps a ConfigMap holding the greeting's
message, owned by the Greeting, publishes the message to an "external"
directory, and reports in status. A finalizer removes the directory entry
before the Greeting goes away; the ConfigMap then goes with it through
owner-based garbage collection. docs/HOST.md walks through the same code.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import ApiError, is_not_found
from fakeapi.host import Context, Host, Request, Result
from fakeapi.server.apiserver import APIServer

FINALIZER = "example.org/directory"

GREETING_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "greetings.example.org"},
    "spec": {
        "group": "example.org",
        "scope": "Namespaced",
        "names": {"kind": "Greeting", "plural": "greetings", "singular": "greeting", "listKind": "GreetingList"},
        "versions": [{
            "name": "v1",
            "served": True,
            "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {"message": {"type": "string"}}},
                    "status": {"type": "object", "properties": {
                        "configMap": {"type": "string"},
                        "observedGeneration": {"type": "integer"},
                    }},
                },
            }},
        }],
    },
}


class GreetingReconciler:
    """The controller under test. ``directory`` stands for an external system it publishes to."""

    def __init__(self) -> None:
        self.directory: dict[str, str] = {}

    def __call__(self, ctx: Context, req: Request) -> Result | None:
        try:
            greeting = ctx.client.get("Greeting", req.name, req.namespace)
        except ApiError as e:
            if is_not_found(e):
                return None  # gone: the garbage collector takes care of the ConfigMap
            raise
        meta = greeting["metadata"]
        key = f"{req.namespace}/{req.name}"
        finalizers = meta.get("finalizers") or []

        if meta.get("deletionTimestamp"):
            if FINALIZER in finalizers:
                self.directory.pop(key, None)
                meta["finalizers"] = [f for f in finalizers if f != FINALIZER]
                ctx.client.update(greeting)
            return None

        if FINALIZER not in finalizers:
            meta["finalizers"] = [*finalizers, FINALIZER]
            ctx.client.update(greeting)
            return None  # the update brings us back

        message = greeting.get("spec", {}).get("message", "")
        cm_name = f"{req.name}-greeting"
        try:
            cm = ctx.client.get("ConfigMap", cm_name, req.namespace)
        except ApiError as e:
            if not is_not_found(e):
                raise
            ctx.client.create({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": cm_name,
                    "namespace": req.namespace,
                    "ownerReferences": [{
                        "apiVersion": "example.org/v1", "kind": "Greeting", "name": req.name,
                        "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True,
                    }],
                },
                "data": {"message": message},
            })
        else:
            if (cm.get("data") or {}).get("message") != message:
                cm["data"] = {"message": message}
                ctx.client.update(cm)

        self.directory[key] = message
        status = {"configMap": cm_name, "observedGeneration": meta["generation"]}
        if greeting.get("status") != status:
            greeting["status"] = status
            ctx.client.update_status(greeting)
        return None


def start(seed: int = 0) -> tuple[APIServer, Host, GreetingReconciler]:
    """A server with the Greeting CRD and namespace ``demo``, and the controller hosted on it."""
    api = APIServer()
    api.register_crd(GREETING_CRD)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
    host = Host(api, seed=seed)
    reconciler = GreetingReconciler()
    host.controller("greetings").for_("Greeting").owns("ConfigMap").complete(reconciler)
    return api, host, reconciler


def greeting(name: str, message: str) -> dict[str, Any]:
    return {"apiVersion": "example.org/v1", "kind": "Greeting",
            "metadata": {"name": name, "namespace": "demo"}, "spec": {"message": message}}


def gone(api: APIServer, kind: str, name: str) -> bool:
    try:
        api.get(kind, name, "demo")
    except ApiError as e:
        return is_not_found(e)
    return False


def test_a_greeting_gets_its_configmap_and_status() -> None:
    api, host, reconciler = start()
    api.create(greeting("hello", "Hello, world"))
    host.run_until_idle()

    g = api.get("Greeting", "hello", "demo")
    assert g["metadata"]["finalizers"] == [FINALIZER]
    assert g["status"] == {"configMap": "hello-greeting", "observedGeneration": 1}
    cm = api.get("ConfigMap", "hello-greeting", "demo")
    assert cm["data"] == {"message": "Hello, world"}
    assert cm["metadata"]["ownerReferences"][0]["uid"] == g["metadata"]["uid"]
    assert reconciler.directory == {"demo/hello": "Hello, world"}


def test_a_spec_change_reaches_the_configmap() -> None:
    api, host, _ = start()
    api.create(greeting("hello", "Hello"))
    host.run_until_idle()
    api.patch("Greeting", "hello", {"spec": {"message": "Bonjour"}}, namespace="demo")
    host.run_until_idle()
    assert api.get("ConfigMap", "hello-greeting", "demo")["data"] == {"message": "Bonjour"}
    assert api.get("Greeting", "hello", "demo")["status"]["observedGeneration"] == 2


def test_a_user_edit_of_the_owned_configmap_is_reverted() -> None:
    api, host, _ = start()
    api.create(greeting("hello", "Hello"))
    host.run_until_idle()
    api.patch("ConfigMap", "hello-greeting", {"data": {"message": "tampered"}}, namespace="demo")
    host.run_until_idle()  # the owned ConfigMap's event maps to its Greeting
    assert api.get("ConfigMap", "hello-greeting", "demo")["data"] == {"message": "Hello"}


def test_deletion_runs_the_finalizer_then_the_garbage_collector_removes_the_configmap() -> None:
    api, host, reconciler = start()
    api.create(greeting("hello", "Hello"))
    host.run_until_idle()

    api.delete("Greeting", "hello", "demo")
    # the finalizer holds the object until the controller has cleaned up
    assert api.get("Greeting", "hello", "demo")["metadata"]["deletionTimestamp"]
    host.run_until_idle()

    assert gone(api, "Greeting", "hello")
    assert gone(api, "ConfigMap", "hello-greeting")
    assert reconciler.directory == {}
    gc_deletes = [c for c in api.trace.calls if c.actor == "garbage-collector" and c.verb == "delete"]
    assert [(c.kind, c.name) for c in gc_deletes] == [("ConfigMap", "hello-greeting")]


def test_a_conflict_on_the_status_write_is_retried_with_backoff() -> None:
    api, host, _ = start()
    api.faults.add({
        "on": {"verb": "update", "kind": "Greeting", "subresource": "status", "actor": "greetings"},
        "error": "Conflict",
    })
    api.create(greeting("hello", "Hello"))
    host.run_until_idle()

    results = [r.result for r in api.trace.reconciles]
    assert any(r.startswith("error: Operation cannot be fulfilled on greetings.example.org") for r in results)
    assert results[-1] == "done"
    assert api.get("Greeting", "hello", "demo")["status"]["configMap"] == "hello-greeting"


def test_a_crash_right_after_creating_the_configmap_converges() -> None:
    api, host, reconciler = start()
    api.faults.add({"on": {"verb": "create", "kind": "ConfigMap", "actor": "greetings"}, "crash": "after"})
    api.create(greeting("hello", "Hello"))
    host.run_until_idle()

    assert "crash" in [r.result for r in api.trace.reconciles]
    assert host.controllers["greetings"].restarts == 1
    # the restarted controller found the ConfigMap in its fresh cache and did not create another
    creates = [c for c in api.trace.calls if c.verb == "create" and c.kind == "ConfigMap"]
    assert [c.code for c in creates] == [201]
    assert api.get("Greeting", "hello", "demo")["status"]["configMap"] == "hello-greeting"
    assert reconciler.directory == {"demo/hello": "Hello"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_many_greetings_settle_the_same_way_whatever_the_order(seed: int) -> None:
    api, host, reconciler = start(seed)
    for i in range(5):
        api.create(greeting(f"g{i}", f"message {i}"))
    host.run_until_idle()
    assert reconciler.directory == {f"demo/g{i}": f"message {i}" for i in range(5)}
    for i in range(5):
        assert api.get("ConfigMap", f"g{i}-greeting", "demo")["data"] == {"message": f"message {i}"}
