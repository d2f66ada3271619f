"""fakeapi over HTTP, driven through a second client library: lightkube (synchronous ``Client``).

The same ground as tests/test_http_kubernetes_client.py, seen by a client
written independently of the official one (httpx transport, pydantic models,
its own watch loop, paging and condition waiting). Each test has its own
server on a free port; watches are bounded by ``server_timeout`` and stop as
soon as they have seen what they wait for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.generic_resource import create_namespaced_resource, load_in_cluster_generic_resources
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.operators import in_, not_in
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.resources.core_v1 import ConfigMap, Namespace, Pod
from lightkube.types import CascadeType, PatchType
from support import widget_crd

from fakeapi.http import serve
from fakeapi.server.apiserver import APIServer

NS = "ns"
WATCH_TIMEOUT = 10
Widget = create_namespaced_resource("example.com", "v1", "Widget", "widgets")


@pytest.fixture
def kube() -> Iterator[Any]:
    """A lightkube Client on a fresh server, with namespace ``ns`` and the Widget CRD created through it.

    Typed ``Any`` because lightkube's models make every field Optional.
    """
    api = APIServer()
    with serve(api) as endpoint:
        c: Any = Client(KubeConfig.from_file(endpoint.kubeconfig_path), field_manager="tests")
        c.create(Namespace(metadata=ObjectMeta(name=NS)))
        c.create(CustomResourceDefinition.from_dict(widget_crd()))
        try:
            yield c
        finally:
            c.close()


def cm(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> ConfigMap:
    """A ConfigMap in ``ns``."""
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS, labels=labels), data=data)


def expect(fn: Any, code: int, reason: str, message: str | None = None) -> ApiError:
    """``fn`` must raise lightkube's ApiError carrying that metav1.Status."""
    with pytest.raises(ApiError) as info:
        fn()
    status = info.value.status
    assert status.code == code and status.reason == reason, status
    assert status.status == "Failure"
    if message is not None:
        assert status.message == message
    return info.value


def test_configmap_crud(kube: Any) -> None:
    made = kube.create(cm("a", {"app": "x"}, {"k": "v"}))
    assert made.metadata.uid and made.metadata.creationTimestamp is not None
    got = kube.get(ConfigMap, "a", namespace=NS)
    assert got.data == {"k": "v"}
    got.data = {"k": "w"}
    replaced = kube.replace(got)
    assert replaced.data == {"k": "w"}
    assert int(replaced.metadata.resourceVersion) > int(made.metadata.resourceVersion)
    assert [c.metadata.name for c in kube.list(ConfigMap, namespace=NS)] == ["a"]
    kube.delete(ConfigMap, "a", namespace=NS)
    expect(lambda: kube.get(ConfigMap, "a", namespace=NS), 404, "NotFound", 'configmaps "a" not found')


def test_errors_conflicts_and_validation(kube: Any) -> None:
    first = kube.create(cm("a", data={"k": "1"}))
    expect(lambda: kube.create(cm("a")), 409, "AlreadyExists", 'configmaps "a" already exists')
    kube.patch(ConfigMap, "a", {"data": {"k": "2"}}, namespace=NS)
    first.data = {"k": "3"}
    expect(lambda: kube.replace(first), 409, "Conflict")
    expect(lambda: kube.create(Widget(metadata=ObjectMeta(name="w", namespace=NS), spec={"mode": "z"})),
           422, "Invalid")
    expect(lambda: kube.create(ConfigMap(metadata=ObjectMeta(name="b", namespace="nope"))), 404, "NotFound",
           'namespaces "nope" not found')


def test_custom_resources_and_status(kube: Any) -> None:
    made = kube.create(Widget(metadata=ObjectMeta(name="w1", namespace=NS), spec={"items": ["a"]},
                              status={"phase": "dropped"}))
    assert made.spec == {"items": ["a"], "replicas": 1} and made.status is None
    out = kube.patch(Widget.Status, "w1", {"status": {"phase": "Ready"}}, namespace=NS, patch_type=PatchType.MERGE)
    assert out.status == {"phase": "Ready"} and out.metadata.generation == 1
    assert kube.get(Widget.Status, "w1", namespace=NS).status == {"phase": "Ready"}
    out = kube.patch(Widget, "w1", {"spec": {"items": ["b"]}}, namespace=NS, patch_type=PatchType.MERGE)
    assert out.spec["items"] == ["b"] and out.metadata.generation == 2
    out = kube.patch(Widget, "w1", [{"op": "add", "path": "/spec/mode", "value": "a"}], namespace=NS,
                     patch_type=PatchType.JSON)
    assert out.spec["mode"] == "a"
    expect(lambda: kube.patch(Widget, "w1", {"spec": {}}, namespace=NS, patch_type=PatchType.STRATEGIC),
           415, "UnsupportedMediaType")
    replaced = kube.replace(Widget.Status(metadata=out.metadata, status={"phase": "Done"}, spec={"items": []}))
    assert replaced.status == {"phase": "Done"} and replaced.spec["items"] == ["b"]
    kube.delete(Widget, "w1", namespace=NS)
    expect(lambda: kube.get(Widget, "w1", namespace=NS), 404, "NotFound", 'widgets.example.com "w1" not found')


def test_patch_types_on_a_builtin(kube: Any) -> None:
    pod = Pod(metadata=ObjectMeta(name="p", namespace=NS),
              spec=PodSpec(containers=[Container(name="a", image="one"), Container(name="b", image="two")]))
    kube.create(pod)
    out = kube.patch(Pod, "p", {"spec": {"containers": [{"name": "b", "image": "three"}]}}, namespace=NS)
    assert [(c.name, c.image) for c in out.spec.containers] == [("a", "one"), ("b", "three")]  # strategic: by name
    out = kube.patch(Pod, "p", {"metadata": {"labels": {"x": "1"}}}, namespace=NS, patch_type=PatchType.MERGE)
    assert out.metadata.labels == {"x": "1"}
    out = kube.patch(Pod, "p", [{"op": "remove", "path": "/metadata/labels/x"}], namespace=NS,
                     patch_type=PatchType.JSON)
    assert not out.metadata.labels
    expect(lambda: kube.patch(Pod, "p", [{"op": "remove", "path": "/metadata/labels/x"}], namespace=NS,
                              patch_type=PatchType.JSON),
           422, "Invalid", "the server rejected our request due to an error in our request")


def test_selectors_and_paging(kube: Any) -> None:
    kube.create(cm("a", {"env": "prod"}))
    kube.create(cm("b", {"env": "dev", "legacy": ""}))
    kube.create(cm("c"))

    def sel(**labels: Any) -> list[str]:
        return [c.metadata.name for c in kube.list(ConfigMap, namespace=NS, labels=labels)]

    assert sel(env=in_(["prod", "dev"])) == ["a", "b"]
    assert sel(env=not_in(["prod"])) == ["b", "c"]
    assert sel(env="prod") == ["a"]
    assert [c.metadata.name for c in kube.list(ConfigMap, namespace=NS, fields={"metadata.name": "c"})] == ["c"]
    for i in range(7):
        kube.create(cm(f"p{i}", {"paged": "yes"}))
    paged = [c.metadata.name for c in kube.list(ConfigMap, namespace=NS, labels={"paged": "yes"}, chunk_size=3)]
    assert paged == [f"p{i}" for i in range(7)]
    with pytest.raises(ApiError) as info:
        list(kube.list(ConfigMap, namespace=NS, fields={"data.x": "1"}))
    assert info.value.status.code == 400 and info.value.status.message == "field label not supported: data.x"


def test_watch_in_order_and_resume(kube: Any) -> None:
    start = kube.create(cm("a", data={"k": "0"})).metadata.resourceVersion
    kube.patch(ConfigMap, "a", {"data": {"k": "1"}}, namespace=NS)
    kube.delete(ConfigMap, "a", namespace=NS)
    seen = []
    for kind, obj in kube.watch(ConfigMap, namespace=NS, resource_version=start, server_timeout=WATCH_TIMEOUT):
        seen.append((kind, obj.metadata.name, obj.data["k"]))
        if len(seen) == 2:
            break
    assert seen == [("MODIFIED", "a", "1"), ("DELETED", "a", "1")]


def test_watch_live_changes(kube: Any) -> None:
    kube.create(cm("a", {"app": "x"}))
    seen = []
    for kind, obj in kube.watch(ConfigMap, namespace=NS, labels={"app": "x"}, server_timeout=WATCH_TIMEOUT):
        seen.append((kind, obj.metadata.name))
        if len(seen) == 1:  # the initial ADDED: the watch is established
            kube.patch(ConfigMap, "a", {"data": {"k": "v"}}, namespace=NS)
            kube.patch(ConfigMap, "a", {"metadata": {"labels": {"app": "y"}}}, namespace=NS)
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_wait_for_crd_condition_and_discover_generic_resources(kube: Any) -> None:
    crd = kube.wait(CustomResourceDefinition, "widgets.example.com", for_conditions=["Established"])
    assert crd.status.acceptedNames.kind == "Widget"
    load_in_cluster_generic_resources(kube)


def test_dry_run_and_delete_options(kube: Any) -> None:
    kube.create(cm("a"), dry_run=True)
    expect(lambda: kube.get(ConfigMap, "a", namespace=NS), 404, "NotFound")
    kube.create(cm("a"))
    kube.delete(ConfigMap, "a", namespace=NS, cascade=CascadeType.ORPHAN)
    kept = kube.get(ConfigMap, "a", namespace=NS)
    assert kept.metadata.finalizers == ["orphan"] and kept.metadata.deletionTimestamp is not None
    kube.create(cm("b"))
    kube.create(cm("c"))
    kube.deletecollection(ConfigMap, namespace=NS)
    remaining = [c.metadata.name for c in kube.list(ConfigMap, namespace=NS)]
    assert remaining == ["a"]  # still held by its orphan finalizer
