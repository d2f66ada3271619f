"""What Go's decoders report for JSON that does not fit a built-in kind (fakeapi.codec.gounmarshal, fakeapi.codec.fromunstructured).

The messages are those of ``encoding/json`` (``sigs.k8s.io/json``), ``time.Parse``,
``base64.StdEncoding``, ``resource.Quantity`` and ``runtime.DefaultUnstructuredConverter``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from support import one_value_mutations

from fakeapi.codec.fromunstructured import from_unstructured_error, go_sprint
from fakeapi.codec.gomodel import builtin_go_type, go_type_string
from fakeapi.codec.gounmarshal import (
    _Abort,
    _Decoder,
    _fits_value,
    base64_error,
    quantity_error,
    time_parse_error,
    unmarshal_error,
)

POD = builtin_go_type("Pod")
SECRET = builtin_go_type("Secret")
DEPLOYMENT_SPEC = builtin_go_type("io.k8s.api.apps.v1.DeploymentSpec")
QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def _container(**fields: Any) -> dict[str, Any]:
    return _pod(containers=[{"name": "c", "image": "i", **fields}])


# (case, document, the error or None)
UNMARSHAL: list[tuple[str, dict[str, Any], str | None]] = [
    ("a valid pod", _pod(restartPolicy="Never", activeDeadlineSeconds=30), None),
    ("nulls leave any value as it is", _pod(nodeSelector=None, containers=None, activeDeadlineSeconds=None), None),
    ("unknown fields are skipped", _pod(notAField={"x": 1}), None),
    ("a number into a string (the user error most often met)",
     _container(env=[{"name": "X", "value": 1}]),
     "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string"),
    ("a bool into a string", _container(env=[{"name": "X", "value": True}]),
     "json: cannot unmarshal bool into Go struct field EnvVar.spec.containers.env.value of type string"),
    ("an object into a string", _container(env=[{"name": "X", "value": {}}]),
     "json: cannot unmarshal object into Go struct field EnvVar.spec.containers.env.value of type string"),
    ("a string into an int64", _pod(activeDeadlineSeconds="30"),
     "json: cannot unmarshal string into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64"),
    ("a fraction into an int32: the number's text", _container(ports=[{"containerPort": 1.5}]),
     "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort "
     "of type int32"),
    ("an integral float into an int: Go's ParseInt refuses 80.0", _container(ports=[{"containerPort": 80.0}]),
     "json: cannot unmarshal number 80.0 into Go struct field ContainerPort.spec.containers.ports.containerPort "
     "of type int32"),
    ("an int32 overflow", _container(ports=[{"containerPort": 2**31}]),
     "json: cannot unmarshal number 2147483648 into Go struct field ContainerPort.spec.containers.ports.containerPort "
     "of type int32"),
    ("an int64 is wide", _pod(activeDeadlineSeconds=2**40), None),
    ("a string into a slice of structs", _pod(containers="c"),
     "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ("a string into a slice's struct element: the element's type",
     _pod(imagePullSecrets=["x"]),
     "json: cannot unmarshal string into Go struct field PodSpec.spec.imagePullSecrets of type v1.LocalObjectReference"),
    ("a string into a struct field of the root", {"apiVersion": "v1", "kind": "Pod", "spec": "x"},
     "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"),
    ("a map's value: the key is not in the path", _pod(nodeSelector={"a": 1}),
     "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string"),
    ("a list into a map", _pod(nodeSelector=["a"]),
     "json: cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type map[string]string"),
    ("a string into a bool", _pod(hostNetwork="true"),
     "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"),
    ("metadata", {"metadata": {"labels": {"a": 1}}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
    ("the first error in document order", {"spec": {"hostNetwork": 1, "activeDeadlineSeconds": "x"},
                                           "metadata": {"name": 1}},
     "json: cannot unmarshal number into Go struct field PodSpec.spec.hostNetwork of type bool"),
    ("an UnmarshalJSON error stops decoding and wins over an earlier type error",
     {"spec": {"hostNetwork": 1}, "status": {"startTime": 5}},
     "json: cannot unmarshal number into Go struct field PodStatus.status.startTime of type string"),
    ("a time that does not parse", {"status": {"startTime": "yesterday"}},
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
    ("a quantity that does not parse", _container(resources={"limits": {"cpu": "lots"}}), QUANTITY_FORMAT),
    ("a number is a quantity", _container(resources={"limits": {"cpu": 1.5, "memory": 1024}}), None),
    ("an int-or-string: a bool", _container(livenessProbe={"httpGet": {"port": True}}),
     "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port "
     "of type int32"),
    ("an int-or-string: a fraction", _container(livenessProbe={"httpGet": {"port": 1.5}}),
     "json: cannot unmarshal number 1.5 into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port "
     "of type int32"),
    ("an int-or-string: a name or a number", _container(livenessProbe={"httpGet": {"port": "http"}},
                                                         readinessProbe={"httpGet": {"port": 8080}}), None),
]


@pytest.mark.parametrize(("case", "doc", "error"), UNMARSHAL, ids=[c[0] for c in UNMARSHAL])
def test_unmarshal_error(case: str, doc: dict[str, Any], error: str | None) -> None:
    assert unmarshal_error(doc, POD) == error


#: A Pod that reaches most of the decoder's branches: times, quantities, int-or-strings, []byte-free
#: maps and slices of strings and of structs, pointers, free-form values.
RICH_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"a": "b"}, "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 3,
                 "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u", "controller": True}],
                 "finalizers": ["f"], "managedFields": [{"manager": "m", "fieldsV1": {"f:a": {}}}]},
    "spec": {"containers": [{"name": "c", "image": "i", "args": ["a"], "ports": [{"containerPort": 80}],
                             "resources": {"limits": {"cpu": "1"}, "requests": {}},
                             "livenessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 5},
                             "env": [{"name": "E", "value": "v"}], "securityContext": {}}],
             "nodeSelector": {"k": "v"}, "activeDeadlineSeconds": 30, "hostNetwork": False,
             "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}], "overhead": {"memory": "1Mi"},
             "tolerations": [{"key": "k", "tolerationSeconds": 5}]},
    "status": {"phase": "Running", "startTime": "2026-01-01T00:00:01Z",
               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"}]},
}
#: What replaces each value in turn: every JSON type, out-of-range and malformed texts.
STAND_INS: tuple[Any, ...] = (None, "x", "", 1, 0, 2**31, 2**63, 1.5, 80.0, True, [], {}, ["a"], [1], [None],
                              {"a": "b"}, {"a": 1}, [{"name": "n"}], "2026-01-01T00:00:00Z", "1Gi", "12q",
                              "2026-13-01T00:00:00Z", "YWI=", "YWI")


def _mutations(doc: Any) -> list[Any]:
    """``doc`` with one value (at any depth, containers included) replaced by each stand-in."""
    return one_value_mutations(doc, STAND_INS)


def _full_decoder(doc: Any, t: Any) -> str | None:
    d = _Decoder(False)
    try:
        d.value(doc, t, "", (), None)
    except _Abort as e:
        return str(e)
    return d.saved


@pytest.mark.parametrize("kind", ["Pod", "Secret", "Deployment", "Job", "NetworkPolicy", "Namespace"])
def test_the_fast_check_agrees_with_the_decoder(kind: str) -> None:
    """unmarshal_error's pre-check (no paths, no messages) says "decodes" exactly when the decoder finds
    no error, for every one-value change of a document (so its answer is never the pre-check's guess)."""
    t = builtin_go_type(kind)
    docs = {"Pod": RICH_POD, "Secret": {"data": {"a": "YWI="}, "type": "Opaque", "metadata": {"name": "s"}},
            "Deployment": {"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                                    "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
                                    "template": {"spec": RICH_POD["spec"]}}},
            "Job": {"spec": {"backoffLimit": 6, "template": {"spec": RICH_POD["spec"]}}},
            "NetworkPolicy": {"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 8080}],
                                                                       "from": [{"ipBlock": {"cidr": "1/8"}}]}]}},
            "Namespace": {"metadata": {"name": "n"}, "spec": {"finalizers": ["k"]}, "status": {"phase": "A"}}}
    seen = {True: 0, False: 0}
    for doc in [docs[kind], *_mutations(docs[kind])]:
        full = _full_decoder(doc, t)
        assert _fits_value(doc, t, None) is (full is None), (doc, full)
        assert unmarshal_error(doc, t) == full
        seen[full is None] += 1
    assert seen[True] and seen[False]


def test_the_fast_check_skips_the_base_as_the_decoder_does() -> None:
    """A value shared with the base is not walked by either (a stored object's own value decodes)."""
    base = {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}, "metadata": {"labels": {}}}
    for doc in _mutations(base):
        shared = {**doc, "spec": base["spec"]}
        d = _Decoder(False)
        try:
            d.value(shared, POD, "", (), base)
            full = d.saved
        except _Abort as e:
            full = str(e)
        assert unmarshal_error(shared, POD, base=base) == full
        if _fits_value(shared, POD, base):
            assert full is None


def test_a_go_map_marshalled_is_decoded_in_key_order() -> None:
    doc = {"spec": {"hostNetwork": 1, "activeDeadlineSeconds": "x"}}
    assert unmarshal_error(doc, POD, sorted_keys=True) == (
        "json: cannot unmarshal string into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64")


def test_a_patched_document_is_walked_only_where_it_is_not_the_base() -> None:
    base = {"spec": {"containers": [{"name": "a", "image": "x"}], "activeDeadlineSeconds": 5},
            "metadata": {"labels": {"a": "b"}}}
    patched = {**base, "metadata": {"labels": {"a": 1}}}  # (the spec is the base's own)
    assert unmarshal_error(patched, POD, sorted_keys=True, base=base) == unmarshal_error(
        patched, POD, sorted_keys=True) == "json: cannot unmarshal number into Go struct field ObjectMeta" \
        ".metadata.labels of type string"
    new_spec = {**base["spec"], "activeDeadlineSeconds": "x"}
    assert unmarshal_error({**base, "spec": new_spec}, POD, base=base) == (
        "json: cannot unmarshal string into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64")
    assert unmarshal_error({**base}, POD, base=base) is None


def test_secret_data_is_base64() -> None:
    assert unmarshal_error({"data": {"a": "YWI="}}, SECRET) is None
    assert unmarshal_error({"data": {"a": "YWI"}}, SECRET) == "illegal base64 data at input byte 0"
    assert unmarshal_error({"data": {"a": 3}}, SECRET) == (
        "json: cannot unmarshal number into Go struct field Secret.data of type []uint8")


def test_an_apps_struct() -> None:
    assert unmarshal_error({"replicas": "3"}, DEPLOYMENT_SPEC) == (
        "json: cannot unmarshal string into Go struct field DeploymentSpec.replicas of type int32")


@pytest.mark.parametrize(("definition", "field", "expected"), [
    ("Pod", "spec", "v1.PodSpec"),
    ("io.k8s.api.core.v1.PodSpec", "containers", "[]v1.Container"),
    ("io.k8s.api.core.v1.PodSpec", "nodeSelector", "map[string]string"),
    ("io.k8s.api.core.v1.PodSpec", "activeDeadlineSeconds", "int64"),
    ("io.k8s.api.core.v1.ContainerPort", "containerPort", "int32"),
    ("io.k8s.api.core.v1.PodStatus", "startTime", "v1.Time"),
    ("io.k8s.api.core.v1.ResourceRequirements", "limits", "map[string]resource.Quantity"),
    ("io.k8s.api.core.v1.HTTPGetAction", "port", "intstr.IntOrString"),
    ("Secret", "data", "map[string][]uint8"),
    ("io.k8s.api.core.v1.ObjectFieldSelector", "fieldPath", "string"),
    ("io.k8s.api.core.v1.ContainerStatus", "ready", "bool"),
])
def test_go_type_string(definition: str, field: str, expected: str) -> None:
    field_type = builtin_go_type(definition).fields[field].type
    assert go_type_string(field_type) == expected


# --- time.Parse(RFC3339) and RFC3339Micro ---------------------------------------------------------

_LAYOUT = '"2006-01-02T15:04:05Z07:00"'


@pytest.mark.parametrize(("text", "micro", "error"), [
    ("2024-02-29T23:59:59Z", False, None),
    ("2024-02-29T23:59:59.123Z", False, None),  # a fraction the layout does not name is read all the same
    ("2024-02-29T23:59:59+05:30", False, None),
    ("2024-02-29T3:59:59Z", False, None),  # the hour may have one digit
    ("", False, f'parsing time "" as {_LAYOUT}: cannot parse "" as "2006"'),
    ("24-02-29T23:59:59Z", False, f'parsing time "24-02-29T23:59:59Z" as {_LAYOUT}: cannot parse "24-02-29T23:59:59Z" as "2006"'),
    ("2024/02/29T23:59:59Z", False, f'parsing time "2024/02/29T23:59:59Z" as {_LAYOUT}: cannot parse "/02/29T23:59:59Z" as "-"'),
    ("2024-2-29T23:59:59Z", False, f'parsing time "2024-2-29T23:59:59Z" as {_LAYOUT}: cannot parse "2-29T23:59:59Z" as "01"'),
    ("2024-13-01T00:00:00Z", False, 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2023-02-29T00:00:00Z", False, 'parsing time "2023-02-29T00:00:00Z": day out of range'),
    ("2024-01-01T24:00:00Z", False, 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ("2024-01-01T00:60:00Z", False, 'parsing time "2024-01-01T00:60:00Z": minute out of range'),
    ("2024-01-01 00:00:00Z", False, f'parsing time "2024-01-01 00:00:00Z" as {_LAYOUT}: cannot parse " 00:00:00Z" as "T"'),
    ("2024-01-01T00:00:00", False, f'parsing time "2024-01-01T00:00:00" as {_LAYOUT}: cannot parse "" as "Z07:00"'),
    ("2024-01-01T00:00:00+0100", False,
     f'parsing time "2024-01-01T00:00:00+0100" as {_LAYOUT}: cannot parse "+0100" as "Z07:00"'),
    ("2024-01-01T00:00:00Zjunk", False, 'parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"'),
    ("2024-01-01T00:00:00.123456Z", True, None),
    ("2024-01-01T00:00:00Z", True,
     'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'),
])
def test_time_parse_error(text: str, micro: bool, error: str | None) -> None:
    assert time_parse_error(text, micro=micro) == error


# --- base64.StdEncoding.Decode ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "error"), [
    ("", None),
    ("YQ==", None),
    ("YWI=", None),
    ("YWJj", None),
    ("YW\nJj\r\n", None),  # newlines are skipped anywhere
    ("YQ", "illegal base64 data at input byte 0"),  # padding is required
    ("YWJ", "illegal base64 data at input byte 0"),
    ("Y", "illegal base64 data at input byte 0"),
    ("YW?j", "illegal base64 data at input byte 2"),
    ("=AAA", "illegal base64 data at input byte 0"),
    ("YQ=", "illegal base64 data at input byte 3"),  # "==" expected: not enough padding
    ("YQ=a", "illegal base64 data at input byte 2"),
    ("YQ==YQ==", "illegal base64 data at input byte 4"),  # trailing garbage after padding
    ("YWJjZA==", None),
    ("é===", "illegal base64 data at input byte 0"),
])
def test_base64_error(text: str, error: str | None) -> None:
    assert base64_error(text) == error


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 6, 700])
def test_base64_of_every_length_decodes(size: int) -> None:
    text = base64.b64encode(bytes(range(256)) * 3)[: 4 * ((size + 2) // 3)].decode()
    assert base64_error(text) is None
    assert base64_error(text + "\n") is None  # (the loop's path: a line break)
    assert base64_error(text + "=") == f"illegal base64 data at input byte {len(text)}"
    assert base64_error(text + "YQ=") == f"illegal base64 data at input byte {len(text) + 3}"


@pytest.mark.parametrize(("value", "error"), [
    ("100m", None), (" 1Gi ", None), (3, None), (1.5, None),
    ("lots", QUANTITY_FORMAT), ("", QUANTITY_FORMAT), (True, QUANTITY_FORMAT), ({}, QUANTITY_FORMAT),
])
def test_quantity_error(value: Any, error: str | None) -> None:
    assert quantity_error(value) == error


# --- runtime.DefaultUnstructuredConverter.FromUnstructured (a strategic merge patch's result) ------

FROM_UNSTRUCTURED: list[tuple[str, dict[str, Any], str | None]] = [
    ("a valid pod", _pod(activeDeadlineSeconds=30), None),
    ("an integral float into an int converts", _pod(activeDeadlineSeconds=30.0), None),
    ("a fraction into an int", _pod(activeDeadlineSeconds=1.5), "cannot convert float64 to int64"),
    ("a string into an int", _pod(activeDeadlineSeconds="30"), "unrecognized type: int64"),
    ("an int into a string: Go converts integers to strings", _container(env=[{"name": "X", "value": 1}]),
     "cannot convert int64 to string"),
    ("a bool into a string", _container(env=[{"name": "X", "value": True}]), "unrecognized type: string"),
    ("a float into a string", _container(env=[{"name": "X", "value": 1.5}]), "unrecognized type: string"),
    ("a string into a bool", _pod(hostNetwork="yes"), "unrecognized type: bool"),
    ("a string into a struct", {"spec": "x"}, "cannot restore struct from: string"),
    ("a map into a slice", _pod(containers={"a": 1}), "cannot restore slice from map"),
    ("a number into a map", _pod(nodeSelector=3), "cannot restore map from int64"),
    ("a time from a number", {"status": {"startTime": 5}},
     "json: cannot unmarshal number into Go value of type string"),
    ("an int-or-string from a bool", _container(livenessProbe={"httpGet": {"port": False}}),
     "json: cannot unmarshal bool into Go value of type int32"),
    ("an int-or-string from a fraction", _container(livenessProbe={"httpGet": {"port": 1.5}}),
     "json: cannot unmarshal number 1.5 into Go value of type int32"),
    ("a quantity", _container(resources={"requests": {"cpu": "x"}}), QUANTITY_FORMAT),
]


@pytest.mark.parametrize(("case", "doc", "error"), FROM_UNSTRUCTURED, ids=[c[0] for c in FROM_UNSTRUCTURED])
def test_from_unstructured_error(case: str, doc: dict[str, Any], error: str | None) -> None:
    assert from_unstructured_error(doc, POD) == error


def test_from_unstructured_base64() -> None:
    assert from_unstructured_error({"data": {"a": "YQ"}}, SECRET) == (
        "error decoding from json: illegal base64 data at input byte 0")
    assert from_unstructured_error({"data": {"a": ""}}, SECRET) is None


@pytest.mark.parametrize(("value", "text"), [
    ({"spec": {"replicas": "3", "paused": True}}, "map[spec:map[paused:true replicas:3]]"),
    ({"b": [1, 2.5, None], "a": "x y"}, "map[a:x y b:[1 2.5 <nil>]]"),
    ({"n": 3.0, "e": 1e21}, "map[e:1e+21 n:3]"),
    ({}, "map[]"),
])
def test_go_sprint(value: Any, text: str) -> None:
    assert go_sprint(value) == text
