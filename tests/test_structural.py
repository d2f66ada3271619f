"""The CRD request pipeline on a structural schema: pruning, null dropping, defaulting (reference §6.1, §6.3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.schema.structural import (
    apply_defaults,
    chain_text,
    drop_nulls,
    has_defaults,
    inline_builtin,
    prune,
    run_pipeline,
    run_pipeline_copy,
)

# The reference's running example (§8): Widget with spec.replicas default 1, items, mode enum.
WIDGET: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "items": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "extra": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "objs": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "nullableList": {"type": "array", "nullable": True, "items": {"type": "string"}},
                "withDefault": {"type": "array", "default": ["x"], "items": {"type": "string"}},
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "string", "default": "d"}},
                },
                "nestedDefaulted": {
                    "type": "object",
                    "default": {},
                    "properties": {"deep": {"type": "string", "default": "d"}},
                },
                "nullableDefault": {"type": "string", "nullable": True, "default": "n"},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}

PRUNE_CASES = [
    ("unknown spec field", {"spec": {"unknown": 1, "replicas": 2}}, {"spec": {"replicas": 2}}, ["spec.unknown"]),
    ("unknown root field", {"other": 3, "spec": {}}, {"spec": {}}, ["other"]),
    (
        "root keeps apiVersion/kind, metadata pruned to ObjectMeta",
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "bogus": 1}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        ["metadata.bogus"],
    ),
    (
        "inside metadata, ownerReferences are pruned too",
        {"metadata": {"ownerReferences": [{"uid": "u", "zz": 1}]}},
        {"metadata": {"ownerReferences": [{"uid": "u"}]}},
        ["metadata.ownerReferences[0].zz"],
    ),
    (
        "array items by index",
        {"spec": {"objs": [{"n": "a", "x": 1}, {"n": "b"}]}},
        {"spec": {"objs": [{"n": "a"}, {"n": "b"}]}},
        ["spec.objs[0].x"],
    ),
    (
        "preserve-unknown keeps unknown keys, prunes known ones",
        {"spec": {"extra": {"free": {"any": 1}, "known": {"a": "x", "b": 2}}}},
        {"spec": {"extra": {"free": {"any": 1}, "known": {"a": "x"}}}},
        ["spec.extra.known.b"],
    ),
    (
        "additionalProperties keep map keys",
        {"spec": {"labels": {"a": "1", "b": "2"}}},
        {"spec": {"labels": {"a": "1", "b": "2"}}},
        [],
    ),
    (
        "embedded resource keeps apiVersion/kind/metadata",
        {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "zz": 1},
                               "spec": {"x": 1, "y": 2}, "junk": True}}},
        {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}}},
        ["spec.template.metadata.zz", "spec.template.spec.y", "spec.template.junk"],
    ),
    ("empty values are kept", {"spec": {"items": [], "extra": {}}}, {"spec": {"items": [], "extra": {}}}, []),
]


@pytest.mark.parametrize(("name", "obj", "expected", "paths"), PRUNE_CASES, ids=[c[0] for c in PRUNE_CASES])
def test_prune(name: str, obj: dict[str, Any], expected: dict[str, Any], paths: list[str]) -> None:
    assert sorted(prune(obj, WIDGET)) == sorted(paths)
    assert obj == expected


def test_prune_preserve_unknown_root() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    obj = {"anything": 1, "spec": {"a": "x", "b": 1}, "metadata": {"name": "n", "zz": 1}}
    assert sorted(prune(obj, schema)) == ["metadata.zz", "spec.b"]
    assert obj == {"anything": 1, "spec": {"a": "x"}, "metadata": {"name": "n"}}


NULL_CASES = [
    ("non-nullable null without default is dropped", {"spec": {"items": None}}, {"spec": {}}),
    ("nullable null is kept", {"spec": {"nullableList": None}}, {"spec": {"nullableList": None}}),
    ("null with a default is kept for defaulting", {"spec": {"withDefault": None}}, {"spec": {"withDefault": None}}),
    ("array elements are not dropped", {"spec": {"items": ["a", None]}}, {"spec": {"items": ["a", None]}}),
    ("map entries in arrays", {"spec": {"objs": [{"n": None}]}}, {"spec": {"objs": [{}]}}),
    ("additionalProperties values", {"spec": {"labels": {"a": None, "b": "x"}}}, {"spec": {"labels": {"b": "x"}}}),
    ("unknown keys are left alone", {"spec": {"extra": {"free": None}}}, {"spec": {"extra": {"free": None}}}),
    ("whole spec null", {"spec": None}, {}),
]


@pytest.mark.parametrize(("name", "obj", "expected"), NULL_CASES, ids=[c[0] for c in NULL_CASES])
def test_drop_nulls(name: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    drop_nulls(obj, WIDGET)
    assert obj == expected


DEFAULT_CASES = [
    ("absent key defaulted", {"spec": {}}, {"spec": {"replicas": 1, "withDefault": ["x"], "nestedDefaulted": {"deep": "d"},
                                                   "nullableDefault": "n"}}),
    ("no spec, no defaults inside it", {}, {}),
    ("present value kept", {"spec": {"replicas": 3, "withDefault": [], "nestedDefaulted": {"deep": "e"},
                                     "nullableDefault": None}},
     {"spec": {"replicas": 3, "withDefault": [], "nestedDefaulted": {"deep": "e"}, "nullableDefault": None}}),
    ("non-nullable null is defaulted", {"spec": {"replicas": None}},
     {"spec": {"replicas": 1, "withDefault": ["x"], "nestedDefaulted": {"deep": "d"}, "nullableDefault": "n"}}),
    ("nested default only inside an existing object", {"spec": {"nested": {}}},
     {"spec": {"nested": {"deep": "d"}, "replicas": 1, "withDefault": ["x"], "nestedDefaulted": {"deep": "d"},
               "nullableDefault": "n"}}),
]


@pytest.mark.parametrize(("name", "obj", "expected"), DEFAULT_CASES, ids=[c[0] for c in DEFAULT_CASES])
def test_apply_defaults(name: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    apply_defaults(obj, WIDGET)
    assert obj == expected


def test_defaults_are_deep_copies() -> None:
    a: dict[str, Any] = {"spec": {}}
    b: dict[str, Any] = {"spec": {}}
    apply_defaults(a, WIDGET)
    apply_defaults(b, WIDGET)
    a["spec"]["withDefault"].append("y")
    assert b["spec"]["withDefault"] == ["x"]
    assert WIDGET["properties"]["spec"]["properties"]["withDefault"]["default"] == ["x"]


def test_array_element_defaults() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string", "default": "z"}},
                                               "ys": {"type": "array", "items": {"type": "object", "properties": {
                                                   "k": {"type": "integer", "default": 5}}}}}}
    obj: dict[str, Any] = {"xs": ["a", None], "ys": [{}, {"k": 1}]}
    apply_defaults(obj, schema)
    assert obj == {"xs": ["a", "z"], "ys": [{"k": 5}, {"k": 1}]}


def test_pipeline_reference_item_30() -> None:
    """§8 item 30 at the function level: [] and {} kept, null dropped, default applied."""
    obj: dict[str, Any] = {"spec": {"items": [], "extra": {}}}
    prune(obj, WIDGET)
    drop_nulls(obj, WIDGET)
    apply_defaults(obj, WIDGET)
    assert obj["spec"]["items"] == [] and obj["spec"]["extra"] == {}
    assert obj["spec"]["replicas"] == 1
    obj2: dict[str, Any] = {"spec": {"items": None}}
    prune(obj2, WIDGET)
    drop_nulls(obj2, WIDGET)
    apply_defaults(obj2, WIDGET)
    assert "items" not in obj2["spec"]


def test_has_defaults() -> None:
    assert has_defaults(WIDGET)
    assert not has_defaults({"type": "object", "properties": {"a": {"type": "string"}}})


def test_inline_builtin_prunes_like_the_go_decoder() -> None:
    pod_spec = inline_builtin("io.k8s.api.core.v1.PodSpec")
    obj = {"containers": [{"name": "c", "bogus": 1, "resources": {"limits": {"cpu": "1"}}}], "zz": {}}
    before = copy.deepcopy(obj)
    paths = prune({"spec": obj}, {"properties": {"spec": pod_spec}})
    assert sorted(paths) == ["spec.containers[0].bogus", "spec.zz"]
    assert obj == {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}
    assert before != obj


ALL_INPUTS = [c[1] for c in PRUNE_CASES] + [c[1] for c in NULL_CASES] + [c[1] for c in DEFAULT_CASES] + [
    {"spec": {"objs": [None, {"n": None, "zz": 1}], "labels": {"a": None}, "extra": {"known": None, "free": None}}},
    {"spec": {"template": {"metadata": None, "spec": None, "x": 1}}},
]


@pytest.mark.parametrize("obj", ALL_INPUTS)
def test_run_pipeline_matches_the_three_steps(obj: dict[str, Any]) -> None:
    a = copy.deepcopy(obj)
    b = copy.deepcopy(obj)
    paths_a = prune(a, WIDGET)
    drop_nulls(a, WIDGET)
    apply_defaults(a, WIDGET)
    paths_b = run_pipeline(b, WIDGET)
    assert b == a
    assert sorted(paths_b) == sorted(paths_a)


@pytest.mark.parametrize(
    ("chain", "text"),
    [(None, ""), ((None, "spec"), "spec"), ((((None, "spec"), "items"), 0), "spec.items[0]"),
     (((((None, "spec"), "items"), 0), "x"), "spec.items[0].x")],
)
def test_chain_text(chain: Any, text: str) -> None:
    assert chain_text(chain) == text


#: Metadata as the pipelines see it: what pruning ObjectMeta keeps and reports (the pipelines skip
#: the walk when nothing could be pruned; ``prune`` always walks: both must agree).
META_CASES = [
    ("all known, scalars", {"name": "w", "uid": "u", "generation": 2, "labels": {"a": "b"},
                            "annotations": {"k": "v"}, "finalizers": ["f"],
                            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u",
                                                 "controller": True}]}, []),
    ("unknown field", {"name": "w", "zz": {"a": 1}}, ["metadata.zz"]),
    ("unknown field of an ownerReference", {"ownerReferences": [{"uid": "u"}, {"uid": "v", "zz": 1}]},
     ["metadata.ownerReferences[1].zz"]),
    ("a map inside labels", {"labels": {"a": {"x": 1}}}, ["metadata.labels.a.x"]),
    ("a list inside finalizers", {"finalizers": ["f", ["g"]]}, []),
    ("a map inside finalizers", {"finalizers": [{"x": 1}]}, ["metadata.finalizers[0].x"]),
    ("a map as the name", {"name": {"x": 1}}, ["metadata.name.x"]),
    ("a map inside an ownerReference", {"ownerReferences": [{"uid": {"x": 1}}]},
     ["metadata.ownerReferences[0].uid.x"]),
    ("empty maps and lists", {"labels": {}, "finalizers": [], "ownerReferences": []}, []),
    ("managedFields: unknown keys pruned, fieldsV1 kept whole",
     {"managedFields": [{"manager": "m", "zz": 1, "fieldsV1": {"f:spec": {"f:x": {}}}}]},
     ["metadata.managedFields[0].zz"]),
]


@pytest.mark.parametrize(("name", "meta", "paths"), META_CASES, ids=[c[0] for c in META_CASES])
def test_metadata_is_pruned_alike_by_every_pipeline(name: str, meta: dict[str, Any], paths: list[str]) -> None:
    walked = {"spec": {}, "metadata": copy.deepcopy(meta)}
    assert prune(walked, WIDGET) == paths
    body = {"spec": {}, "metadata": copy.deepcopy(meta)}
    out, pruned = run_pipeline_copy(body, WIDGET, copy.deepcopy(meta))
    assert [p for p in pruned if p.startswith("metadata")] == paths
    assert out["metadata"] == walked["metadata"]
    assert body["metadata"] == meta  # (the copy's metadata was the caller's copy)
    in_place = {"spec": {}, "metadata": copy.deepcopy(meta)}
    assert [p for p in run_pipeline(in_place, WIDGET) if p.startswith("metadata")] == paths
    assert in_place["metadata"] == walked["metadata"]
