"""More fast paths of the controller side (issue 22) against the code they stand in for.

Each is checked on its own, table-driven, against the slow path it replaces (the code as it was,
written out here or kept beside it), and all of them together by running the ARC lifecycle with
every fast path and again with every one switched back: the trace and every stored object must
be the same.
"""

from __future__ import annotations

import datetime
import json
import random
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from fakeapi.host.builder import EnqueueForOwner, Request, _Handler
from fakeapi.host.workqueue import WorkQueue
from fakeapi.server.apiserver import APIServer
from fakeapi.server.clock import Clock
from reconcilers import common, predicates, resourcebuilder, revision
from reconcilers import constants as c
from reconcilers.common import _encoded_status_diff, _scalar_status_diff, list_runners, status_diff
from reconcilers.ephemeralrunner import has_container_hook_configured
from reconcilers.gotypes import status_type
from reconcilers.listener import ListenerSimulator
from reconcilers.resourcebuilder import is_controlled_by
from reconcilers.revision import (
    Classification,
    classify,
    is_deleting,
    runner_patch_id,
    runner_revision,
    runner_status,
)
from reconcilers.testing import ArcCluster
from tests.support import one_value_mutations
from tests.test_arc_host_fast_paths import _record

Obj = dict[str, Any]

# ------------------------------------------------------------------ the hash's text


def _dumps(value: Any) -> bytes:
    """What pod_template_hash hashed before: json.dumps's text, as UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class _Str(str):
    pass


class _Dict(dict[str, Any]):
    pass


HASH_TEXT_INPUTS: list[Any] = [
    [{}, {}, {}, {}],
    [{"b": "1", "a": "2"}, {"z": "", "é": "ü", "Z": "", "😀": "", "\uffff": ""}, {"s": {"c": [{"n": "r"}]}}, {}],
    [{"k": "line\nbreak\t\"quoted\" \\ \u0001 \u2028 \x7f 日本 /"}, {}, {}, {}],
    [{}, {}, {"n": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, True, False, None]}, {}],
    [{}, {}, {"big": 2**70}, {}],  # beyond orjson's 64 bits: json's way
    [{}, {}, {"f": [0.5, 1e16, 1e-05, 100.0, -0.0]}, {}],  # floats: json's way
    [{}, {}, {"nan": float("nan"), "inf": float("inf")}, {}],
    [{}, {}, {1: "int key", 2: "x"}, {}],  # keys json turns into text
    [{}, {}, {True: "bool key"}, {}],
    [{}, {}, {"t": ("a", 1, [2])}, {}],
    [{}, {}, _Dict(b=1, a=2), {}],  # a dict subclass
    [{}, {}, {"s": _Str("sub")}, {}],  # a str subclass
    [{}, {}, OrderedDict(b=1, a=2), {}],
    [{}, {}, {"nested": {"b": {"d": [], "c": {}}, "a": [{"y": 1, "x": 2}]}}, {"jitToken": "dG9r"}],
]


@pytest.mark.parametrize("value", HASH_TEXT_INPUTS)
def test_hash_text_is_the_json_dumps_text(value: Any) -> None:
    assert resourcebuilder.hash_text(value) == _dumps(value)


@pytest.mark.parametrize("value", [
    [{}, {}, {"when": datetime.datetime(2024, 1, 1)}, {}],  # orjson writes datetimes; json refuses them
    [{}, {}, {"m": MappingProxyType({"a": 1})}, {}],  # neither writes a mapping proxy
    [{}, {}, {"s": {"x", "y"}}, {}],
    [{}, {}, {"lone": "\ud800"}, {}],  # json writes it, its UTF-8 encoding fails
    [{}, {}, {1: "x", "a": "y"}, {}],  # json cannot sort int and str keys
])
def test_hash_text_raises_what_json_dumps_raises(value: Any) -> None:
    with pytest.raises(Exception) as slow:
        _dumps(value)
    with pytest.raises(Exception) as fast:
        resourcebuilder.hash_text(value)
    assert type(fast.value) is type(slow.value)


@pytest.mark.parametrize(("value", "plain"), [
    ({}, True), ([], True), ("s", True), (1, True), (True, True), (None, True),
    ({"a": [1, {"b": ("c", None)}]}, True),
    ({"a": [1, {"b": 1.5}]}, False), (1.0, False), (_Str("x"), False), ({"a": _Dict()}, False),
    ([OrderedDict()], False), ({"d": datetime.date(2024, 1, 1)}, False), ({"s": {1}}, False),
])
def test_plain_json_accepts_exactly_the_plain_types(value: Any, plain: bool) -> None:
    assert resourcebuilder._plain_json(value) is plain


def test_pod_template_hash_is_the_fnv_of_the_json_dumps_text() -> None:
    spec = {"spec": {"containers": [{"name": "runner", "image": "i", "resources": {"limits": {"cpu": 0.5}}}]}}
    for s in (spec, {"spec": {"containers": [{"name": "runner", "image": "i"}]}}):
        want = resourcebuilder.safe_encode_string(str(resourcebuilder._fnv32a(_dumps([{"a": "1"}, {}, s, {}]))))
        assert resourcebuilder.pod_template_hash({"a": "1", c.LABEL_RUNNER_TEMPLATE_HASH: "x"}, {}, s, {}) == want


# ------------------------------------------------------------------ memoised pure functions


@pytest.mark.parametrize("url", [
    "https://github.com/org", "https://github.com/org/repo", "https://github.com/enterprises/e",
    "https://github.com/ORG/", "https://ghe.example.com/a/b", "", "https://github.com/a/b/c", "https://[::1",
])
def test_github_config_scope_answers_as_its_uncached_self(url: str) -> None:
    uncached = resourcebuilder.github_config_scope.__wrapped__
    for _ in range(2):  # (the second answer comes from the memo)
        try:
            want: Any = uncached(url)
        except resourcebuilder.InvalidConfigURL as e:
            want = ("raises", str(e))
        try:
            got: Any = resourcebuilder.github_config_scope(url)
        except resourcebuilder.InvalidConfigURL as e:
            got = ("raises", str(e))
        assert got == want


@pytest.mark.parametrize("text", ["", "ci@@https://github.com/example/app", "日本", "a" * 300])
def test_fnv_hash_string_answers_as_its_uncached_self(text: str) -> None:
    for _ in range(2):
        assert resourcebuilder.fnv_hash_string(text) == resourcebuilder.fnv_hash_string.__wrapped__(text)


# ------------------------------------------------------------------ status diffs


def _answer(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as e:  # (the slow path's error is the answer to compare)
        return type(e)


def _diff_or_error(fn: Any, before: Obj, values: Obj, t: Any) -> Any:
    try:
        return fn(before, values, t)
    except Exception as e:  # (the slow path's error is the answer to compare)
        return type(e)


STATUS_DIFF_CASES: list[tuple[str, Obj, Obj]] = [
    (c.KIND_ER, {}, {"phase": "Pending"}),
    (c.KIND_ER, {"phase": "Pending"}, {"phase": "Pending"}),
    (c.KIND_ER, {"phase": "Pending"}, {"phase": ""}),  # omitempty, zero: null
    (c.KIND_ER, {"phase": ""}, {"phase": ""}),
    (c.KIND_ER, {"phase": ""}, {"phase": "Running"}),  # the old side omits its zero
    (c.KIND_ER, {}, {"ready": False}),  # not omitempty, absent: encodes as false, so no diff
    (c.KIND_ER, {}, {"ready": True}),
    (c.KIND_ER, {"ready": True}, {"ready": False}),  # not omitempty: false, not null
    (c.KIND_ER, {"runnerName": "r", "runnerId": 3, "phase": "P"}, {"runnerId": 4, "runnerName": "s"}),  # before's order
    (c.KIND_ER, {"reason": "x", "message": "m"}, {"message": "", "reason": "", "phase": "Failed"}),
    (c.KIND_ER, {"runnerId": 3}, {"runnerId": True}),  # a bool for an int: the general path
    (c.KIND_ER, {"runnerId": True}, {"runnerId": 3}),
    (c.KIND_ER, {"runnerId": 1.0}, {"runnerId": 3}),
    (c.KIND_ER, {}, {"failures": {"uid": "2024-01-01T00:00:00Z"}}),  # a map: the general path
    (c.KIND_ER, {}, {"notAField": "x"}),
    (c.KIND_ER, {"phase": None}, {"phase": "Pending"}),
    (c.KIND_ER, {}, {"phase": None}),
    (c.KIND_ERS, {}, {"currentReplicas": 0, "phase": "Running"}),  # not omitempty zeros
    (c.KIND_ERS, {"currentReplicas": 2}, {"currentReplicas": 0}),
    (c.KIND_ERS, {"appliedActionableRevision": 2}, {"appliedActionableRevision": 0, "phase": "Running"}),
    (c.KIND_ERS, {"finishedRunnerCleanupPatchID": 0}, {"finishedRunnerCleanupPatchID": 0}),
    (c.KIND_ARS, {"observedGeneration": 1, "phase": "Running"}, {"phase": "Pending"}),
    (c.KIND_ARS, {}, {"phase": "Running", "observedGeneration": 2, "currentRunners": 0}),
]


@pytest.mark.parametrize(("kind", "before", "values"), STATUS_DIFF_CASES)
def test_status_diff_is_the_diff_of_both_sides_encoded(kind: str, before: Obj, values: Obj) -> None:
    t = status_type(kind)
    want = _diff_or_error(_encoded_status_diff, before, values, t)
    got = _diff_or_error(status_diff, before, values, t)
    assert got == want
    if isinstance(want, dict):
        assert list(got) == list(want)  # keys in the same order: the request body


@pytest.mark.parametrize("kind", [c.KIND_ER, c.KIND_ERS, c.KIND_ARS])
def test_the_scalar_status_diff_agrees_wherever_it_answers(kind: str) -> None:
    t = status_type(kind)
    _encoded_status_diff({}, {}, t)  # (the type's encoders made)
    pools: dict[str, list[Any]] = {}
    for name, (typ, _omit) in t._scalars.items():
        samples: dict[type, list[Any]] = {str: ["", "a", "b"], int: [0, 1, 2, True, 1.0], bool: [False, True, 0, 1]}
        pools[name] = [*samples[typ], None]
    pools["notAField"] = ["x", 0]
    pools["failures"] = [{}, {"a": "2024-01-01T00:00:00Z"}]
    names = list(pools)
    rng = random.Random(22)
    answered = 0
    for _ in range(3000):
        before = {n: rng.choice(pools[n]) for n in rng.sample(names, rng.randint(0, len(names)))}
        values = {n: rng.choice(pools[n]) for n in rng.sample(names, rng.randint(1, 4))}
        want = _diff_or_error(_encoded_status_diff, before, values, t)
        got = _scalar_status_diff(before, values, t)
        if got is None:
            continue
        answered += 1
        assert list(got.items()) == list(want.items()), (before, values)
    assert answered > 300


# ------------------------------------------------------------------ runners of a set


def _classify_by_helpers(runners: list[Obj], applied: int) -> Classification:
    """classify as it was, through the per-runner helpers."""
    out = Classification()
    for r in runners:
        pid = runner_patch_id(r)
        if pid is not None and pid > out.latest_patch_id:
            out.latest_patch_id = pid
        if is_deleting(r):
            out.deleting.append(r)
            continue
        phase = runner_status(r).get("phase")
        if phase == c.ER_PHASE_RUNNING:
            out.running.append(r)
        elif phase == c.ER_PHASE_SUCCEEDED:
            out.finished.append(r)
        elif phase == c.ER_PHASE_FAILED:
            out.failed.append(r)
        elif phase == c.ER_PHASE_OUTDATED:
            if runner_revision(r) < applied:
                out.stale_outdated.append(r)
            else:
                out.outdated.append(r)
        else:
            out.pending.append(r)
    return out


_RUNNER: Obj = {
    "metadata": {"name": "r", "annotations": {c.ANNOTATION_PATCH_ID: "3", c.ANNOTATION_ACTIONABLE_REVISION: "2"},
                 "deletionTimestamp": None},
    "status": {"phase": c.ER_PHASE_OUTDATED},
}
_RUNNER_STAND_INS: tuple[Any, ...] = (None, "", "7", "-1", " 3", "x", 9, {}, [], c.ER_PHASE_RUNNING,
                                      c.ER_PHASE_SUCCEEDED, c.ER_PHASE_FAILED, "2024-01-01T00:00:00Z")


@pytest.mark.parametrize("applied", [0, 2, 3])
def test_classify_buckets_as_the_per_runner_helpers_do(applied: int) -> None:
    variants = [_RUNNER, {}, {"metadata": None, "status": None}, *one_value_mutations(_RUNNER, _RUNNER_STAND_INS)]
    answers = []
    for i in range(0, len(variants), 5):
        runners = variants[i:i + 7]
        want = _answer(_classify_by_helpers, runners, applied)
        assert _answer(classify, runners, applied) == want
        answers.append(want)
    assert any(isinstance(x, Classification) and x.latest_patch_id for x in answers)


_OWNED: Obj = {"metadata": {"name": "r", "ownerReferences": [
    {"apiVersion": c.API_VERSION, "kind": c.KIND_ERS, "name": "set", "controller": True},
]}}


def test_list_runners_keeps_the_runners_controlled_by_the_set() -> None:
    refs: list[Any] = [
        {"kind": c.KIND_ERS, "name": "set", "controller": False},
        {"kind": c.KIND_ERS, "name": "other", "controller": True},
        {"kind": c.KIND_ER, "name": "set", "controller": True},
        {"kind": c.KIND_ERS, "name": "set"},
        "not a map",
        {"kind": c.KIND_ERS, "name": "set", "controller": True},
    ]
    runners: list[Obj] = [_OWNED, {}, {"metadata": {}}, {"metadata": {"ownerReferences": None}},
                          *one_value_mutations(_OWNED, (None, "", True, False, "set", c.KIND_ERS, []))]
    for a in refs:
        for b in refs:
            runners.append({"metadata": {"name": "x", "ownerReferences": [a, b]}})

    class Lister:
        def __init__(self, items: list[Obj]) -> None:
            self.items = items

        def list(self, kind: str, namespace: str | None = None, **_: Any) -> list[Obj]:
            assert (kind, namespace) == (c.KIND_ER, "ci")
            return self.items

        def get(self, kind: str, name: str, namespace: str | None = None, **_: Any) -> Obj:
            raise AssertionError("list_runners only lists")

    def by_is_controlled_by(items: list[Obj]) -> list[Obj]:
        return [r for r in items if is_controlled_by(r, c.KIND_ERS, "set")]

    kept = 0
    for r in runners:  # one at a time: a runner with no map as metadata raises, both ways
        want = _answer(by_is_controlled_by, [r])
        assert _answer(list_runners, Lister([r]), "ci", "set") == want, r
        kept += want == [r]
    good = [r for r in runners if not isinstance(_answer(by_is_controlled_by, [r]), type)]
    assert list_runners(Lister(good), "ci", "set") == by_is_controlled_by(good)
    assert 0 < kept < len(good)


# ------------------------------------------------------------------ event filters and handlers


def _equal_reconciled_meta_by_loop(old: Obj, new: Obj) -> bool:
    """equal_reconciled_meta as it was: one loop over the keys."""
    mo, mn = old.get("metadata") or {}, new.get("metadata") or {}
    for k in predicates._META_KEYS:
        a, b = mo.get(k), mn.get(k)
        if a is b:
            continue
        if a in predicates._EMPTIES:
            a = None
        if b in predicates._EMPTIES:
            b = None
        if a != b:
            return False
    return True


_META: Obj = {"metadata": {"generation": 2, "deletionTimestamp": None, "finalizers": ["a"], "labels": {"l": "1"},
                           "annotations": {}, "ownerReferences": [{"uid": "u"}], "resourceVersion": "5"}}


def test_equal_reconciled_meta_answers_as_its_loop() -> None:
    variants = [_META, {}, {"metadata": None}, *one_value_mutations(_META, (None, "", [], {}, 0, 3, False, "x", ["a"]))]
    answers = set()
    for a in variants:
        for b in variants[:40]:
            for x, y in ((a, b), (b, a)):
                want = _answer(_equal_reconciled_meta_by_loop, x, y)
                assert _answer(predicates.equal_reconciled_meta, x, y) == want, (x, y)
                answers.add(want)
    assert {True, False} <= answers


def _owner_objects() -> list[Obj]:
    ref = {"apiVersion": "actions.github.com/v1alpha1", "kind": c.KIND_ER, "name": "r", "controller": True}
    obj: Obj = {"metadata": {"name": "p", "namespace": "ci", "ownerReferences": [ref]}}
    out = [obj, {"metadata": {"name": "p"}}, {"metadata": {"name": "p", "ownerReferences": None}}]
    out += one_value_mutations(obj, (None, "", "v1", "apps/v1", "actions.github.com/v2", c.KIND_ERS, False, True))
    out.append({"metadata": {"name": "p", "namespace": "ci", "ownerReferences": [{**ref, "controller": False}, ref]}})
    out.append({"metadata": {"name": "p", "namespace": "ci", "ownerReferences": [ref, {**ref, "name": "s"}]}})
    return [o for o in out if isinstance(o.get("metadata"), dict) and isinstance(o["metadata"].get("name"), str)]


@pytest.mark.parametrize("namespaced", [True, False])
def test_enqueue_for_owner_enqueues_what_its_requests_are(namespaced: bool) -> None:
    import random as _random

    for obj in _owner_objects():
        queues: list[Any] = []
        for enqueue in (EnqueueForOwner._enqueue, _Handler._enqueue):
            q: WorkQueue[Request] = WorkQueue(Clock(), _random.Random(0))
            h = EnqueueForOwner(q, (), "actions.github.com", c.KIND_ER, namespaced)
            try:
                enqueue(h, obj)
            except (AttributeError, TypeError) as e:
                queues.append(type(e))
                continue
            queues.append(q.ready())
        assert queues[0] == queues[1], obj


# ------------------------------------------------------------------ the listener's set


def test_the_listener_finds_its_set_by_key_as_its_walk_does() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=1, max_runners=2)
    a.settle()
    sim = next(x for x in a.host.actors if isinstance(x, ListenerSimulator))
    for ns, name in [("ci", "linux"), ("ci", "absent"), ("other", "linux"), ("ci", ""), ("", "linux"), ("", "")]:
        assert sim._stored_set(ns, name) is sim._stored_set_by_walk(ns, name)
    assert sim._stored_set("ci", "linux") is not None


def test_the_listener_without_a_set_kind_fails_as_its_walk_does() -> None:
    api = APIServer()
    from reconcilers.actions_service import ActionsService

    sim = ListenerSimulator(api, ActionsService())
    with pytest.raises(Exception) as fast:
        sim._stored_set("ci", "linux")
    with pytest.raises(Exception) as slow:
        sim._stored_set_by_walk("ci", "linux")
    assert type(fast.value) is type(slow.value)


# ------------------------------------------------------------------ a finalized runner's undecoded answer


def test_the_container_hook_check_reads_a_stored_runner_as_its_decoded_form() -> None:
    a = ArcCluster(check_invariants=False)
    env = [{"name": "ACTIONS_RUNNER_CONTAINER_HOOKS", "value": "/hooks/index.js"}]
    for name, with_hooks in (("hooks", True), ("plain", False)):
        a.create_ars(name=name, min_runners=1, max_runners=1, env=env if with_hooks else None)
    a.settle()
    er_kind = a.api.kinds.require(c.KIND_ER, c.API_VERSION)
    seen = set()
    for raw in a.api.objects(er_kind, "ci"):
        decoded = a.api.decoded.decode(er_kind, raw, copy=True)
        assert has_container_hook_configured(raw) == has_container_hook_configured(decoded)
        assert (raw["metadata"].get("finalizers"), raw["apiVersion"], raw["kind"]) == (
            decoded["metadata"].get("finalizers"), decoded["apiVersion"], decoded["kind"])
        seen.add(has_container_hook_configured(raw))
    assert seen == {True, False}



# ------------------------------------------------------------------ the lifecycle, both ways


def _slow_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch every fast path this module checks back to the code it replaced."""
    monkeypatch.setattr(resourcebuilder, "hash_text", _dumps)
    monkeypatch.setattr(common, "status_diff", _encoded_status_diff)
    monkeypatch.setattr(revision, "classify", _classify_by_helpers)
    monkeypatch.setattr(predicates, "equal_reconciled_meta", _equal_reconciled_meta_by_loop)
    monkeypatch.setattr(EnqueueForOwner, "_enqueue", _Handler._enqueue)
    monkeypatch.setattr(ListenerSimulator, "_stored_set", ListenerSimulator._stored_set_by_walk)
    monkeypatch.setattr(resourcebuilder, "github_config_scope", resourcebuilder.github_config_scope.__wrapped__)
    monkeypatch.setattr(resourcebuilder, "fnv_hash_string", resourcebuilder.fnv_hash_string.__wrapped__)

    def by_is_controlled_by(client: Any, namespace: str, ers_name: str) -> list[Obj]:
        return [r for r in client.list(c.KIND_ER, namespace) if is_controlled_by(r, c.KIND_ERS, ers_name)]

    monkeypatch.setattr(common, "list_runners", by_is_controlled_by)
    from reconcilers import ephemeralrunner, ephemeralrunnerset

    monkeypatch.setattr(ephemeralrunnerset, "list_runners", by_is_controlled_by)
    monkeypatch.setattr(ephemeralrunnerset, "classify", _classify_by_helpers)
    patch_finalizers = ephemeralrunner.patch_finalizers

    def decoded_answers(*args: Any, read_answer: bool = True, **kw: Any) -> Obj:
        return patch_finalizers(*args, **kw)  # (every answer read, as before _finalize dropped one)

    monkeypatch.setattr(ephemeralrunner, "patch_finalizers", decoded_answers)


@pytest.mark.parametrize("seed", [0, 3])
def test_the_lifecycle_is_the_same_with_and_without_these_fast_paths(seed: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _record(seed)
    with monkeypatch.context() as m:
        _slow_paths(m)
        slow = _record(seed)
    assert len(fast) == len(slow)
    assert fast == slow

