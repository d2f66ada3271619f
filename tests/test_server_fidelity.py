"""The 30 fidelity tests of shared/reference/APISERVER_SEMANTICS.md §8, one test function each.

The Widget CRD (``widgets.example.com``, namespaced, ``v1``; ``spec.replicas``
integer default 1, ``spec.items`` array of string, ``spec.mode`` enum [a, b],
``status`` object) is registered from its manifest through ``api.register_crd``;
namespace ``ns`` exists. The status subresource is on unless a test says
otherwise. Watch checks read ``api.watch(...).poll()``.
"""

from __future__ import annotations

import re
import uuid

from support import NAME_ALPHABET, WIDGET_AV, K, R, configmap, expect_error, make_api, pod, rv, widget

from fakeapi.server.apiserver import APIServer
from fakeapi.server.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
DETAILS_W1 = {"name": "w1", "group": "example.com", "kind": "widgets"}


def _types(events: list) -> list[str]:
    return [e.type for e in events]


# 1 ------------------------------------------------------------------------------------------------


def test_01_create_without_a_name(api: APIServer) -> None:
    body = {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": {"namespace": "ns"}, "spec": {}}
    err = expect_error(lambda: api.create(body), 422, "Invalid")
    assert err.causes[0] == {"reason": "FieldValueRequired", "field": "metadata.name",
                             "message": "Required value: name or generateName is required"}


# 2 ------------------------------------------------------------------------------------------------


def test_02_generate_name(api: APIServer) -> None:
    out = api.create(widget("", generateName="web-"))
    assert re.fullmatch(rf"^web-[{NAME_ALPHABET}]{{5}}$", out["metadata"]["name"])
    assert out["metadata"]["generateName"] == "web-"
    stored = api.get("Widget", out["metadata"]["name"], "ns")
    assert stored["metadata"]["generateName"] == "web-"
    long = api.create(widget("", generateName="a" * 70))
    assert len(long["metadata"]["name"]) == 63
    assert long["metadata"]["name"].startswith("a" * 58)


# 3 ------------------------------------------------------------------------------------------------


def test_03_server_owned_metadata_on_create(api: APIServer) -> None:
    client_uid = "6f1c1b8e-0000-4000-8000-000000000000"
    out = api.create(widget(uid=client_uid, creationTimestamp="2001-02-03T04:05:06Z",
                            deletionTimestamp="2001-02-03T04:05:06Z", generation=7))
    meta = out["metadata"]
    assert meta["uid"] != client_uid
    u = uuid.UUID(meta["uid"])
    assert u.version == 4 and str(u) == meta["uid"] and len(meta["uid"]) == 36
    assert TIME_RE.match(meta["creationTimestamp"])
    assert meta["creationTimestamp"] != "2001-02-03T04:05:06Z"
    assert "deletionTimestamp" not in meta
    assert meta["generation"] == 1
    assert isinstance(meta["resourceVersion"], str) and meta["resourceVersion"].isdigit()


# 4 ------------------------------------------------------------------------------------------------


def test_04_resource_version_on_create(api: APIServer) -> None:
    err = expect_error(lambda: api.create(widget(resourceVersion="5")), 500, "",
                       "resourceVersion should not be set on objects to be created")
    assert "reason" not in err.status
    # unparsable values are ignored (kubernetes/kubernetes#113847)
    assert api.create(widget("w2", resourceVersion="-1"))["metadata"]["resourceVersion"].isdigit()
    assert api.create(widget("w3", resourceVersion="abc"))["metadata"]["resourceVersion"].isdigit()


# 5 ------------------------------------------------------------------------------------------------


def test_05_duplicate_create(api: APIServer) -> None:
    api.create(widget())
    expect_error(lambda: api.create(widget()), 409, "AlreadyExists", f'{R} "w1" already exists', DETAILS_W1)


# 6 ------------------------------------------------------------------------------------------------


def test_06_missing_namespace(api: APIServer) -> None:
    expect_error(lambda: api.create(widget(ns="nope")), 404, "NotFound", 'namespaces "nope" not found',
                 {"name": "nope", "kind": "namespaces"})
    out = api.list("Widget", "nope")
    assert out["items"] == []


# 7 ------------------------------------------------------------------------------------------------


def test_07_global_resource_version(api: APIServer) -> None:
    w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
    a = rv(api.create(widget("a")))
    b = rv(api.create(configmap("cm")))
    cur = api.get("Widget", "a", "ns")
    cur["spec"]["replicas"] = 5
    c = rv(api.update(cur))
    assert a < b < c
    assert int(api.list("Widget", "ns")["metadata"]["resourceVersion"]) >= c
    api.delete("Widget", "a", "ns")
    deleted = [e for e in w.poll() if e.type == DELETED]
    assert len(deleted) == 1 and rv(deleted[0].object) > c


# 8 ------------------------------------------------------------------------------------------------


def test_08_no_op_writes(api: APIServer) -> None:
    api.create(widget(spec={"replicas": 2, "items": []}))
    got = api.get("Widget", "w1", "ns")
    w = api.watch("Widget", "ns", resource_version=got["metadata"]["resourceVersion"])
    out = api.update(got)
    assert out["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
    assert out["metadata"]["generation"] == got["metadata"]["generation"]
    out2 = api.patch("Widget", "w1", {}, namespace="ns")
    assert out2["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
    assert out2["metadata"]["generation"] == got["metadata"]["generation"]
    assert w.poll() == []


# 9 ------------------------------------------------------------------------------------------------


def test_09_stale_resource_version(api: APIServer) -> None:
    api.create(widget())
    stale = api.get("Widget", "w1", "ns")
    cur = api.get("Widget", "w1", "ns")
    cur["spec"]["replicas"] = 3
    api.update(cur)
    stale["spec"]["replicas"] = 4
    expect_error(lambda: api.update(stale), 409, "Conflict",
                 f'Operation cannot be fulfilled on {R} "w1": the object has been modified; please apply your '
                 "changes to the latest version and try again", DETAILS_W1)


# 10 -----------------------------------------------------------------------------------------------


def test_10_empty_resource_version(api: APIServer) -> None:
    api.create(widget())
    body = api.get("Widget", "w1", "ns")
    body["metadata"]["resourceVersion"] = ""
    err = expect_error(lambda: api.update(body), 422, "Invalid")
    assert err.message.endswith("metadata.resourceVersion: Invalid value: 0: must be specified for an update")
    assert err.message == (f'{R} "w1" is invalid: metadata.resourceVersion: Invalid value: 0: '
                           "must be specified for an update")
    api.create(configmap(data={"a": "1"}))
    cm = api.get("ConfigMap", "cm1", "ns")
    cm["metadata"]["resourceVersion"] = ""
    cm["data"] = {"a": "2"}
    assert api.update(cm)["data"] == {"a": "2"}


# 11 -----------------------------------------------------------------------------------------------


def test_11_stale_uid(api: APIServer) -> None:
    old_uid = api.create(widget())["metadata"]["uid"]
    api.delete("Widget", "w1", "ns")
    api.create(widget())
    cur = api.get("Widget", "w1", "ns")
    cur["metadata"]["uid"] = old_uid
    cur["spec"]["replicas"] = 9
    err = expect_error(lambda: api.update(cur), 409, "Conflict")
    assert "Precondition failed: UID in precondition" in err.message


# 12 -----------------------------------------------------------------------------------------------


def test_12_generation(api: APIServer) -> None:
    api.create(widget(spec={"replicas": 1}))
    api.update({**api.get("Widget", "w1", "ns"), "status": {"x": 1}}, subresource="status")
    cur = api.get("Widget", "w1", "ns")
    cur["metadata"]["labels"] = {"a": "b"}
    out = api.update(cur)
    assert out["metadata"]["generation"] == cur["metadata"]["generation"]
    assert rv(out) > rv(cur)
    out["spec"]["replicas"] = 2
    out2 = api.update(out)
    assert out2["metadata"]["generation"] == out["metadata"]["generation"] + 1
    out2["spec"]["replicas"] = 3
    out2["spec"]["mode"] = "a"
    out2["status"] = {"x": 99}
    out3 = api.update(out2)
    assert out3["metadata"]["generation"] == out2["metadata"]["generation"] + 1
    assert out3["status"] == {"x": 1}


# 13 -----------------------------------------------------------------------------------------------


def test_13_status_subresource_on(api: APIServer) -> None:
    created = api.create({**widget(), "status": {"x": 1}})
    assert "status" not in created
    assert "status" not in api.get("Widget", "w1", "ns")
    cur = api.update({**created, "status": {"x": 1}}, subresource="status")
    assert cur["status"] == {"x": 1}
    gen = cur["metadata"]["generation"]
    main = {**cur, "status": {"x": 2}}
    out = api.update(main)
    assert out["status"] == {"x": 1} and out["metadata"]["generation"] == gen
    body = api.get("Widget", "w1", "ns")
    body["spec"] = {"replicas": 7}
    body["metadata"]["labels"] = {"new": "label"}
    body["status"] = {"x": 3}
    out = api.update(body, subresource="status")
    stored = api.get("Widget", "w1", "ns")
    assert stored["status"] == {"x": 3}
    assert stored["spec"] == {"replicas": 1}
    assert "labels" not in stored["metadata"]
    assert stored["metadata"]["generation"] == gen
    assert out == stored
    no_status = api.get("Widget", "w1", "ns")
    del no_status["status"]
    api.update(no_status, subresource="status")
    assert "status" not in api.get("Widget", "w1", "ns")


# 14 -----------------------------------------------------------------------------------------------


def test_14_status_subresource_off(api_nostatus: APIServer) -> None:
    api = api_nostatus
    api.create(widget())
    cur = api.get("Widget", "w1", "ns")
    not_found = (404, "NotFound", f'{R} "w1" not found', DETAILS_W1)
    expect_error(lambda: api.update({**cur, "status": {"x": 1}}, subresource="status"), *not_found)
    expect_error(lambda: api.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns", subresource="status"),
                 *not_found)
    out = api.update({**cur, "status": {"x": 1}})
    assert out["status"] == {"x": 1}
    assert out["metadata"]["generation"] == cur["metadata"]["generation"] + 1


# 15 -----------------------------------------------------------------------------------------------


def test_15_merge_patch_and_resource_version(api: APIServer) -> None:
    stale = rv(api.create(widget()))
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    patch = {"metadata": {"resourceVersion": str(stale)}, "spec": {"replicas": 3}}
    expect_error(lambda: api.patch("Widget", "w1", patch, namespace="ns"), 409, "Conflict",
                 f'Operation cannot be fulfilled on {R} "w1": the object has been modified; please apply your '
                 "changes to the latest version and try again")
    out = api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
    assert out["spec"]["replicas"] == 3


# 16 -----------------------------------------------------------------------------------------------


def test_16_strategic_merge_on_a_cr(api: APIServer) -> None:
    api.create(widget())
    expect_error(
        lambda: api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns",
                          patch_type="application/strategic-merge-patch+json"),
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


# 17 -----------------------------------------------------------------------------------------------


def test_17_json_patch_failures(api: APIServer) -> None:
    api.create(widget())
    generic = "the server rejected our request due to an error in our request"
    expect_error(lambda: api.patch("Widget", "w1", [{"op": "add", "path": "/metadata/finalizers/-", "value": "x"}],
                                   namespace="ns", patch_type="json"), 422, "Invalid", generic)
    expect_error(lambda: api.patch("Widget", "w1", [{"op": "test", "path": "/spec/replicas", "value": 42}],
                                   namespace="ns", patch_type="json"), 422, "Invalid", generic)


# 18 -----------------------------------------------------------------------------------------------


def test_18_patch_and_defaults(api: APIServer) -> None:
    api.create(widget(spec={"replicas": 3, "items": ["a"]}))
    out = api.patch("Widget", "w1", {"spec": {"replicas": None}}, namespace="ns")
    assert out["spec"]["replicas"] == 1
    out = api.patch("Widget", "w1", {"spec": {"items": ["b"]}}, namespace="ns")
    assert out["spec"]["items"] == ["b"]


# 19 -----------------------------------------------------------------------------------------------


def test_19_delete_without_finalizers(api: APIServer) -> None:
    created = api.create(widget())
    w = api.watch("Widget", "ns", resource_version=created["metadata"]["resourceVersion"])
    out = api.delete("Widget", "w1", "ns")
    assert out == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                   "details": {"name": "w1", "group": "example.com", "kind": "widgets",
                               "uid": created["metadata"]["uid"]}}
    expect_error(lambda: api.get("Widget", "w1", "ns"), 404, "NotFound")
    events = w.poll()
    assert _types(events) == [DELETED]
    last = events[0].object
    assert "deletionTimestamp" not in last["metadata"]
    assert last["spec"] == created["spec"]
    assert rv(last) > rv(created) and rv(last) == api.resource_version


# 20 -----------------------------------------------------------------------------------------------


def test_20_delete_with_a_finalizer(api: APIServer) -> None:
    created = api.create(widget(finalizers=["example.com/f"]))
    w = api.watch("Widget", "ns", resource_version=created["metadata"]["resourceVersion"])
    out = api.delete("Widget", "w1", "ns")
    assert TIME_RE.match(out["metadata"]["deletionTimestamp"])
    assert out["metadata"]["deletionGracePeriodSeconds"] == 0
    assert out["metadata"]["generation"] == created["metadata"]["generation"] + 1
    assert out["kind"] == "Widget" and out["spec"] == created["spec"]
    assert _types(w.poll()) == [MODIFIED]
    again = api.delete("Widget", "w1", "ns")
    assert again["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]
    assert w.poll() == []


# 21 -----------------------------------------------------------------------------------------------


def test_21_edits_during_deletion(api: APIServer) -> None:
    api.create(widget(finalizers=["example.com/f"]))
    deleting = api.delete("Widget", "w1", "ns")
    add = {**deleting, "metadata": {**deleting["metadata"], "finalizers": ["example.com/f", "b"]}}
    expect_error(lambda: api.update(add), 422, "Invalid",
                 f'{K} "w1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the '
                 'object is being deleted, found new finalizers []string{"b"}')
    clear = {**deleting, "metadata": {**deleting["metadata"], "deletionTimestamp": None}}
    out = api.update(clear)
    assert out["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]
    api.create(widget("w2"))
    live = api.get("Widget", "w2", "ns")
    live["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    err = expect_error(lambda: api.update(live), 422, "Invalid")
    assert "metadata.deletionTimestamp" in err.message and "field is immutable" in err.message


# 22 -----------------------------------------------------------------------------------------------


def _deleting(api: APIServer, name: str) -> dict:
    api.create(widget(name, finalizers=["example.com/f"]))
    return api.delete("Widget", name, "ns")


def test_22_removing_the_last_finalizer_by_put(api: APIServer) -> None:
    deleting = _deleting(api, "w1")
    w = api.watch("Widget", "ns", resource_version=deleting["metadata"]["resourceVersion"])
    body = {**deleting, "metadata": {**deleting["metadata"], "finalizers": []}}
    out = api.update(body)
    assert out["metadata"]["resourceVersion"] == deleting["metadata"]["resourceVersion"]
    assert not out["metadata"].get("finalizers")
    assert out["spec"] == deleting["spec"]
    expect_error(lambda: api.get("Widget", "w1", "ns"), 404, "NotFound")
    events = w.poll()
    assert _types(events) == [DELETED]
    assert events[0].object["metadata"]["finalizers"] == ["example.com/f"]
    assert rv(events[0].object) == api.resource_version


def test_22_removing_the_last_finalizer_by_merge_patch(api: APIServer) -> None:
    deleting = _deleting(api, "w1")
    w = api.watch("Widget", "ns", resource_version=deleting["metadata"]["resourceVersion"])
    out = api.patch("Widget", "w1", {"metadata": {"finalizers": None}}, namespace="ns")
    assert out["metadata"]["resourceVersion"] == deleting["metadata"]["resourceVersion"]
    expect_error(lambda: api.get("Widget", "w1", "ns"), 404, "NotFound")
    events = w.poll()
    assert _types(events) == [DELETED]
    assert events[0].object["metadata"]["finalizers"] == ["example.com/f"]


# 23 -----------------------------------------------------------------------------------------------


def test_23_delete_preconditions(api: APIServer) -> None:
    created = api.create(widget())
    cur = api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    x, y = created["metadata"]["resourceVersion"], cur["metadata"]["resourceVersion"]
    details = {"name": "w1", "group": "example.com", "kind": "Widget"}
    expect_error(lambda: api.delete("Widget", "w1", "ns", preconditions={"resourceVersion": x}), 409, "Conflict",
                 f'Operation cannot be fulfilled on {K} "w1": the ResourceVersion in the precondition ({x}) does '
                 f"not match the ResourceVersion in record ({y}). The object might have been modified", details)
    bad = "00000000-0000-4000-8000-000000000000"
    uid = cur["metadata"]["uid"]
    expect_error(lambda: api.delete("Widget", "w1", "ns", preconditions={"uid": bad}), 409, "Conflict",
                 f'Operation cannot be fulfilled on {K} "w1": the UID in the precondition ({bad}) does not match '
                 f"the UID in record ({uid}). The object might have been deleted and then recreated", details)
    assert api.get("Widget", "w1", "ns")["metadata"]["resourceVersion"] == y


# 24 -----------------------------------------------------------------------------------------------


def test_24_propagation_policies(api: APIServer) -> None:
    api.create(widget("fg"))
    api.create(widget("or"))
    fg = api.delete("Widget", "fg", "ns", propagation_policy="Foreground")
    assert fg["metadata"]["finalizers"] == ["foregroundDeletion"] and fg["metadata"]["deletionTimestamp"]
    orp = api.delete("Widget", "or", "ns", propagation_policy="Orphan")
    assert orp["metadata"]["finalizers"] == ["orphan"] and orp["metadata"]["deletionTimestamp"]
    assert api.get("Widget", "fg", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]
    out = api.delete("Widget", "fg", "ns", propagation_policy="Background")
    assert out["kind"] == "Status" and out["status"] == "Success"
    expect_error(lambda: api.get("Widget", "fg", "ns"), 404, "NotFound")
    api.create(widget("w3"))
    err = expect_error(lambda: api.delete("Widget", "w3", "ns", propagation_policy="Bogus"), 422, "Invalid")
    assert "propagationPolicy" in err.message
    assert "deletionTimestamp" not in api.get("Widget", "w3", "ns")["metadata"]


# 25 -----------------------------------------------------------------------------------------------


def test_25_label_selectors(api: APIServer) -> None:
    api.create(widget("a", labels={"env": "prod"}))
    api.create(widget("b", labels={"env": "dev", "legacy": ""}))
    api.create(widget("c"))

    def names(sel: str) -> list[str]:
        return [i["metadata"]["name"] for i in api.list("Widget", "ns", label_selector=sel)["items"]]

    assert names("env in (prod,dev),!legacy") == ["a"]
    assert names("env!=prod") == ["b", "c"]
    assert names("env") == ["a", "b"]
    assert names("env notin (prod)") == ["b", "c"]
    expect_error(lambda: api.list("Widget", "ns", label_selector="env in prod"), 400, "BadRequest")


# 26 -----------------------------------------------------------------------------------------------


def test_26_field_selectors_on_crs(api: APIServer) -> None:
    api.create(widget("w1", spec={"mode": "a"}))
    api.create(widget("w2", spec={"mode": "b"}))

    def names(sel: str) -> list[str]:
        return [i["metadata"]["name"] for i in api.list("Widget", "ns", field_selector=sel)["items"]]

    assert names("metadata.name=w1") == ["w1"]
    assert names("metadata.namespace!=ns") == []
    expect_error(lambda: api.list("Widget", "ns", field_selector="spec.mode=a"), 400, "BadRequest",
                 "field label not supported: spec.mode")


# 27 -----------------------------------------------------------------------------------------------


def test_27_watch_resume(api: APIServer) -> None:
    r = rv(api.create(widget()))
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
    events = api.watch("Widget", "ns", resource_version=str(r)).poll()
    assert _types(events) == [MODIFIED, MODIFIED]
    assert all(rv(e.object) > r for e in events)


def test_27_watch_expired() -> None:
    api = make_api(watch_history=4)
    r = rv(api.create(widget()))
    for i in range(40):
        api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
    events = api.watch("Widget", "ns", resource_version=str(r)).poll()
    assert events[0].type == ERROR
    assert events[0].object["code"] == 410 and events[0].object["reason"] == "Expired"
    assert events[0].object["kind"] == "Status"


def test_27_watch_list(api: APIServer) -> None:
    for n in ("w1", "w2", "w3"):
        api.create(widget(n))
    w = api.watch("Widget", "ns", send_initial_events=True, resource_version_match="NotOlderThan",
                  allow_bookmarks=True)
    events = w.poll()
    assert _types(events) == [ADDED, ADDED, ADDED, BOOKMARK]
    mark = events[-1].object["metadata"]
    assert mark["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(mark["resourceVersion"]) == api.resource_version
    api.create(widget("w4"))
    assert _types(w.poll()) == [ADDED]


# 28 -----------------------------------------------------------------------------------------------


def test_28_filtered_watch(api: APIServer) -> None:
    api.create(widget(labels={"env": "prod"}))
    w = api.watch("Widget", "ns", resource_version=str(api.resource_version), label_selector="env=prod")
    out = api.patch("Widget", "w1", {"metadata": {"labels": {"env": "dev"}}}, namespace="ns")
    events = w.poll()
    assert _types(events) == [DELETED]
    assert events[0].object["metadata"]["labels"] == {"env": "prod"}
    assert rv(events[0].object) == rv(out)
    api.patch("Widget", "w1", {"metadata": {"labels": {"env": "prod"}}}, namespace="ns")
    events = w.poll()
    assert _types(events) == [ADDED]
    assert events[0].object["metadata"]["labels"] == {"env": "prod"}


# 29 -----------------------------------------------------------------------------------------------


def test_29_pruning(api: APIServer) -> None:
    out = api.create(widget(spec={"unknown": 1}))
    assert "unknown" not in out["spec"]
    assert any('unknown field "spec.unknown"' in w for w in api.last_warnings)
    expect_error(lambda: api.create(widget("w2", spec={"unknown": 1}), field_validation="Strict"), 400,
                 "BadRequest", 'strict decoding error: unknown field "spec.unknown"')


def test_29_validation(api: APIServer) -> None:
    err = expect_error(lambda: api.create(widget(spec={"replicas": "x"})), 422, "Invalid")
    assert {"reason": "FieldValueTypeInvalid", "field": "spec.replicas",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'} in err.causes
    err = expect_error(lambda: api.create(widget(spec={"mode": "z"})), 422, "Invalid")
    assert err.causes[0]["reason"] == "FieldValueNotSupported" and err.causes[0]["field"] == "spec.mode"
    assert err.causes[0]["message"] == 'Unsupported value: "z": supported values: "a", "b"'
    out = api.create(widget(spec={"replicas": 2.0}))
    assert out["spec"]["replicas"] == 2 and type(out["spec"]["replicas"]) is int


# 30 -----------------------------------------------------------------------------------------------


def test_30_empty_values_and_nulls(api: APIServer) -> None:
    out = api.create(widget(spec={"items": [], "extra": {}}))
    assert out["spec"]["items"] == [] and out["spec"]["extra"] == {}
    assert api.get("Widget", "w1", "ns")["spec"]["items"] == []
    out = api.create(widget("w2", spec={"items": None}))
    assert "items" not in out["spec"]
    assert out["spec"]["replicas"] == 1
    p = pod(labels={})
    p["spec"]["containers"][0]["env"] = []
    created = api.create(p)
    assert "env" not in created["spec"]["containers"][0]
    assert "labels" not in created["metadata"]
    got = api.get("Pod", "p1", "ns")
    assert "env" not in got["spec"]["containers"][0] and "labels" not in got["metadata"]


def test_30_list_order_by_storage_key(api: APIServer) -> None:
    for ns in ("a", "a-b"):
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        api.create(widget("x", ns))
    items = api.list("Widget")["items"]
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [("a-b", "x"), ("a", "x")]


def test_finalizer_warnings_only_for_finalizers_a_write_adds(api: APIServer) -> None:
    """``generateWarningsFromObj``: an update warns about the finalizers it adds, not the ones already there."""
    obj = widget()
    obj["metadata"]["finalizers"] = ["alpha"]
    api.create(obj)
    assert any('"alpha": prefer a domain-qualified' in w for w in api.last_warnings)
    api.patch("Widget", "w1", {"metadata": {"labels": {"x": "1"}}}, namespace="ns")
    assert api.last_warnings == []
    api.patch("Widget", "w1", {"metadata": {"finalizers": ["alpha", "beta"]}}, namespace="ns")
    assert [w for w in api.last_warnings if "domain-qualified" in w] == [
        'metadata.finalizers: "beta": prefer a domain-qualified finalizer name including a path (/) to avoid '
        "accidental conflicts with other finalizer writers"]


def test_validation_ratchets_what_an_update_leaves_unchanged(api: APIServer) -> None:
    """An update that leaves the body as stored passes (CRD validation ratcheting); a changed body is checked.

    fakeapi ratchets whole values: a spec (or status) the write does not touch is not checked
    again; once a write changes it, all of it is, where the real server ratchets field by field.
    """
    api.create(widget())
    table = api.store.table("example.com", "widgets")
    entry = table.get("ns", "w1")
    assert entry is not None
    entry.reserve({**entry.obj, "spec": {"replicas": "not-a-number"}})  # as if stored under a looser schema
    api.patch("Widget", "w1", {"metadata": {"labels": {"x": "1"}}}, namespace="ns")
    err = expect_error(lambda: api.patch("Widget", "w1", {"spec": {"mode": "z"}}, namespace="ns"), 422, "Invalid")
    assert "spec.mode" in {c["field"] for c in err.causes}
