"""Expanding the YAML sources of the four ARC CRDs into their served form.

The YAML files next to this module are the source of truth. Where a node reads
``x-reconcilers-definition: <name>`` it is replaced by:

- a built-in definition (``io.k8s.api.core.v1.PodTemplateSpec``) in CRD
  structural form, with the embedded ObjectMeta that controller-gen writes
  under ``crd:generateEmbeddedObjectMeta=true`` (as ARC's Makefile sets), so
  template labels and annotations survive pruning;
- ``ResourceMeta``: ARC's ``{labels, annotations}`` pair of string maps;
- ``EphemeralRunnerSpec``: the runner spec with its inlined PodTemplateSpec.

The expansion reads kubernetes-validate's definitions, which is slow for a
server's start, so its output is generated into ``manifests.json`` (checked in,
as ARC checks in controller-gen's output) and :func:`reconcilers.crds.crd_manifests`
reads that. Regenerate it after editing a YAML file or upgrading kubernetes-validate::

    python -m reconcilers.crds --write

``python -m reconcilers.crds --check`` (and a test) fails when the file is stale.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from fakeapi.machinery import openapi

Schema = dict[str, Any]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"
PLACEHOLDER = "x-reconcilers-definition"
HERE = Path(__file__).parent
#: Source file names, in registration order.
MANIFEST_FILES = (
    "autoscalingrunnersets.yaml",
    "ephemeralrunnersets.yaml",
    "ephemeralrunners.yaml",
    "autoscalinglisteners.yaml",
)
#: The generated file (the expanded manifests), next to the sources.
GENERATED = HERE / "manifests.json"
GENERATED_NOTE = "Generated from the YAML files next to it by `python -m reconcilers.crds --write`; do not edit."

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


def expanded_manifests() -> list[Schema]:
    """The four CRD manifests expanded from their YAML sources (slow: reads kubernetes-validate's definitions)."""
    out = []
    for name in MANIFEST_FILES:
        with open(HERE / name, encoding="utf-8") as f:
            out.append(_expand(yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))))
    return out


def render(manifests: list[Schema]) -> str:
    """The text of the generated file holding ``manifests``.

    One key or value per line (line diffs stay readable) without indentation: a third of
    the size of an indented file, and quicker to read and parse.
    """
    doc = {
        "note": GENERATED_NOTE,
        "schemas": f"kubernetes-validate {openapi.schema_dir().name}",
        "sources": list(MANIFEST_FILES),
        "manifests": manifests,
    }
    return json.dumps(doc, indent=0, separators=(",", ":"), ensure_ascii=False) + "\n"


def generated_text() -> str:
    """What ``manifests.json`` must hold: the rendering of :func:`expanded_manifests`."""
    return render(expanded_manifests())
