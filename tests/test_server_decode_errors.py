"""A built-in kind's body that does not decode into its Go struct (reference: patch.go, create.go).

kube-apiserver decodes a built-in create or update body into the Go struct before defaulting
and validation: a value of the wrong JSON type is a 400 naming the kind and version, and it wins
over every validation error. A patched object that does not decode is a 422 naming the patch,
and so is an unknown field under ``fieldValidation=Strict`` on any patch. Custom resources are
unstructured: their wrong types are schema errors (422 with field causes).
"""

from __future__ import annotations

from typing import Any

import pytest
from support import WIDGET_AV, assert_rejected, configmap, make_api, widget

from fakeapi.host.client import Client
from fakeapi.server.apiserver import APIServer

PREFIX = 'Pod in version "v1" cannot be handled as a Pod: '


def _pod(name: str = "p1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def _env_pod(value: Any) -> dict[str, Any]:
    return _pod(containers=[{"name": "c", "image": "busybox", "env": [{"name": "X", "value": value}]}])


def test_a_create_body_that_does_not_decode_is_a_400() -> None:
    api = make_api()
    assert_rejected(api, lambda: api.create(_env_pod(1)), 400, "BadRequest",
                    PREFIX + "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value "
                             "of type string")


def test_the_decode_error_wins_over_validation_errors() -> None:
    api = make_api()
    body = _env_pod(True)
    body["metadata"]["name"] = "Not_A_Name"  # (invalid too, but validation never runs)
    body["spec"]["restartPolicy"] = "Sometimes"
    assert_rejected(api, lambda: api.create(body), 400, "BadRequest",
                    PREFIX + "json: cannot unmarshal bool into Go struct field EnvVar.spec.containers.env.value "
                             "of type string")


def test_the_message_names_the_version_of_the_body() -> None:
    api = make_api()
    body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "ns"},
            "rules": [{"verbs": "get"}]}
    assert_rejected(api, lambda: api.create(body), 400, "BadRequest",
                    'Role in version "v1" cannot be handled as a Role: json: cannot unmarshal string into Go struct '
                    "field PolicyRule.rules.verbs of type []string")


def test_built_in_metadata_decodes_with_the_body_in_document_order() -> None:
    api = make_api()
    body = configmap()
    body["metadata"].update({"generation": "1", "labels": {"a": 1}})
    assert_rejected(api, lambda: api.create(body), 400, "BadRequest",
                    'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into '
                    "Go struct field ObjectMeta.metadata.generation of type int64")


def test_an_update_body_that_does_not_decode_is_a_400() -> None:
    api = make_api()
    stored = api.create(_pod())
    stored["spec"]["activeDeadlineSeconds"] = "60"
    assert_rejected(api, lambda: api.update(stored), 400, "BadRequest",
                    PREFIX + "json: cannot unmarshal string into Go struct field PodSpec.spec.activeDeadlineSeconds "
                             "of type int64")
    stored["spec"]["activeDeadlineSeconds"] = 60
    assert api.update(stored)["spec"]["activeDeadlineSeconds"] == 60


def test_an_update_that_does_not_decode_is_a_400_even_for_a_missing_object() -> None:
    api = make_api()
    assert_rejected(api, lambda: api.update(_pod("nope", activeDeadlineSeconds=True)), 400, "BadRequest",
                    PREFIX + "json: cannot unmarshal bool into Go struct field PodSpec.spec.activeDeadlineSeconds "
                             "of type int64")


def test_an_int32_overflow_is_a_decode_error_not_a_stored_value() -> None:
    api = make_api()
    body = _pod(containers=[{"name": "c", "image": "busybox", "ports": [{"containerPort": 2**31}]}])
    assert_rejected(api, lambda: api.create(body), 400, "BadRequest",
                    PREFIX + "json: cannot unmarshal number 2147483648 into Go struct field "
                             "ContainerPort.spec.containers.ports.containerPort of type int32")


def test_a_merge_patch_whose_result_does_not_decode_is_a_422_naming_the_patch() -> None:
    api = make_api()
    api.create(_pod())
    err = assert_rejected(api, lambda: api.patch("Pod", "p1", {"spec": {"activeDeadlineSeconds": "5"}},
                                                 namespace="ns"), 422, "Invalid")
    detail = "json: cannot unmarshal string into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64"
    # NewInvalid(GroupKind{}, "", ...): an empty kind and name; the value is the patched object's JSON, keys sorted
    assert err.message.startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"kind\\":')
    assert err.message.endswith('}": ' + detail)
    assert err.status["details"] == {"causes": [
        {"reason": "FieldValueInvalid", "message": err.message[len(' "" is invalid: patch: '):], "field": "patch"}]}


def test_a_json_patch_whose_result_does_not_decode_is_a_422() -> None:
    api = make_api()
    api.create(_pod())
    ops = [{"op": "add", "path": "/spec/nodeSelector", "value": {"disk": 1}}]
    err = assert_rejected(api, lambda: api.patch("Pod", "p1", ops, namespace="ns", patch_type="json"),
                          422, "Invalid")
    assert err.message.endswith(
        "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string")


def test_a_strategic_merge_patch_shows_the_patch_map_and_the_converter_error() -> None:
    api = make_api()
    api.create(_pod())
    patch = {"spec": {"activeDeadlineSeconds": "5"}}
    assert_rejected(api, lambda: api.patch("Pod", "p1", patch, namespace="ns", patch_type="strategic"),
                    422, "Invalid",
                    ' "" is invalid: patch: Invalid value: "map[spec:map[activeDeadlineSeconds:5]]": '
                    "unrecognized type: int64")


def test_a_patch_of_the_right_types_still_applies() -> None:
    api = make_api()
    api.create(_pod())
    out = api.patch("Pod", "p1", {"spec": {"activeDeadlineSeconds": 5}}, namespace="ns", patch_type="strategic")
    assert out["spec"]["activeDeadlineSeconds"] == 5
    # a directive in a map the patch names is not a value of the map: the result is what is decoded
    out = api.patch("Pod", "p1", {"metadata": {"labels": {"a": "b"}}}, namespace="ns", patch_type="strategic")
    out = api.patch("Pod", "p1", {"metadata": {"labels": {"$patch": "replace", "c": "d"}}}, namespace="ns",
                    patch_type="strategic")
    assert out["metadata"]["labels"] == {"c": "d"}


@pytest.mark.parametrize("patch_type", ["merge", "json"])
def test_strict_unknown_fields_in_a_patch_are_a_422(patch_type: str) -> None:
    api = make_api()
    api.create(widget())
    body: Any = ({"spec": {"zz": 1}} if patch_type == "merge"
                 else [{"op": "add", "path": "/spec/zz", "value": 1}])
    err = assert_rejected(api, lambda: api.patch("Widget", "w1", body, namespace="ns", patch_type=patch_type,
                                                 field_validation="Strict"), 422, "Invalid")
    assert err.message.startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":')
    assert err.message.endswith('": strict decoding error: unknown field "spec.zz"')
    # on a create it is a 400
    assert_rejected(api, lambda: api.create(widget("w2", spec={"zz": 1}), field_validation="Strict"),
                    400, "BadRequest", 'strict decoding error: unknown field "spec.zz"')


def test_strict_unknown_fields_in_a_strategic_merge_patch_show_the_patch_map() -> None:
    api = make_api()
    api.create(_pod())
    assert_rejected(api, lambda: api.patch("Pod", "p1", {"spec": {"zz": 1}}, namespace="ns", patch_type="strategic",
                                           field_validation="Strict"), 422, "Invalid",
                    ' "" is invalid: patch: Invalid value: "map[spec:map[zz:1]]": '
                    'strict decoding error: unknown field "spec.zz"')


def test_a_custom_resource_of_the_wrong_type_is_a_schema_error() -> None:
    api = make_api()
    body = widget(spec={"replicas": "3"})
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert [c["field"] for c in err.status["details"]["causes"]] == ["spec.replicas"]
    assert body["apiVersion"] == WIDGET_AV


def test_a_go_client_create_is_not_checked_again() -> None:
    # Client.create sends what a Go client marshals (go_encoded): it decodes by construction
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    out = Client(api).create(_pod())
    assert out["spec"]["containers"][0]["image"] == "busybox"


def test_a_go_encoded_patch_is_trusted_and_the_trust_is_checked() -> None:
    """fakeapi's kubelet patches pod status from Go-typed values (``go_encoded``): the decode check is
    skipped, except with the snapshot checks on, where a patch that breaks the trust is reported."""
    from fakeapi.codec.snapshots import NotGoEncoded, SnapshotGuard

    api = make_api()
    api.create(_pod())
    api.snapshot_guard = None  # (as a user's run: the trust holds, nothing is checked)
    out = api.patch("Pod", "p1", {"status": {"phase": "Running"}}, namespace="ns", patch_type="strategic",
                    subresource="status", go_encoded=True)
    assert out["status"]["phase"] == "Running"
    api.snapshot_guard = SnapshotGuard()
    with pytest.raises(NotGoEncoded, match="does not decode"):
        api.patch("Pod", "p1", {"status": {"startTime": 5}}, namespace="ns", patch_type="strategic",
                  subresource="status", go_encoded=True)
