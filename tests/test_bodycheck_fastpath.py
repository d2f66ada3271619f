"""The body checks' C-speed path (issue 22) answers as the walk does, for every kind of value."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import uuid
from typing import Any

import orjson
import pytest

from fakeapi.machinery import bodycheck, errors


class _Color(enum.Enum):
    RED = 1


class _Level(enum.IntEnum):
    LOW = 1


class _Text(str):
    pass


@dataclasses.dataclass
class _Point:
    x: int = 1


_ODD: list[Any] = [
    uuid.UUID(int=7), _Color.RED, _Level.LOW, datetime.datetime(2026, 1, 1), datetime.date(2026, 1, 1),
    decimal.Decimal(1), _Point(), {1}, frozenset(), (1,), (), float("nan"), float("inf"), float("-inf"), "\ud800",
    2**70, -(2**70), _Text("x"), b"x", bytearray(b"x"), orjson.Fragment(b"1"), 1 + 2j, object(), {1: "a"},
    {None: 1}, {_Text("k"): 1}, {"k\ud800": 1},
]
_FINE: list[Any] = [None, True, 0, -1, 2**63 - 1, 1.5, -0.0, 1e16, "", "é", "\u2028", [], {}, [None, [1, {"a": "b"}]]]


def _walk_answer(value: Any) -> str | None:
    """What the walk alone says of ``value`` as an object body (the error message, or None)."""
    problem, _ = bodycheck._scan(value, bodycheck.MAX_DEPTH)
    return str(problem) if problem is not None else None


def _answer(fn: Any, value: Any) -> str | None:
    try:
        fn(value)
    except errors.ApiError as e:
        return e.message
    return None


@pytest.mark.parametrize("leaf", _ODD + _FINE, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(_ODD + _FINE)])
def test_check_object_and_check_body_answer_as_the_walk(leaf: Any) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"v": [leaf]}}
    walk = _walk_answer(body)
    assert _answer(bodycheck.check_object, body) == walk
    assert _answer(bodycheck.check_body, body) == walk


def test_odd_values_are_left_to_the_walk() -> None:
    for leaf in _ODD:
        if leaf is not _Level.LOW:  # (an int: orjson writes it, and it reads back equal)
            assert bodycheck._plain_size({"v": [leaf]}, bodycheck.MAX_DEPTH) is None, leaf
    for leaf in _FINE:
        assert bodycheck._plain_size({"v": [leaf]}, bodycheck.MAX_DEPTH) is not None, leaf


def test_check_body_count_keeps_the_size_decision() -> None:
    """check_body's count decides whether a patched object is measured: a small body's orjson size stands
    for the walk's count only below SMALL_BODY, where both lead to the same decision."""
    small = {"metadata": {"labels": {"a": "b" * 100}}}
    got = bodycheck.check_body(small)
    _, walked = bodycheck._scan(small, bodycheck.MAX_DEPTH)
    assert walked <= got < bodycheck.SMALL_BODY
    big = {"data": {f"k{i}": "v" * 100 for i in range(60)}}  # (over SMALL_BODY: the walk's own count)
    assert bodycheck.check_body(big) == bodycheck._scan(big, bodycheck.MAX_DEPTH)[1]
    assert bodycheck.SMALL_BODY * 24 * 16 == bodycheck.MAX_OBJECT_BYTES


def test_deep_bodies_take_the_walk_and_get_room() -> None:
    """A body with ROOM_FROM brackets or more is walked (the walk makes room for deep nesting)."""
    deep: Any = "x"
    for _ in range(bodycheck.ROOM_FROM + 10):
        deep = [deep]
    assert bodycheck._plain_size(deep, bodycheck.MAX_DEPTH) is None
    bodycheck.check_object({"v": deep})


def test_large_body_takes_the_walk_for_its_size() -> None:
    body = {"data": {"v": "x" * (bodycheck.MAX_OBJECT_BYTES // 2)}}
    assert bodycheck._plain_size(body, bodycheck.MAX_DEPTH) is None
    bodycheck.check_object(body)  # (under the limit: fine)
    with pytest.raises(errors.ApiError) as got:
        bodycheck.check_object({"data": {"v": "x" * bodycheck.MAX_OBJECT_BYTES}})
    assert got.value.message == bodycheck.OBJECT_TOO_LARGE


def test_check_patched_scalars_answer_as_the_walk() -> None:
    base = {"metadata": {"labels": {"a": "b"}}}
    for leaf in [*_ODD, *_FINE]:
        result = {"metadata": {"labels": {"a": "b", "n": leaf}}}
        problem, _ = bodycheck._scan({"n": leaf}, bodycheck.MAX_DEPTH - 2)
        want = str(problem) if problem is not None else None
        assert _answer(lambda r: bodycheck.check_patched(r, base, 10), result) == want, leaf


@pytest.mark.parametrize("leaf", _ODD + _FINE, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(_ODD + _FINE)])
def test_check_patched_containers_answer_as_the_walk(leaf: Any) -> None:
    """A changed list or map of a patched object (taken at C speed when it is plain JSON) gets the walk's answer."""
    base: dict[str, Any] = {"status": {"conditions": [{"type": "Ready"}], "phase": "Pending"}}
    for changed in ([{"type": "Ready", "v": leaf}], [leaf], {"nested": [leaf]}):
        result = {"status": {"conditions": changed, "phase": "Pending"}}
        problem, _ = bodycheck._scan({"conditions": changed}, bodycheck.MAX_DEPTH - 2)
        want = str(problem) if problem is not None else None
        assert _answer(lambda r: bodycheck.check_patched(r, base, 10), result) == want
    # a value where the stored object has a scalar: walked with its key
    result = {"status": [leaf]}
    problem, _ = bodycheck._scan(result, bodycheck.MAX_DEPTH)
    want = str(problem) if problem is not None else None
    assert _answer(lambda r: bodycheck.check_patched(r, {"status": "x"}, 10), result) == want
