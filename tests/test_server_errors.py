"""The error catalogue (reference §5) and the "Bad input" section of issue 2.

One test per row of §5 checks code, reason, message and details. Then a table
of malformed requests (objects, patches, selectors, options, unknown kinds)
checks that each gets an ApiError, never another exception, and that a
rejected request changes nothing: the store, the resourceVersion counter and
every event log are identical before and after (``support.assert_rejected``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support import (
    WIDGET_AV,
    K,
    R,
    assert_rejected,
    configmap,
    expect_error,
    make_api,
    pod,
    widget,
    widget_crd,
)

from fakeapi.server.apiserver import APIServer

W1 = {"name": "w1", "group": "example.com", "kind": "widgets"}
OPTIMISTIC = "the object has been modified; please apply your changes to the latest version and try again"


def _seeded(api: APIServer) -> None:
    api.create(widget(spec={"replicas": 2, "items": ["a"]}, labels={"env": "prod"}))
    api.create(widget("fin", finalizers=["example.com/f"]))
    api.create(configmap(data={"a": "1"}))


# -------------------------------------------------------------------- §5, row by row


class TestCatalogue:
    """One test per row of the §5 table."""

    def test_not_found_on_get_update_patch_delete_and_status(self, api: APIServer,
                                                             api_nostatus: APIServer) -> None:
        nf = (404, "NotFound", f'{R} "w1" not found', W1)
        assert_rejected(api, lambda: api.get("Widget", "w1", "ns"), *nf)
        body = {**widget(), "metadata": {"name": "w1", "namespace": "ns", "resourceVersion": "1"}}
        assert_rejected(api, lambda: api.update(body), *nf)
        assert_rejected(api, lambda: api.patch("Widget", "w1", {"spec": {}}, namespace="ns"), *nf)
        assert_rejected(api, lambda: api.delete("Widget", "w1", "ns"), *nf)
        a = api_nostatus
        a.create(widget())
        cur = a.get("Widget", "w1", "ns")
        assert_rejected(a, lambda: a.update({**cur, "status": {"x": 1}}, subresource="status"), *nf)
        assert_rejected(a, lambda: a.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns",
                                           subresource="status"), *nf)

    def test_create_in_a_missing_namespace(self, api: APIServer) -> None:
        assert_rejected(api, lambda: api.create(widget(ns="nope")), 404, "NotFound", 'namespaces "nope" not found',
                        {"name": "nope", "kind": "namespaces"})

    def test_wrong_scope_or_path(self, api: APIServer) -> None:
        bare = (404, "NotFound", "the server could not find the requested resource")
        for fn in (
            lambda: api.create(widget(ns="")),
            lambda: api.get("Widget", "w1"),
            lambda: api.update({**widget(ns=""), "metadata": {"name": "w1", "resourceVersion": "1"}}),
            lambda: api.patch("Widget", "w1", {}),
            lambda: api.delete("Widget", "w1"),
            lambda: api.delete_collection("Widget"),
            lambda: api.get("Gizmo", "g1", "ns"),
            lambda: api.list("gizmos", "ns"),
            lambda: api.create({"apiVersion": "example.com/v9", "kind": "Widget", "metadata": {"name": "x"}}),
        ):
            err = assert_rejected(api, fn, *bare)
            assert "details" not in err.status

    def test_create_of_an_existing_name(self, api: APIServer) -> None:
        api.create(widget())
        assert_rejected(api, lambda: api.create(widget()), 409, "AlreadyExists", f'{R} "w1" already exists', W1)

    def test_create_of_a_name_being_deleted(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        api.delete("Widget", "w1", "ns")
        assert_rejected(api, lambda: api.create(widget()), 409, "AlreadyExists",
                        f'object is being deleted: {R} "w1" already exists', W1)

    def test_generate_name_exhausted(self, api: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
        api.create(widget("web-aaaaa"))
        calls: list[str] = []

        def same(base: str) -> str:
            calls.append(base)
            return base + "aaaaa"

        monkeypatch.setattr(api, "_generate_name", same)
        err = assert_rejected(
            api, lambda: api.create(widget("", generateName="web-")), 409, "AlreadyExists",
            f'{R} "web-aaaaa" already exists, the server was not able to generate a unique name for the object')
        assert err.details == {"name": "web-aaaaa", "group": "example.com", "kind": "widgets", "retryAfterSeconds": 1}
        assert len(calls) == 8

    def test_stale_rv_on_put_and_patch(self, api: APIServer) -> None:
        stale = api.create(widget())
        api.patch("Widget", "w1", {"spec": {"replicas": 5}}, namespace="ns")
        msg = f'Operation cannot be fulfilled on {R} "w1": {OPTIMISTIC}'
        assert_rejected(api, lambda: api.update({**stale, "spec": {"replicas": 6}}), 409, "Conflict", msg, W1)
        patch = {"metadata": {"resourceVersion": stale["metadata"]["resourceVersion"]}, "spec": {"replicas": 6}}
        assert_rejected(api, lambda: api.patch("Widget", "w1", patch, namespace="ns"), 409, "Conflict", msg, W1)

    def test_put_with_a_different_uid(self, api: APIServer) -> None:
        cur = api.create(widget())
        uid = cur["metadata"]["uid"]
        other = "0b0b0b0b-0000-4000-8000-000000000000"
        body = {**cur, "metadata": {**cur["metadata"], "uid": other}}
        err = assert_rejected(api, lambda: api.update(body), 409, "Conflict", details=W1)
        assert err.message == (
            f'Operation cannot be fulfilled on {R} "w1": StorageError: invalid object, Code: 4, '
            f"Key: /registry/example.com/widgets/ns/w1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
            f"UID in precondition: {other}, UID in object meta: {uid}")
        # the uid precondition is checked before the resourceVersion one
        stale = {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}
        assert "Precondition failed" in assert_rejected(api, lambda: api.update(stale), 409, "Conflict").message

    def test_delete_precondition_mismatch(self, api: APIServer) -> None:
        cur = api.create(widget())
        r = cur["metadata"]["resourceVersion"]
        details = {"name": "w1", "group": "example.com", "kind": "Widget"}
        assert_rejected(api, lambda: api.delete("Widget", "w1", "ns", preconditions={"resourceVersion": "5"}),
                        409, "Conflict",
                        f'Operation cannot be fulfilled on {K} "w1": the ResourceVersion in the precondition (5) '
                        f"does not match the ResourceVersion in record ({r}). The object might have been modified",
                        details)
        uid = cur["metadata"]["uid"]
        assert_rejected(api, lambda: api.delete("Widget", "w1", "ns", preconditions={"uid": "u-2"}), 409, "Conflict",
                        f'Operation cannot be fulfilled on {K} "w1": the UID in the precondition (u-2) does not match '
                        f"the UID in record ({uid}). The object might have been deleted and then recreated", details)

    def test_validation_one_error(self, api: APIServer) -> None:
        err = assert_rejected(api, lambda: api.create(widget(spec={"mode": "z"})), 422, "Invalid",
                              f'{K} "w1" is invalid: spec.mode: Unsupported value: "z": supported values: "a", "b"')
        assert err.details == {"name": "w1", "group": "example.com", "kind": "Widget", "causes": [
            {"reason": "FieldValueNotSupported", "message": 'Unsupported value: "z": supported values: "a", "b"',
             "field": "spec.mode"}]}

    def test_validation_several_errors(self, api: APIServer) -> None:
        err = assert_rejected(api, lambda: api.create(widget(spec={"mode": "z", "replicas": "x"})), 422, "Invalid")
        assert err.message.startswith(f'{K} "w1" is invalid: [')
        assert err.message.endswith("]")
        assert 'spec.mode: Unsupported value: "z"' in err.message
        assert "spec.replicas: Invalid value" in err.message
        assert len(err.causes) == 2
        assert err.details["kind"] == "Widget" and err.details["group"] == "example.com"

    def test_metadata_and_finalizer_validation(self, api: APIServer) -> None:
        err = assert_rejected(api, lambda: api.create(widget("Foo")), 422, "Invalid")
        assert err.message.startswith(f'{K} "Foo" is invalid: metadata.name: Invalid value: "Foo": a lowercase '
                                      "RFC 1123 subdomain must consist of")
        err = assert_rejected(api, lambda: api.create(widget(finalizers=["orphan", "foregroundDeletion"])), 422,
                              "Invalid")
        assert err.causes[0]["field"] == "metadata.finalizers"

    def test_put_of_a_cr_with_an_empty_rv(self, api: APIServer) -> None:
        cur = api.create(widget())
        body = {**cur, "metadata": {**cur["metadata"], "resourceVersion": ""}}
        err = assert_rejected(api, lambda: api.update(body), 422, "Invalid",
                              f'{R} "w1" is invalid: metadata.resourceVersion: Invalid value: 0: '
                              "must be specified for an update")
        assert err.details["kind"] == "widgets" and err.details["name"] == "w1"
        # a merge patch with "resourceVersion": null removes the RV: the same 422
        assert_rejected(api, lambda: api.patch("Widget", "w1", {"metadata": {"resourceVersion": None}},
                                               namespace="ns"), 422, "Invalid")
        # and on /status too
        sbody = {**body, "status": {"x": 1}}
        assert_rejected(api, lambda: api.update(sbody, subresource="status"), 422, "Invalid")

    def test_json_patch_application_failure(self, api: APIServer) -> None:
        api.create(widget())
        err = assert_rejected(
            api, lambda: api.patch("Widget", "w1", [{"op": "remove", "path": "/spec/nothing"}], namespace="ns",
                                   patch_type="json"),
            422, "Invalid", "the server rejected our request due to an error in our request")
        assert "details" not in err.status

    def test_bad_list_options(self, api: APIServer) -> None:
        err = assert_rejected(api, lambda: api.list("Widget", "ns", resource_version_match="NotOlderThan"), 422,
                              "Invalid",
                              'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                              "resourceVersionMatch is forbidden unless resourceVersion is provided")
        assert err.details == {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [
            {"reason": "FieldValueForbidden", "field": "resourceVersionMatch",
             "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"}]}
        assert_rejected(api, lambda: api.list("Widget", "ns", send_initial_events=True), 422, "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
                        "sendInitialEvents is forbidden for list")
        assert_rejected(api, lambda: api.list("Widget", "ns", resource_version="0", resource_version_match="Exact"),
                        422, "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        assert_rejected(api, lambda: api.list("Widget", "ns", resource_version="1", resource_version_match="Bogus"),
                        422, "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": '
                        'supported values: "Exact", "NotOlderThan", ""')

    def test_bad_watch_options(self, api: APIServer) -> None:
        assert_rejected(api, lambda: api.watch("Widget", "ns", resource_version_match="NotOlderThan"), 422,
                        "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        assert_rejected(api, lambda: api.watch("Widget", "ns", send_initial_events=True), 422, "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        assert_rejected(api, lambda: api.watch("Widget", "ns", send_initial_events=True,
                                               resource_version_match="Exact"), 422, "Invalid",
                        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, "
                        'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]')

    def test_bad_delete_options(self, api: APIServer) -> None:
        api.create(widget())
        err = assert_rejected(api, lambda: api.delete("Widget", "w1", "ns", propagation_policy="Bogus"), 422,
                              "Invalid",
                              'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                              '"Bogus": supported values: "Foreground", "Background", "Orphan", "nil"')
        assert err.details["group"] == "meta.k8s.io" and err.details["kind"] == "DeleteOptions"
        assert_rejected(api, lambda: api.delete("Widget", "w1", "ns", propagation_policy="Orphan",
                                                orphan_dependents=True), 422, "Invalid",
                        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
                        "orphanDependents and deletionPropagation cannot be both set")
        # DeleteOptions are validated before the object is looked up
        assert_rejected(api, lambda: api.delete("Widget", "missing", "ns", propagation_policy="Bogus"), 422,
                        "Invalid")

    def test_bad_patch_options(self, api: APIServer) -> None:
        api.create(widget())
        assert_rejected(api, lambda: api.patch("Widget", "w1", {"spec": {}}, namespace="ns", patch_type="apply"),
                        422, "Invalid",
                        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                        "is required for apply patch")

    def test_bad_requests(self, api: APIServer) -> None:
        _seeded(api)
        cur = api.get("Widget", "w1", "ns")
        bad = 400, "BadRequest"
        assert_rejected(api, lambda: api.update(cur, namespace="other"), *bad,
                        "the namespace of the object (ns) does not match the namespace on the request (other)")
        assert_rejected(api, lambda: api.patch("Widget", "w1", {"metadata": {"name": "w2"}}, namespace="ns"), *bad,
                        "the name of the object (w2) does not match the name on the URL (w1)")
        assert_rejected(api, lambda: api.patch("Widget", "w1", "{not json", namespace="ns"), *bad)
        assert_rejected(api, lambda: api.list("Widget", "ns", label_selector="env in prod"), *bad)
        assert_rejected(api, lambda: api.list("Widget", "ns", field_selector="spec.x=1"), *bad,
                        "field label not supported: spec.x")
        assert_rejected(api, lambda: api.create(widget("w9", spec={"x": 1}), field_validation="Strict"), *bad,
                        'strict decoding error: unknown field "spec.x"')

    def test_unsupported_media_type(self, api: APIServer) -> None:
        api.create(widget())
        msg = ("the body of the request was in an unknown format - accepted media types include: "
               "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
        assert_rejected(api, lambda: api.patch("Widget", "w1", {}, namespace="ns", patch_type="strategic"),
                        415, "UnsupportedMediaType", msg)
        assert_rejected(api, lambda: api.patch("Widget", "w1", {}, namespace="ns", patch_type="text/plain"),
                        415, "UnsupportedMediaType", msg)
        api.create(configmap())
        err = assert_rejected(api, lambda: api.patch("ConfigMap", "cm1", {}, namespace="ns", patch_type="bogus"),
                              415, "UnsupportedMediaType")
        assert "application/strategic-merge-patch+json" in err.message

    def test_create_in_a_terminating_namespace(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
        api.create(widget("keep", "gone", finalizers=["example.com/f"]))
        api.delete("Namespace", "gone")
        err = assert_rejected(api, lambda: api.create(widget("w1", "gone")), 403, "Forbidden",
                              f'{R} "w1" is forbidden: unable to create new content in namespace gone because it '
                              "is being terminated")
        assert err.details == {"name": "w1", "group": "example.com", "kind": "widgets", "causes": [
            {"reason": "NamespaceTerminating", "message": "namespace gone is being terminated",
             "field": "metadata.namespace"}]}

    def test_watch_rv_too_old(self) -> None:
        api = make_api(watch_history=2)
        r = api.create(widget())["metadata"]["resourceVersion"]
        for i in range(30):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        ev = api.watch("Widget", "ns", resource_version=r).poll()
        assert len(ev) == 1 and ev[0].type == "ERROR"
        status = ev[0].object
        assert status["code"] == 410 and status["reason"] == "Expired" and status["status"] == "Failure"
        assert status["message"].startswith(f"too old resource version: {r} (")

    def test_list_continue_token_expired(self) -> None:
        api = make_api(watch_history=2)
        for i in range(5):
            api.create(widget(f"w{i}"))
        page = api.list("Widget", "ns", limit=2)
        token = page["metadata"]["continue"]
        for i in range(30):
            api.patch("Widget", "w4", {"spec": {"replicas": i + 2}}, namespace="ns")
        from fakeapi.server.read import CONTINUE_EXPIRED

        err = assert_rejected(api, lambda: api.list("Widget", "ns", limit=2, continue_=token), 410, "Expired",
                              CONTINUE_EXPIRED)
        # the error carries a token that continues at the latest revision
        rest = api.list("Widget", "ns", limit=10, continue_=err.status["metadata"]["continue"])
        assert [i["metadata"]["name"] for i in rest["items"]] == ["w2", "w3", "w4"]
        assert rest["items"][-1]["spec"]["replicas"] == 31

    def test_list_exact_rv_too_old(self) -> None:
        api = make_api(watch_history=2)
        r = api.create(widget())["metadata"]["resourceVersion"]
        for i in range(30):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        assert_rejected(api, lambda: api.list("Widget", "ns", resource_version=r, resource_version_match="Exact"),
                        410, "Expired", "The resourceVersion for the provided list is too old.")

    def test_rv_ahead_of_the_server(self, api: APIServer) -> None:
        api.create(widget())
        n = api.resource_version + 10
        err = assert_rejected(api, lambda: api.get("Widget", "w1", "ns", resource_version=str(n)), 504, "Timeout",
                              f"Too large resource version: {n}, current: {api.resource_version}")
        assert err.details["causes"][0]["reason"] == "ResourceVersionTooLarge"
        assert err.details["retryAfterSeconds"] == 1
        assert_rejected(api, lambda: api.list("Widget", "ns", resource_version=str(n)), 504, "Timeout")

    def test_internal_error_without_reason(self, api: APIServer) -> None:
        err = assert_rejected(api, lambda: api.create(widget(resourceVersion="7")), 500, "",
                              "resourceVersion should not be set on objects to be created")
        assert "details" not in err.status


# ------------------------------------------------------------------- bad input table


Req = Callable[[APIServer], Any]


def _w(**kw: Any) -> dict[str, Any]:
    return widget("bad", **kw)


def _cur(api: APIServer, name: str = "w1") -> dict[str, Any]:
    return api.get("Widget", name, "ns")


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(obj)
    node = out
    parts = path.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    if value is _DELETE:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return out


_DELETE = object()

# (id, request, expected code, expected reason or None)
BAD: list[tuple[str, Req, int, str | None]] = [
    # ---- malformed objects on create
    ("body-not-a-dict", lambda a: a.create([1, 2]), 400, "BadRequest"),  # type: ignore[arg-type]
    ("body-none", lambda a: a.create(None), 400, "BadRequest"),  # type: ignore[arg-type]
    ("no-kind", lambda a: a.create({"apiVersion": WIDGET_AV, "metadata": {"name": "x", "namespace": "ns"}}),
     400, "BadRequest"),
    ("no-apiversion", lambda a: a.create({"kind": "Widget", "metadata": {"name": "x", "namespace": "ns"}}),
     400, "BadRequest"),
    ("kind-not-a-string", lambda a: a.create({"apiVersion": WIDGET_AV, "kind": 3, "metadata": {}}), 400, "BadRequest"),
    ("unknown-kind", lambda a: a.create({"apiVersion": "example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": "x", "namespace": "ns"}}), 404, "NotFound"),
    ("unserved-version", lambda a: a.create({"apiVersion": "example.com/v2", "kind": "Widget",
                                             "metadata": {"name": "x", "namespace": "ns"}}), 404, "NotFound"),
    ("metadata-not-object", lambda a: a.create({**_w(), "metadata": "x"}), 400, "BadRequest"),
    ("metadata-list", lambda a: a.create({**_w(), "metadata": []}), 400, "BadRequest"),
    ("name-not-string", lambda a: a.create(_with(_w(), "metadata.name", 5)), 400, "BadRequest"),
    ("namespace-not-string", lambda a: a.create(_with(_w(), "metadata.namespace", ["ns"])), 400, "BadRequest"),
    ("labels-not-map", lambda a: a.create(_w(labels=["a"])), 400, "BadRequest"),
    ("label-value-not-string", lambda a: a.create(_w(labels={"a": 1})), 400, "BadRequest"),
    ("annotations-not-map", lambda a: a.create(_w(annotations="x")), 400, "BadRequest"),
    ("finalizers-not-list", lambda a: a.create(_w(finalizers="example.com/f")), 400, "BadRequest"),
    ("finalizer-not-string", lambda a: a.create(_w(finalizers=[1])), 400, "BadRequest"),
    ("ownerrefs-not-list", lambda a: a.create(_w(ownerReferences={"uid": "x"})), 400, "BadRequest"),
    ("generation-not-int", lambda a: a.create(_w(generation="1")), 400, "BadRequest"),
    ("ownerref-controller-not-bool", lambda a: a.create(_w(ownerReferences=[
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u1", "controller": 1}])), 400, "BadRequest"),
    ("ownerref-name-not-string", lambda a: a.create(_w(ownerReferences=[
        {"apiVersion": "v1", "kind": "ConfigMap", "name": 5, "uid": "u1"}])), 400, "BadRequest"),
    ("uppercase-name", lambda a: a.create(widget("Bad")), 422, "Invalid"),
    ("name-with-slash", lambda a: a.create(widget("a/b")), 422, "Invalid"),
    ("name-dotdot", lambda a: a.create(widget("..")), 422, "Invalid"),
    ("name-too-long", lambda a: a.create(widget("a" * 254)), 422, "Invalid"),
    ("generate-name-invalid", lambda a: a.create(widget("", generateName="Bad-")), 422, "Invalid"),
    ("no-name", lambda a: a.create(widget("")), 422, "Invalid"),
    ("label-key-invalid", lambda a: a.create(_w(labels={"-bad": "x"})), 422, "Invalid"),
    ("label-value-too-long", lambda a: a.create(_w(labels={"a": "x" * 64})), 422, "Invalid"),
    ("label-value-invalid", lambda a: a.create(_w(labels={"a": "has space"})), 422, "Invalid"),
    ("annotation-key-invalid", lambda a: a.create(_w(annotations={"a b": "x"})), 422, "Invalid"),
    ("annotations-too-big", lambda a: a.create(_w(annotations={"a": "x" * 262145})), 422, "Invalid"),
    ("finalizer-invalid", lambda a: a.create(_w(finalizers=["a b/c"])), 422, "Invalid"),
    ("finalizers-orphan-and-foreground", lambda a: a.create(_w(finalizers=["orphan", "foregroundDeletion"])),
     422, "Invalid"),
    ("ownerref-missing-uid", lambda a: a.create(_w(ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap",
                                                                     "name": "cm1"}])), 422, "Invalid"),
    ("ownerref-two-controllers", lambda a: a.create(_w(ownerReferences=[
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u1", "controller": True},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "u2", "controller": True}])), 422, "Invalid"),
    ("ownerref-event-owner", lambda a: a.create(_w(ownerReferences=[
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u1"}])), 422, "Invalid"),
    ("spec-type", lambda a: a.create(_w(spec={"replicas": "x"})), 422, "Invalid"),
    ("spec-not-object", lambda a: a.create({**_w(), "spec": "x"}), 422, "Invalid"),
    ("spec-enum", lambda a: a.create(_w(spec={"mode": "z"})), 422, "Invalid"),
    ("spec-items-type", lambda a: a.create(_w(spec={"items": [1]})), 422, "Invalid"),
    ("spec-items-null-element", lambda a: a.create(_w(spec={"items": [None]})), 422, "Invalid"),
    ("spec-float-replicas", lambda a: a.create(_w(spec={"replicas": 1.5})), 422, "Invalid"),
    ("strict-unknown-field", lambda a: a.create(_w(spec={"zzz": 1}), field_validation="Strict"), 400, "BadRequest"),
    ("bogus-field-validation", lambda a: a.create(_w(), field_validation="Loose"), 400, "BadRequest"),
    ("namespaced-without-namespace", lambda a: a.create(widget("x", "")), 404, "NotFound"),
    ("missing-namespace", lambda a: a.create(widget("x", "nope")), 404, "NotFound"),
    ("namespace-mismatch", lambda a: a.create(widget("x", "ns"), namespace="other"), 400, "BadRequest"),
    ("duplicate", lambda a: a.create(widget("w1")), 409, "AlreadyExists"),
    ("rv-on-create", lambda a: a.create(_w(resourceVersion="3")), 500, None),
    ("pod-without-containers", lambda a: a.create({"apiVersion": "v1", "kind": "Pod",
                                                   "metadata": {"name": "p", "namespace": "ns"}, "spec": {}}),
     422, "Invalid"),
    ("pod-bad-container-name", lambda a: a.create(_with(pod(), "spec.containers", [{"name": "Bad", "image": "x"}])),
     422, "Invalid"),
    ("configmap-data-not-strings", lambda a: a.create(configmap("cmx", data={"a": 1})), 400, "BadRequest"),  # type: ignore[dict-item]
    ("namespace-name-dot", lambda a: a.create({"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "a.b"}}), 422, "Invalid"),
    ("crd-invalid", lambda a: a.create(_with(widget_crd(), "spec.group", "")), 422, "Invalid"),
    ("crd-wrong-name", lambda a: a.create(_with(widget_crd(), "metadata.name", "gadgets.example.com")),
     422, "Invalid"),
    ("crd-exists", lambda a: a.create(widget_crd()), 409, "AlreadyExists"),
    # ---- updates
    ("update-missing", lambda a: a.update({**_cur(a), "metadata": {**_cur(a)["metadata"], "name": "zz"}}),
     404, "NotFound"),
    ("update-stale", lambda a: a.update(_with(_cur(a), "metadata.resourceVersion", "1")), 409, "Conflict"),
    ("update-empty-rv", lambda a: a.update(_with(_cur(a), "metadata.resourceVersion", "")), 422, "Invalid"),
    ("update-no-rv", lambda a: a.update(_with(_cur(a), "metadata.resourceVersion", _DELETE)), 422, "Invalid"),
    ("update-rv-not-number", lambda a: a.update(_with(_cur(a), "metadata.resourceVersion", "abc")), 500, None),
    ("update-uid-mismatch", lambda a: a.update(_with(_cur(a), "metadata.uid", "x")), 409, "Conflict"),
    ("update-invalid-spec", lambda a: a.update(_with(_cur(a), "spec.mode", "q")), 422, "Invalid"),
    ("update-invalid-label", lambda a: a.update(_with(_cur(a), "metadata.labels", {"a": "b c"})), 422, "Invalid"),
    ("update-no-name", lambda a: a.update(_with(_cur(a), "metadata.name", _DELETE)), 400, "BadRequest"),
    ("update-set-deletion-timestamp", lambda a: a.update(_with(_cur(a), "metadata.deletionTimestamp",
                                                               "2030-01-01T00:00:00Z")), 422, "Invalid"),
    ("update-add-finalizer-while-deleting", lambda a: a.update(_with(_cur(a, "fin"), "metadata.finalizers",
                                                                     ["example.com/f", "b"])), 422, "Invalid"),
    ("update-status-unknown-subresource", lambda a: a.update(_cur(a), subresource="scale"), 404, "NotFound"),
    ("update-status-invalid", lambda a: a.update(_with(_cur(a), "status", {"x": "y"}), subresource="status"),
     422, "Invalid"),
    ("update-unknown-kind", lambda a: a.update({**_cur(a), "kind": "Gizmo"}), 404, "NotFound"),
    ("update-strict", lambda a: a.update(_with(_cur(a), "spec.zz", 1), field_validation="Strict"),
     400, "BadRequest"),
    ("update-namespace-change", lambda a: a.update(_cur(a), namespace="other"), 400, "BadRequest"),
    ("update-generation-decrease-ignored-but-name-invalid", lambda a: a.update(_with(_cur(a), "metadata.labels",
                                                                                     {"x" * 64: "v"})),
     422, "Invalid"),
    # ---- patches
    ("patch-missing", lambda a: a.patch("Widget", "zz", {}, namespace="ns"), 404, "NotFound"),
    ("patch-bad-json", lambda a: a.patch("Widget", "w1", "{", namespace="ns"), 400, "BadRequest"),
    ("patch-bad-json-bytes", lambda a: a.patch("Widget", "w1", b"\xff", namespace="ns"), 400, "BadRequest"),
    ("json-patch-not-a-list", lambda a: a.patch("Widget", "w1", {"op": "add"}, namespace="ns", patch_type="json"),
     400, "BadRequest"),
    ("json-patch-bad-op", lambda a: a.patch("Widget", "w1", [{"op": "frob", "path": "/spec"}], namespace="ns",
                                            patch_type="json"), 422, "Invalid"),
    ("json-patch-missing-path", lambda a: a.patch("Widget", "w1", [{"op": "add", "value": 1}], namespace="ns",
                                                  patch_type="json"), 422, "Invalid"),
    ("json-patch-test-fails", lambda a: a.patch("Widget", "w1", [{"op": "test", "path": "/spec/replicas",
                                                                  "value": 99}], namespace="ns", patch_type="json"),
     422, "Invalid"),
    ("json-patch-remove-missing", lambda a: a.patch("Widget", "w1", [{"op": "remove", "path": "/spec/zz"}],
                                                    namespace="ns", patch_type="json"), 422, "Invalid"),
    ("json-patch-finalizers-dash", lambda a: a.patch("Widget", "w1", [{"op": "add", "path": "/metadata/finalizers/-",
                                                                       "value": "x"}], namespace="ns",
                                                     patch_type="json"), 422, "Invalid"),
    ("json-patch-too-many-ops", lambda a: a.patch("Widget", "w1", [{"op": "test", "path": "/kind",
                                                                    "value": "Widget"}] * 10001,
                                                  namespace="ns", patch_type="json"), 413, "RequestEntityTooLarge"),
    ("json-patch-replace-root-with-list", lambda a: a.patch("Widget", "w1", [{"op": "replace", "path": "",
                                                                              "value": [1]}], namespace="ns",
                                                            patch_type="json"), 400, "BadRequest"),
    ("json-patch-invalid-result", lambda a: a.patch("Widget", "w1", [{"op": "replace", "path": "/spec/replicas",
                                                                      "value": "x"}], namespace="ns",
                                                    patch_type="json"), 422, "Invalid"),
    ("merge-patch-invalid-result", lambda a: a.patch("Widget", "w1", {"spec": {"mode": "q"}}, namespace="ns"),
     422, "Invalid"),
    ("merge-patch-rename", lambda a: a.patch("Widget", "w1", {"metadata": {"name": "zz"}}, namespace="ns"),
     400, "BadRequest"),
    ("merge-patch-uid", lambda a: a.patch("Widget", "w1", {"metadata": {"uid": "other"}}, namespace="ns"),
     422, "Invalid"),
    ("merge-patch-stale-rv", lambda a: a.patch("Widget", "w1", {"metadata": {"resourceVersion": "1"}},
                                               namespace="ns"), 409, "Conflict"),
    ("merge-patch-null-rv", lambda a: a.patch("Widget", "w1", {"metadata": {"resourceVersion": None}},
                                              namespace="ns"), 422, "Invalid"),
    ("merge-patch-labels-not-map", lambda a: a.patch("Widget", "w1", {"metadata": {"labels": "x"}}, namespace="ns"),
     400, "BadRequest"),
    ("merge-patch-strict", lambda a: a.patch("Widget", "w1", {"spec": {"zz": 1}}, namespace="ns",
                                             field_validation="Strict"), 422, "Invalid"),
    ("merge-patch-add-finalizer-while-deleting", lambda a: a.patch("Widget", "fin", {"metadata": {
        "finalizers": ["example.com/f", "x.io/g"]}}, namespace="ns"), 422, "Invalid"),
    ("strategic-on-cr", lambda a: a.patch("Widget", "w1", {}, namespace="ns", patch_type="strategic"),
     415, "UnsupportedMediaType"),
    ("unknown-patch-type", lambda a: a.patch("Widget", "w1", {}, namespace="ns", patch_type="yaml"),
     415, "UnsupportedMediaType"),
    ("apply-without-field-manager", lambda a: a.patch("Widget", "w1", {}, namespace="ns", patch_type="apply"),
     422, "Invalid"),
    # kube-apiserver surfaces this strategic-merge error as a plain 500 (no reason)
    ("strategic-bad-directive", lambda a: a.patch("ConfigMap", "cm1", {"data": {"$patch": "frobnicate"}},
                                                  namespace="ns", patch_type="strategic"), 500, None),
    ("strategic-not-object", lambda a: a.patch("ConfigMap", "cm1", [1], namespace="ns", patch_type="strategic"),
     400, "BadRequest"),
    ("strategic-invalid-result", lambda a: a.patch("ConfigMap", "cm1", {"data": {"a": 1}}, namespace="ns",
                                                   patch_type="strategic"), 422, "Invalid"),
    ("patch-status-on-unknown-subresource", lambda a: a.patch("Widget", "w1", {}, namespace="ns",
                                                              subresource="scale"), 404, "NotFound"),
    ("patch-unknown-kind", lambda a: a.patch("Gizmo", "w1", {}, namespace="ns"), 404, "NotFound"),
    ("patch-no-namespace", lambda a: a.patch("Widget", "w1", {}), 404, "NotFound"),
    # ---- deletes
    ("delete-missing", lambda a: a.delete("Widget", "zz", "ns"), 404, "NotFound"),
    ("delete-bogus-policy", lambda a: a.delete("Widget", "w1", "ns", propagation_policy="Bogus"), 422, "Invalid"),
    ("delete-policy-and-orphan", lambda a: a.delete("Widget", "w1", "ns", propagation_policy="Orphan",
                                                    orphan_dependents=False), 422, "Invalid"),
    ("delete-stale-rv", lambda a: a.delete("Widget", "w1", "ns", preconditions={"resourceVersion": "1"}),
     409, "Conflict"),
    ("delete-stale-uid", lambda a: a.delete("Widget", "w1", "ns", preconditions={"uid": "nope"}), 409, "Conflict"),
    ("delete-no-namespace", lambda a: a.delete("Widget", "w1"), 404, "NotFound"),
    ("delete-unknown-kind", lambda a: a.delete("Gizmo", "w1", "ns"), 404, "NotFound"),
    ("deletecollection-no-namespace", lambda a: a.delete_collection("Widget"), 404, "NotFound"),
    ("deletecollection-bad-selector", lambda a: a.delete_collection("Widget", "ns", label_selector="a in b"),
     400, "BadRequest"),
    ("deletecollection-bad-field", lambda a: a.delete_collection("Widget", "ns", field_selector="spec.a=b"),
     400, "BadRequest"),
    ("deletecollection-bogus-policy", lambda a: a.delete_collection("Widget", "ns", propagation_policy="X"),
     422, "Invalid"),
    # ---- reads and selectors
    ("get-missing", lambda a: a.get("Widget", "zz", "ns"), 404, "NotFound"),
    ("get-rv-too-large", lambda a: a.get("Widget", "w1", "ns", resource_version="999999"), 504, "Timeout"),
    ("get-rv-not-a-number", lambda a: a.get("Widget", "w1", "ns", resource_version="abc"), 400, "BadRequest"),
    ("list-bad-label-selector", lambda a: a.list("Widget", "ns", label_selector="env in prod"), 400, "BadRequest"),
    ("list-bad-label-key", lambda a: a.list("Widget", "ns", label_selector="-x=1"), 400, "BadRequest"),
    ("list-bad-label-value", lambda a: a.list("Widget", "ns", label_selector="x=a b"), 400, "BadRequest"),
    ("list-unclosed-set", lambda a: a.list("Widget", "ns", label_selector="env in (a,b"), 400, "BadRequest"),
    ("list-bad-operator", lambda a: a.list("Widget", "ns", label_selector="env >> 1"), 400, "BadRequest"),
    ("list-gt-not-int", lambda a: a.list("Widget", "ns", label_selector="env>x"), 400, "BadRequest"),
    ("list-unsupported-field", lambda a: a.list("Widget", "ns", field_selector="spec.mode=a"), 400, "BadRequest"),
    ("list-bad-field-syntax", lambda a: a.list("Widget", "ns", field_selector="metadata.name"), 400, "BadRequest"),
    ("list-field-in-operator", lambda a: a.list("Widget", "ns", field_selector="metadata.name in (a)"),
     400, "BadRequest"),
    ("list-pod-unsupported-field", lambda a: a.list("Pod", "ns", field_selector="spec.hostname=x"),
     400, "BadRequest"),
    ("list-rvmatch-without-rv", lambda a: a.list("Widget", "ns", resource_version_match="Exact"), 422, "Invalid"),
    ("list-rvmatch-bogus", lambda a: a.list("Widget", "ns", resource_version="1", resource_version_match="Q"),
     422, "Invalid"),
    ("list-exact-zero", lambda a: a.list("Widget", "ns", resource_version="0", resource_version_match="Exact"),
     422, "Invalid"),
    ("list-send-initial-events", lambda a: a.list("Widget", "ns", send_initial_events=False), 422, "Invalid"),
    ("list-continue-and-rv", lambda a: a.list("Widget", "ns", resource_version="3", continue_="abc"),
     400, "BadRequest"),
    ("list-continue-and-rvmatch", lambda a: a.list("Widget", "ns", resource_version="3", continue_="abc",
                                                   resource_version_match="Exact"), 422, "Invalid"),
    ("list-bad-continue", lambda a: a.list("Widget", "ns", continue_="!!!"), 400, "BadRequest"),
    ("list-rv-too-large", lambda a: a.list("Widget", "ns", resource_version="99999"), 504, "Timeout"),
    ("list-limit-not-int", lambda a: a.list("Widget", "ns", limit="5"), 400, "BadRequest"),  # type: ignore[arg-type]
    ("list-unknown-kind", lambda a: a.list("Gizmo", "ns"), 404, "NotFound"),
    ("watch-bad-selector", lambda a: a.watch("Widget", "ns", label_selector="a in b"), 400, "BadRequest"),
    ("watch-bad-field", lambda a: a.watch("Widget", "ns", field_selector="spec.q=1"), 400, "BadRequest"),
    ("watch-rvmatch-alone", lambda a: a.watch("Widget", "ns", resource_version_match="NotOlderThan"),
     422, "Invalid"),
    ("watch-initial-events-without-match", lambda a: a.watch("Widget", "ns", send_initial_events=True),
     422, "Invalid"),
    ("watch-bad-rv", lambda a: a.watch("Widget", "ns", resource_version="abc"), 400, "BadRequest"),
    ("watch-unknown-kind", lambda a: a.watch("Gizmo", "ns"), 404, "NotFound"),
    ("kind-not-a-string", lambda a: a.get(None, "w1", "ns"), 404, "NotFound"),  # type: ignore[arg-type]
    ("api-version-not-a-string", lambda a: a.list("Widget", "ns", api_version=1), 404, "NotFound"),  # type: ignore[arg-type]
    ("merge-patch-null", lambda a: a.patch("Widget", "w1", None, namespace="ns"), 400, "BadRequest"),
    ("merge-patch-scalar", lambda a: a.patch("Widget", "w1", 5, namespace="ns"), 400, "BadRequest"),
    ("register-crd-not-a-crd", lambda a: a.register_crd(configmap("x")), 400, "BadRequest"),
    ("register-crd-invalid", lambda a: a.register_crd(_with(widget_crd(), "spec.versions", [])), 422, "Invalid"),
]


@pytest.mark.parametrize(("case", "request_fn", "code", "reason"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_rejected_without_changing_state(case: str, request_fn: Req, code: int,
                                                      reason: str | None) -> None:
    api = make_api()
    _seeded(api)
    api.delete("Widget", "fin", "ns")
    w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
    assert_rejected(api, lambda: request_fn(api), code, "" if reason is None else reason)
    assert w.poll() == []


def test_dry_run_changes_nothing(api: APIServer) -> None:
    _seeded(api)
    from support import snapshot

    before = snapshot(api)
    out = api.create(widget("dry"), dry_run=True)
    assert out["metadata"]["name"] == "dry"
    cur = api.get("Widget", "w1", "ns")
    api.update({**cur, "spec": {"replicas": 9}}, dry_run=True)
    api.patch("Widget", "w1", {"spec": {"replicas": 8}}, namespace="ns", dry_run=True)
    api.delete("Widget", "w1", "ns", dry_run=True)
    api.delete("Widget", "fin", "ns", dry_run=True)
    assert snapshot(api) == before


def test_failed_request_in_a_terminating_namespace_leaves_namespace_alone(api: APIServer) -> None:
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
    api.create(configmap("keep", "t", finalizers=["example.com/f"]))
    api.delete("Namespace", "t")
    assert_rejected(api, lambda: api.create(configmap("new", "t")), 403, "Forbidden")
    assert_rejected(api, lambda: api.create(pod("p", "t")), 403, "Forbidden")


def test_invalid_crd_update_keeps_the_kind(api: APIServer) -> None:
    cur = api.get("CustomResourceDefinition", "widgets.example.com")
    bad = {**cur, "spec": {**cur["spec"], "scope": "Galactic"}}
    assert_rejected(api, lambda: api.update(bad), 422, "Invalid")
    assert api.kinds.find("Widget", WIDGET_AV) is not None


def test_internal_failure_is_a_500_api_error_and_changes_nothing(api: APIServer,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    api.create(widget())
    kind = api.kinds.require("Widget", WIDGET_AV)

    class Boom:
        """The kind's compiled schema, failing in its decode pipeline (on a body, or a copy of one)."""

        def __init__(self, real: Any) -> None:
            self.real = real

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

        def prepare(self, obj: dict[str, Any], *args: Any, **kwargs: Any) -> list[str]:
            raise RuntimeError("kaboom")

        prepare_copy = prepare

    # (the kind's attribute is replaced, not the schema's methods: compiled builds have read-only methods)
    monkeypatch.setattr(kind, "compiled", Boom(kind.compiled))
    err = assert_rejected(api, lambda: api.create(widget("w2")), 500, "")
    assert "kaboom" in err.message
    assert api.trace.calls[-1].code == 500
    expect_error(lambda: api.get("Widget", "w2", "ns"), 404, "NotFound")


# --- metadata a Go decoder cannot unmarshal into ObjectMeta (400), and what it drops ---------------

_REF = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}


@pytest.mark.parametrize(("meta", "message"), [
    ({"name": 7}, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"),
    ({"uid": ["x"]}, "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.uid of type string"),
    ({"labels": "a=b"},
     "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
    ({"labels": {"a": 1}}, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
    ({"annotations": {"a": True}},
     "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string"),
    ({"finalizers": "f"},
     "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string"),
    ({"finalizers": ["a", 1]},
     "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.finalizers of type []string"),
    ({"ownerReferences": [1]}, "json: cannot unmarshal array into Go struct field "
                               "ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"),
    ({"ownerReferences": [{**_REF, "uid": 3}]},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.ownerReferences.uid of type string"),
    ({"ownerReferences": [{**_REF, "controller": "yes"}]}, "json: cannot unmarshal string into Go struct field "
                                                             "ObjectMeta.metadata.ownerReferences.controller of type bool"),
    ({"generation": True},
     "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.generation of type int64"),
    ({"generation": 1.5},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.generation of type int64"),
    ({"deletionGracePeriodSeconds": "30"}, "json: cannot unmarshal string into Go struct field "
                                           "ObjectMeta.metadata.deletionGracePeriodSeconds of type int64"),
    # several wrong fields: the decoder's order, not the body's, picks the one reported
    ({"generation": "1", "labels": {"a": 1}, "uid": 2},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type string"),
    ({"ownerReferences": [{**_REF, "kind": 1}], "finalizers": [2]},
     "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.finalizers of type []string"),
])
def test_metadata_of_the_wrong_go_type_is_a_400(meta: dict[str, Any], message: str) -> None:
    # a custom resource: its metadata is checked field by field (a built-in's is decoded with the
    # rest of its body, in document order: tests/test_server_decode_errors.py)
    api = make_api()
    body = widget()
    body["metadata"].update(meta)
    assert_rejected(api, lambda: api.create(body), 400, "BadRequest", message)


def test_metadata_nulls_and_empty_maps_and_lists_are_dropped() -> None:
    api = make_api()
    body = configmap(labels={}, annotations=None, finalizers=[], ownerReferences=[], generateName=None)
    out = api.create(body)
    assert {"labels", "annotations", "finalizers", "ownerReferences", "generateName"}.isdisjoint(out["metadata"])
    # a label value of null is Go's "" (the map keeps the key)
    out = api.create(configmap("cm2", labels={"a": None, "b": "x"}))
    assert out["metadata"]["labels"] == {"a": "", "b": "x"}


def test_a_patch_checks_only_the_metadata_it_changes() -> None:
    api = make_api()
    api.create(configmap(labels={"a": "b"}, finalizers=["example.com/f"]))
    out = api.patch("ConfigMap", "cm1", {"metadata": {"annotations": {"k": "v"}}}, namespace="ns")
    assert out["metadata"]["labels"] == {"a": "b"} and out["metadata"]["finalizers"] == ["example.com/f"]
    # (a built-in's patched object that does not decode is a 422 naming the patch)
    err = assert_rejected(api, lambda: api.patch("ConfigMap", "cm1", {"metadata": {"annotations": {"k": 2}}},
                                                 namespace="ns"), 422, "Invalid")
    assert err.message.startswith(' "" is invalid: patch: Invalid value: ')
    assert err.message.endswith(
        ": json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string")
    out = api.patch("ConfigMap", "cm1", {"metadata": {"labels": None, "finalizers": []}}, namespace="ns")
    assert "labels" not in out["metadata"] and "finalizers" not in out["metadata"]
