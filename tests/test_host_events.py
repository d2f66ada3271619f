"""Event mapping: the primary kind, owned kinds, map functions, predicates and event filters."""

from __future__ import annotations

from typing import Any

from support import configmap, make_api, owner_ref, widget

from fakeapi.host import Context, Host, Predicate, Request, predicates


class Recorder:
    """A reconcile that records its requests."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def __call__(self, ctx: Context, req: Request) -> None:
        self.requests.append(req)

    def take(self) -> list[str]:
        out = sorted(str(r) for r in self.requests)
        self.requests.clear()
        return out


def test_primary_kind_events_enqueue_the_object_itself() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    host.controller("widgets").for_("Widget").complete(rec)
    api.create(widget("w1"))
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]
    api.delete("Widget", "w1", "ns")
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]


def test_existing_objects_are_enqueued_when_a_controller_starts() -> None:
    api = make_api()
    api.create(widget("w1"))
    api.create(widget("w2"))
    host = Host(api)
    rec = Recorder()
    host.controller("widgets").for_("Widget").complete(rec)
    host.run_until_idle()
    assert rec.take() == ["ns/w1", "ns/w2"]


def test_owned_kind_events_enqueue_the_controlling_owner() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    host.controller("widgets").for_("Widget").owns("ConfigMap").complete(rec)
    w = api.create(widget("w1"))
    host.run_until_idle()
    rec.take()
    api.create(configmap("owned", ownerReferences=[owner_ref(w, controller=True)]))
    api.create(configmap("not-controller", ownerReferences=[owner_ref(w)]))
    api.create(configmap("unowned"))
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]
    api.patch("ConfigMap", "owned", {"data": {"k": "v"}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]
    api.patch("ConfigMap", "not-controller", {"data": {"k": "v"}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == []
    api.delete("ConfigMap", "owned", "ns")
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]


def test_watched_kind_events_enqueue_what_the_map_function_returns() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()

    def to_widget(cm: dict[str, Any]) -> list[Request]:
        target = (cm["metadata"].get("labels") or {}).get("widget")
        return [Request(cm["metadata"]["namespace"], target)] if target else []

    host.controller("widgets").for_("Widget").watches("ConfigMap", to_widget).complete(rec)
    host.run_until_idle()
    api.create(configmap("c1", labels={"widget": "a"}))
    api.create(configmap("c2"))
    host.run_until_idle()
    assert rec.take() == ["ns/a"]
    # an update maps both the old and the new object
    api.patch("ConfigMap", "c1", {"metadata": {"labels": {"widget": "b"}}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == ["ns/a", "ns/b"]


def test_for_predicates_filter_primary_events() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    host.controller("widgets").for_("Widget", predicates=predicates.generation_changed).complete(rec)
    api.create(widget("w1"))
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]
    api.patch("Widget", "w1", {"status": {"phase": "Ready"}}, namespace="ns", subresource="status")
    api.patch("Widget", "w1", {"metadata": {"labels": {"a": "b"}}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == []  # neither changed the generation
    api.patch("Widget", "w1", {"spec": {"replicas": 4}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]


def test_event_filters_apply_to_every_watched_kind() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    only_labelled = predicates.matching(lambda o: (o["metadata"].get("labels") or {}).get("watch") == "yes")
    (host.controller("widgets").for_("Widget").owns("ConfigMap")
     .with_event_filter(only_labelled).complete(rec))
    w = api.create(widget("w1", labels={"watch": "yes"}))
    api.create(widget("w2"))
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]
    api.create(configmap("c1", ownerReferences=[owner_ref(w, controller=True)]))
    api.create(configmap("c2", labels={"watch": "yes"}, ownerReferences=[owner_ref(w, controller=True)]))
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]  # from c2 only
    assert [c.name for c in api.trace.reconciles].count("w1") == 2


def test_custom_update_predicate() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    replicas_changed = Predicate(
        update=lambda old, new: old.get("spec", {}).get("replicas") != new.get("spec", {}).get("replicas"))
    host.controller("widgets").for_("Widget", predicates=[replicas_changed]).complete(rec)
    api.create(widget("w1", spec={"replicas": 1}))
    host.run_until_idle()
    rec.take()
    api.patch("Widget", "w1", {"spec": {"mode": "a"}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == []
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    host.run_until_idle()
    assert rec.take() == ["ns/w1"]


def test_generic_events_go_through_the_generic_predicates() -> None:
    api = make_api()
    host = Host(api)
    rec = Recorder()
    no_generic_for_b = Predicate(generic=lambda o: o["metadata"]["name"] != "b")
    ctrl = host.controller("widgets").for_("Widget", predicates=no_generic_for_b).complete(rec)
    host.run_until_idle()
    ctrl.generic(widget("a"))
    ctrl.generic(widget("b"))
    host.run_until_idle()
    assert rec.take() == ["ns/a"]
