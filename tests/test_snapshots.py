"""Stored snapshots are shared, never mutated: the write paths build new snapshots around the old parts.

The server hands its stored snapshot to watchers, informer caches and the decode cache, and a
patch or a status write builds the new snapshot from the old one's untouched parts. These tests
check the sharing is real (so it stays cheap) and never changes what was stored before.
"""

from __future__ import annotations

import copy
from copy import deepcopy
from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.codec.snapshots import SnapshotGuard, SnapshotMutated
from fakeapi.host.client import Client
from fakeapi.machinery.jsonutil import canonical

NS = "default"


def _pod(name: str = "p") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1", "env": [{"name": "X", "value": "1"}]}]}}


def _stored(api: APIServer, name: str = "p") -> dict[str, Any]:
    return api.get("Pod", name, NS, shared=True)


@pytest.fixture
def api() -> APIServer:
    a = APIServer()
    a.snapshot_guard = SnapshotGuard()
    return a


def test_guard_detects_a_mutated_snapshot(api: APIServer) -> None:
    api.create(_pod())
    _stored(api)["metadata"]["labels"]["a"] = "changed"  # what a careless caller of shared=True could do
    api.patch("Pod", "p", {"metadata": {"labels": {"b": "2"}}}, namespace=NS)  # (checked once, at the end)
    with pytest.raises(SnapshotMutated, match="pods default/p changed after it was stored"):
        api.check_snapshots()


def test_guard_checks_a_snapshot_when_it_leaves_the_history(api: APIServer) -> None:
    """A snapshot the history no longer keeps is checked as it goes: a mutation is never missed."""
    from fakeapi.codec.snapshots import HISTORY

    api.create(_pod())
    first = _stored(api)
    first["metadata"]["labels"]["a"] = "changed"
    for i in range(HISTORY - 1):
        api.patch("Pod", "p", {"metadata": {"labels": {"n": str(i)}}}, namespace=NS)
    with pytest.raises(SnapshotMutated, match='"a":"changed"'):
        api.patch("Pod", "p", {"metadata": {"labels": {"n": "last"}}}, namespace=NS)


def test_guard_detects_a_reordered_snapshot(api: APIServer) -> None:
    """The fingerprint keeps key order: even a mutation that leaves the value equal is seen."""
    api.create(_pod())
    meta = _stored(api)["metadata"]
    meta["name"] = meta.pop("name")
    with pytest.raises(SnapshotMutated):
        api.check_snapshots()


def test_guard_catches_a_shared_part_mutated_before_a_later_snapshot_stored_it(api: APIServer) -> None:
    """A member a later snapshot shares is not serialised again: it is checked against its first fingerprint."""
    api.create(_pod())
    _stored(api)["spec"]["containers"][0]["image"] = "changed"
    with pytest.raises(SnapshotMutated, match='"image":"changed"'):  # (seen as the status write stores it)
        api.patch("Pod", "p", {"status": {"phase": "Running"}}, namespace=NS, subresource="status")


def test_guard_catches_a_shared_part_of_a_custom_resource_mutated_before_a_later_snapshot_stored_it(
        api: APIServer) -> None:
    """Without the Go-form check (an untyped custom resource), the end check sees it."""
    from fakeapi.host import Host
    from reconcilers.bundle import install

    install(Host(api), {})
    ars = {"apiVersion": "actions.github.com/v1alpha1", "kind": "AutoscalingRunnerSet",
           "metadata": {"name": "a", "namespace": NS},
           "spec": {"githubConfigUrl": "https://github.com/o", "githubConfigSecret": "s",
                    "template": {"spec": {"containers": [{"name": "runner", "image": "i"}]}}}}
    api.create(ars)
    stored = api.get("AutoscalingRunnerSet", "a", NS, shared=True)
    stored["spec"]["githubConfigUrl"] = "https://github.com/changed"
    api.patch("AutoscalingRunnerSet", "a", {"metadata": {"labels": {"x": "1"}}}, namespace=NS)
    assert api.get("AutoscalingRunnerSet", "a", NS, shared=True)["spec"] is stored["spec"]
    with pytest.raises(SnapshotMutated, match="changed"):
        api.check_snapshots()


def test_guard_catches_a_crd_template_part_mutated_in_a_later_server() -> None:
    """The bundle's CRDs share their spec with one template across servers: a change there is still seen."""
    from fakeapi.host import Host
    from reconcilers.bundle import install

    for _ in range(2):
        a = APIServer()
        a.snapshot_guard = SnapshotGuard()
        install(Host(a), {})
        a.check_snapshots()
    crd = a.get("CustomResourceDefinition", "ephemeralrunners.actions.github.com", shared=True)
    versions = crd["spec"]["versions"]
    versions[0]["served"] = not versions[0]["served"]
    try:
        with pytest.raises(SnapshotMutated, match="customresourcedefinitions ephemeralrunners"):
            a.check_snapshots()
    finally:
        versions[0]["served"] = not versions[0]["served"]  # (the template is the process's)


def test_guard_serialises_a_shared_part_once_per_check(api: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from fakeapi.codec import snapshots

    api.create(_pod())
    for i in range(3):
        api.patch("Pod", "p", {"metadata": {"labels": {"n": str(i)}}}, namespace=NS)
    spec = _stored(api)["spec"]
    seen: list[int] = []
    original = snapshots.fingerprint

    def counting(v: Any) -> bytes:
        seen.append(id(v))
        return original(v)

    monkeypatch.setattr(snapshots, "fingerprint", counting)
    api.snapshot_guard.check_all()  # type: ignore[union-attr]
    assert seen.count(id(spec)) == 1
    seen.clear()
    api.patch("Pod", "p", {"metadata": {"labels": {"n": "last"}}}, namespace=NS)
    assert id(spec) not in seen  # (known from the first snapshot that stored it)


def test_shared_get_is_the_snapshot_and_plain_get_a_copy(api: APIServer) -> None:
    api.create(_pod())
    assert _stored(api) is _stored(api)
    plain = api.get("Pod", "p", NS)
    assert plain == _stored(api) and plain is not _stored(api)
    assert plain["spec"] is not _stored(api)["spec"]


@pytest.mark.parametrize("patch_type", ["merge", "strategic"])
def test_metadata_patch_shares_spec_and_status_with_the_old_snapshot(api: APIServer, patch_type: str) -> None:
    api.create(_pod())
    old = _stored(api)
    text = canonical(old)
    api.patch("Pod", "p", {"metadata": {"labels": {"b": "2"}}}, namespace=NS, patch_type=patch_type)
    new = _stored(api)
    assert new is not old and new["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert new["spec"] is old["spec"] and new["status"] is old["status"]
    assert canonical(old) == text


def test_strategic_patch_of_one_container_leaves_the_old_snapshot_alone(api: APIServer) -> None:
    api.create(_pod())
    old = _stored(api)
    text = canonical(old)
    api.patch("Pod", "p", {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}, namespace=NS,
              patch_type="strategic")
    new = _stored(api)
    assert new["spec"]["containers"][0]["image"] == "busybox:2"
    assert new["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}]
    assert canonical(old) == text and old["spec"]["containers"][0]["image"] == "busybox:1"


def test_status_write_shares_spec_and_copies_nothing_else(api: APIServer) -> None:
    api.create(_pod())
    old = _stored(api)
    text = canonical(old)
    api.patch("Pod", "p", {"status": {"phase": "Running"}}, namespace=NS, subresource="status")
    new = _stored(api)
    assert new["status"]["phase"] == "Running" and new["spec"] is old["spec"]
    assert canonical(old) == text


def test_patch_result_given_to_the_caller_is_its_own(api: APIServer) -> None:
    api.create(_pod())
    out = api.patch("Pod", "p", {"metadata": {"labels": {"b": "2"}}}, namespace=NS)
    out["spec"]["containers"][0]["image"] = "mutated"
    out["metadata"]["labels"]["a"] = "mutated"
    stored = _stored(api)
    assert stored["spec"]["containers"][0]["image"] == "busybox:1" and stored["metadata"]["labels"]["a"] == "1"


def test_delete_and_binding_leave_old_snapshots_alone(api: APIServer) -> None:
    api.create(_pod())
    api.patch("Pod", "p", {"metadata": {"finalizers": ["x/y"]}}, namespace=NS)
    before = _stored(api)
    text = canonical(before)
    api.bind_pod("p", NS, "node-1")
    bound = _stored(api)
    assert bound["spec"]["nodeName"] == "node-1" and "nodeName" not in before["spec"]
    api.delete("Pod", "p", NS)
    assert _stored(api)["metadata"]["deletionTimestamp"]
    assert canonical(before) == text
    api.snapshot_guard.check_all()  # type: ignore[union-attr]


def test_client_reads_decode_each_snapshot_once_and_hand_out_copies(api: APIServer) -> None:
    c = Client(api, "ctl")
    created = c.create(_pod())
    assert len(api.decoded) == 1
    got = c.get("Pod", "p", NS)
    assert got == created and got is not created
    got["spec"]["containers"][0]["image"] = "mine"
    assert c.get("Pod", "p", NS)["spec"]["containers"][0]["image"] == "busybox:1"
    c.delete("Pod", "p", NS)
    assert len(api.decoded) == 0  # forgotten with the object


def test_a_whole_arc_lifecycle_never_mutates_a_stored_snapshot() -> None:
    from reconcilers.testing import ArcCluster

    a = ArcCluster(check_invariants=False)
    a.api.snapshot_guard = SnapshotGuard()
    a.create_ars(min_runners=1, max_runners=5)
    a.settle()
    a.patch_ars({"spec": {"minRunners": 3}})
    a.settle()
    a.set_image("ghcr.io/actions/actions-runner:2.331.0")
    a.settle()
    a.delete_ars()
    a.settle()
    a.api.snapshot_guard.check_all()


def test_list_and_watch_consumers_get_copies(api: APIServer) -> None:
    api.create(_pod())
    items = api.list("Pod", NS)["items"]
    items[0]["spec"]["containers"][0]["image"] = "mutated"
    with api.watch("Pod", NS, resource_version="0") as w:
        events = w.poll()
    events[0].object["spec"]["containers"][0]["image"] = "mutated"
    assert _stored(api)["spec"]["containers"][0]["image"] == "busybox:1"
    assert copy.deepcopy(_stored(api)) == _stored(api)


def test_decode_cache_gives_what_a_fresh_decode_gives_key_order_included(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reusing the decoded parts a newer snapshot shares with the older one changes nothing a reader sees."""
    import json

    from fakeapi.codec.godecode import DecodeCache, go_decode
    from reconcilers.testing import ArcCluster

    original = DecodeCache.decode
    checked = {"reused": 0, "calls": 0}

    def checking(self: DecodeCache, kind: Any, snapshot: dict[str, Any], *, copy: bool = True) -> dict[str, Any]:
        meta = snapshot.get("metadata") or {}
        hit = self._memo.get((kind.group, kind.plural, meta.get("namespace") or "", meta.get("name") or ""))
        if hit is not None and hit[0] is not snapshot and any(
                snapshot.get(k) is v and isinstance(v, (dict, list)) for k, v in hit[0].items()):
            checked["reused"] += 1
        out = original(self, kind, snapshot, copy=copy)
        fresh = go_decode(snapshot, kind.go_type) if kind.go_type is not None else deepcopy(snapshot)
        fresh["apiVersion"], fresh["kind"] = kind.api_version, kind.kind
        assert json.dumps(out) == json.dumps(fresh)
        checked["calls"] += 1
        return out

    monkeypatch.setattr(DecodeCache, "decode", checking)
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=1, max_runners=5)
    a.settle()
    a.patch_ars({"spec": {"minRunners": 3}})
    a.settle()
    a.set_image("ghcr.io/actions/actions-runner:2.331.0")
    a.settle()
    a.delete_ars()
    a.settle()
    assert checked["calls"] > 100 and checked["reused"] > 20, checked


def test_guard_detects_a_built_in_object_not_stored_as_go_encodes_it(api: APIServer) -> None:
    """The decode cache serves stored built-ins as they are: they must be stored Go-encoded."""
    from fakeapi.codec.snapshots import NotGoEncoded

    api.create(_pod())
    go_type = api.resolve_kind("Pod").go_type
    stored = api.get("Pod", "p", NS)
    guard = SnapshotGuard()
    guard.stored("pods", "default/p", stored, go_type)  # as the server stored it: fine
    loose = {**stored, "spec": {**stored["spec"], "hostname": ""}}  # an empty omitempty string Go would drop
    with pytest.raises(NotGoEncoded, match="pods default/q"):
        guard.stored("pods", "default/q", loose, go_type)


# -- reads without a copy (unsafe_disable_deep_copy) --------------------------------------------


def _configmap(name: str = "cm") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS},
            "data": {"k": "v"}}


def test_shared_client_hands_out_one_object_a_plain_client_copies(api: APIServer) -> None:
    api.decoded.check = True
    shared = Client(api, "ctl", unsafe_disable_deep_copy=True)
    created = shared.create(_configmap())
    assert shared.get("ConfigMap", "cm", NS) is created
    assert shared.list("ConfigMap", NS)[0] is created
    own = Client(api, "ctl").get("ConfigMap", "cm", NS)
    assert own == created and own is not created
    own["data"]["k"] = "mine"  # a copy of its own: changes nothing anyone else sees
    api.check_snapshots()


def test_mutating_what_a_shared_client_read_is_caught(api: APIServer) -> None:
    api.decoded.check = True
    shared = Client(api, "ctl", unsafe_disable_deep_copy=True)
    shared.create(_configmap())
    shared.get("ConfigMap", "cm", NS)["data"]["k"] = "changed"
    with pytest.raises(SnapshotMutated, match="configmaps default/cm, handed out without a copy"):
        shared.get("ConfigMap", "cm", NS)
    with pytest.raises(SnapshotMutated):
        api.check_snapshots()


def test_mutating_a_shared_decoded_custom_resource_is_caught() -> None:
    """A typed custom resource's decoded form is not the snapshot (Go decoding changes it): checked too."""
    from reconcilers import constants as c
    from reconcilers.testing import ArcCluster

    a = ArcCluster(check_invariants=False)
    a.api.decoded.check = True
    a.create_ars(min_runners=1, max_runners=5)
    a.settle()
    shared = Client(a.api, "ctl", unsafe_disable_deep_copy=True)
    ers = shared.list(c.KIND_ERS)[0]
    assert ers is shared.list(c.KIND_ERS)[0]
    assert ers is not a.api.get(c.KIND_ERS, ers["metadata"]["name"], ers["metadata"]["namespace"], shared=True)
    ers["spec"]["replicas"] = 7
    with pytest.raises(SnapshotMutated, match=r"ephemeralrunnersets\.actions\.github\.com"):
        a.api.check_snapshots()


def _mutating_controller(api: APIServer, *, shared: bool) -> tuple[Any, list[int]]:
    """A host with one ConfigMap controller that changes the object it read and asks to run again;
    returns the host and the list its reconciles append to."""
    from fakeapi.host import Host
    from fakeapi.host.builder import Result

    api.decoded.check = True
    host = Host(api, kubelet=False, garbage_collector=False)
    seen: list[int] = []

    def reconcile(ctx: Any, req: Any) -> Any:
        cm = ctx.client.get("ConfigMap", req.name, req.namespace)
        cm["data"]["k"] = f"changed {len(seen)}"  # what ARC's Go code may do with its own deep copy
        seen.append(1)
        return Result(requeue=len(seen) < 3)

    host.controller("c").for_("ConfigMap", api_version="v1").with_options(unsafe_disable_deep_copy=shared) \
        .complete(reconcile)
    api.create(_configmap())
    return host, seen


def test_a_controller_that_mutates_a_shared_read_stops_the_host(api: APIServer) -> None:
    """The mutation is a bug: it ends the run instead of being retried as a reconcile error."""
    host, seen = _mutating_controller(api, shared=True)
    with pytest.raises(SnapshotMutated, match="configmaps default/cm"):
        host.run_until_idle()
    assert len(seen) == 1


def test_a_controller_with_copies_may_mutate_what_it_read(api: APIServer) -> None:
    host, seen = _mutating_controller(api, shared=False)
    host.run_until_idle()
    assert len(seen) == 3 and api.get("ConfigMap", "cm", NS)["data"] == {"k": "v"}
    api.check_snapshots()
