"""The Greeting controller tested with the library directly: a server, a host, plain asserts."""

from __future__ import annotations

from fakeapi import APIServer
from fakeapi.host import Host

from greeter.controller import CRD, setup


def start() -> tuple[APIServer, Host]:
    api = APIServer()
    api.register_crd(CRD)
    host = Host(api, seed=0)
    setup(host)
    return api, host


def test_the_configmap_follows_the_message() -> None:
    api, host = start()
    api.create({"apiVersion": "example.org/v1", "kind": "Greeting",
                "metadata": {"name": "hello", "namespace": "default"}, "spec": {"message": "Hello"}})
    host.run_until_idle()
    assert api.get("ConfigMap", "hello-greeting", "default")["data"] == {"message": "Hello"}

    api.patch("ConfigMap", "hello-greeting", {"data": {"message": "tampered"}}, namespace="default")
    host.run_until_idle()  # the owned ConfigMap's event brings its Greeting back to the queue
    assert api.get("ConfigMap", "hello-greeting", "default")["data"] == {"message": "Hello"}


def test_a_crash_right_after_the_configmap_is_created_is_survived() -> None:
    api, host = start()
    api.faults.add({"on": {"verb": "create", "kind": "ConfigMap", "actor": "greeter"}, "crash": "after"})
    api.create({"apiVersion": "example.org/v1", "kind": "Greeting",
                "metadata": {"name": "hello", "namespace": "default"}, "spec": {"message": "Hello"}})
    host.run_until_idle()
    assert host.controllers["greeter"].restarts == 1
    assert api.get("Greeting", "hello", "default")["status"] == {"configMap": "hello-greeting",
                                                                 "observedGeneration": 1}
