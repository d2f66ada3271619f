"""Defaults of RBAC's RoleBindings and ClusterRoleBindings (``pkg/apis/rbac/v1/defaults.go``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (only a type: the core group's defaults are imported on first use; issue 22)
    from fakeapi.registry.core.defaults import JSONDict

#: The RBAC API group (its bindings' defaults here, their validation in builtinvalidation.py).
RBAC_GROUP = "rbac.authorization.k8s.io"


def default_role_binding(obj: JSONDict) -> None:
    """``SetDefaults_RoleBinding`` and ``SetDefaults_Subject``: the roleRef's apiGroup is RBAC's; a
    User's or Group's subject apiGroup too (a ServiceAccount's stays empty)."""
    ref = obj.get("roleRef")
    if type(ref) is dict and not ref.get("apiGroup"):
        obj["roleRef"] = {**ref, "apiGroup": RBAC_GROUP}
    subjects = obj.get("subjects")
    if type(subjects) is list and any(type(s) is dict and not s.get("apiGroup") and s.get("kind") in ("User", "Group")
                                      for s in subjects):
        obj["subjects"] = [{**s, "apiGroup": RBAC_GROUP}
                           if type(s) is dict and not s.get("apiGroup") and s.get("kind") in ("User", "Group") else s
                           for s in subjects]
