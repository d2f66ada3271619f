"""The decode step's metadata checks skip what a patched object shares with the stored metadata (issue 22).

A patch's result keeps the stored metadata's values it did not touch (the very same objects); the type
check and the pruning of ObjectMeta look only at the other keys. The answer (the decoded object, its
warnings, its error) is the one the full checks give: the full checks run on a deep copy of the same
result decoded without a stored object (as an update's body is).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError


def _stored(api: APIServer) -> dict[str, Any]:
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "ns", "labels": {"a": "b"}, "annotations": {"x": "y"},
                             "finalizers": ["example.com/f"],
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "s",
                                                  "uid": "u-1"}]},
                "data": {"k": "v"}})
    e = api._table(api.resolve_kind("ConfigMap")).get("ns", "c")
    assert e is not None
    return e.obj


CHANGES: list[dict[str, Any]] = [
    {"finalizers": []},
    {"finalizers": None},
    {"labels": {"a": "c"}},
    {"labels": ["not", "a", "map"]},
    {"labels": {"a": 1}},
    {"annotations": {}},
    {"generation": "7"},
    {"name": 5},
    {"unknownField": {"x": 1}},
    {"ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u-1", "extra": 1}]},
    {"ownerReferences": "x"},
    {"selfLink": "/x"},
    {"deletionGracePeriodSeconds": None, "labels": {}},
]


def _answer(api: APIServer, result: dict[str, Any], base: dict[str, Any] | None) -> Any:
    kind = api.resolve_kind("ConfigMap")
    api._local.warnings = []
    try:
        out = api._decode(kind, result, "Warn", shared=True, base=base)
    except ApiError as e:
        return ("error", e.code, e.message)
    return ("ok", out, list(api._local.warnings))


@pytest.mark.parametrize("change", CHANGES, ids=[",".join(c) for c in CHANGES])
def test_shared_metadata_decodes_as_unshared(change: dict[str, Any]) -> None:
    api = APIServer()
    stored = _stored(api)
    # the result of a patch: the stored metadata's values shared, ``change`` set on top
    result = {**stored, "metadata": {**stored["metadata"], **change}}
    shared = _answer(api, result, stored)
    full = _answer(api, copy.deepcopy(result), None)
    assert shared == full
    assert result["metadata"]["labels"] is stored["metadata"]["labels"] or "labels" in change


def test_shared_metadata_is_kept_shared() -> None:
    api = APIServer()
    stored = _stored(api)
    result = {**stored, "metadata": {**stored["metadata"], "finalizers": []}}
    got = _answer(api, result, stored)
    assert got[0] == "ok"
    out = got[1]
    assert "finalizers" not in out["metadata"]  # (an empty list: dropped as the decoder drops it)
    assert out["metadata"]["labels"] is stored["metadata"]["labels"]
