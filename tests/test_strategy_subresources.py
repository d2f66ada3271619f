"""Subresources a kind's strategy serves (``subresource_verbs`` / ``write_subresource``): the
server runs the generic steps, the strategy decides the write."""

from __future__ import annotations

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.core.strategy import NamespaceStrategy, PodStrategy
from fakeapi.registry.strategy import CUSTOM_RESOURCE


def test_declared_subresources() -> None:
    """Namespaces declare finalize (an update), Pods binding (a create), custom resources none."""
    assert dict(NamespaceStrategy.subresource_verbs) == {"finalize": "update"}
    assert dict(PodStrategy.subresource_verbs) == {"binding": "create"}
    assert dict(CUSTOM_RESOURCE.subresource_verbs) == {}


def test_undeclared_subresource_is_not_found() -> None:
    """A subresource the strategy does not declare is a 404, the object untouched."""
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    with pytest.raises(ApiError) as info:
        api.write_subresource("ConfigMap", "v1", "c", "default", "binding", {})
    assert info.value.code == 404
    with pytest.raises(ApiError) as info:
        api.write_subresource("Pod", "v1", "missing", "default", "binding", {"target": {"name": "n"}})
    assert info.value.code == 404


def test_binding_through_the_generic_verb() -> None:
    """The binding's answer is the strategy's Status (201); a second binding is 409."""
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i"}]}})
    out = api.write_subresource("Pod", "v1", "p", "default", "binding", {"target": {"name": "n1"}})
    assert out["kind"] == "Status" and api.last_code == 201
    assert api.get("Pod", "p", "default")["spec"]["nodeName"] == "n1"
    with pytest.raises(ApiError) as info:
        api.bind_pod("p", "default", "n2")
    assert info.value.code == 409


def test_finalize_deletes_a_terminating_namespace() -> None:
    """finalize drops spec.finalizers; a terminating namespace with nothing else holding it goes."""
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    kept = api.finalize_namespace("x")
    assert "finalizers" not in (kept.get("spec") or {})
    assert api.get("Namespace", "x")["metadata"]["name"] == "x"
