"""JSON value helpers: copies that share nothing mutable, number normalization."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import pytest

from fakeapi.machinery.jsonutil import copy_normalized, fast_copy, normalize_numbers


class _Marker(dict[str, Any]):
    """A dict subclass: kept as it is, never copied."""


def _sample() -> dict[str, Any]:
    return {
        "a": 1, "b": 2.0, "c": 2.5, "d": None, "e": True, "f": "x",
        "g": {"h": [1, 2.0, {"i": 3.0, "j": [[4.0], {}]}], "k": {}},
        "l": [], "m": [None, False, "y", 1e20, -0.0],
        "n": _Marker(z=1.0), "o": OrderedDict(p=1.0), "q": (1.0, 2),
    }


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if type(value) in (dict, list):
        out.append(value)
        for v in value.values() if type(value) is dict else value:
            _containers(v, out)
    return out


@pytest.mark.parametrize("copy", [fast_copy, copy_normalized])
def test_copies_share_no_dict_or_list(copy: Any) -> None:
    src = _sample()
    before = repr(src)
    out = copy(src)
    assert repr(src) == before
    assert out == src and list(out) == list(src)
    src_ids = {id(c) for c in _containers(src, [])}
    assert not any(id(c) in src_ids for c in _containers(out, []))
    # other objects (dict subclasses, tuples) are kept as they are
    assert out["n"] is src["n"] and out["o"] is src["o"] and out["q"] is src["q"]


def test_fast_copy_keeps_numbers() -> None:
    out = fast_copy(_sample())
    assert type(out["b"]) is float and type(out["g"]["h"][1]) is float and type(out["g"]["h"][2]["i"]) is float


def test_copy_normalized_is_fast_copy_then_normalize_numbers() -> None:
    src = _sample()
    expect = normalize_numbers(fast_copy(src))
    out = copy_normalized(src)
    assert json.dumps(out, default=repr) == json.dumps(expect, default=repr)
    assert type(out["b"]) is int and type(out["g"]["h"][1]) is int and type(out["g"]["h"][2]["j"][0][0]) is int
    assert type(out["c"]) is float and type(out["m"][3]) is float  # 1e20 is past int64
    assert out["m"][4] == 0 and type(out["m"][4]) is int
    assert out["n"] is src["n"] and type(out["n"]["z"]) is float  # not copied, so not normalized
    assert copy_normalized(2.0) == 2 and type(copy_normalized(2.0)) is int
