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

import json
import marshal
from functools import lru_cache
from pathlib import Path
from typing import Any

Schema = dict[str, Any]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"
GENERATED = Path(__file__).parent / "manifests.json"


@lru_cache(maxsize=1)
def _generated_text() -> str:
    """The generated file's text, read once per process."""
    return GENERATED.read_text(encoding="utf-8")


#: The manifests as marshal data (version 2: nothing shared), made on the second call: loading it
#: takes less than half the time of parsing the JSON text (a process that builds many servers).
_packed: bytes | None = None
_parsed = 0


def crd_manifests() -> list[dict[str, Any]]:
    """The four CRD manifests, expanded, in registration order (a fresh copy each call)."""
    global _packed, _parsed
    if _packed is not None:
        out: list[dict[str, Any]] = marshal.loads(_packed)
        return out
    manifests: list[dict[str, Any]] = json.loads(_generated_text())["manifests"]
    _parsed += 1
    if _parsed > 1:
        _packed = marshal.dumps(manifests, 2)
    return manifests


def object_schema(kind: str) -> Schema:
    """The ``openAPIV3Schema`` of one ARC kind (a fresh copy)."""
    for m in crd_manifests():
        if m["spec"]["names"]["kind"] == kind:
            schema: Schema = m["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            return schema
    raise KeyError(kind)
