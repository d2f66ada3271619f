"""Generation rules (reference §1.3) for custom resources and built-in kinds, and the status subresource."""

from __future__ import annotations

from support import configmap, expect_error, make_api, pod, rv, widget

from fakeapi.server.apiserver import APIServer


def _gen(obj: dict) -> int:
    return int(obj["metadata"].get("generation") or 0)


class TestCustomResourceGeneration:
    def test_create_always_one(self, api: APIServer) -> None:
        assert _gen(api.create(widget(generation=42))) == 1

    def test_spec_change_bumps_once(self, api: APIServer) -> None:
        cur = api.create(widget(spec={"replicas": 1}))
        cur["spec"] = {"replicas": 2, "mode": "a", "items": ["x", "y"]}
        assert _gen(api.update(cur)) == 2

    def test_other_top_level_key_bumps(self) -> None:
        from support import widget_crd, widget_schema

        schema = widget_schema()
        schema["properties"]["data"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        api = APIServer()
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        api.register_crd(widget_crd(schema=schema))
        cur = api.create(widget())
        out = api.patch("Widget", "w1", {"data": {"k": "v"}}, namespace="ns")
        assert _gen(out) == _gen(cur) + 1

    def test_metadata_only_changes_do_not_bump(self, api: APIServer) -> None:
        cur = api.create(widget())
        for patch in ({"metadata": {"labels": {"a": "b"}}}, {"metadata": {"annotations": {"a": "b"}}},
                      {"metadata": {"finalizers": ["example.com/f"]}},
                      {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c",
                                                         "uid": "0000"}]}}):
            out = api.patch("Widget", "w1", patch, namespace="ns")
            assert _gen(out) == _gen(cur)
            assert rv(out) > rv(cur)
            cur = out

    def test_empty_list_versus_absent_bumps(self, api: APIServer) -> None:
        cur = api.create(widget())
        out = api.patch("Widget", "w1", {"spec": {"items": []}}, namespace="ns")
        assert _gen(out) == _gen(cur) + 1 and out["spec"]["items"] == []

    def test_client_generation_is_ignored_on_update(self, api: APIServer) -> None:
        cur = api.create(widget())
        cur["metadata"]["generation"] = 10
        out = api.update(cur)
        assert _gen(out) == 1 and rv(out) == rv(cur)
        cur["metadata"]["generation"] = 0
        cur["spec"]["replicas"] = 4
        assert _gen(api.update(cur)) == 2

    def test_status_via_main_resource_without_subresource_bumps(self, api_nostatus: APIServer) -> None:
        cur = api_nostatus.create({**widget(), "status": {"x": 1}})
        assert cur["status"] == {"x": 1}
        out = api_nostatus.patch("Widget", "w1", {"status": {"x": 2}}, namespace="ns")
        assert _gen(out) == 2 and out["status"] == {"x": 2}

    def test_status_subresource_never_bumps(self, api: APIServer) -> None:
        cur = api.create(widget())
        out = api.patch("Widget", "w1", {"status": {"x": 5}}, namespace="ns", subresource="status")
        assert out["status"] == {"x": 5} and _gen(out) == _gen(cur)

    def test_first_delete_with_finalizers_bumps_once(self, api: APIServer) -> None:
        cur = api.create(widget(finalizers=["example.com/f"]))
        out = api.delete("Widget", "w1", "ns")
        assert _gen(out) == _gen(cur) + 1
        again = api.delete("Widget", "w1", "ns")
        assert _gen(again) == _gen(out)


class TestBuiltinGeneration:
    def test_configmap_has_no_generation(self, api: APIServer) -> None:
        cm = api.create(configmap(data={"a": "1"}, generation=5))
        assert "generation" not in cm["metadata"]
        cm["data"] = {"a": "2"}
        assert "generation" not in api.update(cm)["metadata"]

    def test_pod_generation_follows_spec(self, api: APIServer) -> None:
        p = api.create(pod())
        assert _gen(p) == 1
        p["metadata"]["labels"] = {"a": "b"}
        p = api.update(p)
        assert _gen(p) == 1
        p["spec"]["activeDeadlineSeconds"] = 30
        p = api.update(p)
        assert _gen(p) == 2

    def test_pod_status_via_main_resource_ignored(self, api: APIServer) -> None:
        p = api.create(pod())
        p["status"] = {"phase": "Running"}
        out = api.update(p)
        assert (out.get("status") or {}).get("phase") != "Running"
        assert _gen(out) == 1

    def test_pod_status_subresource(self, api: APIServer) -> None:
        p = api.create(pod())
        p["status"] = {"phase": "Running"}
        p["spec"]["activeDeadlineSeconds"] = 5
        out = api.update(p, subresource="status")
        assert out["status"]["phase"] == "Running"
        assert "activeDeadlineSeconds" not in out["spec"]
        assert _gen(out) == 1

    def test_namespace_main_resource_keeps_status_and_finalizers(self, api: APIServer) -> None:
        ns = api.get("Namespace", "ns")
        assert ns["status"] == {"phase": "Active"}
        assert ns["spec"]["finalizers"] == ["kubernetes"]
        assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "ns"
        ns["spec"]["finalizers"] = []
        ns["status"] = {"phase": "Terminating"}
        out = api.update(ns)
        assert out["spec"]["finalizers"] == ["kubernetes"]
        assert out["status"] == {"phase": "Active"}

    def test_configmap_delete_with_finalizer_does_not_set_generation(self, api: APIServer) -> None:
        api.create(configmap(finalizers=["example.com/f"]))
        out = api.delete("ConfigMap", "cm1", "ns")
        assert "generation" not in out["metadata"]
        assert out["metadata"]["deletionTimestamp"]


class TestStatusSubresource:
    def test_status_update_ignores_metadata_changes(self, api: APIServer) -> None:
        cur = api.create(widget(finalizers=["example.com/f"]))
        cur["metadata"]["finalizers"] = []
        cur["metadata"]["annotations"] = {"a": "b"}
        cur["status"] = {"phase": "Ready"}
        out = api.update(cur, subresource="status")
        assert out["metadata"]["finalizers"] == ["example.com/f"]
        assert "annotations" not in out["metadata"]
        assert out["status"] == {"phase": "Ready"}

    def test_status_update_removing_finalizers_does_not_delete(self, api: APIServer) -> None:
        api.create(widget(finalizers=["example.com/f"]))
        cur = api.delete("Widget", "w1", "ns")
        cur["metadata"]["finalizers"] = []
        cur["status"] = {"phase": "Gone"}
        out = api.update(cur, subresource="status")
        assert out["metadata"]["finalizers"] == ["example.com/f"]
        assert api.get("Widget", "w1", "ns")["status"] == {"phase": "Gone"}

    def test_status_update_stale_rv_conflicts(self, api: APIServer) -> None:
        cur = api.create(widget())
        api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
        expect_error(lambda: api.update({**cur, "status": {"x": 1}}, subresource="status"), 409, "Conflict")

    def test_status_update_validates_status_only(self, api: APIServer) -> None:
        cur = api.create(widget())
        expect_error(lambda: api.update({**cur, "status": {"x": "nope"}}, subresource="status"), 422, "Invalid")
        # an invalid spec in a /status body is ignored: spec comes from storage
        out = api.update({**cur, "spec": {"mode": "zzz"}, "status": {"x": 1}}, subresource="status")
        assert out["spec"] == {"replicas": 1} and out["status"] == {"x": 1}

    def test_status_noop_keeps_rv(self, api: APIServer) -> None:
        api.create(widget())
        cur = api.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns", subresource="status")
        again = api.update(cur, subresource="status")
        assert rv(again) == rv(cur)

    def test_main_update_without_stored_status_drops_request_status(self) -> None:
        api = make_api()
        cur = api.create(widget())
        out = api.update({**cur, "status": {"x": 3}})
        assert "status" not in out and rv(out) == rv(cur)

    def test_status_patch_json(self, api: APIServer) -> None:
        api.create(widget())
        out = api.patch("Widget", "w1", [{"op": "add", "path": "/status", "value": {"x": 2}}], namespace="ns",
                        patch_type="json", subresource="status")
        assert out["status"] == {"x": 2}


def test_bool_and_int_are_different_bytes_under_preserve_unknown(api: APIServer) -> None:
    """Python's ``True == 1``: an untyped field changing from 1 to true is still a real write."""
    cur = api.create(widget(spec={"extra": {"flag": 1}}))
    out = api.patch("Widget", "w1", {"spec": {"extra": {"flag": True}}}, namespace="ns")
    assert out["spec"]["extra"]["flag"] is True
    assert rv(out) > rv(cur) and _gen(out) == _gen(cur) + 1
    again = api.patch("Widget", "w1", {"spec": {"extra": {"flag": True}}}, namespace="ns")
    assert rv(again) == rv(out)
