"""The decode's restoring walk skips the values it can change nothing in (``godecode._is_inert``).

``go_decode`` and the decode cache put back the empty slices and maps and the quantity texts that
encoding changed (``_restore``, ``_restore_member``). A value of a type that holds no slice, map or
quantity anywhere (an OwnerReference, a ``map[string]string`` of labels) has nothing to put back, and
the walk now skips it. The slow path is the walk as it was, kept here: on random values of many Go
types (every field set, unset, null, empty or of the wrong JSON type), the decoded forms are the same,
keys in the same order, or the same error is raised.
"""
# (the decode of a newer snapshot against an older one is checked the same way: see the second test)

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from fakeapi.codec import godecode
from fakeapi.codec.godecode import _NO_PREV, _decode_reusing, _is_inert, go_decode
from fakeapi.codec.gomodel import (
    QUANTITY,
    STRING,
    GoDecodeError,
    GoField,
    GoType,
    builtin_go_type,
    go_roundtrip,
    map_of,
    slice_of,
    struct,
)

_RESTORED = frozenset({"slice", "map", "struct", "quantity"})


# ---- the slow path: the restoring walk as it was, without the skips -------------------------------

def _slow_restore(src: Any, dst: Any, t: GoType) -> None:
    kind = t.kind
    if kind == "struct":
        if type(src) is not dict or type(dst) is not dict:
            return
        for key, value in src.items():
            f = t.fields.get(key)
            if f is None or value is None or f.type.kind not in _RESTORED:
                continue
            _slow_restore_member(dst, key, value, f.type)
    elif kind == "slice":
        if type(src) is list and type(dst) is list and t.elem is not None:
            for a, b in zip(src, dst):
                _slow_restore(a, b, t.elem)
    elif kind == "map" and type(src) is dict and type(dst) is dict and t.elem is not None:
        for key, value in src.items():
            if value is not None and key in dst:
                _slow_restore_member(dst, key, value, t.elem)


def _slow_restore_member(dst: dict[str, Any], key: str, value: Any, ft: GoType) -> None:
    fk = ft.kind
    if fk == "slice" and type(value) is list:
        if not value:
            dst[key] = []
        elif key in dst:
            _slow_restore(value, dst[key], ft)
    elif fk == "map" and type(value) is dict:
        if not value:
            dst[key] = {}
        elif key in dst:
            _slow_restore(value, dst[key], ft)
    elif fk == "struct":
        if key in dst:
            _slow_restore(value, dst[key], ft)
    elif fk == "quantity" and key in dst and type(value) in (str, int, float):
        dst[key] = value


def _slow_go_decode(obj: Any, t: GoType) -> Any:
    out = go_roundtrip(obj, t)
    _slow_restore(obj, out, t)
    return out


# ---- random values of a Go type -------------------------------------------------------------------

_SCALARS: dict[str, list[Any]] = {
    "string": ["", "x", "abc"],
    "int": [0, 1, 7],
    "float": [0, 1.5, 2.0],
    "bool": [True, False],
    "time": ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5+02:00"],
    "quantity": ["1000m", "1", "0.5", 2, "1Gi", 1.5],
    "intorstring": [1, "x"],
    "any": [{"a": [1, {}]}, [], "x", 3],
}
_WRONG: list[Any] = ["w", 5, True, [], {}, [1], {"k": "v"}]


def _value(t: GoType, rng: random.Random, depth: int) -> Any:
    r = rng.random()
    if r < 0.06:
        return None
    if r < 0.09:
        return rng.choice(_WRONG)  # (of the wrong JSON type, often: the same error both ways)
    k = t.kind
    if depth > 5 and k in ("struct", "slice", "map"):
        return {} if k != "slice" else []
    if k == "struct":
        names = list(t.fields)
        out: dict[str, Any] = {}
        for name in rng.sample(names, min(len(names), rng.randint(0, 6))):
            out[name] = _value(t.fields[name].type, rng, depth + 1)
        if rng.random() < 0.1:
            out["notAField"] = [1]
        return out
    if k == "slice":
        assert t.elem is not None
        return [_value(t.elem, rng, depth + 1) for _ in range(rng.choice([0, 0, 1, 2]))]
    if k == "map":
        assert t.elem is not None
        return {f"k{i}": _value(t.elem, rng, depth + 1) for i in range(rng.choice([0, 0, 1, 2]))}
    if t.name == "[]byte":
        return rng.choice(["", "aGk=", "YWJj"])
    return rng.choice(_SCALARS.get(k, [None]))


def _outcome(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        out = f(*args)
    except GoDecodeError as e:
        return "error", str(e)
    return "ok", orjson.dumps(out)  # (bytes: key order counts)


# An OwnerReference-like struct with only scalars (inert), one holding a quantity map and one holding
# itself (a recursive type: never taken as inert), as well as the built-ins.
_FLAT = struct("Flat", [GoField("name", False, False, STRING), GoField("uid", True, False, STRING)])
_RES = struct("Res", [GoField("limits", True, False, map_of(QUANTITY)), GoField("ref", False, False, _FLAT)])
_TREE = struct("Tree", [GoField("name", False, False, STRING)])
_TREE.fields["children"] = GoField("children", True, False, slice_of(_TREE))
_TREE.fields["byName"] = GoField("byName", True, False, map_of(_TREE))
_HAND = struct("Hand", [GoField("flat", False, False, _FLAT), GoField("flats", True, False, slice_of(_FLAT)),
                        GoField("labels", True, False, map_of(STRING)), GoField("res", False, False, _RES),
                        GoField("resByName", True, False, map_of(_RES)), GoField("tree", False, False, _TREE),
                        GoField("lists", True, False, map_of(slice_of(STRING)))])

TYPES: list[tuple[str, GoType]] = [
    ("Hand", _HAND), ("Tree", _TREE),
    *[(k, builtin_go_type(k)) for k in ("Pod", "Secret", "ConfigMap", "Service", "Deployment", "StatefulSet",
                                        "Job", "PersistentVolumeClaim", "Namespace", "Node",
                                        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")],
]


@pytest.mark.parametrize(("name", "t"), TYPES, ids=[n for n, _ in TYPES])
def test_decoding_with_the_skips_is_decoding_without_them(name: str, t: GoType) -> None:
    rng = random.Random(name)
    for _ in range(300):
        obj = _value(t, rng, 0)
        want = _outcome(_slow_go_decode, obj, t)
        assert _outcome(go_decode, obj, t) == want, obj
        if type(obj) is dict:
            assert _outcome(_decode_reusing, obj, t, _NO_PREV, _NO_PREV) == want, obj


@pytest.mark.parametrize(("name", "t"), TYPES, ids=[n for n, _ in TYPES])
def test_decoding_against_a_previous_snapshot_with_the_skips(name: str, t: GoType) -> None:
    """The decode cache's path: a newer snapshot sharing some values with the one decoded before.

    (It also pins a fix: a map or slice that was empty before, and so possibly kept after the other
    fields, and is not empty now was decoded in the old place; the full walk puts it in the field's.)
    """
    rng = random.Random("prev-" + name)
    for _ in range(200):
        prev = _value(t, rng, 0)
        if type(prev) is not dict:
            continue
        try:
            prev_out = _slow_go_decode(prev, t)
        except GoDecodeError:
            continue
        obj = dict(prev)
        for key in rng.sample(list(obj), min(len(obj), rng.randint(0, 2))):
            obj[key] = _value(t.fields[key].type, rng, 1) if key in t.fields else 1
        want = _outcome(_slow_go_decode, obj, t)
        assert _outcome(_decode_reusing, obj, t, prev, prev_out) == want, (prev, obj)


def test_what_is_inert() -> None:
    """Inert: nothing the walk could put back (no slice, map or quantity anywhere, but maps of scalars and
    slices of inert values); a recursive type is not taken as inert."""
    assert _is_inert(_FLAT) and _is_inert(slice_of(_FLAT)) and _is_inert(map_of(STRING))
    assert not _is_inert(_RES) and not _is_inert(map_of(QUANTITY)) and not _is_inert(QUANTITY)
    assert not _is_inert(_TREE) and not _is_inert(_HAND)
    assert _is_inert(builtin_go_type("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"))
    assert not _is_inert(builtin_go_type("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
    assert godecode._skips(_FLAT, {}) and not godecode._skips(slice_of(_FLAT), [])
