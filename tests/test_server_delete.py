"""Deletion (reference §2.6, §2.4 step 6, §2.7): finalizers, the single DELETED event, delete-on-update,
propagation policies, deletecollection, graceful Pods."""

from __future__ import annotations

from support import configmap, expect_error, pod, rv, widget

from fakeapi.server.apiserver import APIServer
from fakeapi.server.watch import DELETED, MODIFIED


def _watch(api: APIServer, kind: str = "Widget"):  # type: ignore[no-untyped-def]
    return api.watch(kind, "ns", resource_version=str(api.resource_version))


class TestFinalizers:
    def test_deletion_timestamp_from_clock(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        api.clock.advance("90s")
        out = api.delete("Widget", "w1", "ns")
        assert out["metadata"]["deletionTimestamp"] == api.clock.timestamp()
        api.clock.advance("1h")
        again = api.delete("Widget", "w1", "ns")
        assert again["metadata"]["deletionTimestamp"] == out["metadata"]["deletionTimestamp"]

    def test_remove_one_of_two_finalizers_keeps_object(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f", "example.com/g"]))
        api.delete("Widget", "w1", "ns")
        w = _watch(api)
        out = api.patch("Widget", "w1", {"metadata": {"finalizers": ["example.com/g"]}}, namespace="ns")
        assert out["metadata"]["finalizers"] == ["example.com/g"]
        assert [e.type for e in w.poll()] == [MODIFIED]
        out = api.patch("Widget", "w1", [{"op": "remove", "path": "/metadata/finalizers/0"}], namespace="ns",
                        patch_type="json")
        events = w.poll()
        assert [e.type for e in events] == [DELETED]
        assert events[0].object["metadata"]["finalizers"] == ["example.com/g"]
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)

    def test_delete_on_update_validates_first(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        cur = api.delete("Widget", "w1", "ns")
        cur["metadata"]["finalizers"] = []
        cur["spec"]["mode"] = "invalid"
        expect_error(lambda: api.update(cur), 422, "Invalid")
        assert api.get("Widget", "w1", "ns")["metadata"]["finalizers"] == ["example.com/f"]

    def test_delete_on_update_needs_the_rv_check(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        stale = api.delete("Widget", "w1", "ns")
        api.patch("Widget", "w1", {"metadata": {"labels": {"a": "b"}}}, namespace="ns")
        stale["metadata"]["finalizers"] = []
        expect_error(lambda: api.update(stale), 409, "Conflict")

    def test_deleted_event_rv_is_the_deletion_revision(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        deleting = api.delete("Widget", "w1", "ns")
        w = _watch(api)
        api.patch("Widget", "w1", {"metadata": {"finalizers": None}}, namespace="ns")
        (ev,) = w.poll()
        assert rv(ev.object) == api.resource_version > rv(deleting)
        assert ev.object["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]

    def test_recreate_after_delete_gets_new_uid(self, api: APIServer) -> None:
        a = api.create(widget())
        api.delete("Widget", "w1", "ns")
        b = api.create(widget())
        assert a["metadata"]["uid"] != b["metadata"]["uid"]

    def test_builtin_delete_responses(self, api: APIServer) -> None:
        cm = api.create(configmap())
        out = api.delete("ConfigMap", "cm1", "ns")
        assert out["kind"] == "Status" and out["details"] == {"name": "cm1", "kind": "configmaps",
                                                               "uid": cm["metadata"]["uid"]}
        api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "ns"}})
        out = api.delete("ServiceAccount", "sa", "ns")
        assert out["kind"] == "ServiceAccount" and out["metadata"]["name"] == "sa"


class TestGracefulPods:
    def test_unscheduled_pod_is_deleted_at_once(self, api: APIServer) -> None:
        api.create(pod())
        out = api.delete("Pod", "p1", "ns")
        assert out["kind"] == "Pod"
        expect_error(lambda: api.get("Pod", "p1", "ns"), 404)

    def test_scheduled_pod_waits_for_grace(self, api: APIServer) -> None:
        p = pod()
        p["spec"]["nodeName"] = "node-1"
        api.create(p)
        out = api.delete("Pod", "p1", "ns")
        assert out["metadata"]["deletionGracePeriodSeconds"] == 30
        shorter = api.delete("Pod", "p1", "ns", grace_period_seconds=5)
        assert shorter["metadata"]["deletionGracePeriodSeconds"] == 5
        assert shorter["metadata"]["deletionTimestamp"] < out["metadata"]["deletionTimestamp"]
        longer = api.delete("Pod", "p1", "ns", grace_period_seconds=60)
        assert longer["metadata"]["deletionTimestamp"] == shorter["metadata"]["deletionTimestamp"]
        api.delete("Pod", "p1", "ns", grace_period_seconds=0)
        expect_error(lambda: api.get("Pod", "p1", "ns"), 404)


class TestPropagation:
    def test_foreground_then_orphan_swaps_finalizer(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        out = api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        assert out["metadata"]["finalizers"] == ["example.com/f", "foregroundDeletion"]
        out = api.delete("Widget", "w1", "ns", propagation_policy="Orphan")
        assert out["metadata"]["finalizers"] == ["example.com/f", "orphan"]
        out = api.delete("Widget", "w1", "ns", propagation_policy="Background")
        assert out["metadata"]["finalizers"] == ["example.com/f"]

    def test_no_policy_keeps_existing_gc_finalizer(self, api: APIServer) -> None:
        api.create(widget())
        api.delete("Widget", "w1", "ns", propagation_policy="Orphan")
        w = _watch(api)
        out = api.delete("Widget", "w1", "ns")
        assert out["metadata"]["finalizers"] == ["orphan"]
        assert w.poll() == []

    def test_orphan_dependents_legacy_option(self, api: APIServer) -> None:
        api.create(widget())
        out = api.delete("Widget", "w1", "ns", orphan_dependents=True)
        assert out["metadata"]["finalizers"] == ["orphan"]


class TestDeleteCollection:
    def test_deletes_matching_and_honours_finalizers(self, api: APIServer) -> None:
        api.create(widget("a", labels={"x": "1"}))
        api.create(widget("b", labels={"x": "1"}, finalizers=["example.com/f"]))
        api.create(widget("c", labels={"x": "2"}))
        out = api.delete_collection("Widget", "ns", label_selector="x=1")
        assert out["kind"] == "WidgetList"
        assert [i["metadata"]["name"] for i in out["items"]] == ["a", "b"]
        assert "deletionTimestamp" not in out["items"][1]["metadata"]
        names = [i["metadata"]["name"] for i in api.list("Widget", "ns")["items"]]
        assert names == ["b", "c"]
        assert api.get("Widget", "b", "ns")["metadata"]["deletionTimestamp"]

    def test_field_selector(self, api: APIServer) -> None:
        api.create(widget("a"))
        api.create(widget("b"))
        api.delete_collection("Widget", "ns", field_selector="metadata.name!=a")
        assert [i["metadata"]["name"] for i in api.list("Widget", "ns")["items"]] == ["a"]
