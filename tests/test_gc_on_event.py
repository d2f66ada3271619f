"""The garbage collector's per-write bookkeeping (issue 22: :meth:`GarbageCollector.on_event`, cut to
what each write needs) notes the same work as the reference (its former body, below), for a table of
generated writes: every event type, kind, deletion state, finalizer and owner-reference change."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

from support import configmap, make_api, owner_ref

from fakeapi.controllers.gc import GarbageCollector
from fakeapi.controllers.gcwork import FOREGROUND, ORPHAN, Work
from fakeapi.registry.kinds import Kind
from fakeapi.server.watch import ADDED, DELETED, MODIFIED


def reference_on_event(gc: GarbageCollector, etype: str, kind: Kind, obj: dict[str, Any],
                       old: dict[str, Any] | None) -> None:
    """``on_event`` as it was (b17b912)."""
    meta = obj["metadata"]
    if kind.builtin and not kind.group and (gc.work.claims_in_use or kind.kind == "PersistentVolumeClaim"):
        gc._note_claims(etype, kind, meta)
    uid = meta.get("uid", "")
    refs = meta.get("ownerReferences") or []
    if etype == DELETED:
        for g, p, key in gc.api.store.dependents_of(uid):
            ns, _, name = key.rpartition("/")
            gc.work.attempt.add((g, p, ns, name))
        gc.work.foreground.discard(uid)
        gc.work.orphan.discard(uid)
        for r in refs:
            if r.get("uid") and gc._is_foreground_owner(str(r["uid"])):
                gc.work.foreground.add(str(r["uid"]))
        ns = meta.get("namespace")
        if ns and ns in gc.work.terminating:
            gc.work.namespaces.add(ns)
        if kind.builtin and kind.kind == "Namespace":
            gc.work.terminating.discard(meta.get("name", ""))
        return
    fins = meta.get("finalizers") or []
    if meta.get("deletionTimestamp"):
        ns = meta.get("namespace")
        if ns and ns in gc.work.terminating:
            gc.work.namespaces.add(ns)
        if FOREGROUND in fins:
            gc.work.foreground.add(uid)
        if ORPHAN in fins:
            gc.work.orphan.add(uid)
        if kind.builtin and kind.kind == "Namespace":
            gc.work.namespaces.add(meta["name"])
            gc.work.terminating.add(meta["name"])
    old_refs = old["metadata"].get("ownerReferences") if old is not None else None
    if (refs and old_refs is not refs and (old is None or old_refs != refs)
            and gc._unverified_owner(meta, refs, old_refs)):
        gc.work.attempt.add((kind.group, kind.plural, meta.get("namespace") or "", meta["name"]))
    if old_refs and old_refs is not refs and old_refs != refs:
        gc._note_unblocked_owners(old_refs, refs)


def _outcome(fn: Any) -> str | None:
    """None, or the exception ``fn`` raised (a reference no stored object can have: the same either way)."""
    try:
        fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return None


def _work() -> Work:
    return Work(terminating={"ns"}, claims_in_use={"ns": {"claim"}}, foreground={"u-fg"}, orphan={"u-or"})


def test_on_event_notes_what_the_reference_notes() -> None:
    api = make_api()
    owner = api.create(configmap("owner"))
    fg = api.create(configmap("fg", finalizers=[FOREGROUND]))
    api.delete("ConfigMap", "fg", "ns")  # (kept by its finalizer: an owner waiting in the foreground)
    api.create(configmap("dep", ownerReferences=[owner_ref(owner)]))
    good = owner_ref(owner, block=True)
    refs_table: list[Any] = [
        None, [], [good], [owner_ref(owner)], [owner_ref(fg, block=True)], [{**good, "name": "other"}],
        [{**good, "kind": "Secret"}], [{**good, "apiVersion": "apps/v1"}], [{**good, "uid": "unknown"}],
        [{**good, "uid": ""}], ["not-a-map"], [good, owner_ref(fg, block=True)],
    ]
    kinds = [api.resolve_kind(k) for k in ("ConfigMap", "Namespace", "PersistentVolumeClaim", "Pod", "Deployment",
                                           "Widget")]
    metas: list[dict[str, Any]] = [
        {}, {"deletionTimestamp": "2026-01-01T00:00:00Z"},
        {"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": [FOREGROUND, ORPHAN]},
        {"finalizers": [FOREGROUND]}, {"finalizers": ["kubernetes.io/pvc-protection"]},
    ]
    cases = 0
    for kind, extra, refs, etype in itertools.product(kinds, metas, refs_table, (ADDED, MODIFIED, DELETED)):
        meta: dict[str, Any] = {"name": "x", "uid": owner["metadata"]["uid"] if extra else "u-fg", **extra}
        if kind.namespaced:
            meta["namespace"] = "ns"
        if refs is not None:
            meta["ownerReferences"] = refs
        obj = {"metadata": meta}
        olds: list[Any] = [None] if etype == ADDED else [
            None, {"metadata": meta}, copy.deepcopy(obj), *({"metadata": {**meta, "ownerReferences": r}}
                                                           for r in refs_table if r is not None)]
        for old in olds:
            got, want = GarbageCollector(api), GarbageCollector(api)
            got.work, want.work = _work(), _work()
            outcome = _outcome(lambda: got.on_event(etype, kind, obj, old))  # noqa: B023
            assert outcome == _outcome(lambda: reference_on_event(want, etype, kind, obj, old))  # noqa: B023
            assert dataclasses.asdict(got.work) == dataclasses.asdict(want.work), (etype, kind.kind, meta, old)
            cases += 1
    assert cases > 1000
