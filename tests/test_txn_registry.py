"""Request atomicity and the kinds registry: a request keeps the kinds and tables only when it changes them.

A CRD's write registers (or drops) a kind and its table inside the request; if the request then
fails, both are put back as they were. Requests that change neither keep nothing (the copy is
taken by the registry or the store just before a change, :func:`fakeapi.server.txn.save_registry`).
"""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.errors import ApiError
from fakeapi.server import txn
from fakeapi.server.apiserver import APIServer


def crd(plural: str, kind: str) -> dict[str, Any]:
    """A minimal namespaced CRD of group example.com."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def fail_on(name: str) -> Any:
    """A listener that fails the write of any object named ``name`` (after its commit)."""
    def listener(etype: str, kind: Any, obj: dict[str, Any], old: Any) -> None:
        if obj["metadata"]["name"] == name:
            raise RuntimeError("after the commit")
    return listener


def test_a_crd_create_that_fails_after_its_commit_serves_no_new_kind_and_keeps_no_table() -> None:
    """The kind the CRD's strategy registered, and the tables, are as before the request."""
    api = APIServer()
    kinds_before = dict(api.kinds._by_gvk)
    tables_before = dict(api.store.tables)
    api.add_listener(fail_on("gadgets.example.com"))
    with pytest.raises(ApiError) as e:
        api.create(crd("gadgets", "Gadget"))
    assert e.value.code == 500
    assert api.kinds._by_gvk == kinds_before and api.kinds.find("Gadget", "example.com/v1") is None
    assert api.store.tables == tables_before
    api.create(crd("widgets", "Widget"))  # (a CRD that succeeds is served)
    assert api.kinds.find("Widget", "example.com/v1") is not None


def test_a_crd_delete_that_fails_keeps_its_kind_and_objects() -> None:
    """The dropped kind and table come back with the objects in it."""
    api = APIServer()
    api.create(crd("gadgets", "Gadget"))
    api.create({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "default"}})
    api.add_listener(fail_on("gadgets.example.com"))
    with pytest.raises(ApiError):
        api.delete("CustomResourceDefinition", "gadgets.example.com")
    assert api.kinds.find("Gadget", "example.com/v1") is not None
    assert [o["metadata"]["name"] for o in api.list("Gadget", "default")["items"]] == ["g"]


def test_nested_save_points_keep_the_state_each_found() -> None:
    """A change seen by an outer and an inner save point: the copy is taken once, before it, for both;
    a save point opened after a change keeps the state it found, not its parent's."""
    api = APIServer()
    outer = txn.begin(None, 0, 0, api._rng)
    inner = txn.begin(outer.journal, 0, 0, api._rng, outer)
    before = dict(api.kinds._by_gvk)
    txn.save_registry(inner, api.kinds, api.store)
    assert outer.registry is not None and inner.registry is outer.registry and outer.registry[0] == before
    api.kinds._by_gvk[("x/v1", "X")] = next(iter(before.values()))
    later = txn.begin(outer.journal, 0, 0, api._rng, outer)
    txn.save_registry(later, api.kinds, api.store)
    assert later.registry is not None and ("x/v1", "X") in later.registry[0]
    assert ("x/v1", "X") not in outer.registry[0]


def test_a_request_that_changes_no_kind_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ConfigMap's create opens a save point that never copies the kinds or the tables."""
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warm", "namespace": "default"}})
    seen: list[Any] = []
    real = txn.save_registry

    def spy(sp: Any, kinds: Any, store: Any) -> None:
        seen.append(sp)
        real(sp, kinds, store)

    monkeypatch.setattr(txn, "save_registry", spy)
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    assert seen == []
    api.create(crd("gadgets", "Gadget"))  # (a CRD's create does keep them)
    assert seen
