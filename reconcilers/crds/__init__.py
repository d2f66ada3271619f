"""CustomResourceDefinition manifests of the four ARC kinds.

The manifests are YAML data next to this module. Where a node reads
``x-reconcilers-definition: <name>`` it is replaced, at load time, by:

- a built-in definition (``io.k8s.api.core.v1.PodTemplateSpec``) in CRD
  structural form, with the embedded ObjectMeta that controller-gen writes
  under ``crd:generateEmbeddedObjectMeta=true`` (as ARC's Makefile sets), so
  template labels and annotations survive pruning;
- ``ResourceMeta``: ARC's ``{labels, annotations}`` pair of string maps;
- ``EphemeralRunnerSpec``: the runner spec with its inlined PodTemplateSpec.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from fakeapi import openapi
from fakeapi.jsonutil import fast_copy

Schema = dict[str, Any]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"
PLACEHOLDER = "x-reconcilers-definition"
#: File names, in registration order.
MANIFEST_FILES = (
    "autoscalingrunnersets.yaml",
    "ephemeralrunnersets.yaml",
    "ephemeralrunners.yaml",
    "autoscalinglisteners.yaml",
)

_STRING_MAP: Schema = {"type": "object", "additionalProperties": {"type": "string"}}


def embedded_object_meta() -> Schema:
    """The ObjectMeta schema controller-gen embeds with ``generateEmbeddedObjectMeta=true``."""
    return {
        "type": "object",
        "properties": {
            "annotations": copy.deepcopy(_STRING_MAP),
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "labels": copy.deepcopy(_STRING_MAP),
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
    }


def resource_meta_schema() -> Schema:
    """ARC's ResourceMeta: ``labels`` and ``annotations`` string maps."""
    return {
        "type": "object",
        "properties": {"labels": copy.deepcopy(_STRING_MAP), "annotations": copy.deepcopy(_STRING_MAP)},
    }


def pod_template_schema() -> Schema:
    """PodTemplateSpec in CRD structural form, with the embedded ObjectMeta."""
    s = openapi.structural_from_definition(POD_TEMPLATE_SPEC)
    s["properties"]["metadata"] = embedded_object_meta()
    return s


def ephemeral_runner_spec_schema() -> Schema:
    """EphemeralRunnerSpec: config URL, secret, scale set id, secret metadata, inlined PodTemplateSpec."""
    template = pod_template_schema()
    return {
        "type": "object",
        "properties": {
            "githubConfigUrl": {"type": "string"},
            "githubConfigSecret": {"type": "string"},
            "runnerScaleSetId": {"type": "integer"},
            "ephemeralRunnerConfigSecretMetadata": resource_meta_schema(),
            "metadata": template["properties"]["metadata"],
            "spec": template["properties"]["spec"],
        },
    }


def _definition(name: str) -> Schema:
    if name == "ResourceMeta":
        return resource_meta_schema()
    if name == "EphemeralRunnerSpec":
        return ephemeral_runner_spec_schema()
    if name == POD_TEMPLATE_SPEC:
        return pod_template_schema()
    raise KeyError(f"unknown schema placeholder {name!r}")


def _expand(node: Any) -> Any:
    if isinstance(node, dict):
        if PLACEHOLDER in node:
            out = _definition(str(node[PLACEHOLDER]))
            out.update({k: _expand(v) for k, v in node.items() if k != PLACEHOLDER})
            return out
        return {k: _expand(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_expand(v) for v in node]
    return node


@lru_cache(maxsize=1)
def _manifests() -> tuple[Schema, ...]:
    """The expanded manifests, built once per process (never handed out: callers get copies)."""
    here = Path(__file__).parent
    out = []
    for name in MANIFEST_FILES:
        with open(here / name, encoding="utf-8") as f:
            out.append(_expand(yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))))
    return tuple(out)


def crd_manifests() -> list[dict[str, Any]]:
    """The four CRD manifests, expanded (a fresh copy each call)."""
    return [fast_copy(m) for m in _manifests()]


def object_schema(kind: str) -> Schema:
    """The ``openAPIV3Schema`` of one ARC kind (a fresh copy)."""
    for m in crd_manifests():
        if m["spec"]["names"]["kind"] == kind:
            schema: Schema = m["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            return schema
    raise KeyError(kind)
