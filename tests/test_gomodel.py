"""The Go type model and go_roundtrip: what a Go client holds and sends (reference §6.3, §7.1-7.2)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from support import one_value_mutations

from fakeapi.codec.gomodel import (
    ANY,
    BOOL,
    INT,
    STRING,
    GoDecodeError,
    GoField,
    GoType,
    builtin_go_type,
    go_roundtrip,
    go_roundtrip_owned,
    go_time,
    go_type_from_structural,
    map_of,
    slice_of,
    struct,
)
from fakeapi.machinery import openapi

POD = builtin_go_type("Pod")


def _pod(spec: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **(meta or {})},
            "spec": {"containers": [{"name": "c", "image": "x"}], **(spec or {})}}


# The Pod must-haves: empty lists/maps vanish, a pointer to an empty struct survives.
POD_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "env: [], labels: {}, tolerations: [] dropped; securityContext: {} kept",
        _pod({"containers": [{"name": "c", "image": "x", "env": [], "securityContext": {}}], "tolerations": [],
              "securityContext": {}}, {"labels": {}}),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {}, "securityContext": {}}],
                  "securityContext": {}}, "status": {}},
    ),
    (
        "omitempty scalars dropped, pointers keep their zero",
        _pod({"hostNetwork": False, "nodeName": "", "automountServiceAccountToken": False,
              "terminationGracePeriodSeconds": 0}),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {}}],
                  "automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0}, "status": {}},
    ),
    (
        "unknown fields dropped, nulls are absent",
        _pod({"bogus": 1, "nodeName": None, "affinity": None}, {"weird": True}),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {}}]}, "status": {}},
    ),
    (
        "quantities canonical, times at second precision",
        _pod({"containers": [{"name": "c", "resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"},
                                                           "requests": {"cpu": 0.5}}}]},
             {"creationTimestamp": "2024-05-01T10:00:00.123456+02:00"}),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2024-05-01T08:00:00Z"},
         "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                             "requests": {"cpu": "500m"}}}]}, "status": {}},
    ),
    (
        "creationTimestamp null is omitted (omitzero)",
        _pod(meta={"creationTimestamp": None}),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {}}]}, "status": {}},
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_roundtrip(name: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    out = go_roundtrip(obj, POD)
    assert out == expected
    assert obj == before  # the input is not mutated


def test_non_omitempty_zero_values_are_emitted() -> None:
    out = go_roundtrip({"spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                              "containerStatuses": [{"name": "c"}]}}, POD)
    assert out["spec"] == {"containers": None}  # PodSpec.containers is not omitempty
    cond = out["status"]["conditions"][0]
    assert cond["lastProbeTime"] is None and cond["lastTransitionTime"] is None  # metav1.Time values
    cs = out["status"]["containerStatuses"][0]
    assert cs == {"name": "c", "state": {}, "lastState": {}, "ready": False, "restartCount": 0, "image": "",
                  "imageID": ""}
    assert out["metadata"] == {}


def test_value_types_emit_their_zero() -> None:
    env = {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}
    out = go_roundtrip(_pod({"containers": [{"name": "c", "env": [env]}]}), POD)
    assert out["spec"]["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"] == {
        "resource": "limits.cpu", "divisor": "0"}


def test_intorstring_and_empty_dir_size_limit() -> None:
    probe = {"httpGet": {"port": "http"}, "tcpSocket": {"port": 8080}}
    out = go_roundtrip(_pod({"containers": [{"name": "c", "livenessProbe": probe}],
                             "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1024Mi"}}]}), POD)
    lp = out["spec"]["containers"][0]["livenessProbe"]
    assert lp["httpGet"] == {"port": "http"} and lp["tcpSocket"] == {"port": 8080}
    assert out["spec"]["volumes"][0]["emptyDir"] == {"sizeLimit": "1Gi"}


def test_microtime_and_event() -> None:
    ev = builtin_go_type("Event")
    out = go_roundtrip({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}, "reason": "X",
                        "eventTime": "2024-01-01T00:00:00.5Z"}, ev)
    assert out["eventTime"] == "2024-01-01T00:00:00.500000Z"
    assert out["firstTimestamp"] is None and out["lastTimestamp"] is None
    assert out["source"] == {}
    assert out["reportingComponent"] == "" and out["reportingInstance"] == ""


@pytest.mark.parametrize(
    ("definition", "field", "omitempty", "pointer", "kind"),
    [
        ("io.k8s.api.core.v1.Pod", "metadata", True, False, "struct"),
        ("io.k8s.api.core.v1.Pod", "spec", True, False, "struct"),
        ("io.k8s.api.core.v1.Pod", "status", True, False, "struct"),
        ("io.k8s.api.core.v1.PodTemplateSpec", "metadata", True, False, "struct"),
        ("io.k8s.api.core.v1.PodTemplateSpec", "spec", True, False, "struct"),
        ("io.k8s.api.core.v1.Container", "resources", True, False, "struct"),
        ("io.k8s.api.core.v1.Container", "securityContext", True, True, "struct"),
        ("io.k8s.api.core.v1.Container", "name", False, False, "string"),
        ("io.k8s.api.core.v1.Container", "env", True, False, "slice"),
        ("io.k8s.api.core.v1.PodSpec", "containers", False, False, "slice"),
        ("io.k8s.api.core.v1.PodSpec", "affinity", True, True, "struct"),
        ("io.k8s.api.core.v1.PodSpec", "terminationGracePeriodSeconds", True, True, "int"),
        ("io.k8s.api.core.v1.PodSpec", "hostNetwork", True, False, "bool"),
        ("io.k8s.api.core.v1.PodSpec", "nodeSelector", True, False, "map"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp", True, False, "time"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "deletionTimestamp", True, True, "time"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "labels", True, False, "map"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", "uid", False, False, "string"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", "controller", True, True, "bool"),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "lastTransitionTime", False, False, "time"),
        ("io.k8s.api.core.v1.ResourceFieldSelector", "divisor", True, False, "quantity"),
        ("io.k8s.api.core.v1.EmptyDirVolumeSource", "sizeLimit", True, True, "quantity"),
        ("io.k8s.api.core.v1.HTTPGetAction", "port", False, False, "intorstring"),
        ("io.k8s.api.rbac.v1.RoleBinding", "roleRef", False, False, "struct"),
        ("io.k8s.api.core.v1.Event", "source", True, False, "struct"),
    ],
)
def test_builtin_field_table(definition: str, field: str, omitempty: bool, pointer: bool, kind: str) -> None:
    f = builtin_go_type(definition).field(field)
    assert f is not None
    assert (f.omitempty, f.pointer, f.type.kind) == (omitempty, pointer, kind)


def test_creation_timestamp_is_omitzero() -> None:
    f = builtin_go_type(openapi.OBJECT_META).field("creationTimestamp")
    assert f is not None and f.omitzero


def test_builtin_go_type_by_kind_and_version() -> None:
    assert builtin_go_type("Pod") is builtin_go_type("io.k8s.api.core.v1.Pod")
    assert builtin_go_type("Role", "rbac.authorization.k8s.io/v1").name == "Role"
    with pytest.raises(KeyError):
        builtin_go_type("NoSuchKind")


# --- custom kinds ---------------------------------------------------------------------------------

CR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "minRunners": {"type": "integer"},
                "maxRunners": {"type": "integer"},
                "image": {"type": "string"},
                "enabled": {"type": "boolean"},
                "items": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "size": {"type": "integer"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "selector": {"type": "object", "properties": {"app": {"type": "string"}}},
                "template": openapi.structural_from_definition("io.k8s.api.core.v1.PodTemplateSpec"),
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "since": {"type": "string", "format": "date-time"},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}, "ready": {"type": "integer"}}},
    },
}

CR = go_type_from_structural(
    CR_SCHEMA,
    overrides={
        "spec.minRunners": "ptr",
        "spec.template": (builtin_go_type("io.k8s.api.core.v1.PodTemplateSpec"), "struct"),
        "status.phase": "no-omit",
        "spec.items[].name": "no-omit",
    },
)

CR_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("empty object: value structs appear", {}, {"metadata": {}, "spec": {"template": {"metadata": {},
                                                                                     "spec": {"containers": None}}},
                                              "status": {"phase": ""}}),
    (
        "omitempty and pointers",
        {"spec": {"minRunners": 0, "maxRunners": 0, "image": "", "enabled": False, "items": [], "labels": {},
                  "selector": {}}},
        {"metadata": {}, "spec": {"minRunners": 0, "selector": {},
                                  "template": {"metadata": {}, "spec": {"containers": None}}},
         "status": {"phase": ""}},
    ),
    (
        "embedded pod template follows the built-in model",
        {"spec": {"template": {"spec": {"containers": [{"name": "runner", "env": []}]}}}},
        {"metadata": {}, "spec": {"template": {"metadata": {},
                                               "spec": {"containers": [{"name": "runner", "resources": {}}]}}},
         "status": {"phase": ""}},
    ),
    (
        "array element overrides and unknown fields",
        {"spec": {"items": [{"size": 1, "junk": 2}]}, "other": 1},
        {"metadata": {}, "spec": {"items": [{"name": "", "size": 1}],
                                  "template": {"metadata": {}, "spec": {"containers": None}}},
         "status": {"phase": ""}},
    ),
    (
        "preserve-unknown kept as is, int-or-string, time",
        {"spec": {"extra": {"a": [], "b": None}, "port": "80", "since": "2024-01-01T00:00:00.9Z"}},
        {"metadata": {}, "spec": {"extra": {"a": [], "b": None}, "port": "80", "since": "2024-01-01T00:00:00Z",
                                  "template": {"metadata": {}, "spec": {"containers": None}}},
         "status": {"phase": ""}},
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CR_CASES, ids=[c[0] for c in CR_CASES])
def test_custom_roundtrip(name: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    assert go_roundtrip(obj, CR) == expected


@pytest.mark.parametrize(
    ("path", "omitempty", "pointer", "kind"),
    [
        (("spec",), True, False, "struct"),
        (("status",), True, False, "struct"),
        (("metadata",), True, False, "struct"),
        (("spec", "minRunners"), True, True, "int"),
        (("spec", "maxRunners"), True, False, "int"),
        (("spec", "selector"), True, True, "struct"),
        (("spec", "template"), True, False, "struct"),
        (("spec", "extra"), True, False, "any"),
        (("spec", "port"), True, True, "intorstring"),
        (("spec", "since"), True, True, "time"),
        (("status", "phase"), False, False, "string"),
    ],
)
def test_structural_field_table(path: tuple[str, ...], omitempty: bool, pointer: bool, kind: str) -> None:
    t: GoType | None = CR
    f: GoField | None = None
    for p in path:
        assert t is not None
        f = t.field(p)
        assert f is not None
        t = f.type
    assert f is not None
    assert (f.omitempty, f.pointer, f.type.kind) == (omitempty, pointer, kind)


def test_override_errors() -> None:
    with pytest.raises(ValueError):
        go_type_from_structural(CR_SCHEMA, overrides={"spec.image": "bogus"})


# --- hand-built types and errors -----------------------------------------------------------------

T = struct("T", [
    GoField("s", False, False, STRING),
    GoField("n", True, False, INT),
    GoField("b", True, True, BOOL),
    GoField("xs", False, False, slice_of(STRING)),
    GoField("m", True, False, map_of(STRING)),
    GoField("a", True, False, ANY),
])


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({}, {"s": "", "xs": None}),
        ({"s": "x", "n": 0, "b": False, "xs": [], "m": {"k": None}, "a": {"z": []}},
         {"s": "x", "b": False, "xs": [], "m": {"k": ""}, "a": {"z": []}}),
        ({"n": 2.0, "xs": ["a", None]}, {"s": "", "n": 2, "xs": ["a", ""]}),
    ],
)
def test_hand_built_struct(obj: dict[str, Any], expected: dict[str, Any]) -> None:
    assert go_roundtrip(obj, T) == expected


@pytest.mark.parametrize(
    "obj",
    [{"s": 1}, {"n": "1"}, {"n": 1.5}, {"b": "true"}, {"xs": "a"}, {"m": []}, {"n": True}],
)
def test_type_mismatch_raises(obj: dict[str, Any]) -> None:
    with pytest.raises(GoDecodeError):
        go_roundtrip(obj, T)


def test_bad_quantity_and_time_raise() -> None:
    with pytest.raises(GoDecodeError):
        go_roundtrip(_pod({"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}), POD)
    with pytest.raises(GoDecodeError):
        go_roundtrip(_pod(meta={"creationTimestamp": "yesterday"}), POD)


def test_none_type_is_a_deep_copy() -> None:
    obj = {"a": [{"b": 1}]}
    out = go_roundtrip(obj, None)
    assert out == obj and out is not obj and out["a"][0] is not obj["a"][0]


@pytest.mark.parametrize(
    ("text", "micro", "expected"),
    [
        ("2024-01-01T00:00:00Z", False, "2024-01-01T00:00:00Z"),
        ("2024-01-01T01:00:00.999+01:00", False, "2024-01-01T00:00:00Z"),
        ("2024-01-01T00:00:00.5Z", True, "2024-01-01T00:00:00.500000Z"),
        ("0001-01-01T00:00:00Z", False, None),
    ],
)
def test_go_time(text: str, micro: bool, expected: str | None) -> None:
    assert go_time(text, micro) == expected


# --- the in-place round trip (the server's encoding of the bodies it owns) -----------------------

_INPLACE_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {}, "creationTimestamp": "2026-01-01T00:00:00.5Z",
                 "generation": 0, "finalizers": [], "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o",
                                                                         "uid": "u", "controller": False}]},
    "spec": {"containers": [{"name": "c", "image": "", "args": ["a"], "ports": [{"containerPort": 80}],
                             "resources": {"limits": {"cpu": "1000m"}, "requests": {}}, "securityContext": {},
                             "env": [{"name": "E", "value": "v", "valueFrom": None}], "unknown": 1}],
             "nodeSelector": {"k": "v"}, "activeDeadlineSeconds": 0, "hostNetwork": False, "securityContext": {},
             "volumes": [{"name": "v", "emptyDir": {}}, None], "overhead": {"memory": "1Mi"}, "priority": None},
    "status": {"phase": "", "startTime": None, "conditions": [{"type": "Ready", "lastTransitionTime": None}]},
}
_INPLACE_STAND_INS: tuple[Any, ...] = (None, "x", "", 1, 0, True, False, 1.0, [], {}, ["a"], [None], {"a": "b"},
                                       {"a": 1}, "2026-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z", "bad")


def _inplace_mutations(doc: Any) -> list[Any]:
    return one_value_mutations(doc, _INPLACE_STAND_INS)


def _outcome(f: Any, *args: Any, **kw: Any) -> tuple[str, Any]:
    try:
        out = f(*args, **kw)
    except GoDecodeError as e:
        return "error", str(e)
    return "ok", orjson.dumps(out)  # (bytes: key order counts)


@pytest.mark.parametrize("base", [False, True], ids=["alone", "with-a-base"])
def test_the_in_place_round_trip_is_the_round_trip(base: bool) -> None:
    """go_roundtrip_owned gives what go_roundtrip gives (keys in the same order, or the same error) for
    every one-value change of a Pod; with a base (the stored object a write replaces), the values the
    body shares with it are kept as they are, and the base is never changed."""
    for doc in [_INPLACE_POD, *_inplace_mutations(_INPLACE_POD)]:
        if not base:
            assert _outcome(go_roundtrip_owned, copy.deepcopy(doc), POD) == _outcome(go_roundtrip, doc, POD), doc
            continue
        stored = go_roundtrip(_INPLACE_POD, POD)
        frozen = orjson.dumps(stored)
        body = copy.deepcopy(doc)
        for k in ("spec", "status"):
            if body.get(k) == _INPLACE_POD[k]:
                body[k] = stored[k]  # (an unchanged part: the stored value itself, as the write path shares it)
        want = _outcome(go_roundtrip, body, POD)
        assert _outcome(go_roundtrip_owned, body, POD, base=stored) == want, doc
        assert orjson.dumps(stored) == frozen
