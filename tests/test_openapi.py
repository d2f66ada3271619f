"""Built-in schemas from kubernetes-validate and the schema-node helpers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakeapi.machinery import openapi


@pytest.mark.parametrize(
    ("kind", "api_version", "props"),
    [
        ("Pod", "v1", {"apiVersion", "kind", "metadata", "spec", "status"}),
        ("Role", "rbac.authorization.k8s.io/v1", {"apiVersion", "kind", "metadata", "rules"}),
        ("CustomResourceDefinition", "apiextensions.k8s.io/v1", {"apiVersion", "kind", "metadata", "spec", "status"}),
        ("Event", "v1", {"involvedObject", "reason", "source"}),
        ("Event", "events.k8s.io/v1", {"regarding", "note"}),
        ("Secret", "v1", {"data", "stringData", "type"}),
    ],
)
def test_builtin_schema(kind: str, api_version: str, props: set[str]) -> None:
    root = openapi.builtin_schema(kind, api_version)
    assert props <= set(root["properties"])
    assert root["properties"]["apiVersion"]["enum"] == [api_version]


def test_builtin_schema_unknown_kind() -> None:
    with pytest.raises(KeyError):
        openapi.builtin_schema("Nope", "v1")


def test_definitions_and_latest_dir() -> None:
    assert "io.k8s.api.core.v1.PodSpec" in openapi.definitions()
    assert openapi.schema_dir().name.endswith("-local")
    # a fixed Kubernetes version: a newer kubernetes-validate (it ships several) changes nothing
    assert openapi.schema_dir().name == openapi.KUBERNETES_SCHEMAS
    assert openapi.definition_name("Pod", "v1") == "io.k8s.api.core.v1.Pod"


def test_definitions_are_found_without_indexing_the_file() -> None:
    with open(openapi.schema_dir() / "_definitions.json", encoding="utf-8") as f:
        every = json.load(f)["$defs"]
    data = (openapi.schema_dir() / "_definitions.json").read_bytes()
    defs = openapi._Definitions(data, len(openapi._DEFS_PREFIX) - 1)
    for name in every:  # found by bisection over the sorted keys
        assert defs._bisect(name) >= 0, name
    assert defs._offsets is None
    assert all(defs[name] == every[name] for name in every)
    assert defs["io.k8s.api.core.v1.PodSpec"] is defs["io.k8s.api.core.v1.PodSpec"]
    for missing in ("", "io.k8s.api.core.v1.Pod ", "io.k8s.api.core.v1.Po", "zzz", "Pod"):
        assert defs._bisect(missing) == -1
        assert missing not in defs
        with pytest.raises(KeyError):
            defs[missing]
    assert list(defs) == list(every) and len(defs) == len(every)


def _layout(defs: dict[str, Any]) -> bytes:
    """A ``_definitions.json`` with the keys in the given order (kubernetes-validate's layout otherwise)."""
    body = ",\n".join(f"    {json.dumps(k)}: " + json.dumps(v, indent=2).replace("\n", "\n    ") for k, v in defs.items())
    return ('{\n  "$defs": {\n' + body + '\n  },\n  "$id": "x"\n}').encode()


def test_definitions_in_any_key_order() -> None:
    # keys out of order: what the bisection misses, the full index finds
    every = {f"d{i:02d}": {"type": "object", "properties": {"n": {"type": "integer", "default": i}}} for i in range(40)}
    shuffled = dict(sorted(every.items(), key=lambda kv: (int(kv[0][1:]) * 7) % 40))
    for order in (every, shuffled):
        data = _layout(order)
        assert json.loads(data)["$defs"] == every
        defs = openapi._Definitions(data, len(openapi._DEFS_PREFIX) - 1)
        assert all(defs[name] == every[name] for name in reversed(list(every)))
        assert "d40" not in defs and set(defs) == set(every)


def _pod_node(*path: str) -> dict[str, Any] | None:
    node: dict[str, Any] | None = openapi.builtin_schema("Pod", "v1")
    for p in path:
        node = openapi.items(node) if p == "[]" else openapi.child(node, p)
    return node


@pytest.mark.parametrize(
    ("path", "strategy", "merge_key", "map_keys", "list_type"),
    [
        (("spec", "containers"), "merge", "name", ["name"], "map"),
        (("spec", "containers", "[]", "env"), "merge", "name", ["name"], "map"),
        (("spec", "containers", "[]", "ports"), "merge", "containerPort", ["containerPort", "protocol"], "map"),
        (("spec", "containers", "[]", "args"), "", "", [], "atomic"),
        (("metadata", "finalizers"), "merge", "", [], "set"),
        (("metadata", "ownerReferences"), "merge", "uid", ["uid"], "map"),
        (("spec", "tolerations"), "", "", [], "atomic"),
    ],
)
def test_list_helpers(path: tuple[str, ...], strategy: str, merge_key: str, map_keys: list[str], list_type: str) -> None:
    node = _pod_node(*path)
    assert node is not None
    assert openapi.patch_strategy(node) == strategy
    assert openapi.patch_merge_key(node) == merge_key
    assert openapi.list_map_keys(node) == map_keys
    assert openapi.list_type(node) == list_type


def test_child_follows_refs_and_maps() -> None:
    limits = _pod_node("spec", "containers", "[]", "resources", "limits")
    assert limits is not None
    cpu = openapi.child(limits, "cpu")  # additionalProperties
    assert cpu is not None and "oneOf" in cpu
    assert _pod_node("spec", "nope") is None
    assert openapi.child(None, "x") is None
    assert openapi.items(None) is None


def test_resolve_keeps_sibling_extensions() -> None:
    # PodSpec.affinity etc. are plain refs; a ref with a sibling keeps the sibling.
    node = {"$ref": "#/$defs/io.k8s.api.core.v1.PodOS", "x-kubernetes-map-type": "atomic", "description": "x"}
    r = openapi.resolve(node)
    assert r["x-kubernetes-map-type"] == "atomic"
    assert "name" in r["properties"]
    assert openapi.resolve(node) is r  # cached


def test_helpers_on_inline_structural_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            }
        },
    }
    spec = openapi.child(schema, "spec")
    items = openapi.child(spec, "items")
    assert openapi.list_map_keys(items) == ["name"]
    assert openapi.list_type(items) == "map"
    assert openapi.child(openapi.items(items), "name") == {"type": "string"}
    assert openapi.child(openapi.child(spec, "labels"), "anything") == {"type": "string"}


def test_structural_from_definition_pod_template() -> None:
    s = openapi.structural_from_definition("io.k8s.api.core.v1.PodTemplateSpec")
    text = json.dumps(s)
    assert "$ref" not in text
    assert '"null"' not in text
    assert "description" not in text
    assert s["type"] == "object"
    assert s["properties"]["metadata"] == {"type": "object"}
    spec = s["properties"]["spec"]
    containers = spec["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    c = containers["items"]
    assert "name" in c["required"]
    cpu = c["properties"]["resources"]["properties"]["limits"]["additionalProperties"]
    assert cpu["x-kubernetes-int-or-string"] is True
    assert cpu["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    port = c["properties"]["livenessProbe"]["properties"]["httpGet"]["properties"]["port"]
    assert port == {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    proto = c["properties"]["ports"]["items"]["properties"]["protocol"]
    assert proto == {"type": "string", "default": "TCP"}
    assert spec["properties"]["terminationGracePeriodSeconds"] == {"type": "integer", "format": "int64"}
    # a fresh copy each time
    s["properties"]["spec"] = {}
    assert openapi.structural_from_definition("io.k8s.api.core.v1.PodTemplateSpec")["properties"]["spec"] != {}


def test_structural_from_definition_guards_recursion() -> None:
    s = openapi.structural_from_definition("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")
    inner = s["properties"]["properties"]["additionalProperties"]
    assert inner == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_types_of() -> None:
    assert openapi.types_of({"type": ["string", "null"]}) == ("string",)
    assert openapi.types_of({"type": "integer"}) == ("integer",)
    assert openapi.types_of({}) == ()
