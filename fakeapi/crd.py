"""CustomResourceDefinition manifests turned into served kinds.

A CRD (apiextensions.k8s.io/v1) names a group, a scope, the kind's names and
one or more versions; each served version becomes a :class:`Kind` with its
structural schema, status subresource and selectable fields.
"""

from __future__ import annotations

from typing import Any

from .errors import FIELD_VALUE_INVALID, FIELD_VALUE_REQUIRED, Cause
from .kinds import Kind

_CACHE: dict[str, Any] = {}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_crd(crd: dict[str, Any]) -> list[Cause]:
    """The checks kube-apiserver makes that a fixture author is likely to trip on."""
    causes: list[Cause] = []
    spec = _mapping(crd.get("spec"))
    group = spec.get("group") or ""
    names = _mapping(spec.get("names"))
    if not group:
        causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", "spec.group"))
    for key in ("plural", "kind"):
        if not names.get(key):
            causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", f"spec.names.{key}"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(Cause("FieldValueNotSupported",
                            f'Unsupported value: "{spec.get("scope", "")}": supported values: "Cluster", "Namespaced"',
                            "spec.scope"))
    versions = spec.get("versions") or []
    if not versions:
        causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", "spec.versions"))
    elif sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        causes.append(Cause(FIELD_VALUE_INVALID, "Invalid value: " + repr(versions and "versions")
                            + ": must have exactly one version marked as storage version", "spec.versions"))
    name = _mapping(crd.get("metadata")).get("name", "")
    if names.get("plural") and group and name != f"{names['plural']}.{group}":
        causes.append(Cause(FIELD_VALUE_INVALID,
                            f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group', "metadata.name"))
    return causes


def kinds_from_crd(crd: dict[str, Any]) -> list[Kind]:
    """One Kind per served version of the CRD (storage version first)."""
    from .schema import CompiledSchema

    spec = crd["spec"]
    names = spec["names"]
    out: list[Kind] = []
    versions = sorted(spec.get("versions") or [], key=lambda v: not v.get("storage"))
    for v in versions:
        if not v.get("served", True):
            continue
        schema = ((v.get("schema") or {}).get("openAPIV3Schema")) or {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}
        subresources = v.get("subresources") or spec.get("subresources") or {}
        selectable = tuple(
            str(f.get("jsonPath", "")).lstrip(".") for f in (v.get("selectableFields") or []) if f.get("jsonPath")
        )
        out.append(
            Kind(
                group=spec["group"],
                version=v["name"],
                kind=names["kind"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                list_kind=names.get("listKind") or names["kind"] + "List",
                short_names=tuple(names.get("shortNames") or ()),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                status_subresource="status" in subresources,
                schema=schema,
                compiled=CompiledSchema(schema, structural=True),
                selectable_fields=selectable,
                crd_name=crd["metadata"]["name"],
            )
        )
    return out
