"""What the built-in kinds' Go ``Validate`` functions check beyond their OpenAPI schemas.

The mistakes a controller is likely to make, with the real messages: on every write, container
and volume names, images, ConfigMap and Secret keys, what each Secret type needs, Role rules and
RoleBindings, Leases, Deployments, ReplicaSets, StatefulSets and DaemonSets (:mod:`fakeapi.registry.apps.validation`), PodDisruptionBudgets (:mod:`fakeapi.registry.policy.validation`), Ingresses and NetworkPolicies (:mod:`fakeapi.registry.networking.validation`), Jobs (:mod:`fakeapi.registry.batch.validation`), PersistentVolumeClaims (:mod:`fakeapi.registry.core.claimvalidation`), Services (:mod:`fakeapi.registry.core.servicevalidation`)
(:func:`validate_builtin`); on an update, a Pod's immutable spec, frozen Secret and ConfigMap data, a
Secret's type, a binding's roleRef, a Deployment's or ReplicaSet's selector, a Service's cluster IPs and
a NetworkPolicy's spec a second time (:func:`validate_builtin_update`); the warnings of a valid write
(:func:`builtin_warnings`); on a status write, a Pod's container state
transitions and a Deployment's or ReplicaSet's counts (:func:`validate_builtin_status_update`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from fakeapi.machinery.errors import FIELD_VALUE_DUPLICATE, FIELD_VALUE_INVALID, Cause
from fakeapi.machinery.jsonutil import go_json_type
from fakeapi.machinery.metavalidation import (
    _dns1123_label,
    forbidden,
    invalid,
    is_dns1123_label,
    not_supported,
    required,
    too_long,
    validate_name,
)
from fakeapi.registry.apps.validation import (
    daemon_set_causes,
    daemon_set_status_causes,
    deployment_causes,
    deployment_status_causes,
    deployment_update_causes,
    replica_set_causes,
    replica_set_status_causes,
    replica_set_update_causes,
    stateful_set_causes,
    stateful_set_status_causes,
    stateful_set_update_causes,
)
from fakeapi.registry.batch.validation import cron_job_causes, job_causes, job_update_causes
from fakeapi.registry.core.claimvalidation import claim_causes, claim_update_causes
from fakeapi.registry.core.servicevalidation import service_causes, service_update_causes
from fakeapi.registry.defaults import RBAC_GROUP
from fakeapi.registry.kinds import Kind
from fakeapi.registry.networking.validation import (
    ingress_causes,
    network_policy_causes,
    network_policy_update_causes,
    network_policy_warnings,
)
from fakeapi.registry.policy.validation import disruption_budget_causes, disruption_budget_status_causes

_CONFIG_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def validate_builtin(kind: Kind, obj: dict[str, Any]) -> list[Cause]:
    """Field errors of a built-in object that its schema cannot express (empty for other kinds)."""
    if not kind.builtin:
        return []
    if kind.group == RBAC_GROUP:
        if kind.kind in ("Role", "ClusterRole"):
            return _policy_rule_causes(obj.get("rules"), kind.namespaced)
        if kind.kind in ("RoleBinding", "ClusterRoleBinding"):
            return _role_binding_causes(obj, cluster=kind.kind == "ClusterRoleBinding")
        return []
    if kind.group == "apps" and kind.kind == "Deployment":
        return deployment_causes(obj, _pod_spec_causes)
    if kind.group == "apps" and kind.kind == "ReplicaSet":
        return replica_set_causes(obj, _pod_spec_causes)
    if kind.group == "apps" and kind.kind == "StatefulSet":
        return stateful_set_causes(obj)
    if kind.group == "apps" and kind.kind == "DaemonSet":
        return daemon_set_causes(obj, _pod_spec_causes)
    if kind.group == "coordination.k8s.io" and kind.kind == "Lease":
        return _lease_causes(obj.get("spec"))
    if kind.group == "batch" and kind.kind == "Job":
        return job_causes(obj, _pod_spec_causes)
    if kind.group == "batch" and kind.kind == "CronJob":
        return cron_job_causes(obj, _pod_spec_causes)
    if kind.group == "policy" and kind.kind == "PodDisruptionBudget":
        return disruption_budget_causes(obj)
    if kind.group == "networking.k8s.io" and kind.kind == "Ingress":
        return ingress_causes(obj)
    if kind.group == "networking.k8s.io" and kind.kind == "NetworkPolicy":
        return network_policy_causes(obj)
    if kind.group:
        return []
    if kind.kind == "Pod":
        spec = obj.get("spec")
        return _pod_spec_causes(spec, "spec") if isinstance(spec, dict) else []
    if kind.kind == "Secret":
        return _config_key_causes(obj) + _secret_causes(obj)
    if kind.kind == "ConfigMap":
        return _config_key_causes(obj)
    if kind.kind == "Service":
        return service_causes(obj)
    if kind.kind == "PersistentVolumeClaim":
        return claim_causes(obj)
    return []


def _lease_causes(spec: Any) -> list[Cause]:
    """``ValidateLeaseSpec``: a positive duration, transitions not negative, a preferred holder only with a strategy."""
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if isinstance(duration, int) and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    if isinstance(transitions, int) and transitions < 0:
        causes.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        causes.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return causes


def _policy_rule_causes(rules: Any, namespaced: bool) -> list[Cause]:
    """``ValidatePolicyRule`` for each rule of a Role: verbs, and for resource rules apiGroups and
    resources, each at least one (an absent ``verbs`` is the schema's Required value already);
    non-resource URLs only in cluster roles, and never beside resources."""
    causes: list[Cause] = []
    for i, rule in enumerate(rules if isinstance(rules, list) else ()):
        if not isinstance(rule, dict):
            continue
        path = f"rules[{i}]"
        if rule.get("verbs") == []:
            causes.append(required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs")
        if urls:
            if namespaced:
                causes.append(invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                causes.append(invalid(f"{path}.nonResourceURLs", urls,
                                      "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            causes.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            causes.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return causes


def _role_binding_causes(obj: dict[str, Any], *, cluster: bool = False) -> list[Cause]:
    """``ValidateRoleBinding`` (``ValidateClusterRoleBinding`` with ``cluster``): the roleRef names a Role
    or ClusterRole (a ClusterRole only, for a cluster binding) of RBAC's group; each subject has a name and
    a kind (ServiceAccount with no apiGroup, and a namespace in a cluster binding; User or Group with RBAC's)."""
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    causes: list[Cause] = []
    if (ref.get("apiGroup") or "") != RBAC_GROUP:
        causes.append(not_supported("roleRef.apiGroup", ref.get("apiGroup"), [RBAC_GROUP]))
    kinds = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
    if ref.get("kind") not in kinds:
        causes.append(not_supported("roleRef.kind", ref.get("kind"), kinds))
    name = ref.get("name")
    if not name:
        causes.append(required("roleRef.name"))
    elif isinstance(name, str):
        causes += [invalid("roleRef.name", name, msg) for msg in validate_name(name, "path")]
    for i, subject in enumerate(obj.get("subjects") or ()):
        if not isinstance(subject, dict):
            continue
        path = f"subjects[{i}]"
        sname, skind, group = subject.get("name"), subject.get("kind"), subject.get("apiGroup") or ""
        if not sname:
            causes.append(required(f"{path}.name"))
        if skind == "ServiceAccount":
            if isinstance(sname, str) and sname:
                causes += [invalid(f"{path}.name", sname, msg) for msg in validate_name(sname, "subdomain")]
            if group:
                causes.append(not_supported(f"{path}.apiGroup", group, [""]))
            if cluster and not subject.get("namespace"):
                causes.append(required(f"{path}.namespace"))
        elif skind in ("User", "Group"):
            if group != RBAC_GROUP:
                causes.append(not_supported(f"{path}.apiGroup", group, [RBAC_GROUP]))
        else:
            causes.append(not_supported(f"{path}.kind", skind, ["ServiceAccount", "User", "Group"]))
    return causes


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
        return base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)  # as Go decodes
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


def validate_builtin_update(kind: Kind, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """Field errors of an update of a built-in beyond its create rules (empty for other kinds).

    Secrets and ConfigMaps: see :func:`_immutable_data_causes`; role bindings:
    :func:`_role_ref_causes`. Pods (``ValidatePodUpdate``): a pod's spec is immutable but for its containers' images,
    ``activeDeadlineSeconds`` (set, or lowered), added tolerations (or an existing one's
    ``tolerationSeconds``), removed scheduling gates and a negative
    ``terminationGracePeriodSeconds`` set to 1. The real message ends with a Go ``cmp.Diff`` of
    the internal types; here the paths of the fields that changed follow instead.
    """
    if not kind.builtin:
        return []
    if kind.group == RBAC_GROUP and kind.kind in ("RoleBinding", "ClusterRoleBinding"):
        return _role_ref_causes(obj, old)
    if kind.group == "apps" and kind.kind in ("Deployment", "DaemonSet"):
        return deployment_update_causes(obj, old)  # (the selector: immutable in apps/v1 for both)
    if kind.group == "apps" and kind.kind == "ReplicaSet":
        return replica_set_update_causes(obj, old, _pod_spec_causes)
    if kind.group == "apps" and kind.kind == "StatefulSet":
        return stateful_set_update_causes(obj, old)
    if kind.group == "batch" and kind.kind == "Job":
        return job_update_causes(obj, old)
    if kind.group == "networking.k8s.io" and kind.kind == "NetworkPolicy":
        return network_policy_update_causes(obj, old)
    if kind.group:
        return []
    if kind.kind in ("Secret", "ConfigMap"):
        return _immutable_data_causes(kind.kind, obj, old)
    if kind.kind == "Service":
        return service_update_causes(obj, old)
    if kind.kind == "PersistentVolumeClaim":
        return claim_update_causes(obj, old)
    if kind.kind != "Pod":
        return []
    new_spec, old_spec = obj.get("spec"), old.get("spec")
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict) or new_spec is old_spec:
        return []
    spec_type = kind.go_type.fields["spec"].type if kind.go_type is not None else None
    return _pod_update_causes(new_spec, old_spec, spec_type)


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
    if semantic_equal(new, old, spec_type):
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


_ROLE_REF_FIELDS = (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))


def _role_ref_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateRoleBindingUpdate``: ``cannot change roleRef``, the new one shown as Go's ``%#v`` of the
    internal struct (controllers look for that text, then delete and recreate the binding)."""
    def fields(ref: Any) -> tuple[str, ...]:
        ref = ref if isinstance(ref, dict) else {}
        return tuple(str(ref.get(j) or "") for _, j in _ROLE_REF_FIELDS)

    new_ref = fields(obj.get("roleRef"))
    if new_ref == fields(old.get("roleRef")):
        return []
    shown = ", ".join(f"{g}:{json.dumps(v)}" for (g, _), v in zip(_ROLE_REF_FIELDS, new_ref, strict=True))
    return [Cause(FIELD_VALUE_INVALID, f"Invalid value: rbac.RoleRef{{{shown}}}: cannot change roleRef", "roleRef")]


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


def builtin_warnings(kind: Kind, obj: dict[str, Any]) -> list[str]:
    """The warnings of a valid write of a built-in (its strategy's ``WarningsOnCreate``/``WarningsOnUpdate``;
    NetworkPolicies only: the CIDRs in a non-standard form)."""
    if kind.kind == "NetworkPolicy" and kind.builtin and kind.group == "networking.k8s.io":
        return network_policy_warnings(obj)
    return []


def validate_builtin_status_update(kind: Kind, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """Field errors of a built-in's status write that its schema cannot express (empty for other kinds).

    Pods (``ValidatePodStatusUpdate``): a container that terminated may not go back to a
    non-terminated state unless the pod's restart policy lets it restart
    (``ValidateContainerStateTransition``; a restartable init container, a sidecar, may always;
    ephemeral containers never). The policy and the init containers are the stored pod's.
    """
    if kind.builtin and kind.group in ("apps", "policy") and kind.kind in _STATUS_CHECKS:
        return _STATUS_CHECKS[kind.kind](obj.get("status")) if obj.get("status") is not old.get("status") else []
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


_STATUS_CHECKS = {"Deployment": deployment_status_causes, "ReplicaSet": replica_set_status_causes,
                  "StatefulSet": stateful_set_status_causes,
                  "DaemonSet": daemon_set_status_causes, "PodDisruptionBudget": disruption_budget_status_causes}


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
