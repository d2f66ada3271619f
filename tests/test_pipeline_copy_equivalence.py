"""The server's decode walk on a copy (``run_pipeline_copy``) equals a copy followed by the in-place
pipeline (``run_pipeline``): the same object, the same pruned paths in the same order, the input untouched.

Its fast paths (a known field's string, int or bool kept at once; values shared with ``base``) are
checked on every one-value change of a few documents, for a CRD's structural schema and a built-in's
inline one (issue 22).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from support import one_value_mutations
from test_structural import WIDGET

from fakeapi.machinery import openapi
from fakeapi.machinery.jsonutil import copy_normalized, fast_copy
from fakeapi.schema.structural import inline_builtin_root, run_pipeline, run_pipeline_copy

#: Values put in place of one value of a document: each JSON type, an integral float, an unknown map.
STAND_INS: tuple[Any, ...] = ("s", "", 3, 0, True, False, 2.0, 1.5, None, {}, [], {"zz": 1}, ["x", 1])

WIDGET_DOC: dict[str, Any] = {
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w", "labels": {"a": "b"}},
    "spec": {"replicas": 2, "mode": "a", "items": ["x"], "objs": [{"n": "a"}], "labels": {"k": "v"},
             "extra": {"known": {"a": "x"}, "free": 1}, "nested": {"deep": "e"},
             "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}},
    "status": {"ready": True, "bogus": "x"},
}

POD_DOC: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "n", "restartPolicy": "Never", "hostNetwork": False,
             "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None, "zz": "u"}],
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0,
                                      "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]},
}


def _pod_schema() -> dict[str, Any]:
    return inline_builtin_root(openapi.builtin_schema("Pod", "v1"))


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, key order and number types included (``2.0 == 2`` in Python, not on the wire)."""
    return json.dumps(a) == json.dumps(b)


def _reference(doc: dict[str, Any], schema: dict[str, Any]) -> tuple[Any, list[str]]:
    out = copy_normalized(doc)
    return out, run_pipeline(out, schema)


def _cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    pod = _pod_schema()
    for name, doc, schema in (("widget", WIDGET_DOC, WIDGET), ("pod", POD_DOC, pod)):
        docs = [doc, *one_value_mutations(doc, STAND_INS)]
        out += [(f"{name}-{i}", d, schema) for i, d in enumerate(docs) if isinstance(d, dict)]
    return out


CASES = _cases()


@pytest.mark.parametrize(("name", "doc", "schema"), CASES, ids=[c[0] for c in CASES])
def test_the_walk_on_a_copy_equals_a_copy_then_the_walk(name: str, doc: dict[str, Any], schema: dict[str, Any]) -> None:
    before = copy.deepcopy(doc)
    want, want_pruned = _reference(doc, schema)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        got, pruned = run_pipeline_copy(doc, schema, copy_normalized(meta))
        assert _same(got, want)
        assert pruned == want_pruned
    got, pruned = run_pipeline_copy({k: v for k, v in doc.items() if k != "metadata"}, schema, {})
    ref, ref_pruned = _reference({k: v for k, v in doc.items() if k != "metadata"} | {"metadata": {}}, schema)
    assert _same(got, ref) and pruned == ref_pruned
    assert doc == before


@pytest.mark.parametrize(("name", "doc", "schema"), CASES[::7], ids=[c[0] for c in CASES[::7]])
def test_values_shared_with_the_base_are_kept_as_they_are(name: str, doc: dict[str, Any],
                                                          schema: dict[str, Any]) -> None:
    """A document sharing its unchanged maps and lists with an object the pipeline made (a patch's result)."""
    base, _ = _reference(WIDGET_DOC if schema is WIDGET else POD_DOC, schema)
    patched = {k: (base[k] if k in base and v == base[k] and isinstance(v, (dict, list)) else v)
               for k, v in fast_copy(doc).items()}
    want, want_pruned = _reference(patched, schema)
    meta = patched.get("metadata")
    if not isinstance(meta, dict):
        return
    got, pruned = run_pipeline_copy(patched, schema, copy_normalized(meta), base=base)
    assert _same(got, want) and pruned == want_pruned
    for k, v in patched.items():
        if k != "metadata" and k in base and v is base[k]:
            assert got[k] is v
