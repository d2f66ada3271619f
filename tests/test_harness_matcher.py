"""The matcher: partial matching, Go semantics, merge-key lists, every marker."""

from __future__ import annotations

from typing import Any

import pytest
from test_harness_bundle import WIDGET_CRD

from fakeapi.harness.matcher import ABSENT, UNTYPED, Mismatch, Shape, kind_shape, match, matches
from fakeapi.registry.kinds import Kind
from fakeapi.server.apiserver import APIServer


@pytest.fixture(scope="module")
def kinds() -> dict[str, Kind]:
    api = APIServer()
    api.register_crd(WIDGET_CRD)
    pod = api.kinds.find("Pod", "v1")
    widget = api.kinds.find("Widget", "toy.example.com/v1")
    assert pod is not None and widget is not None
    return {"Pod": pod, "Widget": widget}


def paths(ms: list[Mismatch]) -> list[str]:
    return [m.path for m in ms]


# ------------------------------------------------------------------------------------ maps, scalars


def test_maps_match_partially() -> None:
    actual = {"a": 1, "b": {"c": "x", "d": [1, 2]}, "e": True}
    assert match({"b": {"c": "x"}}, actual) == []
    ms = match({"a": 2, "b": {"c": "y"}}, actual)
    assert [(m.path, m.expected, m.actual) for m in ms] == [("a", 2, 1), ("b.c", "y", "x")]


def test_missing_key_is_reported_as_absent() -> None:
    [m] = match({"spec": {"x": 1}}, {"spec": {}})
    assert (m.path, m.expected, m.actual) == ("spec.x", 1, ABSENT)


def test_untyped_go_semantics() -> None:
    # absent list or map equals an empty one; an absent scalar is not a zero without a type
    assert matches({"a": [], "b": {}}, {})
    assert matches({"a": None}, {})
    assert not matches({"a": 0}, {})
    assert not matches({"a": ""}, {})
    assert matches({"n": 1}, {"n": 1.0})
    assert not matches({"n": 1}, {"n": True})
    assert not matches({"s": "1"}, {"s": 1})


def test_keys_with_dots_are_quoted_in_paths() -> None:
    [m] = match({"metadata": {"annotations": {"example.com/x": "1"}}}, {"metadata": {"annotations": {}}})
    assert m.path == 'metadata.annotations["example.com/x"]'


def test_typed_absent_scalar_equals_zero_where_not_a_pointer(kinds: dict[str, Kind]) -> None:
    pod = kind_shape(kinds["Pod"])
    stored = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
              "spec": {"containers": [{"name": "a", "image": "i"}]}}
    # hostNetwork is a bool value field (omitempty): absent equals false
    assert match({"spec": {"hostNetwork": False}}, stored, shape=pod) == []
    # securityContext is a pointer: absent is not {}
    assert paths(match({"spec": {"securityContext": {}}}, stored, shape=pod)) == ["spec.securityContext"]
    # a field the Go type does not know compares untyped: a typo is caught
    assert paths(match({"spec": {"hostNetwrk": False}}, stored, shape=pod)) == ["spec.hostNetwrk"]


def test_quantities_compare_by_value(kinds: dict[str, Kind]) -> None:
    pod = kind_shape(kinds["Pod"])
    stored = {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    assert match({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1000m"}}}]}},
                 stored, shape=pod) == []
    ms = match({"spec": {"containers": [{"name": "a", "resources": {"limits": {"memory": "1G"}}}]}},
               stored, shape=pod)
    assert paths(ms) == ["spec.containers[name=a].resources.limits.memory"]


# ------------------------------------------------------------------------------------ lists


def test_merge_key_lists_match_by_key_in_any_order(kinds: dict[str, Kind]) -> None:
    pod = kind_shape(kinds["Pod"])
    stored = {"spec": {"containers": [
        {"name": "a", "image": "ia", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
        {"name": "b", "image": "ib"},
    ]}}
    assert match({"spec": {"containers": [{"name": "b"}, {"name": "a", "env": [{"name": "Y", "value": "2"}]}]}},
                 stored, shape=pod) == []
    ms = match({"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}]},
                                        {"name": "c", "image": "ic"}]}}, stored, shape=pod)
    assert [(m.path, m.message) for m in ms] == [
        ("spec.containers[name=a].env[name=Y].value", ""),
        ("spec.containers[name=c]", "no item with name=c"),
    ]


def test_list_map_keys_from_a_crd_schema(kinds: dict[str, Kind]) -> None:
    w = kind_shape(kinds["Widget"])
    stored = {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Scaled", "status": "True"}]}}
    assert match({"status": {"conditions": [{"type": "Scaled", "status": "True"}]}}, stored, shape=w) == []
    [m] = match({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, stored, shape=w)
    assert (m.path, m.expected, m.actual) == ("status.conditions[type=Ready].status", "True", "False")


def test_lists_without_merge_keys_match_in_order() -> None:
    assert match({"l": [{"a": 1}, {"b": 2}]}, {"l": [{"a": 1, "z": 0}, {"b": 2}]}) == []
    [m] = match({"l": [1, 3]}, {"l": [1, 2]})
    assert (m.path, m.expected, m.actual) == ("l[1]", 3, 2)
    [m] = match({"l": [1]}, {"l": [1, 2]})
    assert (m.path, m.message) == ("l", "expected 1 items, got 2")


def test_keyed_list_item_without_its_key_matches_any_item(kinds: dict[str, Kind]) -> None:
    w = kind_shape(kinds["Widget"])
    stored = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    assert match({"status": {"conditions": [{"status": "False"}]}}, stored, shape=w) == []
    [m] = match({"status": {"conditions": [{"status": "Unknown"}]}}, stored, shape=w)
    assert m.message == "no item matches"


# ------------------------------------------------------------------------------------ markers

CASES: list[tuple[str, Any, Any, bool]] = [
    ("$absent missing", {"x": {"$absent": True}}, {}, True),
    ("$absent zero", {"x": {"$absent": True}}, {"x": 0}, True),
    ("$absent present", {"x": {"$absent": True}}, {"x": 1}, False),
    ("$absent false = present", {"x": {"$absent": False}}, {}, False),
    ("$present", {"x": {"$present": True}}, {"x": 0}, True),
    ("$present missing", {"x": {"$present": True}}, {}, False),
    ("$present null", {"x": {"$present": True}}, {"x": None}, False),
    ("$present false = absent", {"x": {"$present": False}}, {}, True),
    ("$regex", {"x": {"$regex": "^arc-runner-"}}, {"x": "arc-runner-x7k2q"}, True),
    ("$regex no", {"x": {"$regex": "^arc-runner-"}}, {"x": "other"}, False),
    ("$regex number", {"x": {"$regex": "^4"}}, {"x": 42}, True),
    ("$regex missing", {"x": {"$regex": ".*"}}, {}, False),
    ("$len list", {"x": {"$len": 3}}, {"x": [1, 2, 3]}, True),
    ("$len map", {"x": {"$len": 1}}, {"x": {"a": 1}}, True),
    ("$len string", {"x": {"$len": 2}}, {"x": "ab"}, True),
    ("$len missing is 0", {"x": {"$len": 0}}, {}, True),
    ("$len wrong", {"x": {"$len": 2}}, {"x": [1]}, False),
    ("$gte", {"x": {"$gte": 2}}, {"x": 2}, True),
    ("$gte no", {"x": {"$gte": 2}}, {"x": 1}, False),
    ("$lte", {"x": {"$lte": 5}}, {"x": 4.5}, True),
    ("$lte no", {"x": {"$lte": 5}}, {"x": 6}, False),
    ("$gte quantity", {"x": {"$gte": "1"}}, {"x": "1500m"}, True),
    ("$lte time", {"x": {"$lte": "2026-01-01T00:05:00Z"}}, {"x": "2026-01-01T00:04:59Z"}, True),
    ("$gte incomparable", {"x": {"$gte": 1}}, {"x": "abc"}, False),
    ("$gte and $lte", {"x": {"$gte": 1, "$lte": 3}}, {"x": 2}, True),
    ("$not", {"x": {"$not": "a"}}, {"x": "b"}, True),
    ("$not no", {"x": {"$not": "a"}}, {"x": "a"}, False),
    ("$not partial", {"x": {"$not": {"a": 1}}}, {"x": {"a": 1, "b": 2}}, False),
    ("$contains", {"x": {"$contains": [3, 1]}}, {"x": [1, 2, 3]}, True),
    ("$contains partial items", {"x": {"$contains": [{"n": "b"}]}}, {"x": [{"n": "a"}, {"n": "b", "v": 1}]}, True),
    ("$contains missing item", {"x": {"$contains": [4]}}, {"x": [1, 2, 3]}, False),
    ("$contains distinct items", {"x": {"$contains": [1, 1]}}, {"x": [1, 2]}, False),
    ("$contains substring", {"x": {"$contains": "ell"}}, {"x": "hello"}, True),
    ("$contains not a list", {"x": {"$contains": [1]}}, {}, False),
    ("$exact", {"x": {"$exact": {"a": 1}}}, {"x": {"a": 1}}, True),
    ("$exact extra key", {"x": {"$exact": {"a": 1}}}, {"x": {"a": 1, "b": 2}}, False),
    ("$exact extra empty key", {"x": {"$exact": {"a": 1}}}, {"x": {"a": 1, "b": []}}, True),
    ("$exact list", {"x": {"$exact": [1, 2]}}, {"x": [1, 2]}, True),
    ("$exact list length", {"x": {"$exact": [1]}}, {"x": [1, 2]}, False),
    ("$exact empty vs absent", {"x": {"$exact": []}}, {}, True),
    ("$exact with a marker inside", {"x": {"$exact": [{"n": "b", "uid": {"$present": True}}]}},
     {"x": [{"n": "b", "uid": "u"}]}, True),
    ("$exact with a marker inside, extra key", {"x": {"$exact": [{"n": "b"}]}},
     {"x": [{"n": "b", "uid": "u"}]}, False),
]


@pytest.mark.parametrize(("expected", "actual", "ok"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_markers(expected: Any, actual: Any, ok: bool) -> None:
    ms = match(expected, actual)
    assert (not ms) is ok, ms
    for m in ms:
        assert m.path == "x" or m.path.startswith("x")


def test_exact_extra_item_in_keyed_list(kinds: dict[str, Kind]) -> None:
    w = kind_shape(kinds["Widget"])
    stored = {"status": {"conditions": [{"type": "Ready"}, {"type": "Scaled"}]}}
    assert match({"status": {"conditions": [{"type": "Ready"}]}}, stored, shape=w) == []
    [m] = match({"status": {"conditions": {"$exact": [{"type": "Ready"}]}}}, stored, shape=w)
    assert m.message == "expected 1 items, got 2"


def test_unknown_marker_raises() -> None:
    with pytest.raises(ValueError, match=r"\$nope"):
        match({"x": {"$nope": 1}}, {"x": 1})


# ------------------------------------------------------------------------------------ locations


def test_mismatches_carry_file_and_line_of_the_expectation_node() -> None:
    lines = {("spec", "replicas"): 12, ("status", "conditions", 0): 15}

    def locate(sub: tuple[str | int, ...]) -> tuple[str, int | None]:
        while sub and sub not in lines:
            sub = sub[:-1]
        return "f.yaml", lines.get(sub, 10)

    ms = match({"spec": {"replicas": 2}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
               {"spec": {"replicas": 1}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
               locate=locate, subject="Widget ns/w")
    assert [(m.location, m.path, m.subject) for m in ms] == [
        ("f.yaml:12", "spec.replicas", "Widget ns/w"),
        ("f.yaml:15", "status.conditions[0].status", "Widget ns/w"),
    ]


def test_shape_base_knows_nothing() -> None:
    assert UNTYPED.list_keys() == []
    assert isinstance(UNTYPED.child("x"), Shape)
    assert UNTYPED.go_type() is None
