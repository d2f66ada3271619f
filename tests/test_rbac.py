"""RBAC: what a Role rule and a RoleBinding need (ValidatePolicyRule, ValidateRoleBinding), their defaults, and a binding's roleRef that never changes."""

from __future__ import annotations

import pytest
from support import assert_rejected, field_causes

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError


def _api() -> APIServer:
    api = APIServer()
    api.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "rb", "namespace": "default"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]})
    return api


@pytest.mark.parametrize(("change", "shown"), [
    ({"name": "r2"}, 'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"r2"}'),
    ({"kind": "ClusterRole"}, 'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"r"}'),
])
def test_changing_the_role_ref_is_invalid(change: dict[str, str], shown: str) -> None:
    api = _api()
    with pytest.raises(ApiError) as err:
        api.patch("RoleBinding", "rb", {"roleRef": change}, namespace="default")
    assert err.value.code == 422
    # controllers look for this text, then delete and recreate the binding
    assert err.value.message == (f'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: '
                                 f"Invalid value: {shown}: cannot change roleRef")
    assert api.get("RoleBinding", "rb", "default")["roleRef"]["name"] == "r"


def test_subjects_and_labels_may_change() -> None:
    api = _api()
    api.patch("RoleBinding", "rb", {"subjects": [{"kind": "ServiceAccount", "name": "other", "namespace": "default"}],
                                    "metadata": {"labels": {"a": "b"}}}, namespace="default")
    rb = api.get("RoleBinding", "rb", "default")
    assert rb["subjects"][0]["name"] == "other" and rb["metadata"]["labels"] == {"a": "b"}
    api.update(rb)  # a PUT of what was read: the same roleRef


RBAC = "rbac.authorization.k8s.io/v1"


def test_a_binding_gets_rbac_api_groups_by_default() -> None:
    """SetDefaults_RoleBinding and SetDefaults_Subject."""
    rb = APIServer().create({"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": "rb", "namespace": "default"},
                             "roleRef": {"kind": "Role", "name": "r"},
                             "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                                          {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]})
    assert rb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert [s.get("apiGroup") for s in rb["subjects"]] == ["rbac.authorization.k8s.io"] * 2 + [None]


# (case, the kind, the body's fields, the causes)
INVALID: list[tuple[str, str, dict[str, object], list[str]]] = [
    ("a rule without api groups", "Role", {"rules": [{"resources": ["pods"], "verbs": ["get"]}]},
     ["rules[0].apiGroups: Required value: resource rules must supply at least one api group"]),
    ("a rule with no verbs and no resources", "Role", {"rules": [{"apiGroups": [""], "verbs": []}]},
     ["rules[0].verbs: Required value: verbs must contain at least one value",
      "rules[0].resources: Required value: resource rules must supply at least one resource"]),
    ("non-resource URLs in a namespaced role", "Role", {"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
     ['rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs']),
    ("a role ref of another group and kind", "RoleBinding",
     {"roleRef": {"apiGroup": "example.com", "kind": "Rol", "name": "r"}, "subjects": []},
     ['roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "Rol": supported values: "Role", "ClusterRole"']),
    ("subjects of an unknown kind, and a service account with a group", "RoleBinding",
     {"roleRef": {"kind": "Role", "name": "r"},
      "subjects": [{"kind": "Robot", "name": "x"}, {"kind": "ServiceAccount", "name": "", "apiGroup": "v1"}]},
     ['subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      "subjects[1].name: Required value",
      'subjects[1].apiGroup: Unsupported value: "v1": supported values: ""']),
]


@pytest.mark.parametrize(("case", "kind", "fields", "causes"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_rbac_objects(case: str, kind: str, fields: dict[str, object], causes: list[str]) -> None:
    with pytest.raises(ApiError) as err:
        APIServer().create({"apiVersion": RBAC, "kind": kind, "metadata": {"name": "x", "namespace": "default"}, **fields})
    assert err.value.code == 422
    assert [f"{c['field']}: {c['message']}" for c in err.value.causes] == causes


def test_cluster_roles_and_bindings() -> None:
    """Cluster-scoped RBAC: a ClusterRoleBinding binds a ClusterRole only, and its service accounts need a namespace."""
    api = APIServer()
    api.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "reader"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "readers"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
               "subjects": [{"kind": "ServiceAccount", "name": "ctl"}, {"kind": "User", "name": "alice"}]}
    err = assert_rejected(api, lambda: api.create(binding), 422, "Invalid")
    assert field_causes(err) == [
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
        ("subjects[0].namespace", "Required value")]
    binding["roleRef"]["kind"] = "ClusterRole"
    binding["subjects"][0]["namespace"] = "default"
    out = api.create(binding)
    assert out["subjects"][1]["apiGroup"] == "rbac.authorization.k8s.io" and "namespace" not in out["metadata"]
