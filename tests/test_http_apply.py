"""Server-side apply over HTTP, through lightkube's ``Client.apply`` (``application/apply-patch+yaml``).

What a client meets: the field manager and ``force`` travel as query parameters,
an apply of a missing object answers 201 and creates it, a conflict is a 409
whose causes name each field and its owner, and every object carries
``metadata.managedFields``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap

from fakeapi.http import serve
from fakeapi.server.apiserver import APIServer


@pytest.fixture
def kube() -> Iterator[Any]:
    """A lightkube Client (field manager ``tests``) on a fresh server."""
    with serve(APIServer()) as endpoint:
        c: Any = Client(KubeConfig.from_file(endpoint.kubeconfig_path), field_manager="tests")
        try:
            yield c
        finally:
            c.close()


def cm(data: dict[str, str]) -> ConfigMap:
    """The ConfigMap ``a`` in ``default``."""
    return ConfigMap(metadata=ObjectMeta(name="a", namespace="default"), data=data)


def test_apply_creates_and_records_the_manager(kube: Any) -> None:
    made = kube.apply(cm({"k": "v"}), field_manager="deployer")
    assert made.data == {"k": "v"}
    [entry] = made.metadata.managedFields
    assert (entry.manager, entry.operation, entry.apiVersion, entry.fieldsType) == ("deployer", "Apply", "v1",
                                                                                     "FieldsV1")
    assert entry.fieldsV1 == {"f:data": {"f:k": {}}}


def test_apply_conflict_is_409_with_a_cause_per_field_and_force_takes_it(kube: Any) -> None:
    kube.apply(cm({"k": "v"}), field_manager="deployer")
    got = kube.get(ConfigMap, "a", namespace="default")
    got.data = {"k": "edited"}
    kube.replace(got, field_manager="editor")
    with pytest.raises(ApiError) as info:
        kube.apply(cm({"k": "v"}), field_manager="deployer")
    status = info.value.status
    assert (status.code, status.reason) == (409, "Conflict")
    assert status.message == 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.k'
    assert [(c.reason, c.message, c.field) for c in status.details.causes] == [
        ("FieldManagerConflict", 'conflict with "editor" using v1', ".data.k")]
    forced = kube.apply(cm({"k": "v"}), field_manager="deployer", force=True)
    assert forced.data == {"k": "v"}
    assert [m.manager for m in forced.metadata.managedFields] == ["deployer"]


def test_apply_without_field_manager_is_422(kube: Any) -> None:
    body = b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}'
    res = kube._client._client.patch("/api/v1/namespaces/default/configmaps/a", content=body,
                                     headers={"Content-Type": "application/apply-patch+yaml"})
    assert res.status_code == 422
    assert res.json()["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                     "is required for apply patch")


def test_apply_of_a_missing_object_answers_201(kube: Any) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"
    path = "/api/v1/namespaces/default/configmaps/a?fieldManager=m"
    res = kube._client._client.patch(path, content=body, headers={"Content-Type": "application/apply-patch+yaml"})
    assert res.status_code == 201
    again = kube._client._client.patch(path, content=body, headers={"Content-Type": "application/apply-patch+yaml"})
    assert again.status_code == 200
    assert again.json()["metadata"]["resourceVersion"] == res.json()["metadata"]["resourceVersion"]



def test_apply_of_list_labels_is_a_500_over_the_wire() -> None:
    """``metadata.labels`` sent as a list: kube-apiserver's 500 ``failed to create typed patch object``
    (structured-merge-diff types the configuration first), as a Status with no reason."""
    import http.client
    import json

    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default",
                                                                  "labels": ["x"]}}
    with serve(APIServer()) as ep:
        conn = http.client.HTTPConnection(ep.host, ep.port, timeout=10)
        try:
            conn.request("PATCH", "/api/v1/namespaces/default/configmaps/a?fieldManager=deployer",
                         body=json.dumps(body).encode(), headers={"Content-Type": "application/apply-patch+yaml"})
            resp = conn.getresponse()
            status = json.loads(resp.read())
        finally:
            conn.close()
    assert resp.status == 500 and status["code"] == 500 and not status.get("reason")
    assert status["message"] == ("failed to create typed patch object (default/a; /v1, Kind=ConfigMap): "
                                 ".metadata.labels: expected map, got &{[x]}")
