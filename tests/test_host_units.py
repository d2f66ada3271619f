"""Pure parts of the host: predicates, event handlers, cycle detection, the kubelet's phase rules."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from fakeapi.host import Predicate, Request, WorkQueue, predicates
from fakeapi.host.builder import EnqueueForObject, EnqueueForOwner, EnqueueFromMap
from fakeapi.host.hotloop import find_cycle
from fakeapi.host.kubelet import pod_phase
from fakeapi.server.clock import Clock
from fakeapi.server.trace import ReconcileRecord


def obj(name: str = "a", ns: str = "ns", rv: str = "1", gen: int = 1, **meta: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "namespace": ns, "resourceVersion": rv, "generation": gen}
    m.update(meta)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}


# ---------------------------------------------------------------------------- predicates


def test_builtin_update_predicates() -> None:
    a = obj(rv="1", gen=1, labels={"x": "1"}, annotations={"n": "1"})
    assert not predicates.resource_version_changed.on_update(a, obj(rv="1"))
    assert predicates.resource_version_changed.on_update(a, obj(rv="2"))
    assert not predicates.generation_changed.on_update(a, obj(rv="2", gen=1))
    assert predicates.generation_changed.on_update(a, obj(rv="2", gen=2))
    assert not predicates.labels_changed.on_update(a, obj(rv="2", labels={"x": "1"}))
    assert predicates.labels_changed.on_update(a, obj(rv="2", labels={"x": "2"}))
    assert not predicates.annotations_changed.on_update(a, obj(rv="2", annotations={"n": "1"}))
    assert predicates.annotations_changed.on_update(a, obj(rv="2"))
    # create, delete and generic events always pass these
    for p in (predicates.resource_version_changed, predicates.generation_changed):
        assert p.on_create(a) and p.on_delete(a) and p.on_generic(a)


def test_custom_and_combined_predicates() -> None:
    named_a = predicates.matching(lambda o: o["metadata"]["name"] == "a")
    no_deletes = Predicate(delete=lambda o: False)
    both = predicates.and_(named_a, no_deletes)
    either = predicates.or_(named_a, no_deletes)
    assert both.on_create(obj("a")) and not both.on_create(obj("b"))
    assert not both.on_delete(obj("a"))
    assert either.on_delete(obj("a")) and not either.on_delete(obj("b"))
    assert either.on_create(obj("b"))  # no_deletes lets creates through
    inverted = predicates.not_(named_a)
    assert inverted.on_update(obj("a"), obj("b")) and not inverted.on_update(obj("b"), obj("a"))


# ------------------------------------------------------------------------------ handlers


def queue() -> WorkQueue[Request]:
    return WorkQueue(Clock(), random.Random(0))


def keys(q: WorkQueue[Request]) -> list[str]:
    return sorted(str(r) for r in q.ready())


def test_enqueue_for_object_uses_its_key_and_the_filters() -> None:
    q = queue()
    h = EnqueueForObject(q, (predicates.resource_version_changed,), namespaced=True)
    h.on_create(obj("a"))
    h.on_update(obj("b", rv="1"), obj("b", rv="1"))  # filtered
    h.on_delete(obj("c"))
    assert keys(q) == ["ns/a", "ns/c"]
    cluster = queue()
    EnqueueForObject(cluster, (), namespaced=False).on_create(obj("n", ns=""))
    assert keys(cluster) == ["n"]


def owner_ref(kind: str = "Widget", api_version: str = "example.com/v1", name: str = "w",
              controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": controller}


def test_enqueue_for_owner_follows_the_controller_reference_of_the_primary_kind() -> None:
    q = queue()
    h = EnqueueForOwner(q, (), "example.com", "Widget", owner_namespaced=True)
    h.on_create(obj("c1", ownerReferences=[owner_ref(name="w1")]))
    # another version of the same group and kind still matches (controller-runtime compares group+kind)
    h.on_create(obj("c2", ownerReferences=[owner_ref(name="w2", api_version="example.com/v2")]))
    # not a controller reference, other kind, other group: ignored
    h.on_create(obj("c3", ownerReferences=[owner_ref(name="x", controller=False)]))
    h.on_create(obj("c4", ownerReferences=[owner_ref(kind="Gadget", name="y")]))
    h.on_create(obj("c5", ownerReferences=[owner_ref(api_version="other.io/v1", name="z")]))
    h.on_create(obj("c6"))
    assert keys(q) == ["ns/w1", "ns/w2"]


def test_owner_updates_enqueue_old_and_new_owner() -> None:
    q = queue()
    h = EnqueueForOwner(q, (), "example.com", "Widget", owner_namespaced=True)
    h.on_update(obj("c", ownerReferences=[owner_ref(name="old")]), obj("c", rv="2", ownerReferences=[owner_ref()]))
    assert keys(q) == ["ns/old", "ns/w"]


def test_map_function_requests_for_old_and_new_objects() -> None:
    q = queue()

    def by_label(o: dict[str, Any]) -> list[Request]:
        target = (o["metadata"].get("labels") or {}).get("target")
        return [Request("ns", target)] if target else []

    h = EnqueueFromMap(q, (), by_label)
    h.on_update(obj("c", labels={"target": "one"}), obj("c", rv="2", labels={"target": "two"}))
    h.on_generic(obj("d", labels={"target": "three"}))
    h.on_create(obj("e"))
    assert keys(q) == ["ns/one", "ns/three", "ns/two"]


# -------------------------------------------------------------------------- cycle search

T0 = datetime(2026, 1, 1)


def recs(*items: tuple[str, str]) -> list[ReconcileRecord]:
    return [ReconcileRecord(seq=i, controller="c", namespace="ns", name=n, start=T0, result=r)
            for i, (n, r) in enumerate(items)]


def test_find_cycle_finds_the_shortest_repeating_tail() -> None:
    seq = recs(("x", "done"), ("a", "requeue"), ("b", "done"), ("a", "requeue"), ("b", "done"),
               ("a", "requeue"), ("b", "done"))
    cycle = find_cycle(seq)
    assert cycle is not None
    assert cycle.period == 2 and cycle.repeats == 3
    assert [r.name for r in cycle.records] == ["a", "b"]
    single = find_cycle(recs(("a", "error: boom"), ("a", "error: boom")))
    assert single is not None and single.period == 1


def test_find_cycle_none_without_repetition() -> None:
    assert find_cycle(recs(("a", "done"), ("b", "done"), ("c", "done"))) is None
    assert find_cycle([]) is None


# ---------------------------------------------------------------------------- pod phases


def running() -> dict[str, Any]:
    return {"state": {"running": {"startedAt": "t"}}}


def exited(code: int) -> dict[str, Any]:
    return {"state": {"terminated": {"exitCode": code}}}


def test_pod_phase_follows_the_kubelet_get_phase_rules() -> None:
    assert pod_phase([running()], "Never") == "Running"
    assert pod_phase([exited(0)], "Never") == "Succeeded"
    assert pod_phase([exited(1)], "Never") == "Failed"
    assert pod_phase([exited(0), running()], "Never") == "Running"
    assert pod_phase([exited(0), exited(2)], "Never") == "Failed"
    assert pod_phase([exited(0), exited(0)], "OnFailure") == "Succeeded"
    assert pod_phase([exited(1)], "OnFailure") == "Running"
    assert pod_phase([exited(0)], "Always") == "Running"
    assert pod_phase([{"state": {"waiting": {"reason": "ContainerCreating"}}}], "Never") == "Pending"
    assert pod_phase([], "Never") == "Pending"
