"""A RoleBinding's roleRef never changes (``ValidateRoleBindingUpdate``); its subjects may."""

from __future__ import annotations

import pytest

from fakeapi import APIServer
from fakeapi.errors import ApiError


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
