"""Shared helpers for the server tests: the Widget CRD of reference §8, objects, snapshots, error checks.

The running example of shared/reference/APISERVER_SEMANTICS.md is a namespaced
CRD ``widgets.example.com`` (kind ``Widget``, version ``v1``) whose schema has
``spec.replicas`` (integer, default 1), ``spec.items`` (array of string),
``spec.mode`` (enum a, b) and ``status``; namespace ``ns`` exists.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from bytecode_cache import PREFIX

from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer

GROUP = "example.com"
WIDGET_AV = "example.com/v1"
R = "widgets.example.com"
K = "Widget.example.com"
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def widget_schema() -> dict[str, Any]:
    """The openAPIV3Schema of the §8 Widget (plus a preserve-unknown ``spec.extra`` for test 30)."""
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "items": {"type": "array", "items": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "owner": {"type": "string"},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "x": {"type": "integer"},
                    "phase": {"type": "string"},
                    "ready": {"type": "boolean"},
                },
            },
        },
    }


def widget_crd(*, status: bool = True, selectable: tuple[str, ...] = (), scope: str = "Namespaced",
               schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CustomResourceDefinition manifest of the Widget kind."""
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema or widget_schema()},
    }
    if status:
        version["subresources"] = {"status": {}}
    if selectable:
        version["selectableFields"] = [{"jsonPath": "." + p} for p in selectable]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [version],
        },
    }


def make_api(*, status: bool = True, selectable: tuple[str, ...] = (), **kw: Any) -> APIServer:
    """A fresh server with namespace ``ns`` and the Widget CRD registered from its manifest."""
    api = APIServer(**kw)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.register_crd(widget_crd(status=status, selectable=selectable))
    return api


def widget(name: str = "w1", ns: str = "ns", *, spec: dict[str, Any] | None = None,
           **meta: Any) -> dict[str, Any]:
    """A Widget body as a user would POST it."""
    m: dict[str, Any] = {"name": name, "namespace": ns}
    m.update(meta)
    if not name:
        del m["name"]
    return {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": m, "spec": spec if spec is not None else {}}


def configmap(name: str = "cm1", ns: str = "ns", data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    """A ConfigMap body."""
    m: dict[str, Any] = {"name": name, "namespace": ns}
    m.update(meta)
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}
    if data is not None:
        out["data"] = data
    return out


def pod(name: str = "p1", ns: str = "ns", **meta: Any) -> dict[str, Any]:
    """A minimal valid Pod body."""
    m: dict[str, Any] = {"name": name, "namespace": ns}
    m.update(meta)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m,
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def owner_ref(owner: dict[str, Any], *, controller: bool = False, block: bool = False) -> dict[str, Any]:
    """An ownerReference to ``owner`` (a stored object)."""
    ref: dict[str, Any] = {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if controller:
        ref["controller"] = True
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def rv(obj: dict[str, Any]) -> int:
    """The resourceVersion of an object as an int."""
    return int(obj["metadata"]["resourceVersion"])


def drain(api: APIServer, limit: int = 100) -> None:
    """Run the garbage collector / namespace controller until it has nothing left to do."""
    for _ in range(limit):
        if not api.gc.pending():
            return
        api.gc.run()
    raise AssertionError("the garbage collector did not settle")


# ------------------------------------------------------------------ errors


def expect_error(fn: Callable[[], Any], code: int, reason: str | None = None,
                 message: str | None = None, details: dict[str, Any] | None = None) -> ApiError:
    """Call ``fn``; assert it raises an ApiError with that code (and reason, message, details)."""
    with pytest.raises(ApiError) as info:
        fn()
    err = info.value
    assert err.code == code, err.status
    assert err.status["code"] == code
    assert err.status["kind"] == "Status" and err.status["apiVersion"] == "v1"
    assert err.status["status"] == "Failure" and isinstance(err.status["metadata"], dict)
    assert set(err.status["metadata"]) <= {"continue"}  # only an expired continue token carries a new one
    if reason is not None:
        if reason == "":
            assert "reason" not in err.status, err.status
        else:
            assert err.status.get("reason") == reason, err.status
    if message is not None:
        assert err.message == message, err.status
    if details is not None:
        assert err.status.get("details") == details, err.status
    return err


# ---------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class Snapshot:
    """Everything a rejected request must leave untouched."""

    store: dict[tuple[str, str], list[tuple[str, str, str, int, str]]]
    objects: dict[tuple[str, str], list[Any]]
    resource_version: int
    logs: dict[tuple[str, str], int]
    kinds: tuple[tuple[str, str], ...]
    uids: dict[str, tuple[str, str, str]]
    dependents: dict[str, frozenset[tuple[str, str, str]]]


def snapshot(api: APIServer) -> Snapshot:
    """Store contents (bytes and snapshots), the RV counter, every event log's length, kinds and indexes."""
    store = {}
    objects = {}
    for key, table in api.store.tables.items():
        if not table.entries:
            continue  # tables are created on first lookup; an empty one holds no state
        store[key] = [(e.key, e.data, e.meta_data, e.rv, e.uid) for e in (table.entries[k] for k in table.keys)]
        objects[key] = [copy.deepcopy(table.entries[k].obj) for k in table.keys]
    logs = {key: log.end for key, log in api._logs.items() if log.end}
    kinds = tuple((k.api_version, k.kind) for k in api.kinds.all())
    deps = {u: frozenset(s) for u, s in api.store.dependents.items()}
    return Snapshot(store, objects, api.resource_version, logs, kinds, dict(api.store.by_uid), deps)


def assert_rejected(api: APIServer, fn: Callable[[], Any], code: int, reason: str | None = None,
                    message: str | None = None, details: dict[str, Any] | None = None) -> ApiError:
    """``fn`` fails with an ApiError (never another exception) and changes no stored state."""
    before = snapshot(api)
    err = expect_error(fn, code, reason, message, details)
    after = snapshot(api)
    assert after.resource_version == before.resource_version
    assert after.logs == before.logs
    assert after.store == before.store
    assert after.objects == before.objects
    assert after.kinds == before.kinds
    assert after.uids == before.uids
    assert after.dependents == before.dependents
    return err


def field_causes(err: ApiError) -> list[tuple[str, str]]:
    """An Invalid error's causes as (field, message) pairs, in order: what a table of cases compares."""
    return [(c.get("field", ""), c["message"]) for c in err.status["details"]["causes"]]


#: The bytecode cache folder of this repository's test runs (tests/bytecode_cache.py; read once, at its import: pytester moves HOME).
PYCACHE = PREFIX


def with_bytecode_cache(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a child interpreter that keeps its bytecode in :data:`PYCACHE`, the cache folder this
    repository's conftest.py uses, outside the checkout, instead of none: a test that starts
    interpreters (a doc's shell block, an inner ``pytest -n 2``) would otherwise compile all of
    fakeapi, and the site packages it imports, in each. What the child runs and sees is the same."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = PYCACHE
    return out


def one_value_mutations(doc: Any, stand_ins: tuple[Any, ...]) -> list[Any]:
    """``doc`` with one value (at any depth, containers included) replaced by each of ``stand_ins``, in turn:
    the inputs of a test that compares a fast path with its reference on every small change."""
    out: list[Any] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += [{**doc, k: s} for s in stand_ins]
            out += [{**doc, k: m} for m in one_value_mutations(v, stand_ins)]
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += [[*doc[:i], s, *doc[i + 1:]] for s in stand_ins]
            out += [[*doc[:i], m, *doc[i + 1:]] for m in one_value_mutations(v, stand_ins)]
    return out
