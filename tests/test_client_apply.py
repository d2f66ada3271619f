"""``Client.apply``: controller-runtime's ``client.Patch(obj, client.Apply, FieldOwner, ForceOwnership)``."""

from __future__ import annotations

import pytest

from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer


def test_apply_owns_as_the_controller_and_force_takes_fields_from_others() -> None:
    api = APIServer()
    ctrl, other = Client(api, "my-controller"), Client(api, "other")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
          "data": {"k": "v"}}
    made = ctrl.apply(cm)
    assert [(m["manager"], m["operation"]) for m in made["metadata"]["managedFields"]] == [("my-controller", "Apply")]
    made["data"]["k"] = "edited"
    other.update(made)
    with pytest.raises(ApiError) as info:
        ctrl.apply(cm)
    assert info.value.code == 409
    forced = ctrl.apply(cm, force=True)
    assert forced["data"] == {"k": "v"}
    assert [m["manager"] for m in forced["metadata"]["managedFields"]] == ["my-controller"]


def test_field_owner_overrides_the_actor() -> None:
    api = APIServer()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}, "data": {"k": "v"}}
    made = Client(api, "c").apply(cm, field_owner="owner")
    assert made["metadata"]["managedFields"][0]["manager"] == "owner"
