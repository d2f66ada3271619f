"""The built-in kinds every server serves, with their strategy settings.

Schemas come from the kubernetes-validate package; the Go type models are
derived from them (fakeapi.gomodel). What differs per kind (scope, status
subresource, unconditional updates, generation tracking, graceful deletion,
selectable fields, name rule) is listed here, from the kinds' strategies in
kubernetes/pkg/registry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from .errors import FIELD_VALUE_DUPLICATE, Cause
from .kinds import Kind
from .metavalidation import _dns1123_label, forbidden, invalid, is_dns1123_label, required


@dataclass(frozen=True)
class BuiltinSpec:
    """How to build one built-in Kind."""

    group: str
    version: str
    kind: str
    plural: str
    definition: str
    namespaced: bool = True
    status: bool = False
    initial_generation: int = 0
    return_deleted_object: bool = False
    name_rule: str = "subdomain"
    fields: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()


BUILTINS: tuple[BuiltinSpec, ...] = (
    BuiltinSpec("", "v1", "Namespace", "namespaces", "io.k8s.api.core.v1.Namespace", namespaced=False,
                status=True, name_rule="label", fields=("status.phase",), short_names=("ns",)),
    BuiltinSpec("", "v1", "Pod", "pods", "io.k8s.api.core.v1.Pod", status=True, initial_generation=1,
                return_deleted_object=True,
                fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
                short_names=("po",)),
    BuiltinSpec("", "v1", "Secret", "secrets", "io.k8s.api.core.v1.Secret", fields=("type",)),
    BuiltinSpec("", "v1", "ConfigMap", "configmaps", "io.k8s.api.core.v1.ConfigMap", short_names=("cm",)),
    BuiltinSpec("", "v1", "ServiceAccount", "serviceaccounts", "io.k8s.api.core.v1.ServiceAccount",
                return_deleted_object=True, short_names=("sa",)),
    BuiltinSpec("", "v1", "Event", "events", "io.k8s.api.core.v1.Event",
                fields=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
                short_names=("ev",)),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "Role", "roles", "io.k8s.api.rbac.v1.Role"),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "io.k8s.api.rbac.v1.RoleBinding"),
    BuiltinSpec("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
                namespaced=False, status=True, initial_generation=1, short_names=("crd", "crds")),
)


@cache
def _compiled(spec: BuiltinSpec) -> tuple[object, object, object]:
    from .gomodel import builtin_go_type
    from .openapi import builtin_schema
    from .schema import CompiledSchema

    api_version = f"{spec.group}/{spec.version}" if spec.group else spec.version
    schema = builtin_schema(spec.kind, api_version)
    return schema, CompiledSchema(schema, structural=False), builtin_go_type(spec.definition)


def builtin_kinds() -> list[Kind]:
    """Fresh Kind records for every built-in kind.

    A kind's schema, compiled schema and Go type are computed when first used (``kind.compiled``
    and the others read as plain attributes), once per process: a server that never sees a
    Secret never loads its schema.
    """
    out = []
    for spec in BUILTINS:
        out.append(
            Kind(
                group=spec.group,
                version=spec.version,
                kind=spec.kind,
                plural=spec.plural,
                namespaced=spec.namespaced,
                status_subresource=spec.status,
                short_names=spec.short_names,
                builtin=True,
                loader=partial(_compiled, spec),
                selectable_fields=spec.fields,
                allow_unconditional_update=True,
                initial_generation=spec.initial_generation,
                return_deleted_object=spec.return_deleted_object,
                name_rule=spec.name_rule,
                # decoded into Go structs: every field has one JSON type (a CRD's schemas are free-form)
                extra={"typed": spec.kind != "CustomResourceDefinition"},
            )
        )
    return out


# ------------------------------------------------------------------ Go-side validation
#
# What the built-in kinds' ``Validate`` functions check beyond their OpenAPI schemas, for
# the mistakes a controller is likely to make: container and volume names (DNS-1123
# labels, unique), container images, ConfigMap and Secret keys.

_CONFIG_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def validate_builtin(kind: Kind, obj: dict[str, Any]) -> list[Cause]:
    """Field errors of a built-in object that its schema cannot express (empty for other kinds)."""
    if not kind.builtin or kind.group:
        return []
    if kind.kind == "Pod":
        spec = obj.get("spec")
        return _pod_spec_causes(spec, "spec") if isinstance(spec, dict) else []
    if kind.kind in ("ConfigMap", "Secret"):
        return _config_key_causes(obj)
    return []


def validate_builtin_status_update(kind: Kind, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """Field errors of a built-in's status write that its schema cannot express (empty for other kinds).

    Pods (``ValidatePodStatusUpdate``): a container that terminated may not go back to a
    non-terminated state unless the pod's restart policy lets it restart
    (``ValidateContainerStateTransition``; a restartable init container, a sidecar, may always;
    ephemeral containers never). The policy and the init containers are the stored pod's.
    """
    if kind.kind != "Pod" or not kind.builtin or kind.group:
        return []
    new_status, old_status = obj.get("status"), old.get("status")
    if not isinstance(new_status, dict) or not isinstance(old_status, dict) or new_status is old_status:
        return []
    spec = old.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    policy = spec.get("restartPolicy") or "Always"
    sidecars = {c.get("name") for c in spec.get("initContainers") or ()
                if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
    causes: list[Cause] = []
    for field, field_policy, skip in (("containerStatuses", policy, frozenset()),
                                      ("initContainerStatuses", policy, sidecars),
                                      ("ephemeralContainerStatuses", "Never", frozenset())):
        if new_status.get(field) is old_status.get(field):
            continue
        causes += _state_transition_causes(new_status.get(field), old_status.get(field), f"status.{field}",
                                           field_policy, skip)
    return causes


def _state_transition_causes(new: Any, old: Any, path: str, policy: str, skip: Any) -> list[Cause]:
    """``ValidateContainerStateTransition``: the old statuses' indexes name the fields."""
    if policy == "Always" or not isinstance(new, list) or not isinstance(old, list):
        return []
    causes: list[Cause] = []
    for i, was in enumerate(old):
        terminated = _terminated(was)
        if terminated is None or was.get("name") in skip:
            continue
        if terminated.get("exitCode") not in (0, None) and policy == "OnFailure":
            continue  # failed, and allowed to restart
        for now in new:
            if isinstance(now, dict) and now.get("name") == was.get("name") and _terminated(now) is None:
                causes.append(forbidden(f"{path}[{i}].state", "may not be transitioned to non-terminated state"))
    return causes


def _terminated(status: Any) -> dict[str, Any] | None:
    state = status.get("state") if isinstance(status, dict) else None
    term = state.get("terminated") if isinstance(state, dict) else None
    return term if isinstance(term, dict) else None


def _pod_spec_causes(spec: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    if spec.get("containers") == []:  # absent is the schema's Required value already
        causes.append(required(f"{path}.containers"))
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            if not isinstance(c, dict):
                continue
            name = c.get("name")
            if not name:
                causes.append(required(f"{path}.{group}[{i}].name"))
            elif isinstance(name, str):
                errs = _label_errors(name)
                if errs:
                    causes.extend(invalid(f"{path}.{group}[{i}].name", name, msg) for msg in errs)
                if name in seen:
                    causes.append(Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {json.dumps(name)}",
                                        f"{path}.{group}[{i}].name"))
                seen.add(name)
            if not c.get("image") and group == "containers":
                causes.append(required(f"{path}.{group}[{i}].image"))
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        name = v.get("name") if isinstance(v, dict) else None
        if isinstance(name, str) and name:
            errs = _label_errors(name)
            if errs:
                causes.extend(invalid(f"{path}.volumes[{i}].name", name, msg) for msg in errs)
            if name in volumes:
                causes.append(Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {json.dumps(name)}",
                                    f"{path}.volumes[{i}].name"))
            volumes.add(name)
    return causes


def _label_errors(name: str) -> Sequence[str]:
    """``is_dns1123_label`` without a fresh list (memoized for plain strings)."""
    return _dns1123_label(name) if type(name) is str else is_dns1123_label(name)


def _config_key_causes(obj: dict[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for section in ("data", "binaryData", "stringData"):
        values = obj.get(section)
        if not isinstance(values, dict):
            continue
        for key in values:
            if not _CONFIG_KEY_RE.fullmatch(key) or key in (".", ".."):
                detail = _CONFIG_KEY_MSG if key not in (".", "..") else f"must not be '{key}'"
                causes.append(invalid(f"{section}[{key}]", key, detail))
            elif key in seen and section == "binaryData":
                causes.append(invalid(f"{section}[{key}]", key, "duplicate of key present in data"))
            seen.add(key)
    return causes
