"""CompiledSchema: prepare (prune/null/default) and validation causes as kube-apiserver words them (§6.2, §8 29-30)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery import openapi
from fakeapi.machinery.errors import Cause
from fakeapi.schema.compiled import CompiledSchema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "items": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "ratio": {"type": "number"},
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "name": {"type": "string", "maxLength": 3, "minLength": 2},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
                "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "byName": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                },
                "req": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}},
                "count": {"type": "integer", "minimum": 1, "maximum": 10},
                "code": {"type": "string", "pattern": "^[a-z]+$"},
                "id": {"type": "string", "format": "uuid"},
                "ip": {"type": "string", "format": "ipv4"},
                "when": {"type": "string", "format": "date-time"},
                "fancy": {"type": "string", "format": "something-unknown"},
                "width": {"type": "integer", "format": "int32"},
                "maybe": {"type": "string", "nullable": True, "enum": ["x"]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}, "n": {"type": "integer"}}},
    },
}

CS = CompiledSchema(SCHEMA, structural=True)


def _c(reason: str, field: str, message: str) -> Cause:
    return Cause(reason, message, field)


TYPE = "FieldValueTypeInvalid"
CASES: list[tuple[str, dict[str, Any], list[Cause]]] = [
    ("valid", {"spec": {"replicas": 2, "mode": "a", "items": ["x"]}}, []),
    (
        "type error (§8 item 29)",
        {"spec": {"replicas": "x"}},
        [_c(TYPE, "spec.replicas", 'Invalid value: "string": spec.replicas in body must be of type integer: "string"')],
    ),
    (
        "enum NotSupported (§8 item 29)",
        {"spec": {"mode": "z"}},
        [_c("FieldValueNotSupported", "spec.mode", 'Unsupported value: "z": supported values: "a", "b"')],
    ),
    ("integer accepts an integral float", {"spec": {"replicas": 2.0}}, []),
    (
        "integer rejects a fraction",
        {"spec": {"replicas": 2.5}},
        [_c(TYPE, "spec.replicas", 'Invalid value: "number": spec.replicas in body must be of type integer: "number"')],
    ),
    (
        "integer rejects a bool",
        {"spec": {"replicas": True}},
        [_c(TYPE, "spec.replicas",
            'Invalid value: "boolean": spec.replicas in body must be of type integer: "boolean"')],
    ),
    ("number accepts an int", {"spec": {"ratio": 3}}, []),
    ("int-or-string int", {"spec": {"port": 80}}, []),
    ("int-or-string string", {"spec": {"port": "http"}}, []),
    (
        "int-or-string bool",
        {"spec": {"port": True}},
        [_c(TYPE, "spec.port", 'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"')],
    ),
    (
        "null array element fails",
        {"spec": {"items": ["a", None]}},
        [_c(TYPE, "spec.items[1]", 'Invalid value: "null": spec.items[1] in body must be of type string: "null"')],
    ),
    ("TooLong", {"spec": {"name": "abcd"}},
     [_c("FieldValueTooLong", "spec.name", "Too long: may not be more than 3 bytes")]),
    ("minLength", {"spec": {"name": "a"}},
     [_c("FieldValueInvalid", "spec.name", 'Invalid value: "a": spec.name in body should be at least 2 chars long')]),
    ("TooMany items", {"spec": {"tags": ["a", "b", "c"]}},
     [_c("FieldValueTooMany", "spec.tags", "Too many: 3: must have at most 2 items")]),
    ("TooMany properties", {"spec": {"labels": {"a": "1", "b": "2"}}},
     [_c("FieldValueTooMany", "spec.labels", "Too many: 2: must have at most 1 item")]),
    ("required", {"spec": {"req": {}}}, [_c("FieldValueRequired", "spec.req.x", "Required value")]),
    ("set duplicate", {"spec": {"set": ["a", "b", "a"]}},
     [_c("FieldValueDuplicate", "spec.set[2]", 'Duplicate value: "a"')]),
    ("map duplicate", {"spec": {"byName": [{"name": "a"}, {"name": "a"}]}},
     [_c("FieldValueDuplicate", "spec.byName[1]", 'Duplicate value: {"name":"a"}')]),
    ("minimum", {"spec": {"count": 0}},
     [_c("FieldValueInvalid", "spec.count", "Invalid value: 0: spec.count in body should be greater than or equal to 1")]),
    ("maximum", {"spec": {"count": 11}},
     [_c("FieldValueInvalid", "spec.count", "Invalid value: 11: spec.count in body should be less than or equal to 10")]),
    ("pattern", {"spec": {"code": "A1"}},
     [_c("FieldValueInvalid", "spec.code", "Invalid value: \"A1\": spec.code in body should match '^[a-z]+$'")]),
    ("uuid format", {"spec": {"id": "abc"}},
     [_c(TYPE, "spec.id", 'Invalid value: "abc": spec.id in body must be of type uuid: "abc"')]),
    ("uuid ok", {"spec": {"id": "123e4567-e89b-12d3-a456-426614174000"}}, []),
    ("ipv4 format", {"spec": {"ip": "300.1.1.1"}},
     [_c(TYPE, "spec.ip", 'Invalid value: "300.1.1.1": spec.ip in body must be of type ipv4: "300.1.1.1"')]),
    ("date-time ok", {"spec": {"when": "2024-01-01T00:00:00Z"}}, []),
    ("date-time bad", {"spec": {"when": "yesterday"}},
     [_c(TYPE, "spec.when", 'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"')]),
    ("unknown formats are dropped", {"spec": {"fancy": "anything"}}, []),
    ("int32 is not range-checked", {"spec": {"width": 2**40}}, []),
    ("nullable null is fine, enum too", {"spec": {"maybe": None}}, []),
    ("preserve-unknown content is free", {"spec": {"extra": {"a": [1, {"b": None}]}}}, []),
    ("metadata is skipped", {"metadata": {"name": 5}, "spec": {}}, []),
    (
        "several causes, sorted by field",
        {"spec": {"replicas": "x", "mode": "z"}},
        [
            _c("FieldValueNotSupported", "spec.mode", 'Unsupported value: "z": supported values: "a", "b"'),
            _c(TYPE, "spec.replicas", 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "causes"), CASES, ids=[c[0] for c in CASES])
def test_validate(name: str, obj: dict[str, Any], causes: list[Cause]) -> None:
    assert CS.validate(obj) == causes


def test_validate_metadata_when_asked() -> None:
    schema = {"type": "object", "properties": {"metadata": {"type": "object"}}}
    cs = CompiledSchema(schema, structural=True)
    assert cs.validate({"metadata": "x"}) == []
    assert [c.field for c in cs.validate({"metadata": "x"}, skip_metadata=False)] == ["metadata"]


PREPARE: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    ("prune with warning (§8 item 29)", {"spec": {"unknown": 1, "replicas": 2}}, {"spec": {"replicas": 2}},
     ['unknown field "spec.unknown"']),
    ("default applied (§8 item 30)", {"spec": {}}, {"spec": {"replicas": 1}}, []),
    ("items: null dropped (§8 item 30)", {"spec": {"items": None}}, {"spec": {"replicas": 1}}, []),
    ("items: [] and extra: {} kept (§8 item 30)", {"spec": {"items": [], "extra": {}}},
     {"spec": {"items": [], "extra": {}, "replicas": 1}}, []),
    ("replicas: null re-defaulted", {"spec": {"replicas": None}}, {"spec": {"replicas": 1}}, []),
]


@pytest.mark.parametrize(("name", "obj", "expected", "warnings"), PREPARE, ids=[c[0] for c in PREPARE])
def test_prepare(name: str, obj: dict[str, Any], expected: dict[str, Any], warnings: list[str]) -> None:
    assert CS.prepare(obj) == warnings
    assert obj == expected


def test_validate_status() -> None:
    assert CS.validate_status({"spec": {"replicas": "bad"}, "status": {"ready": True}}) == []
    assert CS.validate_status({"spec": {}}) == []
    assert CS.validate_status({"status": {"ready": "yes"}}) == [
        _c(TYPE, "status.ready", 'Invalid value: "string": status.ready in body must be of type boolean: "string"')
    ]


def test_default_only() -> None:
    obj: dict[str, Any] = {"spec": {"replicas": None}}
    CS.default(obj)
    assert obj == {"spec": {"replicas": 1}}


POD = CompiledSchema(openapi.builtin_schema("Pod", "v1"), structural=False)

BUILTIN: list[tuple[str, dict[str, Any], list[Cause]]] = [
    ("valid pod", {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": 1}}}]}}, []),
    ("required containers", {"spec": {}}, [_c("FieldValueRequired", "spec.containers", "Required value")]),
    ("required container name", {"spec": {"containers": [{"image": "x"}]}},
     [_c("FieldValueRequired", "spec.containers[0].name", "Required value")]),
    ("wrong type", {"spec": {"containers": [], "hostNetwork": "yes"}},
     [_c(TYPE, "spec.hostNetwork",
         'Invalid value: "string": spec.hostNetwork in body must be of type boolean: "string"')]),
    ("null optional fields are fine", {"spec": {"containers": [], "nodeName": None}}, []),
    ("apiVersion enum", {"apiVersion": "v2", "spec": {"containers": []}},
     [_c("FieldValueNotSupported", "apiVersion", 'Unsupported value: "v2": supported values: "v1"')]),
]


@pytest.mark.parametrize(("name", "obj", "causes"), BUILTIN, ids=[c[0] for c in BUILTIN])
def test_builtin_validate(name: str, obj: dict[str, Any], causes: list[Cause]) -> None:
    assert POD.validate(obj) == causes


def test_builtin_prepare_prunes_with_warnings() -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "foo": 1},
                           "spec": {"containers": [{"name": "c", "bogus": True}], "env": []}}
    assert POD.prepare(obj) == ['unknown field "metadata.foo"', 'unknown field "spec.containers[0].bogus"',
                                'unknown field "spec.env"']
    assert obj == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}


def test_builtin_status_validation() -> None:
    assert POD.validate_status({"status": {"phase": "Running"}}) == []
    assert POD.validate_status({"status": {"phase": 3}}) == [
        _c(TYPE, "status.phase", 'Invalid value: "integer": status.phase in body must be of type string: "integer"')
    ]


@pytest.mark.parametrize(
    ("kind", "api_version", "obj"),
    [
        ("Role", "rbac.authorization.k8s.io/v1", {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        ("RoleBinding", "rbac.authorization.k8s.io/v1",
         {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
          "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
        ("Secret", "v1", {"type": "Opaque", "data": {"a": "YQ=="}}),
        ("CustomResourceDefinition", "apiextensions.k8s.io/v1",
         {"spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "scope": "Namespaced",
                   "versions": [{"name": "v1", "served": True, "storage": True,
                                 "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    ],
)
def test_other_builtins_accept_valid_objects(kind: str, api_version: str, obj: dict[str, Any]) -> None:
    cs = CompiledSchema(openapi.builtin_schema(kind, api_version), structural=False)
    assert cs.prepare(obj) == []
    assert cs.validate(obj) == []
