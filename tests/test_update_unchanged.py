"""An update that sends back unchanged parts stores and answers what the full write path gives.

The update path shares each top-level value a body sends back byte for byte as stored
(fakeapi.server.unchanged) and skips it in the checks, as a patch does. These tests run the
same updates on two servers, one with the sharing switched off, and compare the answers,
warnings, errors, stored objects and their managedFields.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_builtin_kinds_go_client import BODIES

import fakeapi.server.update as update_verb
from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError
from fakeapi.server.unchanged import share_unchanged

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "1"}},
       "spec": {"containers": [{"name": "c", "image": "busybox:1", "resources": {"limits": {"cpu": "500m"}}}]}}
CASES = [POD, *BODIES]


def _server() -> APIServer:
    api = APIServer(seed=3)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    return api


def _run(body: dict[str, Any], edits: list[Any], share: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Create ``body``, then apply each edit to what a get returns and update: everything seen, as text."""
    monkeypatch.setattr(update_verb, "share_unchanged", share_unchanged if share else lambda b, s: (b, ()))
    api = _server()
    seen = [json.dumps(api.create(json.loads(json.dumps(body))))]
    meta = body["metadata"]
    for edit in edits:
        cur = api.get(body["kind"], meta["name"], meta.get("namespace"))
        edit(cur)
        try:
            seen.append(json.dumps(api.update(cur)))
            seen.append(repr(api.last_warnings))
        except ApiError as e:
            seen.append(json.dumps(e.status))
        e2 = api.store.tables[next(k for k in api.store.tables if k[1] == api.resolve_kind(body["kind"]).plural)]
        seen += [json.dumps(x.obj) + repr(api._stored_managed(x)) for x in e2.entries.values()]
    seen += [c.render() for c in api.trace.calls]
    return seen


def _label(cur: dict[str, Any]) -> None:
    cur["metadata"].setdefault("labels", {})["touched"] = "yes"


def _nothing(cur: dict[str, Any]) -> None:
    pass


def _wrong_type(cur: dict[str, Any]) -> None:
    """A value of the wrong JSON type in an otherwise unchanged spec: equal in Python (True == 1)."""
    spec = cur.get("spec")
    if isinstance(spec, dict):
        for k, v in spec.items():
            if type(v) is int:
                spec[k] = bool(v) if v in (0, 1) else float(v)
                return
            if type(v) is bool:
                spec[k] = int(v)
                return
        spec["bogusField"] = 1  # (an unknown field: a warning)


def _reordered(cur: dict[str, Any]) -> None:
    spec = cur.get("spec")
    if isinstance(spec, dict) and spec:
        cur["spec"] = dict(reversed(list(spec.items())))


@pytest.mark.parametrize("body", CASES, ids=[b["kind"] for b in CASES])
def test_updates_answer_and_store_what_the_full_path_gives(body: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    edits = [_label, _nothing, _wrong_type, _reordered, _label]
    with_sharing = _run(body, edits, True, monkeypatch)
    without = _run(body, edits, False, monkeypatch)
    assert with_sharing == without


def test_only_values_equal_byte_for_byte_are_shared() -> None:
    stored = {"metadata": {"a": 1}, "spec": {"x": 1, "y": [1]}, "status": {"on": True}}
    out, keys = share_unchanged({"metadata": {"a": 1}, "spec": {"x": 1, "y": [1]}, "status": {"on": 1}}, stored)
    assert keys == ("spec",) and out["spec"] is stored["spec"] and out["metadata"] is not stored["metadata"]
    assert share_unchanged({"spec": {"y": [1], "x": 1}}, stored) == ({"spec": {"y": [1], "x": 1}}, ())
