"""fakeapi over HTTP, driven only through the official ``kubernetes`` Python client (issue 7).

Each test gets its own server on a free port (``serve(api, port=0)``) and its
own kubeconfig, and talks to it with ``CoreV1Api``, ``CustomObjectsApi``,
``ApiextensionsV1Api`` and ``watch.Watch``. Watches are bounded by
``timeout_seconds`` and stop as soon as they have seen what they wait for;
nothing sleeps.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client import ApiException
from support import widget_crd

from fakeapi.http import Endpoint, serve
from fakeapi.server.apiserver import APIServer

NS = "ns"
GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"
WATCH_TIMEOUT = 10  # seconds: the bound of every watch in this file (none should come near it)


# ------------------------------------------------------------------ fixtures


@pytest.fixture
def server() -> Iterator[tuple[APIServer, Endpoint]]:
    """A fresh in-process server and its HTTP endpoint."""
    api = APIServer()
    with serve(api) as endpoint:
        yield api, endpoint


@pytest.fixture
def api_client(server: tuple[APIServer, Endpoint]) -> Iterator[Any]:
    """An ``ApiClient`` configured from the endpoint's kubeconfig."""
    c = config.new_client_from_config(config_file=server[1].kubeconfig_path)
    yield c
    c.close()


@pytest.fixture
def core(api_client: Any) -> Any:
    """``CoreV1Api``, with namespace ``ns`` created through it."""
    v1 = client.CoreV1Api(api_client)
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    return v1


@pytest.fixture
def custom(api_client: Any, core: Any) -> Any:
    """``CustomObjectsApi``, with the Widget CRD (status subresource on) created through the client."""
    extensions(api_client).create_custom_resource_definition(widget_crd())
    return client.CustomObjectsApi(api_client)


def extensions(api_client: Any) -> Any:
    """``ApiextensionsV1Api`` (typed Any: CRDs are passed as plain dicts)."""
    return client.ApiextensionsV1Api(api_client)


def cm(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> Any:
    """A typed ConfigMap body (no apiVersion/kind: the server takes them from the URL)."""
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


def widget(name: str, spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """A Widget body."""
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget", "metadata": {"name": name, **meta},
            "spec": spec if spec is not None else {}}


def status_of(e: ApiException) -> dict[str, Any]:
    """The ``metav1.Status`` body of a failed call."""
    body: dict[str, Any] = json.loads(e.body or "")
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["metadata"] == {}
    assert body["code"] == e.status
    return body


def expect(fn: Any, code: int, reason: str | None, message: str | None = None) -> dict[str, Any]:
    """Call ``fn``; it must raise ApiException with that HTTP status, Status reason and message."""
    with pytest.raises(ApiException) as info:
        fn()
    e = info.value
    assert e.status == code, e.body
    body = status_of(e)
    if reason:
        assert body.get("reason") == reason, body
    else:
        assert "reason" not in body, body
    if message is not None:
        assert body["message"] == message, body
    return body


def names(items: list[Any]) -> list[str]:
    """Names of typed or dict objects."""
    return [i["metadata"]["name"] if isinstance(i, dict) else i.metadata.name for i in items]


# ------------------------------------------------------------------- discovery


def test_version_and_discovery(api_client: Any, custom: Any) -> None:
    info = client.VersionApi(api_client).get_code()
    assert info.git_version.startswith("v1.") and info.major == "1"
    assert client.CoreApi(api_client).get_api_versions().versions == ["v1"]
    groups: dict[str, Any] = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert groups["example.com"].preferred_version.group_version == "example.com/v1"
    assert "apiextensions.k8s.io" in groups
    core: dict[str, Any] = {r.name: r for r in client.CoreV1Api(api_client).get_api_resources().resources}
    assert core["configmaps"].kind == "ConfigMap" and core["configmaps"].namespaced
    assert "cm" in core["configmaps"].short_names
    assert sorted(core["configmaps"].verbs) == sorted(
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])
    assert core["pods/status"].verbs == ["get", "patch", "update"]
    assert core["namespaces"].namespaced is False
    widgets = {r.name: r for r in client.CustomObjectsApi(api_client).get_api_resources(GROUP, VERSION).resources}
    assert widgets["widgets"].kind == "Widget" and "widgets/status" in widgets


# ------------------------------------------------------------------------ CRUD


def test_configmap_crud(core: Any) -> None:
    created, code, _ = core.create_namespaced_config_map_with_http_info(NS, cm("a", {"app": "x"}, {"k": "v"}))
    assert code == 201
    assert created.metadata.namespace == NS and created.metadata.uid and int(created.metadata.resource_version) > 0
    got = core.read_namespaced_config_map("a", NS)
    assert got.data == {"k": "v"} and got.metadata.resource_version == created.metadata.resource_version
    got.data["k"] = "w"
    replaced = core.replace_namespaced_config_map("a", NS, got)
    assert replaced.data == {"k": "w"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    assert names(core.list_namespaced_config_map(NS).items) == ["a"]
    assert "a" in names(core.list_config_map_for_all_namespaces().items)
    status = core.delete_namespaced_config_map("a", NS)
    assert status["status"] == "Success" and status["details"]["name"] == "a"
    assert status["details"]["kind"] == "configmaps"
    expect(lambda: core.read_namespaced_config_map("a", NS), 404, "NotFound", 'configmaps "a" not found')


def test_custom_object_crud(custom: Any) -> None:
    created = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("w1", {"mode": "a"}))
    assert created["spec"] == {"mode": "a", "replicas": 1}  # defaulted by the CRD schema
    assert created["metadata"]["generation"] == 1
    got = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1")
    got["spec"]["replicas"] = 3
    updated = custom.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", got)
    assert updated["spec"]["replicas"] == 3 and updated["metadata"]["generation"] == 2
    listed = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    assert listed["kind"] == "WidgetList" and names(listed["items"]) == ["w1"]
    assert listed["items"][0]["apiVersion"] == "example.com/v1"
    assert names(custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"]) == ["w1"]
    gone = custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1")
    assert gone["status"] == "Success" and gone["details"]["group"] == GROUP
    expect(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1"),
           404, "NotFound", 'widgets.example.com "w1" not found')


def test_cluster_scoped_custom_resource(api_client: Any, custom: Any) -> None:
    crd = widget_crd(scope="Cluster")
    crd["metadata"]["name"] = "gizmos.example.com"
    crd["spec"]["names"] = {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"}
    extensions(api_client).create_custom_resource_definition(crd)
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g1"}, "spec": {}}
    created = custom.create_cluster_custom_object(GROUP, VERSION, "gizmos", body)
    assert "namespace" not in created["metadata"]
    assert custom.get_cluster_custom_object(GROUP, VERSION, "gizmos", "g1")["metadata"]["name"] == "g1"
    # a cluster-scoped kind addressed with a namespace, a namespaced one without: wrong scope
    msg = "the server could not find the requested resource"
    expect(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, NS, "gizmos", "g1"), 404, "NotFound", msg)
    expect(lambda: custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, "w1"), 404, "NotFound", msg)
    expect(lambda: custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, widget("w1")), 404, "NotFound", msg)
    expect(lambda: custom.list_namespaced_custom_object(GROUP, VERSION, NS, "nothings"), 404, "NotFound", msg)


def test_pod_delete_returns_the_object_and_namespace_is_cluster_scoped(core: Any) -> None:
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="p"),
                       spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))
    core.create_namespaced_pod(NS, pod)
    deleted = core.delete_namespaced_pod("p", NS)
    assert deleted.kind == "Pod" and deleted.metadata.name == "p"  # Pods answer DELETE with the object, not a Status
    assert NS in names(core.list_namespace().items)


# ---------------------------------------------------------------------- errors


def test_already_exists_and_missing_namespace(core: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a"))
    body = expect(lambda: core.create_namespaced_config_map(NS, cm("a")), 409, "AlreadyExists",
                  'configmaps "a" already exists')
    assert body["details"] == {"name": "a", "kind": "configmaps"}
    expect(lambda: core.create_namespaced_config_map("nope", cm("b")), 404, "NotFound", 'namespaces "nope" not found')
    assert core.list_namespaced_config_map("nope").items == []


def test_stale_resource_version_is_a_conflict(core: Any, custom: Any) -> None:
    first = core.create_namespaced_config_map(NS, cm("a", data={"k": "1"}))
    core.patch_namespaced_config_map("a", NS, {"data": {"k": "2"}})
    first.data = {"k": "3"}
    with pytest.raises(ApiException) as info:
        core.replace_namespaced_config_map("a", NS, first)
    assert info.value.status == 409 and info.value.reason == "Conflict"  # the HTTP reason phrase
    assert status_of(info.value)["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again")
    w = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("w1"))
    custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", {"spec": {"replicas": 2}})
    stale = {"metadata": {"resourceVersion": w["metadata"]["resourceVersion"]}, "spec": {"replicas": 5}}
    expect(lambda: custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", stale), 409, "Conflict")
    w["metadata"]["resourceVersion"] = ""
    expect(lambda: custom.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", w), 422, "Invalid",
           'widgets.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0: '
           "must be specified for an update")


def test_url_and_body_must_agree(core: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a"))
    expect(lambda: core.replace_namespaced_config_map("a", NS, cm("b")), 400, "BadRequest",
           "the name of the object (b) does not match the name on the URL (a)")
    other = cm("a")
    other.metadata.namespace = "default"
    expect(lambda: core.replace_namespaced_config_map("a", NS, other), 400, "BadRequest",
           "the namespace of the object (default) does not match the namespace on the request (ns)")
    expect(lambda: core.create_namespaced_config_map(NS, other), 400, "BadRequest",
           "the namespace of the provided object does not match the namespace sent on the request")
    wrong = {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    expect(lambda: core.create_namespaced_config_map(NS, wrong), 400, "BadRequest",
           "the API version in the data (apps/v1) does not match the expected API version (v1)")


def test_validation_errors(custom: Any) -> None:
    body = expect(lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, widget("w1", {"mode": "z"})), 422, "Invalid")
    assert body["details"]["kind"] == "Widget" and body["details"]["group"] == GROUP
    assert body["details"]["causes"][0]["field"] == "spec.mode"
    assert body["details"]["causes"][0]["reason"] == "FieldValueNotSupported"
    expect(lambda: custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("Bad_Name")),
           422, "Invalid")
    expect(lambda: custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, label_selector="env in prod"),
           400, "BadRequest")
    expect(lambda: custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, field_selector="spec.mode=a"),
           400, "BadRequest", "field label not supported: spec.mode")


# ----------------------------------------------------------------------- patch


def test_every_patch_type_on_a_configmap(core: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a", {"app": "x"}, {"a": "1"}))
    # a list body is sent as application/json-patch+json
    out = core.patch_namespaced_config_map("a", NS, [{"op": "add", "path": "/data/b", "value": "2"}])
    assert out.data == {"a": "1", "b": "2"}
    # a dict body defaults to application/strategic-merge-patch+json for built-ins
    out = core.patch_namespaced_config_map("a", NS, {"metadata": {"labels": {"tier": "web"}}})
    assert out.metadata.labels == {"app": "x", "tier": "web"}
    out = core.patch_namespaced_config_map("a", NS, {"data": {"a": None}}, _content_type="application/merge-patch+json")
    assert out.data == {"b": "2"}
    # a failing JSON Patch test op: 422 with the generic message
    expect(lambda: core.patch_namespaced_config_map("a", NS, [{"op": "test", "path": "/data/b", "value": "9"}]),
           422, "Invalid", "the server rejected our request due to an error in our request")
    expect(lambda: core.patch_namespaced_config_map("a", NS, {"data": {}}, _content_type="application/yaml"),
           415, "UnsupportedMediaType")
    expect(lambda: core.patch_namespaced_config_map("missing", NS, {"data": {}}), 404, "NotFound",
           'configmaps "missing" not found')


def test_every_patch_type_on_a_custom_object(custom: Any) -> None:
    custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("w1", {"items": ["a"]}))
    out = custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", {"spec": {"items": ["b"]}})
    assert out["spec"]["items"] == ["b"]  # merge patch (the default here): arrays replaced whole
    out = custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", {"spec": {"replicas": None}})
    assert out["spec"]["replicas"] == 1  # removed, then re-defaulted
    out = custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "w1", [{"op": "add", "path": "/spec/mode", "value": "b"}],
        _content_type="application/json-patch+json")
    assert out["spec"]["mode"] == "b"
    body = expect(lambda: custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "w1", {"spec": {}}, _content_type="application/strategic-merge-patch+json"),
        415, "UnsupportedMediaType")
    assert body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


# -------------------------------------------------------------------- status


def test_status_subresource_of_a_custom_resource(custom: Any) -> None:
    body = widget("w1", {"replicas": 2})
    body["status"] = {"phase": "ignored"}
    created = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)
    assert "status" not in created
    out = custom.patch_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "w1", {"status": {"phase": "Ready"}})
    assert out["status"] == {"phase": "Ready"} and out["metadata"]["generation"] == 1
    assert custom.get_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "w1")["status"]["phase"] == "Ready"
    # the main resource ignores status; /status ignores everything but status
    out["status"] = {"phase": "Changed"}
    out = custom.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1", out)
    assert out["status"] == {"phase": "Ready"}
    out["spec"]["replicas"] = 9
    out["status"] = {"phase": "Done", "ready": True}
    out = custom.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "w1", out)
    assert out["spec"]["replicas"] == 2 and out["status"] == {"phase": "Done", "ready": True}


def test_status_subresource_missing_is_not_found(api_client: Any, custom: Any) -> None:
    crd = widget_crd(status=False)
    crd["metadata"]["name"] = "plain.example.com"
    crd["spec"]["names"] = {"kind": "Plain", "plural": "plain", "singular": "plain", "listKind": "PlainList"}
    extensions(api_client).create_custom_resource_definition(crd)
    custom.create_namespaced_custom_object(GROUP, VERSION, NS, "plain", {
        "apiVersion": "example.com/v1", "kind": "Plain", "metadata": {"name": "p1"}, "spec": {}})
    expect(lambda: custom.patch_namespaced_custom_object_status(GROUP, VERSION, NS, "plain", "p1", {"status": {}}),
           404, "NotFound", 'plain.example.com "p1" not found')


def test_pod_status_subresource(core: Any) -> None:
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="p"),
                       spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))
    core.create_namespaced_pod(NS, pod)
    cur = core.read_namespaced_pod_status("p", NS)
    cur.status = client.V1PodStatus(phase="Running")
    cur.spec.containers[0].image = "ignored"
    out = core.replace_namespaced_pod_status("p", NS, cur)
    assert out.status.phase == "Running" and out.spec.containers[0].image == "busybox"


# ---------------------------------------------------------- options: dryRun, fieldValidation


def test_dry_run_changes_nothing(core: Any) -> None:
    out, code, _ = core.create_namespaced_config_map_with_http_info(NS, cm("a", data={"k": "v"}), dry_run="All")
    assert code == 201 and out.metadata.name == "a"
    expect(lambda: core.read_namespaced_config_map("a", NS), 404, "NotFound")
    core.create_namespaced_config_map(NS, cm("a", data={"k": "v"}))
    rv = core.read_namespaced_config_map("a", NS).metadata.resource_version
    assert core.patch_namespaced_config_map("a", NS, {"data": {"k": "dry"}}, dry_run="All").data == {"k": "dry"}
    core.delete_namespaced_config_map("a", NS, dry_run="All")
    after = core.read_namespaced_config_map("a", NS)
    assert after.data == {"k": "v"} and after.metadata.resource_version == rv
    expect(lambda: core.delete_namespaced_config_map("a", NS, dry_run="Some"), 422, "Invalid",
           'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: '
           'supported values: "All"')


def test_field_validation(custom: Any) -> None:
    body = widget("w1", {"unknown": 1})
    data, code, headers = custom.create_namespaced_custom_object_with_http_info(GROUP, VERSION, NS, PLURAL, body)
    assert code == 201 and "unknown" not in data["spec"]
    assert headers["Warning"] == '299 - "unknown field \\"spec.unknown\\""'
    _, _, headers = custom.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, PLURAL, widget("w2", {"unknown": 1}), field_validation="Ignore")
    assert "Warning" not in headers
    expect(lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, widget("w3", {"unknown": 1}), field_validation="Strict"),
        400, "BadRequest", 'strict decoding error: unknown field "spec.unknown"')


# -------------------------------------------------------------------- delete


def test_delete_options_in_body_and_query(core: Any) -> None:
    made = core.create_namespaced_config_map(NS, cm("a"))
    pre = client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version="1"))
    expect(lambda: core.delete_namespaced_config_map("a", NS, body=pre), 409, "Conflict",
           'Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (1) does not '
           f"match the ResourceVersion in record ({made.metadata.resource_version}). The object might have been "
           "modified")
    # Foreground from the query: the object stays, deleting, with the GC finalizer
    core.delete_namespaced_config_map("a", NS, propagation_policy="Foreground")
    cur = core.read_namespaced_config_map("a", NS)
    assert cur.metadata.deletion_timestamp is not None and cur.metadata.finalizers == ["foregroundDeletion"]
    # the body's policy wins over the query's
    core.delete_namespaced_config_map("a", NS, propagation_policy="Foreground",
                                      body=client.V1DeleteOptions(propagation_policy="Background"))
    expect(lambda: core.read_namespaced_config_map("a", NS), 404, "NotFound")
    core.create_namespaced_config_map(NS, cm("b"))
    expect(lambda: core.delete_namespaced_config_map("b", NS, propagation_policy="Bogus"), 422, "Invalid")


def test_delete_collection_with_selectors(core: Any) -> None:
    for i in range(6):
        core.create_namespaced_config_map(NS, cm(f"c{i}", {"parity": "even" if i % 2 == 0 else "odd"}))
    core.delete_collection_namespaced_config_map(NS, label_selector="parity=even")
    assert names(core.list_namespaced_config_map(NS).items) == ["c1", "c3", "c5"]
    core.delete_collection_namespaced_config_map(NS, field_selector="metadata.name=c3")
    assert names(core.list_namespaced_config_map(NS).items) == ["c1", "c5"]
    core.delete_collection_namespaced_config_map(NS)
    assert core.list_namespaced_config_map(NS).items == []


# --------------------------------------------------------------------- lists


def test_label_and_field_selectors(core: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a", {"env": "prod"}))
    core.create_namespaced_config_map(NS, cm("b", {"env": "dev", "legacy": ""}))
    core.create_namespaced_config_map(NS, cm("c"))

    def sel(s: str) -> list[str]:
        return names(core.list_namespaced_config_map(NS, label_selector=s).items)

    assert sel("env in (prod,dev),!legacy") == ["a"]
    assert sel("env!=prod") == ["b", "c"]
    assert sel("env") == ["a", "b"]
    assert sel("env notin (prod)") == ["b", "c"]
    assert names(core.list_namespaced_config_map(NS, field_selector="metadata.name=b").items) == ["b"]
    assert names(core.list_namespaced_config_map(NS, field_selector="metadata.name!=b").items) == ["a", "c"]
    assert core.list_namespaced_config_map(NS, field_selector="metadata.namespace!=ns").items == []
    expect(lambda: core.list_namespaced_config_map(NS, field_selector="data.x=1"), 400, "BadRequest",
           "field label not supported: data.x")


def test_paging_with_limit_and_continue(core: Any) -> None:
    for i in range(7):
        core.create_namespaced_config_map(NS, cm(f"c{i}"))
    seen: list[str] = []
    page = core.list_namespaced_config_map(NS, limit=3)
    pages = 1
    assert page.metadata.remaining_item_count == 4
    seen += names(page.items)
    while page.metadata._continue:
        page = core.list_namespaced_config_map(NS, limit=3, _continue=page.metadata._continue)
        seen += names(page.items)
        pages += 1
    assert seen == [f"c{i}" for i in range(7)] and pages == 3
    expect(lambda: core.list_namespaced_config_map(NS, resource_version_match="Exact"), 422, "Invalid")


def test_resource_version_on_list(core: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a"))
    listed = core.list_namespaced_config_map(NS)
    rv = int(listed.metadata.resource_version)
    assert rv >= int(listed.items[0].metadata.resource_version)
    again = core.list_namespaced_config_map(NS, resource_version=str(rv), resource_version_match="NotOlderThan")
    assert names(again.items) == ["a"]
    body = expect(lambda: core.list_namespaced_config_map(NS, resource_version=str(rv + 100)), 504, "Timeout")
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


# --------------------------------------------------------------------- watch


def test_watch_sees_added_modified_deleted_in_order(core: Any, api_client: Any) -> None:
    core.create_namespaced_config_map(NS, cm("a", data={"k": "1"}))
    other = client.CoreV1Api(api_client)  # writes from inside the loop, on another pooled connection
    w = watch.Watch()
    seen: list[tuple[str, str, int]] = []
    for ev in w.stream(core.list_namespaced_config_map, NS, timeout_seconds=WATCH_TIMEOUT):
        obj = ev["object"]
        seen.append((ev["type"], obj.metadata.name, int(obj.metadata.resource_version)))
        if len(seen) == 1:  # the initial ADDED: the watch is live, now change things
            other.patch_namespaced_config_map("a", NS, {"data": {"k": "2"}})
            other.delete_namespaced_config_map("a", NS)
        if len(seen) == 3:
            w.stop()
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    rvs = [rv for _, _, rv in seen]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3


def test_watch_resumes_from_a_resource_version(core: Any) -> None:
    made = core.create_namespaced_config_map(NS, cm("a", data={"k": "0"}))
    start = made.metadata.resource_version
    core.patch_namespaced_config_map("a", NS, {"data": {"k": "1"}})
    core.patch_namespaced_config_map("a", NS, {"data": {"k": "2"}})
    w = watch.Watch()
    seen = []
    for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=start, timeout_seconds=WATCH_TIMEOUT):
        seen.append((ev["type"], ev["object"].data["k"]))
        if len(seen) == 2:
            w.stop()
    assert seen == [("MODIFIED", "1"), ("MODIFIED", "2")]


def test_watch_ends_at_timeout_seconds() -> None:
    """(A server whose seconds of ``timeoutSeconds`` last 0.2 s: the stream ends, and the client's loop with it.)"""
    with serve(APIServer(), timeout_scale=0.2) as ep:
        c = config.new_client_from_config(config_file=ep.kubeconfig_path)
        try:
            core = client.CoreV1Api(c)
            core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
            core.create_namespaced_config_map(NS, cm("a"))
            events = list(watch.Watch().stream(core.list_namespaced_config_map, NS, timeout_seconds=1))
        finally:
            c.close()
    assert [e["type"] for e in events] == ["ADDED"]


def test_watch_too_old_resource_version_is_expired() -> None:
    api = APIServer(watch_history=1)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for i in range(40):
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": NS}})
    with serve(api) as ep:
        c = config.new_client_from_config(config_file=ep.kubeconfig_path)
        try:
            v1 = client.CoreV1Api(c)
            with pytest.raises(ApiException) as info:
                for _ in watch.Watch().stream(v1.list_namespaced_config_map, NS, resource_version="5",
                                              timeout_seconds=WATCH_TIMEOUT):
                    pass
            assert info.value.status == 410 and info.value.reason.startswith("Expired: too old resource version")
        finally:
            c.close()


def test_watch_with_label_selector_sees_transitions(core: Any) -> None:
    start = core.create_namespaced_config_map(NS, cm("a", {"env": "prod"})).metadata.resource_version
    core.patch_namespaced_config_map("a", NS, {"metadata": {"labels": {"env": "dev"}}})
    core.patch_namespaced_config_map("a", NS, {"metadata": {"labels": {"env": "prod"}}})
    w = watch.Watch()
    seen = []
    for ev in w.stream(core.list_namespaced_config_map, NS, label_selector="env=prod", resource_version=start,
                       timeout_seconds=WATCH_TIMEOUT):
        seen.append((ev["type"], ev["object"].metadata.labels["env"]))
        if len(seen) == 2:
            w.stop()
    assert seen == [("DELETED", "prod"), ("ADDED", "prod")]


def test_watch_list_initial_events_end_with_annotated_bookmark(core: Any) -> None:
    for name in ("a", "b"):
        core.create_namespaced_config_map(NS, cm(name))
    w = watch.Watch()
    seen = []
    for ev in w.stream(core.list_namespaced_config_map, NS, send_initial_events=True,
                       resource_version_match="NotOlderThan", allow_watch_bookmarks=True,
                       timeout_seconds=WATCH_TIMEOUT):
        seen.append(ev)
        if ev["type"] == "BOOKMARK":
            w.stop()
    assert [e["type"] for e in seen] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = seen[-1]["raw_object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= max(
        int(e["object"].metadata.resource_version) for e in seen[:2])


def test_watch_of_custom_objects(custom: Any) -> None:
    start = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("w1"))
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "w1", {"status": {"x": 1}})
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "w1")
    w = watch.Watch()
    seen = []
    for ev in w.stream(custom.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, resource_version=start,
                       timeout_seconds=WATCH_TIMEOUT):
        seen.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


# -------------------------------------------------------------- thread safety


def test_http_and_in_process_writers_share_one_resource_version_sequence(
        server: tuple[APIServer, Endpoint], core: Any, api_client: Any) -> None:
    api, _ = server
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    per_writer = 25
    errors: list[BaseException] = []

    def http_writer(prefix: str) -> None:
        try:
            v1 = client.CoreV1Api(api_client)
            for i in range(per_writer):
                v1.create_namespaced_config_map(NS, cm(f"{prefix}-{i}"))
                v1.patch_namespaced_config_map(f"{prefix}-{i}", NS, {"data": {"n": str(i)}})
        except BaseException as e:
            errors.append(e)

    def local_writer(prefix: str) -> None:
        try:
            for i in range(per_writer):
                api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{prefix}-{i}",
                                                                                   "namespace": NS}})
                api.patch("ConfigMap", f"{prefix}-{i}", {"data": {"n": str(i)}}, namespace=NS)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=http_writer, args=(f"h{j}",)) for j in range(2)]
    threads += [threading.Thread(target=local_writer, args=(f"l{j}",)) for j in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    total = 4 * per_writer * 2
    assert len(core.list_namespaced_config_map(NS).items) == 4 * per_writer
    w = watch.Watch()
    rvs = []
    for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=start, timeout_seconds=WATCH_TIMEOUT):
        rvs.append(int(ev["object"].metadata.resource_version))
        if len(rvs) == total:
            w.stop()
    assert rvs == sorted(rvs) and len(set(rvs)) == total
    assert rvs[-1] == api.resource_version


def test_a_deployment_through_apps_v1(api_client: Any, core: Any) -> None:
    """AppsV1Api: a Deployment is created defaulted and its status written (the client checks types itself)."""
    apps = client.AppsV1Api(api_client)
    labels = {"app": "web"}
    body = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")]))))
    out = apps.create_namespaced_deployment(NS, body)
    assert out.spec.replicas == 1 and out.spec.strategy.type == "RollingUpdate" and out.metadata.generation == 1
    status = apps.patch_namespaced_deployment_status("web", NS, {"status": {"replicas": 1, "readyReplicas": 1}})
    assert status.status.ready_replicas == 1


def test_a_service_through_core_v1(core: Any) -> None:
    """CoreV1Api: a Service gets its cluster IP and defaults; a PUT without it keeps it."""
    body = client.V1Service(metadata=client.V1ObjectMeta(name="web"),
                            spec=client.V1ServiceSpec(selector={"app": "web"},
                                                      ports=[client.V1ServicePort(port=80)]))
    out = core.create_namespaced_service(NS, body)
    assert out.spec.cluster_ip.startswith("10.") and out.spec.ports[0].target_port == 80
    replaced = core.replace_namespaced_service("web", NS, body)
    assert replaced.spec.cluster_ip == out.spec.cluster_ip


def test_a_lease_through_coordination_v1(api_client: Any, core: Any) -> None:
    """CoordinationV1Api: what client-go's leader election does, create then replace with the resourceVersion."""
    leases = client.CoordinationV1Api(api_client)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="leader"),
                          spec=client.V1LeaseSpec(holder_identity="pod-a", lease_duration_seconds=15))
    out = leases.create_namespaced_lease(NS, body)
    out.spec.holder_identity = "pod-b"
    assert leases.replace_namespaced_lease("leader", NS, out).spec.holder_identity == "pod-b"
    with pytest.raises(ApiException) as err:
        leases.replace_namespaced_lease("leader", NS, out)  # the resourceVersion it read is stale now
    assert err.value.status == 409
