"""Issue 22: the fast paths of ObjectMeta validation and of the body check answer what the general path answers.

- :func:`validate_owner_references` skips the typed copy of a plain, valid, non-controller reference:
  each table row is validated as a ``dict`` (the fast path may apply) and as a read-only mapping of the
  same content (always the general path), and the causes must be the same.
- :func:`validate_object_meta` skips :func:`finalizer_warnings` of a custom resource's update that keeps
  the stored finalizers: its warnings must be those ``finalizer_warnings`` gives.
- ``bodycheck._plain_size`` counts no brackets in a text too short to nest as deep as the walk's room.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
import pytest

from fakeapi.machinery import bodycheck
from fakeapi.machinery.metavalidation import (
    finalizer_warnings,
    validate_object_meta,
    validate_owner_references,
)

OK = {"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner", "name": "r", "uid": "u1"}

OWNER_REFS: list[tuple[str, list[Any]]] = [
    ("plain", [OK]),
    ("core version", [{**OK, "apiVersion": "v1", "kind": "Pod"}]),
    ("controller", [{**OK, "controller": True}]),
    ("two controllers", [{**OK, "controller": True}, {**OK, "uid": "u2", "controller": True}]),
    ("controller flag truthy, not True", [{**OK, "controller": 1}, {**OK, "uid": "u2", "controller": True}]),
    ("controller false", [{**OK, "controller": False, "blockOwnerDeletion": True}]),
    ("controller null", [{**OK, "controller": None}]),
    ("event owner", [{**OK, "apiVersion": "v1", "kind": "Event"}]),
    ("event kind in a group", [{**OK, "apiVersion": "events.k8s.io/v1", "kind": "Event"}]),
    ("no version", [{**OK, "apiVersion": "apps/"}]),
    ("empty apiVersion", [{**OK, "apiVersion": ""}]),
    ("slash apiVersion", [{**OK, "apiVersion": "/"}]),
    ("three parts", [{**OK, "apiVersion": "a/b/c"}]),
    ("missing kind", [{k: v for k, v in OK.items() if k != "kind"}]),
    ("empty name", [{**OK, "name": ""}]),
    ("missing uid", [{k: v for k, v in OK.items() if k != "uid"}]),
    ("number name", [{**OK, "name": 7}]),
    ("null uid", [{**OK, "uid": None}]),
    ("valid then invalid", [OK, {**OK, "uid": ""}]),
    ("invalid then valid then controller", [{**OK, "kind": ""}, OK, {**OK, "controller": True}]),
    ("a controller among plain ones", [OK, {**OK, "uid": "u2", "controller": True}, {**OK, "uid": "u3"}]),
    ("not a mapping", ["x", OK]),
]


@pytest.mark.parametrize("refs", [r for _, r in OWNER_REFS], ids=[n for n, _ in OWNER_REFS])
def test_owner_references_fast_path_matches_general_path(refs: list[Any]) -> None:
    general = [MappingProxyType(r) if isinstance(r, dict) else r for r in refs]  # (never the fast path)
    assert validate_owner_references(refs) == validate_owner_references(general)


FINALIZERS: list[tuple[str, Any, Any]] = [
    ("the same list", ["a.io/x", "bad"], None),
    ("an equal list", ["a.io/x", "bad"], ["a.io/x", "bad"]),
    ("one added", ["a.io/x", "bad"], ["a.io/x"]),
    ("reordered", ["bad", "a.io/x"], ["a.io/x", "bad"]),
    ("removed", ["a.io/x"], ["a.io/x", "bad"]),
    ("none before", ["bad"], None),
    ("none now", None, ["bad"]),
    ("empty now", [], ["bad"]),
    ("not a list", "bad", "bad"),
]


@pytest.mark.parametrize(("new", "old"), [(n, o) for _, n, o in FINALIZERS], ids=[i for i, _, _ in FINALIZERS])
@pytest.mark.parametrize("same_object", [True, False])
def test_unchanged_finalizers_warn_as_finalizer_warnings(new: Any, old: Any, same_object: bool) -> None:
    meta: dict[str, Any] = {"name": "n", "namespace": "ns"}
    if new is not None:
        meta["finalizers"] = new
    stored: dict[str, Any] = {"name": "n", "namespace": "ns"}
    was = new if old is None else old
    if was is not None:
        stored["finalizers"] = was if same_object or not isinstance(was, list) else list(was)
    _, warnings = validate_object_meta(meta, namespaced=True, custom_resource=True, old=stored)
    assert warnings == finalizer_warnings(meta, stored)
    _, on_create = validate_object_meta(meta, namespaced=True, custom_resource=True)
    assert on_create == finalizer_warnings(meta)


def _nested(depth: int, leaf: Any = "x", wrap: str = "list") -> Any:
    v: Any = leaf
    for _ in range(depth):
        v = [v] if wrap == "list" else {"k": v}
    return v


#: Bodies around the size under which ``_plain_size`` counts no brackets (2 * the room): nested as deep as the
#: room allows and deeper, brackets inside strings, a small ``max_depth``.
_DEPTHS: list[tuple[str, Any, int]] = [
    ("shallow", {"a": "b"}, bodycheck.MAX_DEPTH),
    ("lists at the room", _nested(bodycheck.ROOM_FROM), bodycheck.MAX_DEPTH),
    ("lists below the room", _nested(bodycheck.ROOM_FROM - 1), bodycheck.MAX_DEPTH),
    ("maps below the room", _nested(bodycheck.ROOM_FROM - 1, wrap="map"), bodycheck.MAX_DEPTH),
    ("maps at the room", _nested(bodycheck.ROOM_FROM, wrap="map"), bodycheck.MAX_DEPTH),
    ("brackets in a short string", {"a": "{[" * 150}, bodycheck.MAX_DEPTH),
    ("brackets in a long string", {"a": "{[" * 250}, bodycheck.MAX_DEPTH),
    ("a small max_depth, shallow", _nested(3), 5),
    ("a small max_depth, at it", _nested(5), 5),
    ("a small max_depth, below it", _nested(4), 5),
]


@pytest.mark.parametrize(("value", "max_depth"), [(v, d) for _, v, d in _DEPTHS], ids=[n for n, _, _ in _DEPTHS])
def test_plain_size_depth_shortcut_answers_as_the_walk(value: Any, max_depth: int) -> None:
    """``_plain_size`` settles a value only when the walk would find it fine without making room (fewer
    levels than the room); a settled value's size is what orjson writes."""
    size = bodycheck._plain_size(value, max_depth)
    room = min(bodycheck.ROOM_FROM, max_depth)
    data = orjson.dumps(value)
    depth = max_nesting(value)
    if size is not None:
        assert size == len(data)
        assert depth < room
        problem, _ = bodycheck._scan(value, max_depth)
        assert problem is None
    else:
        assert data.count(b"{") + data.count(b"[") >= room
    if len(data) < 2 * room:
        assert depth < room and size is not None


def max_nesting(value: Any) -> int:
    """How many maps and lists deep ``value`` nests."""
    if isinstance(value, dict):
        return 1 + max((max_nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((max_nesting(v) for v in value), default=0)
    return 0


def test_commit_makes_its_events_as_the_event_class_does() -> None:
    """The commit makes its log's events with ``tuple.__new__`` (no Python frame): the same objects."""
    from fakeapi.server.pipeline import _new_tuple
    from fakeapi.server.watch import ADDED, Event

    values = (7, ADDED, "ns", {"a": 1}, None)
    made = _new_tuple(Event, values)
    assert type(made) is Event and made == Event(*values) and made.rv == 7 and made.old is None


@pytest.mark.parametrize("history", [0, 1, 4, 40])
def test_event_log_trims_as_before(history: int) -> None:
    """``EventLog.append`` trims through ``trim`` once the excess passes ``history // 4 + 16``, never past an open
    watch: the log after each of 300 appends is the one a fresh reckoning of the rule gives."""
    from fakeapi.server.watch import ADDED, Event, EventLog

    log = EventLog(history)
    kept: list[Event] = []
    offset = 0
    for rv in range(1, 301):
        ev = Event(rv, ADDED, "", {}, None)
        log.append(ev)
        kept.append(ev)
        excess = len(kept) - history
        if excess > history // 4 + 16:
            kept = kept[excess:]
            offset += excess
        assert log.events == kept and log.offset == offset
        assert log.trimmed_rv == offset  # (the rv of the newest event dropped: rvs here are 1, 2, 3...)
