"""Fault rules at the API layer (shared/FIXTURE_FORMAT.md "Fault rules") and the trace of calls."""

from __future__ import annotations

import pytest
from support import R, configmap, expect_error, rv, snapshot, widget

from fakeapi.server.apiserver import APIServer
from fakeapi.server.faults import ControllerCrash, FaultRule


class TestFaults:
    def test_error_by_reason_shaped_like_the_real_one(self, api: APIServer) -> None:
        api.create(widget())
        api.faults.add({"on": {"verb": "get", "kind": "Widget"}, "error": "NotFound"})
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404, "NotFound", f'{R} "w1" not found',
                     {"name": "w1", "group": "example.com", "kind": "widgets"})
        assert api.get("Widget", "w1", "ns")["metadata"]["name"] == "w1"

    def test_conflict_on_update_changes_nothing(self, api: APIServer) -> None:
        cur = api.create(widget())
        api.faults.add({"on": {"verb": "update"}, "error": "Conflict"})
        before = snapshot(api)
        expect_error(lambda: api.update({**cur, "spec": {"replicas": 3}}), 409, "Conflict")
        assert snapshot(api) == before
        assert api.update({**cur, "spec": {"replicas": 3}})["spec"]["replicas"] == 3

    @pytest.mark.parametrize(("reason", "code"), [("InternalError", 500), ("ServerTimeout", 500),
                                                  ("TooManyRequests", 429), ("Forbidden", 403),
                                                  ("AlreadyExists", 409), ("Invalid", 422)])
    def test_reasons(self, api: APIServer, reason: str, code: int) -> None:
        api.faults.add({"on": {"verb": "create"}, "error": reason})
        expect_error(lambda: api.create(widget()), code, reason)

    def test_full_status(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "create", "kind": "Widget"},
                        "error": {"code": 503, "reason": "ServiceUnavailable", "message": "try later"}})
        expect_error(lambda: api.create(widget()), 503, "ServiceUnavailable", "try later")

    def test_skip_and_times(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "create", "kind": "ConfigMap"}, "skip": 1, "times": 2, "error": "Conflict"})
        api.create(configmap("a"))
        expect_error(lambda: api.create(configmap("b")), 409)
        expect_error(lambda: api.create(configmap("c")), 409)
        api.create(configmap("d"))
        assert [i["metadata"]["name"] for i in api.list("ConfigMap", "ns")["items"]] == ["a", "d"]

    def test_always(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "list"}, "times": "always", "error": "InternalError"})
        for _ in range(5):
            expect_error(lambda: api.list("Widget", "ns"), 500, "InternalError")
        api.faults.clear()
        assert api.list("Widget", "ns")["items"] == []

    def test_match_on_name_namespace_subresource_actor(self, api: APIServer) -> None:
        api.create(widget())
        api.create(widget("w2"))
        api.faults.add(FaultRule(verb="patch", name="w2", namespace="ns", subresource="status", actor="ctrl",
                                 error="Conflict", times=None))
        api.patch("Widget", "w2", {"status": {"x": 1}}, namespace="ns", subresource="status")
        api.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns", subresource="status", actor="ctrl")
        api.patch("Widget", "w2", {"spec": {"replicas": 2}}, namespace="ns", actor="ctrl")
        expect_error(lambda: api.patch("Widget", "w2", {"status": {"x": 2}}, namespace="ns", subresource="status",
                                       actor="ctrl"), 409)

    def test_write_verb_group(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "write"}, "times": "always", "error": "Forbidden"})
        api.list("Widget", "ns")
        expect_error(lambda: api.create(widget()), 403)
        expect_error(lambda: api.delete("Widget", "w1", "ns"), 403)

    def test_crash_before(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "create", "actor": "ctrl"}, "crash": "before"})
        before = snapshot(api)
        with pytest.raises(ControllerCrash) as info:
            api.create(widget(), actor="ctrl")
        assert info.value.actor == "ctrl" and info.value.when == "before"
        assert snapshot(api) == before
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)

    def test_crash_after(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "create", "actor": "ctrl"}, "crash": "after"})
        before = api.resource_version
        with pytest.raises(ControllerCrash) as info:
            api.create(widget(), actor="ctrl")
        assert info.value.when == "after"
        assert api.resource_version == before + 1
        assert api.get("Widget", "w1", "ns")["metadata"]["name"] == "w1"

    def test_crash_after_a_failed_call_still_crashes(self, api: APIServer) -> None:
        api.create(widget())
        api.faults.add({"on": {"verb": "create", "actor": "ctrl"}, "crash": "after"})
        before = snapshot(api)
        with pytest.raises(ControllerCrash) as info:
            api.create(widget(), actor="ctrl")
        assert info.value.when == "after"
        assert snapshot(api) == before
        assert api.trace.calls[-1].code == 409

    def test_stale_rules_are_not_api_errors(self, api: APIServer) -> None:
        api.create(widget())
        api.faults.add({"on": {"verb": "get", "kind": "Widget"}, "stale": True})
        assert api.get("Widget", "w1", "ns")
        assert api.faults.stale_read("get", "Widget", "ns", "w1", "ctrl") is not None

    def test_service_rules(self, api: APIServer) -> None:
        api.faults.add({"on": {"service": "actions", "call": "RemoveRunner"}, "error": "Conflict"})
        api.create(widget())
        assert api.faults.for_service("actions", "RemoveRunner") is not None
        assert api.faults.for_service("actions", "RemoveRunner") is None


class TestTrace:
    def test_every_call_is_recorded(self, api: APIServer) -> None:
        mark = api.trace.mark()
        cur = api.create(widget(), actor="alice")
        api.get("Widget", "w1", "ns", actor="bob")
        api.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns", subresource="status", actor="ctrl")
        api.patch("Widget", "w1", [{"op": "add", "path": "/spec/mode", "value": "a"}], namespace="ns",
                  patch_type="json", actor="ctrl")
        expect_error(lambda: api.update({**cur, "spec": {"replicas": 5}}, actor="ctrl"), 409)
        api.delete("Widget", "w1", "ns", actor="ctrl")
        calls = api.trace.calls_since(mark)
        rows = [(c.actor, c.verb, c.kind, c.namespace, c.name, c.subresource, c.patch_type, c.code, c.reason)
                for c in calls]
        assert rows == [
            ("alice", "create", "Widget", "ns", "w1", "", "", 201, ""),
            ("bob", "get", "Widget", "ns", "w1", "", "", 200, ""),
            ("ctrl", "patch", "Widget", "ns", "w1", "status", "merge", 200, ""),
            ("ctrl", "patch", "Widget", "ns", "w1", "", "json", 200, ""),
            ("ctrl", "update", "Widget", "ns", "w1", "", "", 409, "Conflict"),
            ("ctrl", "delete", "Widget", "ns", "w1", "", "", 200, ""),
        ]
        assert calls[0].resource_version == cur["metadata"]["resourceVersion"] and calls[0].wrote
        assert calls[1].resource_version == "" and not calls[1].wrote
        assert calls[4].resource_version == "" and not calls[4].wrote
        assert int(calls[5].resource_version) == api.resource_version
        assert all(c.time == api.clock.now() for c in calls)

    def test_noop_write_records_no_rv(self, api: APIServer) -> None:
        cur = api.create(widget())
        api.update(cur)
        call = api.trace.calls[-1]
        assert call.verb == "update" and call.code == 200 and not call.wrote and call.resource_version == ""

    def test_generated_name_is_traced(self, api: APIServer) -> None:
        out = api.create(widget("", generateName="g-"))
        assert api.trace.calls[-1].name == out["metadata"]["name"]

    def test_fault_and_crash_are_traced(self, api: APIServer) -> None:
        api.faults.add({"on": {"verb": "get"}, "error": "TooManyRequests"})
        expect_error(lambda: api.get("Widget", "w1", "ns", actor="c"), 429)
        assert (api.trace.calls[-1].code, api.trace.calls[-1].reason) == (429, "TooManyRequests")
        api.faults.add({"on": {"verb": "create"}, "crash": "before"})
        with pytest.raises(ControllerCrash):
            api.create(widget(), actor="c")
        assert api.trace.calls[-1].verb == "create" and api.trace.calls[-1].reason == "Crash"

    def test_render(self, api: APIServer) -> None:
        out = api.create(widget(), actor="alice")
        line = api.trace.render([api.trace.calls[-1]])
        assert f"alice: create Widget ns/w1 -> 201 rv={rv(out)}" in line

    def test_gc_calls_are_traced(self, api: APIServer) -> None:
        owner = api.create(widget())
        api.create(configmap("d", ownerReferences=[{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w1",
                                                    "uid": owner["metadata"]["uid"]}]))
        api.delete("Widget", "w1", "ns")
        api.gc.run()
        call = api.trace.calls[-1]
        assert (call.actor, call.verb, call.kind, call.name) == ("garbage-collector", "delete", "ConfigMap", "d")
