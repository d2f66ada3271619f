"""What the core group's Pods, Secrets and ConfigMaps must satisfy beyond their OpenAPI schemas
(``pkg/apis/core/validation``).

The mistakes a controller is likely to make, with the real messages: on every write, container
and volume names and images, ConfigMap and Secret keys, what each Secret type needs
(:func:`pod_causes`, :func:`secret_causes`, :func:`config_map_causes`); on an update, a Pod's
immutable spec, frozen Secret and ConfigMap data and a Secret's type (:func:`pod_update_causes`,
:func:`immutable_data_causes`); on a status write, a Pod's container state transitions
(:func:`pod_status_update_causes`). Services and PersistentVolumeClaims have modules of their own
(:mod:`fakeapi.registry.core.servicevalidation`, :mod:`fakeapi.registry.core.claimvalidation`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from fakeapi.machinery.errors import FIELD_VALUE_DUPLICATE, Cause
from fakeapi.machinery.jsonutil import go_json_type
from fakeapi.machinery.metavalidation import (
    _dns1123_label,
    forbidden,
    invalid,
    is_dns1123_label,
    required,
    too_long,
)

_CONFIG_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


#: ``core.MaxSecretSize``: the decoded bytes of a Secret's data together.
MAX_SECRET_SIZE = 1024 * 1024
#: The keys each Secret type requires in ``data`` (``ValidateSecret``).
_SECRET_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def _secret_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidateSecret``: the total size, and what each type needs (keys, a service account's name,
    well-formed Docker config JSON)."""
    data = obj.get("data")
    data = data if isinstance(data, dict) else {}
    causes: list[Cause] = []
    # (base64 text is 4/3 of its bytes: only data near the limit is decoded to measure it)
    if sum(len(v) for v in data.values() if isinstance(v, str)) * 3 // 4 > MAX_SECRET_SIZE and sum(
            len(b) for b in map(_b64, data.values()) if b is not None) > MAX_SECRET_SIZE:
        causes.append(too_long("data", MAX_SECRET_SIZE))
    kind = obj.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":
        meta = obj.get("metadata")
        annotations = (meta.get("annotations") if isinstance(meta, dict) else None) or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            causes.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:  # either may be empty, but one must be there
            causes += [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not _b64(data.get("ssh-privatekey")):
            causes.append(required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        causes += [required(f"data[{k}]") for k in _SECRET_REQUIRED_KEYS[kind] if k not in data]
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = _SECRET_REQUIRED_KEYS[kind][0]
        if key not in data:
            causes.append(required(f"data[{key}]"))
        else:
            problem = _json_object_problem(_b64(data[key]) or b"")
            if problem:
                causes.append(invalid(f"data[{key}]", "<secret contents redacted>", problem))
    return causes


def _b64(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return None


def _json_object_problem(raw: bytes) -> str:
    """Why ``json.Unmarshal`` into ``map[string]interface{}`` fails ('' when it does not). The
    commonest Go messages are reproduced; other syntax errors name the offset."""
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        return "unexpected end of JSON input"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip()):
            return "unexpected end of JSON input"
        ch = text[e.pos]
        where = "looking for beginning of value" if not text[:e.pos].strip() else f"at offset {e.pos + 1}"
        return f"invalid character {ch!r} {where}"
    if not isinstance(value, dict):
        return f"json: cannot unmarshal {go_json_type(value)} into Go value of type map[string]interface {{}}"
    return ""


#: ``updatablePodSpecFieldsNoResources``: what a Pod update may change, in the order of the message.
POD_UPDATABLE_FIELDS = ",".join((
    "`spec.containers[*].image`", "`spec.initContainers[*].image`", "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
))
_MAX_INT32 = 2**31 - 1
_TOLERATION_FIELDS = ("key", "operator", "value", "effect")


def _pod_update_causes(new: dict[str, Any], old: dict[str, Any], spec_type: Any) -> list[Cause]:
    from fakeapi.codec.semantic import semantic_equal

    causes: list[Cause] = []
    for group in ("containers", "initContainers"):
        ns, os_ = _list(new.get(group)), _list(old.get(group))
        if len(ns) != len(os_):
            return [*causes, forbidden(f"spec.{group}", "pod updates may not add or remove containers")]
        for i, c in enumerate(ns):
            image = c.get("image") if isinstance(c, dict) else None
            if isinstance(image, str) and image and image.strip() != image:
                causes.append(invalid(f"spec.{group}[{i}].image", image, "must not have leading or trailing whitespace"))
    deadline, old_deadline = new.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    if isinstance(deadline, int):
        if deadline < 0 or deadline > _MAX_INT32:
            return [*causes, invalid("spec.activeDeadlineSeconds", deadline,
                                     f"must be between 0 and {_MAX_INT32}, inclusive")]
        if isinstance(old_deadline, int) and old_deadline < deadline:
            return [*causes, invalid("spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value")]
    elif old_deadline is not None:
        causes.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    causes += _only_added_tolerations(_list(new.get("tolerations")), _list(old.get("tolerations")))
    causes += _only_deleted_scheduling_gates(_list(new.get("schedulingGates")), _list(old.get("schedulingGates")))
    # (the body passed the Go decode and the schema: ``==`` is exact, and an unchanged spec, the
    # common case, is told at C speed without the walk; issue 22)
    if new == old or semantic_equal(new, old, spec_type):
        return causes
    munged = dict(new)
    for group in ("containers", "initContainers"):
        if group in munged:
            munged[group] = [{**c, "image": o.get("image")} if isinstance(c, dict) and isinstance(o, dict) else c
                             for c, o in zip(_list(new.get(group)), _list(old.get(group)), strict=True)]
    for f in ("ephemeralContainers", "activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _take(munged, old, f)
    grace, old_grace = new.get("terminationGracePeriodSeconds"), old.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if _list(old.get("schedulingGates")):  # a gated pod may still get scheduling constraints
        for f in ("nodeSelector", "affinity"):
            _take(munged, old, f)
    if not semantic_equal(munged, old, spec_type):
        changed = sorted(k for k in {*munged, *old} if not semantic_equal(
            munged.get(k), old.get(k), spec_type.fields[k].type if spec_type is not None and k in spec_type.fields else None))
        causes.append(forbidden("spec", f"pod updates may not change fields other than {POD_UPDATABLE_FIELDS}\n"
                                + "\n".join(f"  spec.{k}" for k in changed)))
    return causes


_IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"


def _immutable_data_causes(kind: str, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateSecretUpdate`` / ``ValidateConfigMapUpdate``: a Secret's ``type`` never changes; once
    ``immutable`` is true, neither it nor the data may change (absent and empty data differ, as
    ``reflect.DeepEqual`` tells a nil map from an empty one)."""
    causes: list[Cause] = []
    if kind == "Secret" and obj.get("type") != old.get("type"):
        causes.append(invalid("type", obj.get("type"), "field is immutable"))
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            causes.append(forbidden("immutable", _IMMUTABLE_WHEN_SET))
        for field in ("data",) if kind == "Secret" else ("data", "binaryData"):
            if obj.get(field) != old.get(field):
                causes.append(forbidden(field, _IMMUTABLE_WHEN_SET))
    return causes


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _take(munged: dict[str, Any], old: dict[str, Any], field: str) -> None:
    """Set ``munged[field]`` to the old spec's value (absent when it had none)."""
    if field in old:
        munged[field] = old[field]
    else:
        munged.pop(field, None)


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[Cause]:
    """``validateOnlyAddedTolerations``: every old toleration is still there (its tolerationSeconds may change)."""
    def fields(t: Any) -> tuple[Any, ...]:
        t = t if isinstance(t, dict) else {}
        return tuple(t.get(f) or "" for f in _TOLERATION_FIELDS)

    kept = {fields(t) for t in new}
    for t in old:
        if fields(t) not in kept:
            return [forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")]
    return []


def _only_deleted_scheduling_gates(new: list[Any], old: list[Any]) -> list[Cause]:
    """``validateOnlyDeletedSchedulingGates``: no gate a pod did not have."""
    had = {g.get("name") for g in old if isinstance(g, dict)}
    return [forbidden(f"spec.schedulingGates[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'")
            for i, g in enumerate(new) if isinstance(g, dict) and (name := g.get("name")) not in had]


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
                causes += _unique_label_causes(name, f"{path}.{group}[{i}].name", seen)
            if not c.get("image") and group == "containers":
                causes.append(required(f"{path}.{group}[{i}].image"))
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        name = v.get("name") if isinstance(v, dict) else None
        if isinstance(name, str) and name:
            causes += _unique_label_causes(name, f"{path}.volumes[{i}].name", volumes)
    return causes


def _unique_label_causes(name: str, field: str, seen: set[str]) -> list[Cause]:
    """A container's or volume's name: a DNS-1123 label, not in ``seen`` (then added to it)."""
    causes = [invalid(field, name, msg) for msg in _label_errors(name)]
    if name in seen:
        causes.append(Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {json.dumps(name)}", field))
    seen.add(name)
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


# ---------------------------------------------------------------------------- per kind


def pod_spec_causes(spec: dict[str, Any], path: str) -> list[Cause]:
    """A pod spec's container and volume names and images (``ValidatePodSpec``, the parts ported), at ``path``:
    also what the workload kinds check of their pod templates."""
    return _pod_spec_causes(spec, path)


def pod_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidatePodCreate``/``ValidatePod``: the pod spec."""
    spec = obj.get("spec")
    return _pod_spec_causes(spec, "spec") if isinstance(spec, dict) else []


def pod_update_causes(obj: dict[str, Any], old: dict[str, Any], spec_type: Any) -> list[Cause]:
    """``ValidatePodUpdate``: a pod's spec is immutable but for its containers' images,
    ``activeDeadlineSeconds`` (set, or lowered), added tolerations (or an existing one's
    ``tolerationSeconds``), removed scheduling gates and a negative
    ``terminationGracePeriodSeconds`` set to 1. The real message ends with a Go ``cmp.Diff`` of
    the internal types; here the paths of the fields that changed follow instead. ``spec_type``:
    the Go type of the pod spec.
    """
    new_spec, old_spec = obj.get("spec"), old.get("spec")
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict) or new_spec is old_spec:
        return []
    return _pod_update_causes(new_spec, old_spec, spec_type)


def pod_status_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidatePodStatusUpdate``: a container that terminated may not go back to a non-terminated
    state unless the pod's restart policy lets it restart (``ValidateContainerStateTransition``; a
    restartable init container, a sidecar, may always; ephemeral containers never). The policy and
    the init containers are the stored pod's.
    """
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


def secret_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidateSecret``: keys, size and what the Secret's type needs."""
    return _config_key_causes(obj) + _secret_causes(obj)


def config_map_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidateConfigMap``: its keys."""
    return _config_key_causes(obj)


def immutable_data_causes(kind: str, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateSecretUpdate``/``ValidateConfigMapUpdate`` (``kind``: ``Secret`` or ``ConfigMap``)."""
    return _immutable_data_causes(kind, obj, old)
