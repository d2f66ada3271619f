"""The garbage collector and the namespace controller of kube-controller-manager.

kube-apiserver only adds the ``foregroundDeletion`` and ``orphan`` finalizers;
the rest of reference §4 happens here, as an actor the controller host runs
on the same clock: dependents whose owners are all gone are deleted
(background), owners deleted in the foreground wait for their blocking
dependents, orphaning strips owner references, and a terminating namespace
is emptied and then finalized. Everything goes through the public verbs with
the actors ``garbage-collector`` and ``namespace-controller``, so it shows in
the trace exactly like the real controllers' requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ApiError, is_conflict
from .kinds import Kind
from .watch import DELETED

if TYPE_CHECKING:
    from .server import APIServer

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
GC_ACTOR = "garbage-collector"
NS_ACTOR = "namespace-controller"


class GarbageCollector:
    """Owner-reference garbage collection plus namespace termination, run on demand."""

    name = GC_ACTOR

    def __init__(self, api: APIServer) -> None:
        self.api = api
        #: dependents to check: (group, plural, namespace, name)
        self._attempt: set[tuple[str, str, str, str]] = set()
        #: owners being deleted in the foreground / with orphaning, by uid
        self._foreground: set[str] = set()
        self._orphan: set[str] = set()
        #: namespaces being terminated
        self._namespaces: set[str] = set()
        self._terminating: set[str] = set()

    # -------------------------------------------------------------- events

    def on_event(self, etype: str, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Note the work a write creates (called by the server after every write)."""
        meta = obj["metadata"]
        uid = meta.get("uid", "")
        refs = meta.get("ownerReferences") or []
        if etype == DELETED:
            for g, p, key in self.api.store.dependents_of(uid):
                ns, _, name = key.rpartition("/")
                self._attempt.add((g, p, ns, name))
            self._foreground.discard(uid)
            self._orphan.discard(uid)
            for r in refs:
                if r.get("uid") and self._is_foreground_owner(str(r["uid"])):
                    self._foreground.add(str(r["uid"]))
            ns = meta.get("namespace")
            if ns and ns in self._terminating:
                self._namespaces.add(ns)
            if kind.builtin and kind.kind == "Namespace":
                self._terminating.discard(meta.get("name", ""))
            return
        fins = meta.get("finalizers") or []
        if meta.get("deletionTimestamp"):
            if FOREGROUND in fins:
                self._foreground.add(uid)
            if ORPHAN in fins:
                self._orphan.add(uid)
            if kind.builtin and kind.kind == "Namespace":
                self._namespaces.add(meta["name"])
                self._terminating.add(meta["name"])
        if refs:
            old_refs = (old or {}).get("metadata", {}).get("ownerReferences") if old else None
            if old is None or old_refs != refs:
                self._attempt.add((kind.group, kind.plural, meta.get("namespace") or "", meta["name"]))
            for r in refs:
                if r.get("uid") and str(r["uid"]) in self._foreground_pending_owners():
                    self._foreground.add(str(r["uid"]))

    def _foreground_pending_owners(self) -> set[str]:
        return self._foreground

    def _is_foreground_owner(self, uid: str) -> bool:
        e = self.api.entry_by_uid(uid)
        if e is None:
            return False
        m = e.obj["metadata"]
        return bool(m.get("deletionTimestamp")) and FOREGROUND in (m.get("finalizers") or [])

    def pending(self) -> bool:
        """True when there is collection work to do."""
        return bool(self._attempt or self._foreground or self._orphan or self._namespaces)

    # ----------------------------------------------------------------- run

    def run(self) -> bool:
        """Do all the work noted so far (in a deterministic order); True if anything was done."""
        did = False
        with self.api.lock:
            attempt, self._attempt = sorted(self._attempt), set()
            for g, p, ns, name in attempt:
                did |= self._attempt_to_delete(g, p, ns, name)
            orphan, self._orphan = sorted(self._orphan), set()
            for uid in orphan:
                did |= self._orphan_dependents(uid)
            fg, self._foreground = sorted(self._foreground), set()
            for uid in fg:
                did |= self._process_foreground(uid)
            nss, self._namespaces = sorted(self._namespaces), set()
            for ns in nss:
                did |= self._terminate_namespace(ns)
        return did

    def _kind_for(self, group: str, plural: str) -> Kind | None:
        for k in self.api.kinds.all():
            if k.group == group and k.plural == plural:
                return k
        return None

    def _owner_state(self, dep_kind: Kind, dep_ns: str, ref: dict[str, Any]) -> str:
        """``solid``, ``dangling``, ``waiting`` (owner deleting in the foreground) or ``unresolvable``."""
        owner_kind = self.api.kinds.find(str(ref.get("kind", "")), str(ref.get("apiVersion", "")))
        if owner_kind is None:
            return "unresolvable"
        if owner_kind.namespaced and not dep_kind.namespaced:
            return "unresolvable"
        ns = dep_ns if owner_kind.namespaced else ""
        owner = self.api.store.table(owner_kind.group, owner_kind.plural).get(ns, str(ref.get("name", "")))
        if owner is None or owner.uid != ref.get("uid"):
            return "dangling"
        m = owner.obj["metadata"]
        if m.get("deletionTimestamp") and FOREGROUND in (m.get("finalizers") or []):
            return "waiting"
        return "solid"

    def _attempt_to_delete(self, group: str, plural: str, ns: str, name: str) -> bool:
        kind = self._kind_for(group, plural)
        if kind is None:
            return False
        e = self.api.store.table(group, plural).get(ns, name)
        if e is None:
            return False
        meta = e.obj["metadata"]
        if meta.get("deletionTimestamp") and FOREGROUND not in (meta.get("finalizers") or []):
            return False
        refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
        if not refs:
            return False
        states = [self._owner_state(kind, ns, r) for r in refs]
        if "unresolvable" in states:
            return False
        if "solid" in states:
            keep = []
            changed = False
            for r, st in zip(refs, states, strict=True):
                if st == "dangling":
                    changed = True
                    continue
                if st == "waiting" and r.get("blockOwnerDeletion"):
                    r = {**r, "blockOwnerDeletion": False}
                    changed = True
                keep.append(r)
            if not changed:
                return False
            return self._patch(kind, ns, name, {"metadata": {"ownerReferences": keep or None,
                                                             "uid": e.uid}}, e, retry=(group, plural, ns, name))
        if "waiting" in states:
            has_deps = bool(self.api.store.dependents.get(e.uid))
            policy = "Foreground" if has_deps else "Background"
        else:
            fins = meta.get("finalizers") or []
            policy = "Orphan" if ORPHAN in fins else "Foreground" if FOREGROUND in fins else "Background"
        if meta.get("deletionTimestamp"):
            return False
        return self._delete(kind, ns, name, policy, e.uid)

    def _process_foreground(self, uid: str) -> bool:
        e = self.api.entry_by_uid(uid)
        if e is None:
            return False
        m = e.obj["metadata"]
        if not m.get("deletionTimestamp") or FOREGROUND not in (m.get("finalizers") or []):
            return False
        did = False
        blocking = False
        for g, p, key in self.api.store.dependents_of(uid):
            dkind = self._kind_for(g, p)
            dns, _, dname = key.rpartition("/")
            d = self.api.store.table(g, p).get(dns, dname)
            if dkind is None or d is None:
                continue
            dm = d.obj["metadata"]
            if not dm.get("deletionTimestamp"):
                did |= self._attempt_to_delete(g, p, dns, dname)
            d = self.api.store.table(g, p).get(dns, dname)
            if d is None:
                continue
            for r in d.obj["metadata"].get("ownerReferences") or []:
                if r.get("uid") == uid and r.get("blockOwnerDeletion"):
                    blocking = True
        if blocking:
            return did
        kind = self._kind_for_entry(e)
        if kind is None:
            return did
        e = self.api.entry_by_uid(uid)
        if e is None:
            return True
        fins = [f for f in e.obj["metadata"].get("finalizers") or [] if f != FOREGROUND]
        return self._patch(kind, e.namespace, e.name, {"metadata": {"finalizers": fins or None,
                                                                     "resourceVersion": str(e.rv)}}, e,
                           owner_uid=uid) or did

    def _orphan_dependents(self, uid: str) -> bool:
        e = self.api.entry_by_uid(uid)
        if e is None:
            return False
        m = e.obj["metadata"]
        if not m.get("deletionTimestamp") or ORPHAN not in (m.get("finalizers") or []):
            return False
        for g, p, key in self.api.store.dependents_of(uid):
            dkind = self._kind_for(g, p)
            dns, _, dname = key.rpartition("/")
            d = self.api.store.table(g, p).get(dns, dname)
            if dkind is None or d is None:
                continue
            keep = [r for r in d.obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            self._patch(dkind, dns, dname, {"metadata": {"ownerReferences": keep or None, "uid": d.uid}}, d)
        kind = self._kind_for_entry(e)
        e = self.api.entry_by_uid(uid)
        if kind is None or e is None:
            return True
        fins = [f for f in e.obj["metadata"].get("finalizers") or [] if f != ORPHAN]
        self._patch(kind, e.namespace, e.name, {"metadata": {"finalizers": fins or None,
                                                             "resourceVersion": str(e.rv)}}, e, orphan_uid=uid)
        return True

    def _terminate_namespace(self, ns: str) -> bool:
        nsk = self.api.kinds.find("Namespace", "v1")
        if nsk is None:
            return False
        entry = self.api.store.table("", "namespaces").get("", ns)
        if entry is None or not entry.obj["metadata"].get("deletionTimestamp"):
            return False
        did = False
        remaining = False
        for k in self.api.kinds.all():
            if not k.namespaced:
                continue
            for obj in list(self.api.objects(k, ns)):
                remaining = True
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    self.api.delete(k.kind, obj["metadata"]["name"], ns, api_version=k.api_version, actor=NS_ACTOR,
                                    preconditions={"uid": obj["metadata"]["uid"]})
                    did = True
                except ApiError:
                    pass
        still = any(self.api.objects(k, ns) for k in self.api.kinds.all() if k.namespaced)
        if not still and (remaining or (entry.obj.get("spec") or {}).get("finalizers")):
            try:
                self.api.finalize_namespace(ns, actor=NS_ACTOR)
                did = True
            except ApiError:
                self._namespaces.add(ns)
        return did

    def _kind_for_entry(self, e: Any) -> Kind | None:
        api_version, kind = e.obj.get("apiVersion", ""), e.obj.get("kind", "")
        return self.api.kinds.find(kind, api_version)

    # ------------------------------------------------------------- writes

    def _patch(self, kind: Kind, ns: str, name: str, patch: dict[str, Any], e: Any,
               retry: tuple[str, str, str, str] | None = None, owner_uid: str = "", orphan_uid: str = "") -> bool:
        try:
            self.api.patch(kind.kind, name, patch, namespace=ns or None, api_version=kind.api_version,
                           patch_type="merge", actor=GC_ACTOR)
            return True
        except ApiError as err:
            if is_conflict(err):
                if retry:
                    self._attempt.add(retry)
                if owner_uid:
                    self._foreground.add(owner_uid)
                if orphan_uid:
                    self._orphan.add(orphan_uid)
            return False

    def _delete(self, kind: Kind, ns: str, name: str, policy: str, uid: str) -> bool:
        try:
            self.api.delete(kind.kind, name, ns or None, api_version=kind.api_version, propagation_policy=policy,
                            preconditions={"uid": uid}, actor=GC_ACTOR)
            return True
        except ApiError:
            return False
