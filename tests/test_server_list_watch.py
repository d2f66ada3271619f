"""List (order, resourceVersion, limit/continue, selectors) and watch (reference §2.3, §2.8)."""

from __future__ import annotations

from support import configmap, expect_error, make_api, pod, rv, widget

from fakeapi.server.apiserver import APIServer
from fakeapi.server.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED


def _names(items: list[dict]) -> list[str]:
    return [i["metadata"]["name"] for i in items]


def _types(events: list) -> list[str]:
    return [e.type for e in events]


class TestList:
    def test_order_is_storage_key_byte_order(self, api: APIServer) -> None:
        for ns in ("b", "a", "a-b", "a0"):
            api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for ns, name in (("b", "x"), ("a", "y"), ("a-b", "z"), ("a", "x"), ("a0", "q"), ("ns", "b.c"), ("ns", "b")):
            api.create(configmap(name, ns))
        keys = [f'{i["metadata"]["namespace"]}/{i["metadata"]["name"]}' for i in api.list("ConfigMap")["items"]]
        assert keys == ["a-b/z", "a/x", "a/y", "a0/q", "b/x", "ns/b", "ns/b.c"]

    def test_list_shape_and_rv(self, api: APIServer) -> None:
        api.create(widget())
        api.create(configmap())
        out = api.list("Widget", "ns")
        assert out["apiVersion"] == "example.com/v1" and out["kind"] == "WidgetList"
        assert int(out["metadata"]["resourceVersion"]) == api.resource_version
        assert out["items"][0]["apiVersion"] == "example.com/v1" and out["items"][0]["kind"] == "Widget"
        cms = api.list("ConfigMap", "ns")
        assert cms["kind"] == "ConfigMapList" and cms["apiVersion"] == "v1"
        assert "kind" not in cms["items"][0] and "apiVersion" not in cms["items"][0]

    def test_list_rv_may_exceed_every_item(self, api: APIServer) -> None:
        w = api.create(widget())
        api.create(configmap())
        out = api.list("Widget", "ns")
        assert int(out["metadata"]["resourceVersion"]) > rv(w)

    def test_all_namespaces(self, api: APIServer) -> None:
        api.create(widget("a"))
        api.create(widget("b", "default"))
        assert _names(api.list("Widget")["items"]) == ["b", "a"]

    def test_lookup_by_plural_short_name_and_gvk(self, api: APIServer) -> None:
        api.create(widget())
        for k in ("Widget", "widgets", "widget", "example.com/v1/Widget"):
            assert _names(api.list(k, "ns")["items"]) == ["w1"]
        api.create(configmap())
        assert _names(api.list("cm", "ns")["items"]) == ["cm1"]

    def test_limit_and_continue(self, api: APIServer) -> None:
        for i in range(7):
            api.create(widget(f"w{i}"))
        page = api.list("Widget", "ns", limit=3)
        assert _names(page["items"]) == ["w0", "w1", "w2"]
        assert page["metadata"]["remainingItemCount"] == 4
        list_rv = page["metadata"]["resourceVersion"]
        # a write between pages: the next pages are still served at the first page's revision
        api.create(widget("w3a"))
        api.delete("Widget", "w5", "ns")
        page2 = api.list("Widget", "ns", limit=3, continue_=page["metadata"]["continue"])
        assert _names(page2["items"]) == ["w3", "w4", "w5"]
        assert page2["metadata"]["resourceVersion"] == list_rv
        page3 = api.list("Widget", "ns", limit=3, continue_=page2["metadata"]["continue"])
        assert _names(page3["items"]) == ["w6"]
        assert "continue" not in page3["metadata"] and "remainingItemCount" not in page3["metadata"]

    def test_non_positive_limit_lists_everything(self, api: APIServer) -> None:
        for i in range(3):
            api.create(widget(f"w{i}"))
        for limit in (0, -1):
            out = api.list("Widget", "ns", limit=limit)
            assert len(out["items"]) == 3 and "continue" not in out["metadata"]

    def test_limit_with_selector(self, api: APIServer) -> None:
        for i in range(6):
            api.create(widget(f"w{i}", labels={"odd": str(i % 2)}))
        page = api.list("Widget", "ns", label_selector="odd=1", limit=2)
        assert _names(page["items"]) == ["w1", "w3"]
        assert "remainingItemCount" not in page["metadata"]  # unknown with a selector
        rest = api.list("Widget", "ns", label_selector="odd=1", limit=2, continue_=page["metadata"]["continue"])
        assert _names(rest["items"]) == ["w5"]
        assert "continue" not in rest["metadata"]

    def test_exact_resource_version(self, api: APIServer) -> None:
        api.create(widget("a"))
        at = str(api.resource_version)
        api.create(widget("b"))
        api.patch("Widget", "a", {"spec": {"replicas": 9}}, namespace="ns")
        old = api.list("Widget", "ns", resource_version=at, resource_version_match="Exact")
        assert _names(old["items"]) == ["a"]
        assert old["items"][0]["spec"]["replicas"] == 1
        assert old["metadata"]["resourceVersion"] == at
        newer = api.list("Widget", "ns", resource_version=at, resource_version_match="NotOlderThan")
        assert _names(newer["items"]) == ["a", "b"]

    def test_label_selector_uses_the_index(self, api: APIServer) -> None:
        for i in range(50):
            api.create(configmap(f"c{i:02d}", labels={"app": "x" if i % 10 == 0 else "y"}))
        out = api.list("ConfigMap", "ns", label_selector="app=x")
        assert _names(out["items"]) == ["c00", "c10", "c20", "c30", "c40"]
        out = api.list("ConfigMap", "ns", label_selector={"app": "x"})
        assert len(out["items"]) == 5

    def test_label_selector_greater_than(self, api: APIServer) -> None:
        api.create(widget("a", labels={"n": "5"}))
        api.create(widget("b", labels={"n": "50"}))
        api.create(widget("c", labels={"n": "x"}))
        assert _names(api.list("Widget", "ns", label_selector="n>10")["items"]) == ["b"]
        assert _names(api.list("Widget", "ns", label_selector="n<10")["items"]) == ["a"]

    def test_pod_field_selectors(self, api: APIServer) -> None:
        p = pod("a")
        p["spec"]["nodeName"] = "n1"
        api.create(p)
        api.create(pod("b"))
        assert _names(api.list("Pod", "ns", field_selector="spec.nodeName=n1")["items"]) == ["a"]
        assert _names(api.list("Pod", "ns", field_selector="spec.nodeName=")["items"]) == ["b"]
        assert _names(api.list("Pod", "ns", field_selector="status.phase=Pending")["items"]) == ["a", "b"]

    def test_selectable_fields(self) -> None:
        api = make_api(selectable=("spec.mode",))
        api.create(widget("a", spec={"mode": "a"}))
        api.create(widget("b", spec={"mode": "b"}))
        api.create(widget("c"))
        assert _names(api.list("Widget", "ns", field_selector="spec.mode=a")["items"]) == ["a"]
        assert _names(api.list("Widget", "ns", field_selector="spec.mode!=a")["items"]) == ["b", "c"]
        assert _names(api.list("Widget", "ns", field_selector="spec.mode=")["items"]) == ["c"]


class TestWatch:
    def test_initial_events_then_changes(self, api: APIServer) -> None:
        api.create(widget("a"))
        api.create(widget("b"))
        w = api.watch("Widget", "ns")
        assert _types(w.poll()) == [ADDED, ADDED]
        api.patch("Widget", "a", {"spec": {"replicas": 2}}, namespace="ns")
        api.delete("Widget", "b", "ns")
        assert _types(w.poll()) == [MODIFIED, DELETED]
        assert w.poll() == []

    def test_rv_zero_means_initial_events(self, api: APIServer) -> None:
        api.create(widget("a"))
        assert _types(api.watch("Widget", "ns", resource_version="0").poll()) == [ADDED]

    def test_events_in_rv_order_across_namespaces(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        w = api.watch("Widget", resource_version=str(api.resource_version))
        api.create(widget("a", "other"))
        api.create(widget("b"))
        api.create(widget("c", "other"))
        evs = w.poll()
        assert [rv(e.object) for e in evs] == sorted(rv(e.object) for e in evs)
        assert _names([e.object for e in evs]) == ["a", "b", "c"]

    def test_namespace_filter(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        api.create(widget("a", "other"))
        api.create(widget("b"))
        assert _names([e.object for e in w.poll()]) == ["b"]

    def test_resume_from_each_event(self, api: APIServer) -> None:
        start = str(api.resource_version)
        api.create(widget())
        for i in range(3):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        all_events = api.watch("Widget", "ns", resource_version=start).poll()
        assert _types(all_events) == [ADDED, MODIFIED, MODIFIED, MODIFIED]
        for i, ev in enumerate(all_events):
            rest = api.watch("Widget", "ns", resource_version=ev.object["metadata"]["resourceVersion"]).poll()
            assert len(rest) == len(all_events) - i - 1

    def test_expired_after_history_trimmed(self) -> None:
        api = make_api(watch_history=3)
        first = str(api.resource_version)
        api.create(widget())
        for i in range(20):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        w = api.watch("Widget", "ns", resource_version=first)
        (ev,) = w.poll()
        assert ev.type == ERROR and ev.object["reason"] == "Expired" and ev.object["code"] == 410
        assert w.poll() == []
        # a recent resourceVersion still works
        assert api.watch("Widget", "ns", resource_version=str(api.resource_version)).poll() == []

    def test_slow_consumer_loses_nothing(self) -> None:
        api = make_api(watch_history=3)
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        api.create(widget())
        for i in range(200):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        events = w.poll()
        assert len(events) == 201
        assert [e.object["spec"]["replicas"] for e in events[1:]] == list(range(2, 202))
        # once read, history is trimmed again: a new watch from the start is expired
        api.patch("Widget", "w1", {"spec": {"replicas": 1000}}, namespace="ns")
        assert api.watch("Widget", "ns", resource_version="1").poll()[0].type == ERROR

    def test_closed_watch_does_not_pin_history(self) -> None:
        api = make_api(watch_history=3)
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        w.close()
        api.create(widget())
        for i in range(100):
            api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
        assert len(api._log(api.kinds.require("Widget")).events) < 50
        assert w.poll() == []

    def test_bookmarks(self, api: APIServer) -> None:
        w = api.watch("Widget", "ns", allow_bookmarks=True, resource_version=str(api.resource_version))
        api.create(configmap())
        bm = w.bookmark()
        assert bm is not None and bm.type == BOOKMARK
        assert bm.object["kind"] == "Widget" and bm.object["apiVersion"] == "example.com/v1"
        assert bm.object["metadata"] == {"resourceVersion": str(api.resource_version)}
        assert api.watch("Widget", "ns").bookmark() is None

    def test_watch_list_bookmark_with_selector(self, api: APIServer) -> None:
        api.create(widget("a", labels={"x": "1"}))
        api.create(widget("b"))
        w = api.watch("Widget", "ns", send_initial_events=True, resource_version_match="NotOlderThan",
                      allow_bookmarks=True, label_selector="x=1")
        evs = w.poll()
        assert _types(evs) == [ADDED, BOOKMARK]
        assert evs[0].object["metadata"]["name"] == "a"
        assert evs[1].object["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}

    def test_watch_list_from_an_rv(self, api: APIServer) -> None:
        api.create(widget("a"))
        w = api.watch("Widget", "ns", send_initial_events=True, resource_version_match="NotOlderThan",
                      allow_bookmarks=True, resource_version=str(api.resource_version))
        assert _types(w.poll()) == [ADDED, BOOKMARK]

    def test_selector_transitions(self, api: APIServer) -> None:
        w = api.watch("Widget", "ns", label_selector="env=prod", resource_version=str(api.resource_version))
        api.create(widget(labels={"env": "dev"}))
        assert w.poll() == []
        api.patch("Widget", "w1", {"metadata": {"labels": {"env": "prod"}}}, namespace="ns")
        assert _types(w.poll()) == [ADDED]
        api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
        assert _types(w.poll()) == [MODIFIED]
        out = api.patch("Widget", "w1", {"metadata": {"labels": {"env": "dev"}}}, namespace="ns")
        (gone,) = w.poll()
        assert gone.type == DELETED and gone.object["metadata"]["labels"] == {"env": "prod"}
        assert rv(gone.object) == rv(out)
        api.delete("Widget", "w1", "ns")
        assert w.poll() == []

    def test_field_selector_transitions(self) -> None:
        api = make_api(selectable=("spec.mode",))
        w = api.watch("Widget", "ns", field_selector="spec.mode=a", resource_version=str(api.resource_version))
        api.create(widget(spec={"mode": "a"}))
        api.patch("Widget", "w1", {"spec": {"mode": "b"}}, namespace="ns")
        api.patch("Widget", "w1", {"spec": {"mode": "a"}}, namespace="ns")
        api.delete("Widget", "w1", "ns")
        assert _types(w.poll()) == [ADDED, DELETED, ADDED, DELETED]

    def test_poll_copies_unless_asked(self, api: APIServer) -> None:
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        api.create(widget())
        (ev,) = w.poll()
        ev.object["spec"]["replicas"] = 99
        assert api.get("Widget", "w1", "ns")["spec"]["replicas"] == 1

    def test_closed_watch_delivers_nothing(self, api: APIServer) -> None:
        with api.watch("Widget", "ns") as w:
            pass
        api.create(widget())
        assert w.poll() == []

    def test_watch_rv_too_new_is_fine_to_wait(self, api: APIServer) -> None:
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version + 2))
        api.create(widget("a"))
        api.create(widget("b"))
        api.create(widget("c"))
        assert _names([e.object for e in w.poll()]) == ["c"]

    def test_wait_returns_events(self, api: APIServer) -> None:
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        api.create(widget())
        assert _types(w.wait(0)) == [ADDED]

    def test_errors_in_watch_are_api_errors(self, api: APIServer) -> None:
        expect_error(lambda: api.watch("Widget", "ns", label_selector="a in b"), 400, "BadRequest")
