"""The garbage collector and the namespace controller of kube-controller-manager.

kube-apiserver only adds the ``foregroundDeletion`` and ``orphan`` finalizers;
the rest of reference §4 happens here, as an actor the controller host runs
on the same clock: dependents whose owners are all gone are deleted
(background), owners deleted in the foreground wait for their blocking
dependents, orphaning strips owner references, a terminating namespace
is emptied and then finalized, and a claim being deleted keeps its
``kubernetes.io/pvc-protection`` finalizer while a scheduled pod uses it. Everything goes through the public verbs with
the actors ``garbage-collector`` and ``namespace-controller``, so it shows in
the trace exactly like the real controllers' requests.

This module notes the work as the server writes (:meth:`GarbageCollector.on_event`,
every server needs it); :mod:`fakeapi.controllers.gccollect` does it when the collector runs.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from fakeapi.controllers.gcwork import FOREGROUND, GC_ACTOR, ORPHAN, PVC_PROTECTION, Work
from fakeapi.registry.kinds import Kind
from fakeapi.server.watch import DELETED

if TYPE_CHECKING:
    from fakeapi.controllers.gccollect import Collection
    from fakeapi.server.apiserver import APIServer



class GarbageCollector:
    """Owner-reference garbage collection plus namespace termination, run on demand."""

    name = GC_ACTOR

    def __init__(self, api: APIServer) -> None:
        self.api = api
        #: The work noted so far.
        self.work = Work()

    # -------------------------------------------------------------- events

    def on_event(self, etype: str, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Note the work a write creates (called by the server after every write)."""
        meta = obj["metadata"]
        work = self.work
        if kind.builtin and not kind.group and (work.claims_in_use or kind.kind == "PersistentVolumeClaim"):
            self._note_claims(etype, kind, meta)
        refs = meta.get("ownerReferences") or []
        if etype == DELETED:
            self._on_deleted(kind, meta, refs)
            return
        if meta.get("deletionTimestamp"):
            self._on_deleting(kind, meta)
        if old is None:
            if refs and self._unverified_owner(meta, refs, None):
                work.attempt.add((kind.group, kind.plural, meta.get("namespace") or "", meta["name"]))
            return
        old_refs = old["metadata"].get("ownerReferences")
        if old_refs is refs:  # (the same list: an update that left them as stored)
            return
        if refs and old_refs != refs and self._unverified_owner(meta, refs, old_refs):
            work.attempt.add((kind.group, kind.plural, meta.get("namespace") or "", meta["name"]))
        if old_refs and old_refs != refs:
            self._note_unblocked_owners(old_refs, refs)

    def _on_deleted(self, kind: Kind, meta: dict[str, Any], refs: list[Any]) -> None:
        """:meth:`on_event` of a deletion: its dependents to check, the owners waiting for it, its namespace."""
        work = self.work
        uid = meta.get("uid", "")
        for g, p, key in self.api.store.dependents_of(uid):
            dns, _, name = key.rpartition("/")
            work.attempt.add((g, p, dns, name))
        work.foreground.discard(uid)
        work.orphan.discard(uid)
        for r in refs:
            if r.get("uid") and self._is_foreground_owner(str(r["uid"])):
                work.foreground.add(str(r["uid"]))
        ns = meta.get("namespace")
        if ns and ns in work.terminating:
            work.namespaces.add(ns)
        if kind.builtin and kind.kind == "Namespace":
            work.terminating.discard(meta.get("name", ""))

    def _on_deleting(self, kind: Kind, meta: dict[str, Any]) -> None:
        """:meth:`on_event` of an object being deleted: its namespace, its foreground or orphan deletion."""
        work = self.work
        ns = meta.get("namespace")
        if ns and ns in work.terminating:  # (its content's finalizers changed: the conditions follow)
            work.namespaces.add(ns)
        fins = meta.get("finalizers") or []
        if FOREGROUND in fins:
            work.foreground.add(meta.get("uid", ""))
        if ORPHAN in fins:
            work.orphan.add(meta.get("uid", ""))
        if kind.builtin and kind.kind == "Namespace":
            work.namespaces.add(meta["name"])
            work.terminating.add(meta["name"])

    def _note_claims(self, etype: str, kind: Kind, meta: dict[str, Any]) -> None:
        """The pvc-protection controller's events: a claim without its finalizer (to add it back), a claim
        being deleted (to release it once unused), any pod change where deleted claims wait."""
        ns = meta.get("namespace") or ""
        if kind.kind == "PersistentVolumeClaim":
            if etype != DELETED and (meta.get("deletionTimestamp") or PVC_PROTECTION not in (meta.get("finalizers") or ())):
                self.work.claims.add((ns, meta["name"]))
        elif kind.kind == "Pod" and ns in self.work.claims_in_use:
            self.work.claims.update((ns, name) for name in self.work.claims_in_use.pop(ns))

    def _unverified_owner(self, meta: dict[str, Any], refs: list[Any], old_refs: list[Any] | None) -> bool:
        """Does a reference this write added (by uid) need checking? The graph builder's
        ``addDependentToOwners``: an owner uid it does not know (a virtual owner, checked and, when
        absent, its dependents collected), or a known owner in another namespace or with other
        coordinates (the dependent is checked). A reference to a known owner is not checked now;
        the owner's deletion sends its dependents to be checked."""
        had = {r.get("uid") for r in old_refs if isinstance(r, dict)} if old_refs else ()
        ns = meta.get("namespace") or ""
        lookup = self.api.store.lookup_uid  # (APIServer.entry_by_uid, without its call)
        for r in refs:
            if not isinstance(r, dict):
                return True
            uid = r.get("uid")
            if uid in had:
                continue
            e = lookup(str(uid)) if uid else None
            if e is None or (e.namespace and e.namespace != ns) or e.name != r.get("name"):
                return True
            owner = e.obj
            if owner.get("kind") != r.get("kind") or _group(owner.get("apiVersion")) != _group(r.get("apiVersion")):
                return True
        return False

    def _note_unblocked_owners(self, old_refs: list[Any], refs: list[Any]) -> None:
        """A blocking reference removed, or changed to not block: its owner, if it waits for its
        dependents in the foreground, is checked again (the graph builder's
        ``addUnblockedOwnersToDeleteQueue``; without it the owner would wait for ever)."""
        now = {r.get("uid"): r for r in refs if isinstance(r, dict)}
        for r in old_refs:
            if not isinstance(r, dict) or r.get("blockOwnerDeletion") is not True or not r.get("uid"):
                continue
            cur = now.get(r["uid"])
            if cur is None or cur.get("blockOwnerDeletion") is not True:
                uid = str(r["uid"])
                if self._is_foreground_owner(uid):
                    self.work.foreground.add(uid)

    def _is_foreground_owner(self, uid: str) -> bool:
        e = self.api.entry_by_uid(uid)
        if e is None:
            return False
        m = e.obj["metadata"]
        return bool(m.get("deletionTimestamp")) and FOREGROUND in (m.get("finalizers") or [])

    def pending(self) -> bool:
        """True when there is collection work to do."""
        w = self.work  # (checked after every step)
        return bool(w.attempt or w.foreground or w.orphan or w.namespaces or w.claims)

    # ----------------------------------------------------------------- run

    def run(self) -> bool:
        """Do all the work noted so far (in a deterministic order); True if anything was done."""
        with self.api.lock:
            if not self.pending():
                return False
            return _collection_class()(self.api, self.work).run()


@cache
def _collection_class() -> type[Collection]:
    """The collection itself (:class:`fakeapi.controllers.gccollect.Collection`), imported once there
    is work: a cached reference, as an ``import`` statement costs microseconds on every run."""
    from fakeapi.controllers.gccollect import Collection

    return Collection


def _group(api_version: Any) -> str:
    """The group of an apiVersion (``apps/v1`` -> ``apps``, ``v1`` -> ``""``)."""
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
