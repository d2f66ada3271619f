"""semantic_equal = apiequality.Semantic.DeepEqual on typed values (reference §7.3)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.codec.gomodel import (
    BOOL,
    INT,
    INT_OR_STRING,
    QUANTITY,
    STRING,
    TIME,
    GoField,
    builtin_go_type,
    map_of,
    slice_of,
    struct,
)
from fakeapi.codec.semantic import loose_equal, semantic_equal

POD = builtin_go_type("Pod")
CONTAINER = builtin_go_type("io.k8s.api.core.v1.Container")


def _c(**extra: Any) -> dict[str, Any]:
    return {"name": "c", "image": "x", **extra}


TYPED: list[tuple[str, Any, Any, bool]] = [
    ("nil vs empty list", _c(), _c(env=[]), True),
    ("null vs empty list", _c(env=None), _c(env=[]), True),
    ("nil vs empty map", {"name": "c"}, {"name": "c", "resources": {"limits": {}}}, True),
    ("absent string vs zero", _c(), _c(workingDir=""), True),
    ("absent bool vs false (value field)", _c(), _c(tty=False), True),
    ("absent int vs zero (value field)", {"name": "c", "ports": [{"containerPort": 80}]},
     {"name": "c", "ports": [{"containerPort": 80, "hostPort": 0}]}, True),
    ("pointer {} vs absent differ", _c(), _c(securityContext={}), False),
    ("pointer false vs absent differ", {"spec": {}}, {"spec": {"automountServiceAccountToken": False}}, False),
    ("value struct {} vs absent equal", _c(), _c(resources={}), True),
    ("cpu 1000m vs '1'", _c(resources={"limits": {"cpu": "1000m"}}), _c(resources={"limits": {"cpu": "1"}}), True),
    ("cpu 1000m vs 1", _c(resources={"limits": {"cpu": "1000m"}}), _c(resources={"limits": {"cpu": 1}}), True),
    ("cpu 1 vs 2", _c(resources={"limits": {"cpu": "1"}}), _c(resources={"limits": {"cpu": "2"}}), False),
    ("map key present vs absent differs", _c(resources={"limits": {"cpu": "1"}}), _c(resources={"limits": {}}), False),
    ("unknown fields are ignored", _c(bogus=1), _c(), True),
    ("different values", _c(image="a"), _c(image="b"), False),
    ("list order matters", _c(args=["a", "b"]), _c(args=["b", "a"]), False),
]


@pytest.mark.parametrize(("name", "a", "b", "equal"), TYPED, ids=[c[0] for c in TYPED])
def test_typed_container(name: str, a: Any, b: Any, equal: bool) -> None:
    t = POD if "spec" in a or "spec" in b else CONTAINER
    assert semantic_equal(a, b, t) is equal
    assert semantic_equal(b, a, t) is equal


T = struct("T", [
    GoField("at", True, False, TIME),
    GoField("pt", True, True, TIME),
    GoField("q", True, False, QUANTITY),
    GoField("pq", True, True, QUANTITY),
    GoField("ios", True, True, INT_OR_STRING),
    GoField("n", True, True, INT),
    GoField("v", True, False, INT),
    GoField("s", True, False, STRING),
    GoField("b", True, False, BOOL),
    GoField("xs", True, False, slice_of(STRING)),
    GoField("m", True, False, map_of(INT)),
])

HAND: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("times by instant", {"at": "2024-01-01T01:00:00+01:00"}, {"at": "2024-01-01T00:00:00Z"}, True),
    ("times at nanosecond precision", {"at": "2024-01-01T00:00:00Z"}, {"at": "2024-01-01T00:00:00.5Z"}, False),
    ("zero time vs absent (value)", {"at": "0001-01-01T00:00:00Z"}, {}, True),
    ("nil time pointer vs set", {"pt": "2024-01-01T00:00:00Z"}, {}, False),
    ("quantity zero value vs absent", {"q": "0"}, {}, True),
    ("quantity pointer zero vs nil", {"pq": "0"}, {}, False),
    ("int-or-string 1 vs '1'", {"ios": 1}, {"ios": "1"}, False),
    ("int-or-string same", {"ios": "http"}, {"ios": "http"}, True),
    ("*int 0 vs nil", {"n": 0}, {}, False),
    ("int 0 vs absent", {"v": 0}, {}, True),
    ("bool true vs 1 never equal", {"v": 1}, {"v": True}, False),
    ("null vs absent", {"s": None}, {}, True),
    ("empty list vs null", {"xs": []}, {"xs": None}, True),
    ("map values compared by type", {"m": {"a": 0}}, {"m": {"a": None}}, True),
    ("map keys must match", {"m": {"a": 0}}, {"m": {}}, False),
]


@pytest.mark.parametrize(("name", "a", "b", "equal"), HAND, ids=[c[0] for c in HAND])
def test_typed_hand_built(name: str, a: dict[str, Any], b: dict[str, Any], equal: bool) -> None:
    assert semantic_equal(a, b, T) is equal
    assert semantic_equal(b, a, T) is equal


#: (name, a, b, loose_equal (the matcher's rule), semantic_equal without a type (Go on unstructured))
UNSTRUCTURED: list[tuple[str, Any, Any, bool, bool]] = [
    ("null vs []", None, [], True, False),
    ("null vs {}", None, {}, True, False),
    ("absent key vs null", {"a": 1}, {"a": 1, "b": None}, True, False),
    ("absent key vs []", {}, {"items": []}, True, False),
    ("nested empties", {"a": {"b": None}}, {}, True, False),
    ("bool vs int", {"a": True}, {"a": 1}, False, False),
    ("false vs 0", False, 0, False, False),
    ("int vs float", 1, 1.0, True, True),
    ("strings strict", "1", 1, False, False),
    ("absent vs zero scalar", {}, {"a": 0}, False, False),
    ("absent vs empty string", {}, {"a": ""}, False, False),
    ("lists elementwise", [1, {"a": None}], [1, {}], True, False),
    ("list length", [1], [1, 2], False, False),
    ("different values", {"a": "x"}, {"a": "y"}, False, False),
    ("same nested", {"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}, True, True),
]


@pytest.mark.parametrize(("name", "a", "b", "loose", "strict"), UNSTRUCTURED, ids=[c[0] for c in UNSTRUCTURED])
def test_unstructured(name: str, a: Any, b: Any, loose: bool, strict: bool) -> None:
    assert loose_equal(a, b) is loose
    assert loose_equal(b, a) is loose
    assert semantic_equal(a, b) is strict
    assert semantic_equal(b, a) is strict


def test_whole_pod_after_server_defaults_vs_client_copy() -> None:
    """A controller comparing its desired pod spec with what the server returned (quantities reformatted)."""
    desired = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"memory": "1024Mi"}}}]}}
    stored = {"spec": {"containers": [{"name": "c", "image": "x", "env": [],
                                       "resources": {"limits": {"memory": "1Gi"}}}]}, "status": {}}
    assert semantic_equal(desired["spec"], stored["spec"], builtin_go_type("io.k8s.api.core.v1.PodSpec"))
