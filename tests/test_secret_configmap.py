"""Secrets and ConfigMaps: ``stringData`` is merged into ``data`` on every write; ``immutable`` freezes the data."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError

IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


def _secret(name: str = "s", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "default"}, **fields}


def test_string_data_is_merged_into_data_and_never_stored() -> None:
    api = APIServer()
    out = api.create(_secret(data={"a": "YQ==", "b": "Yg=="}, stringData={"a": "x", "c": "héllo"}))
    assert out["data"] == {"a": "eA==", "b": "Yg==", "c": "aMOpbGxv"}  # stringData wins; UTF-8, base64
    assert "stringData" not in out and "stringData" not in api.get("Secret", "s", "default")
    out = api.patch("Secret", "s", {"stringData": {"d": "z"}}, namespace="default")
    assert out["data"]["d"] == "eg==" and "stringData" not in out
    # what a Go client sends (go_encoded) goes through the same conversion
    got = Client(api, "c").create(_secret("t", stringData={"k": "v"}))
    assert got["data"] == {"k": "dg=="} and "stringData" not in got


def test_string_data_with_a_value_that_is_not_a_string_does_not_decode() -> None:
    with pytest.raises(ApiError) as err:
        APIServer().create(_secret(stringData={"a": 1}))
    assert err.value.code == 400
    assert err.value.message == ('Secret in version "v1" cannot be handled as a Secret: '
                                 "json: cannot unmarshal number into Go struct field Secret.stringData of type string")


# (case, the kind, the object's fields at create, the merge patch, the causes or None: allowed)
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], list[str] | None]] = [
    ("a mutable secret's data", "Secret", {"data": {"a": "YQ=="}}, {"data": {"a": "Yg=="}}, None),
    ("an immutable secret's labels", "Secret", {"data": {"a": "YQ=="}, "immutable": True},
     {"metadata": {"labels": {"x": "y"}}}, None),
    ("an immutable secret's data", "Secret", {"data": {"a": "YQ=="}, "immutable": True}, {"data": {"a": "Yg=="}},
     [f"data: {IMMUTABLE}"]),
    ("an immutable secret's stringData", "Secret", {"data": {"a": "YQ=="}, "immutable": True},
     {"stringData": {"b": "x"}}, [f"data: {IMMUTABLE}"]),
    ("an immutable secret made mutable", "Secret", {"data": {"a": "YQ=="}, "immutable": True},
     {"immutable": False}, [f"immutable: {IMMUTABLE}"]),
    ("a mutable secret made immutable", "Secret", {"data": {"a": "YQ=="}}, {"immutable": True}, None),
    ("a secret's type", "Secret", {"type": "Opaque"}, {"type": "example.com/other"},
     ['type: Invalid value: "example.com/other": field is immutable']),
    ("an immutable configmap's data and binaryData", "ConfigMap", {"data": {"a": "1"}, "immutable": True},
     {"data": {"a": "2"}, "binaryData": {"b": "YQ=="}}, [f"data: {IMMUTABLE}", f"binaryData: {IMMUTABLE}"]),
    ("an immutable configmap's annotations", "ConfigMap", {"data": {"a": "1"}, "immutable": True},
     {"metadata": {"annotations": {"x": "y"}}}, None),
]


@pytest.mark.parametrize(("case", "kind", "fields", "patch", "causes"), CASES, ids=[c[0] for c in CASES])
def test_updates(case: str, kind: str, fields: dict[str, Any], patch: dict[str, Any], causes: list[str] | None) -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": "o", "namespace": "default"}, **fields})
    if causes is None:
        api.patch(kind, "o", patch, namespace="default")
        return
    with pytest.raises(ApiError) as err:
        api.patch(kind, "o", patch, namespace="default")
    assert err.value.code == 422
    assert [f"{c['field']}: {c['message']}" for c in err.value.causes] == causes


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


# (case, the Secret's type, its data, its annotations, the causes or None: created)
TYPES: list[tuple[str, str, dict[str, str], dict[str, str] | None, list[str] | None]] = [
    ("opaque, empty", "Opaque", {}, None, None),
    ("tls without its key", "kubernetes.io/tls", {"tls.crt": "YQ=="}, None, ["data[tls.key]: Required value"]),
    ("tls", "kubernetes.io/tls", {"tls.crt": "YQ==", "tls.key": "YQ=="}, None, None),
    ("docker config JSON missing", "kubernetes.io/dockerconfigjson", {}, None,
     ["data[.dockerconfigjson]: Required value"]),
    ("docker config JSON not an object", "kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64("[]")}, None,
     ['data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
      "json: cannot unmarshal array into Go value of type map[string]interface {}"]),
    ("docker config JSON empty", "kubernetes.io/dockercfg", {".dockercfg": ""}, None,
     ['data[.dockercfg]: Invalid value: "<secret contents redacted>": unexpected end of JSON input']),
    ("docker config JSON", "kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64('{"auths": {}}')}, None, None),
    ("basic auth with neither", "kubernetes.io/basic-auth", {}, None,
     ["data[username]: Required value", "data[password]: Required value"]),
    ("basic auth with an empty password", "kubernetes.io/basic-auth", {"password": ""}, None, None),
    ("ssh auth with an empty key", "kubernetes.io/ssh-auth", {"ssh-privatekey": ""}, None,
     ["data[ssh-privatekey]: Required value"]),
    ("a service account token without its account", "kubernetes.io/service-account-token", {}, None,
     ["metadata.annotations[kubernetes.io/service-account.name]: Required value"]),
    ("a service account token", "kubernetes.io/service-account-token", {},
     {"kubernetes.io/service-account.name": "sa"}, None),
    ("an unknown type", "example.com/anything", {}, None, None),
]


@pytest.mark.parametrize(("case", "secret_type", "data", "annotations", "causes"), TYPES, ids=[c[0] for c in TYPES])
def test_what_each_secret_type_needs(case: str, secret_type: str, data: dict[str, str],
                                     annotations: dict[str, str] | None, causes: list[str] | None) -> None:
    body = _secret(type=secret_type, data=data)
    if annotations:
        body["metadata"]["annotations"] = annotations
    if causes is None:
        APIServer().create(body)
        return
    with pytest.raises(ApiError) as err:
        APIServer().create(body)
    assert [f"{c['field']}: {c['message']}" for c in err.value.causes] == causes


def test_a_secret_over_a_mebibyte_is_too_long() -> None:
    big = "a" * (512 * 1024 + 1)
    with pytest.raises(ApiError) as err:
        APIServer().create(_secret(stringData={"a": big, "b": big}))
    assert [f"{c['field']}: {c['message']}" for c in err.value.causes] == [
        "data: Too long: may not be more than 1048576 bytes"]
