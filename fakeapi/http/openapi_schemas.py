"""The schemas of the OpenAPI documents: what ``kubectl explain`` reads.

Built-in kinds: the definitions fakeapi validates with (kubernetes-validate's
``_definitions.json``, from the upstream OpenAPI), converted back to OpenAPI
form: ``type: [T, "null"]`` becomes ``type: T`` and ``#/$defs/<name>``
references become ``#/components/schemas/<name>`` (v3) or
``#/definitions/<name>`` (v2). Each document carries the definitions its kinds
reach. Custom kinds: the CRD version's ``openAPIV3Schema`` named as
kube-apiserver names it (the group reversed, the version, the kind:
``com.example.v1.Widget``), with ``x-kubernetes-group-version-kind`` and
``metadata`` referring to ObjectMeta, as the CRD OpenAPI builder publishes it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from fakeapi.machinery.openapi import definition_name, definitions
from fakeapi.registry.kinds import Kind

Obj = dict[str, Any]
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _convert(node: Any, prefix: str, refs: set[str]) -> Any:
    if isinstance(node, list):
        return [_convert(v, prefix, refs) for v in node]
    if not isinstance(node, dict):
        return node
    out: Obj = {}
    for k, v in node.items():
        if k == "$ref" and isinstance(v, str):
            name = v.rpartition("/")[2]
            refs.add(name)
            out[k] = prefix + name
        elif k == "type" and isinstance(v, list):
            kept = [t for t in v if t != "null"]
            if len(kept) == 1:
                out[k] = kept[0]
            elif kept:
                out[k] = kept
        else:
            out[k] = _convert(v, prefix, refs)
    return out


@lru_cache(maxsize=4096)
def _definition(name: str, prefix: str) -> tuple[str, frozenset[str]]:
    """One definition in OpenAPI form (as JSON text: callers get their own copy) and the names it refers to."""
    refs: set[str] = set()
    converted = _convert(definitions()[name], prefix, refs)
    props = converted.get("properties")
    if converted.get("x-kubernetes-group-version-kind") and isinstance(props, dict):
        for key in ("apiVersion", "kind"):  # (kubernetes-validate pins them with an enum; upstream does not)
            if isinstance(props.get(key), dict):
                props[key].pop("enum", None)
    return json.dumps(converted), frozenset(refs)


def closure(names: list[str], prefix: str) -> Obj:
    """The definitions ``names`` reach (themselves included), converted."""
    out: Obj = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        try:
            text, refs = _definition(name, prefix)
        except KeyError:
            continue
        out[name] = json.loads(text)
        todo.extend(r for r in refs if r not in out)
    return dict(sorted(out.items()))


def crd_definition_name(kind: Kind) -> str:
    """``com.example.v1.Widget``: how kube-apiserver names a custom kind's schema."""
    return ".".join(reversed(kind.group.split("."))) + f".{kind.version}.{kind.kind}"


def crd_schema(kind: Kind, prefix: str) -> Obj:
    """A custom kind's published schema (a copy)."""
    schema = json.loads(json.dumps(kind.schema or {"type": "object"}))
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": (
        "APIVersion defines the versioned schema of this representation of an object.")}
    props["kind"] = {"type": "string", "description": (
        "Kind is a string value representing the REST resource this object represents.")}
    props["metadata"] = {"$ref": prefix + OBJECT_META, "description": "Standard object's metadata."}
    schema.setdefault("type", "object")
    schema["x-kubernetes-group-version-kind"] = [{"group": kind.group, "kind": kind.kind, "version": kind.version}]
    return schema


def schemas_for(kinds: list[Kind], prefix: str) -> Obj:
    """The schemas of a document serving ``kinds``: every definition they reach, by name."""
    builtin: list[str] = []
    custom: Obj = {}
    for k in kinds:
        if k.builtin:
            name = definition_name(k.kind, k.api_version)
            if name is not None:
                builtin.append(name)
                list_name = definition_name(k.list_kind, k.api_version)
                if list_name is not None:
                    builtin.append(list_name)
        else:
            custom[crd_definition_name(k)] = crd_schema(k, prefix)
    if custom:
        builtin.append(OBJECT_META)
    out = closure(builtin, prefix)
    out.update(custom)
    return dict(sorted(out.items()))
