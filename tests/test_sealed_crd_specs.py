"""The snapshot guard's sealed CRD template specs (fakeapi.codec.snapshots.seal, APIServer.install_crd).

A bundle's CRD installed from a snapshot shares its spec with the snapshot's template in every server
of the process; the guard's end check takes a sealed spec's fingerprint from its seal instead of
serialising it again. That is sound only while nothing could have changed it: these tests check that
every way to a stored CRD unseals it first (and that a mutation made through any of them is still
caught, in that server and in later ones), that a create does not, that the kinds served hold no part
of it, and, over randomized runs, that the check's verdicts with the seals are those without them
(the slow path: every member serialised).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support import widget_crd

from fakeapi import APIServer
from fakeapi.codec import snapshots
from fakeapi.codec.snapshots import SnapshotGuard, SnapshotMutated, is_sealed
from fakeapi.harness.targets import StateReader
from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.registry.apiextensions.crdsnapshot import CRDSnapshot
from fakeapi.server.faults import ControllerCrash
from reconcilers.crds import crd_manifests

CRD = "CustomResourceDefinition"
MANIFESTS = {m["spec"]["names"]["kind"]: m for m in crd_manifests()}
MANIFESTS["Widget"] = widget_crd()


def _snapshot(kind: str = "Widget") -> CRDSnapshot:
    """A snapshot of its own (a template no other test's server shares)."""
    return CRDSnapshot(fast_copy(MANIFESTS[kind]))


def _server(*snaps: CRDSnapshot) -> APIServer:
    api = APIServer()
    api.snapshot_guard = SnapshotGuard()
    for snap in snaps:
        api.install_crd(snap)
    return api


def _spec(snap: CRDSnapshot) -> dict[str, Any]:
    tmpl = snap.template(True)
    assert tmpl is not None
    return tmpl.obj["spec"]


def _containers(value: Any) -> Iterator[Any]:
    """Every dict and list in a JSON value."""
    if type(value) is dict:
        yield value
        for v in value.values():
            yield from _containers(v)
    elif type(value) is list:
        yield value
        for v in value:
            yield from _containers(v)


def _toggle(spec: dict[str, Any]) -> Callable[[], None]:
    """Mutate a spec (a key added to its first version); the returned function puts it back."""
    v = spec["versions"][0]
    v["x-mutated"] = True

    def undo() -> None:
        del v["x-mutated"]

    return undo


def test_an_install_seals_the_template_spec_and_the_check_does_not_serialise_it(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _snapshot()
    api = _server(snap)
    spec = _spec(snap)
    assert is_sealed(spec) and api._sealed_crds
    other = _server(snap)
    seen: list[int] = []
    original = snapshots.fingerprint

    def counting(v: Any) -> bytes:
        seen.append(id(v))
        return original(v)

    monkeypatch.setattr(snapshots, "fingerprint", counting)
    api.check_snapshots()
    other.check_snapshots()
    assert id(spec) not in seen and seen  # (the rest is serialised as ever)
    assert is_sealed(spec)


def _get_shared(api: APIServer, name: str) -> Any:
    return api.get(CRD, name, shared=True)


def _watch_existing(api: APIServer, name: str) -> Any:
    return api.watch(CRD).poll(copy=False)[0].object


def _patch(api: APIServer, name: str) -> Any:
    return api.patch(CRD, name, {"metadata": {"labels": {"x": "1"}}}, shared=True)


def _status(api: APIServer, name: str) -> Any:
    body = api.get(CRD, name)
    return api.update(body, subresource="status", shared=True)


def _delete(api: APIServer, name: str) -> Any:
    api.delete(CRD, name)
    return api.snapshot_guard._history[("customresourcedefinitions", name)][0][0]  # type: ignore[union-attr]


def _objects(api: APIServer, name: str) -> Any:
    return api.objects(api.resolve_kind(CRD))[0]


def _stored(api: APIServer, name: str) -> Any:
    return next(iter(api.stored("apiextensions.k8s.io", "customresourcedefinitions")))


def _go_client(api: APIServer, name: str) -> Any:
    return Client(api, unsafe_disable_deep_copy=True).get(CRD, name)


def _fault_then_shared_get(api: APIServer, name: str) -> Any:
    api.faults.add({"on": {"verb": "get", "kind": CRD}, "error": "InternalError"})
    with pytest.raises(ApiError):
        api.get(CRD, name)
    return api.get(CRD, name, shared=True)


#: Ways to a stored CRD object (each returns what it was handed; a copy for the plain reads).
WAYS: dict[str, Callable[[APIServer, str], Any]] = {
    "get, shared": _get_shared,
    "get, a copy": lambda api, name: api.get(CRD, name),
    "list, shared": lambda api, name: api.list(CRD, shared=True)["items"][0],
    "list, copies": lambda api, name: api.list(CRD)["items"][0],
    "watch, shared": _watch_existing,
    "patch, shared answer": _patch,
    "status update": _status,
    "delete (the guard's history)": _delete,
    "objects()": _objects,
    "stored()": _stored,
    "a Go client, shared": _go_client,
    "a refused get, then a shared one": _fault_then_shared_get,
}


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_to_a_stored_crd_unseals_it_and_a_mutation_through_it_is_caught(way: str) -> None:
    snap = _snapshot()
    api = _server(snap)
    spec = _spec(snap)
    got = WAYS[way](api, snap.name)
    assert not is_sealed(spec) and not api._sealed_crds
    if got["spec"] is not spec:  # (a copy: nothing to mutate; the template's spec is checked from now on)
        undo = _toggle(spec)
    else:
        undo = _toggle(got["spec"])
    try:
        with pytest.raises(SnapshotMutated, match="customresourcedefinitions widgets"):
            api.check_snapshots()
        later = _server(snap)
        with pytest.raises(SnapshotMutated, match="customresourcedefinitions widgets"):
            later.check_snapshots()  # (unsealed for good: a later server checks it too)
    finally:
        undo()
    api.check_snapshots()


def test_the_state_reader_copies_a_crd() -> None:
    snap = _snapshot()
    api = _server(snap)
    reader = StateReader(api)
    k = api.resolve_kind(CRD)
    for got in (reader.get(k, None, snap.name, copy=False), reader.list(k, copy=False)[0]):
        assert got is not None and got["spec"] == _spec(snap) and got["spec"] is not _spec(snap)
    assert is_sealed(_spec(snap))


def test_a_watch_opened_before_an_install_unseals_what_it_stores() -> None:
    snap = _snapshot()
    _server(snap)  # (the template, sealed)
    api = APIServer()
    api.snapshot_guard = SnapshotGuard()
    watch = api.watch(CRD)
    api.install_crd(snap)
    spec = _spec(snap)
    assert not is_sealed(spec)
    (event,) = watch.poll(copy=False)
    assert event.object["spec"] is spec
    undo = _toggle(spec)
    try:
        with pytest.raises(SnapshotMutated):
            api.check_snapshots()
    finally:
        undo()


def test_an_install_that_crashes_after_storing_still_counts() -> None:
    snap = _snapshot()
    _server(snap)
    api = APIServer()
    api.snapshot_guard = SnapshotGuard()
    api.faults.add({"on": {"verb": "create", "kind": CRD}, "crash": "after"})
    with pytest.raises(ControllerCrash):
        api.install_crd(snap)
    assert api._sealed_crds
    api.get(CRD, snap.name, shared=True)
    assert not is_sealed(_spec(snap))


def test_creates_leave_the_seal() -> None:
    snap = _snapshot()
    api = _server(snap)
    spec = _spec(snap)
    with pytest.raises(ApiError):  # (AlreadyExists: the stored one is not handed out)
        api.create(fast_copy(MANIFESTS["Widget"]), shared=True)
    other = fast_copy(MANIFESTS["Widget"])
    other["metadata"]["name"] = "gadgets.example.com"
    other["spec"]["names"] = {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"}
    created = api.create(other, shared=True)
    assert created["spec"] is not spec
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
                "spec": {"size": 1}})
    api.get("Widget", "w", "ns", shared=True)
    api.list("Widget", shared=True)
    assert is_sealed(spec) and api._sealed_crds
    api.check_snapshots()


@pytest.mark.parametrize("kind", list(MANIFESTS))
def test_the_kinds_served_hold_no_part_of_the_stored_crd(kind: str) -> None:
    snap = _snapshot(kind)
    api = _server(snap)
    spec = _spec(snap)
    parts = {id(c) for c in _containers(spec)}
    served = [k for k in api.kinds.all() if k.crd_name == snap.name]
    assert served
    for k in served:
        assert k.compiled is not None  # (the schema's facts looked up, as a first write of the kind does)
        bool(k.extra["typed"])
        held = [k.schema, k.compiled.schema, k.extra.get("scale"), k.extra["typed"].facts()[0].schema]
        for value in held:
            assert not parts & {id(c) for c in _containers(value)}, k


def _random_run(rng: random.Random, snaps: list[CRDSnapshot]) -> list[APIServer]:
    """Servers installing some of ``snaps``, reading CRDs in random ways, sometimes mutating what they got."""
    servers = []
    for _ in range(rng.randint(1, 4)):
        api = _server(*rng.sample(snaps, rng.randint(1, len(snaps))))
        servers.append(api)
        crds = [e.obj["metadata"]["name"] for e in api._table(api.resolve_kind(CRD)).candidates(None)]
        for _ in range(rng.randint(0, 2)):
            way = rng.choice([w for w in WAYS if w != "delete (the guard's history)"])
            got = WAYS[way](api, rng.choice(crds))
            if rng.random() < 0.3 and got["spec"] is _spec_of(snaps, got):
                got["spec"]["versions"][0].setdefault("x-test", []).append(rng.random())
    return servers


def _spec_of(snaps: list[CRDSnapshot], obj: dict[str, Any]) -> Any:
    for s in snaps:
        if s.name == obj["metadata"]["name"]:
            return _spec(s)
    return None


def _verdict(api: APIServer) -> str:
    try:
        api.check_snapshots()
    except SnapshotMutated as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("seed", range(24))
def test_checks_with_seals_give_the_verdicts_of_checks_without(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    snaps = [_snapshot(k) for k in rng.sample(sorted(MANIFESTS), 3)]
    servers = _random_run(rng, snaps)
    fast = [_verdict(api) for api in servers]
    monkeypatch.setattr(snapshots, "_SEALED", {})  # (the slow path: every member serialised)
    slow = [_verdict(api) for api in servers]
    assert fast == slow
