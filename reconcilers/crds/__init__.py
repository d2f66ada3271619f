"""CustomResourceDefinition manifests of the four ARC kinds.

The YAML files next to this module are the sources; their expanded form (pod
templates and the other ``x-reconcilers-definition`` placeholders inlined, see
:mod:`reconcilers.crds.expand`) is generated into ``manifests.json``, which this
module reads: parsing it is much cheaper than expanding the sources. After
editing a YAML file (or upgrading kubernetes-validate) run::

    python -m reconcilers.crds --write

A test checks that the generated file is what the expansion produces.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from fakeapi.registry.apiextensions.crdsnapshot import CRDSnapshot

Schema = dict[str, Any]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"
GENERATED = Path(__file__).parent / "manifests.json"


@lru_cache(maxsize=1)
def _generated_bytes() -> bytes:
    """The generated file's content, read once per process."""
    return GENERATED.read_bytes()


def crd_manifests() -> list[dict[str, Any]]:
    """The four CRD manifests, expanded, in registration order (a fresh copy each call).

    Parsed with orjson (a fakeapi dependency): a third faster than ``json.loads`` on this file,
    and as fast as unpacking a marshal image of the parsed manifests.
    """
    manifests: list[dict[str, Any]] = orjson.loads(_generated_bytes())["manifests"]
    return manifests


@lru_cache(maxsize=1)
def crd_snapshots() -> tuple[CRDSnapshot, ...]:
    """The four CRDs as snapshots, made once per process: each server installs them from there
    (:meth:`fakeapi.server.apiserver.APIServer.install_crd`), the manifests parsed, and their creates
    computed, once."""
    return tuple(CRDSnapshot(m) for m in crd_manifests())


def object_schema(kind: str) -> Schema:
    """The ``openAPIV3Schema`` of one ARC kind (a fresh copy)."""
    for m in crd_manifests():
        if m["spec"]["names"]["kind"] == kind:
            schema: Schema = m["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            return schema
    raise KeyError(kind)
