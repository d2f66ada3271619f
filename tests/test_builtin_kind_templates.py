"""A server's built-in kinds, copied from per-process templates, are the records ``builtin_kinds()`` makes.

``APIServer()`` registers a fresh :class:`~fakeapi.registry.kinds.Kind` for every built-in kind; since
issue 22 each is a copy of a template's attributes (``apiserver._fresh_builtin_kinds``), not a new
dataclass construction. These tests compare the copies with ``builtin_kinds()``'s records, field by
field and attribute by attribute (the lazy ones still pending), and check that a server's kinds stay
its own: changing one (its ``extra`` included) changes no other server's.
"""

from __future__ import annotations

import dataclasses
import functools

from fakeapi.registry.builtin import builtin_kinds
from fakeapi.registry.kinds import Kind
from fakeapi.server import apiserver
from fakeapi.server.apiserver import APIServer


def _value(v: object) -> object:
    """A comparable form of an attribute (a loader ``partial`` by what it calls: each is a new object)."""
    return ("partial", v.func, v.args, v.keywords) if isinstance(v, functools.partial) else v


def _fields(k: Kind) -> list[tuple[str, object]]:
    """Every dataclass field but the lazy ones (read apart: reading them loads them)."""
    return [(f.name, _value(getattr(k, f.name))) for f in dataclasses.fields(k)
            if f.name not in ("schema", "compiled", "go_type")]


def test_copies_equal_fresh_records_in_order() -> None:
    made = builtin_kinds()
    copies = apiserver._fresh_builtin_kinds()
    assert [type(k) for k in copies] == [Kind] * len(made)
    assert [_fields(k) for k in copies] == [_fields(k) for k in made]
    for fresh, copy in zip(made, copies):
        _ = fresh.api_version  # (what registering reads first; the copy has it already)
        assert list(vars(copy)) == list(vars(fresh))
        assert {n: _value(v) for n, v in vars(copy).items()} == {n: _value(v) for n, v in vars(fresh).items()}


def test_lazy_attributes_stay_pending_and_load_the_same() -> None:
    copies = apiserver._fresh_builtin_kinds()
    for k in copies:
        assert not {"schema", "compiled", "go_type"} & set(vars(k)), k
    pod = next(k for k in copies if k.kind == "Pod" and not k.group)
    fresh = next(k for k in builtin_kinds() if k.kind == "Pod" and not k.group)
    assert pod.schema is fresh.schema and pod.compiled is fresh.compiled and pod.go_type is fresh.go_type
    assert pod.stored_go_encoded is fresh.stored_go_encoded is True
    for k in apiserver._BUILTIN_KIND_TEMPLATES:  # (the templates themselves are never loaded)
        assert not {"schema", "compiled", "go_type", "stored_go_encoded"} & set(vars(k)), k


def test_each_server_has_kinds_of_its_own() -> None:
    a, b = APIServer(), APIServer()
    ka, kb = a.kinds.require("Pod", "v1"), b.kinds.require("Pod", "v1")
    assert ka is not kb and ka == kb
    ka.extra["categories"].append("mine")
    ka.extra["typed"] = False
    ka.status_subresource = False
    assert kb.extra == {"typed": True, "categories": ["all"]} and kb.status_subresource is True
    c = APIServer()
    kc = c.kinds.require("Pod", "v1")
    assert kc.extra == {"typed": True, "categories": ["all"]} and kc.status_subresource is True
    assert [k.extra for k in c.kinds.all() if k.builtin] == [k.extra for k in builtin_kinds()]


def test_a_set_lazy_attribute_is_the_servers_own() -> None:
    a, b = APIServer(), APIServer()
    marker = object()
    a.kinds.require("ConfigMap", "v1").go_type = marker
    assert a.kinds.require("ConfigMap", "v1").go_type is marker
    assert b.kinds.require("ConfigMap", "v1").go_type is not marker
    assert APIServer().kinds.require("ConfigMap", "v1").go_type is not marker
