"""What RBAC's Roles, ClusterRoles and their bindings must satisfy beyond their OpenAPI schemas
(``pkg/apis/rbac/validation``).

A Role's rules name verbs, and either API groups with resources or (cluster roles only)
non-resource URLs; a binding's roleRef names a Role or ClusterRole of RBAC's group, is immutable,
and each subject has a name and a kind its API group allows.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.machinery.errors import FIELD_VALUE_INVALID, Cause
from fakeapi.machinery.metavalidation import invalid, not_supported, required, validate_name
from fakeapi.registry.rbac.defaults import RBAC_GROUP


def policy_rule_causes(rules: Any, namespaced: bool) -> list[Cause]:
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


def role_binding_causes(obj: dict[str, Any], *, cluster: bool = False) -> list[Cause]:
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


_ROLE_REF_FIELDS = (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))


def role_ref_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
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
