"""The garbage collector's and the namespace controller's work (reference §4).

:class:`fakeapi.controllers.gc.GarbageCollector` notes, on every write, what may need collecting;
:class:`Collection` does it, when the collector runs with work pending (this module is
imported then: a server that never deletes anything never needs it). Everything goes
through the public verbs with the actors ``garbage-collector`` and ``namespace-controller``.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from fakeapi.controllers.gcwork import FOREGROUND, GC_ACTOR, NS_ACTOR, ORPHAN, PVC_ACTOR, PVC_PROTECTION, Work
from fakeapi.controllers.nsconditions import failing_conditions, update_conditions
from fakeapi.machinery.errors import ApiError, is_conflict
from fakeapi.registry.kinds import Kind
from fakeapi.server.clock import parse_time

if TYPE_CHECKING:
    from fakeapi.server.apiserver import APIServer


class Collection:
    """One run of the collector over the work it has noted (called with the server lock held)."""

    def __init__(self, api: APIServer, work: Work) -> None:
        self.api = api
        self.work = work

    def run(self) -> bool:
        """Do all the work noted so far (in a deterministic order); True if anything was done."""
        gc = self.work
        did = False
        attempt, gc.attempt = sorted(gc.attempt), set()
        for g, p, ns, name in attempt:
            did |= self._attempt_to_delete(g, p, ns, name)
        orphan, gc.orphan = sorted(gc.orphan), set()
        for uid in orphan:
            did |= self._orphan_dependents(uid)
        fg, gc.foreground = sorted(gc.foreground), set()
        for uid in fg:
            did |= self._process_foreground(uid)
        nss, gc.namespaces = sorted(gc.namespaces), set()
        for ns in nss:
            did |= self._terminate_namespace(ns)
        claims, gc.claims = sorted(gc.claims), set()
        for ns, name in claims:
            did |= self._protect_claim(ns, name)
        return did

    def _protect_claim(self, ns: str, name: str) -> bool:
        """The pvc-protection controller: a live claim gets its finalizer back; a claim being deleted
        loses it once no scheduled pod of its namespace names it in a volume (``podUsesPVC``)."""
        kind = self.api.kinds.find("PersistentVolumeClaim", "v1")
        e = self.api.store.table("", "persistentvolumeclaims").get(ns, name)
        if kind is None or e is None:
            return False
        meta = e.obj["metadata"]
        fins = list(meta.get("finalizers") or ())
        if not meta.get("deletionTimestamp"):
            if PVC_PROTECTION in fins:
                return False
            fins.append(PVC_PROTECTION)
        elif PVC_PROTECTION not in fins:
            return False
        elif any(_pod_uses_claim(p, name) for p in self.api.objects(self.api.resolve_kind("Pod", "v1"), ns)):
            self.work.claims_in_use.setdefault(ns, set()).add(name)
            return False
        else:
            fins.remove(PVC_PROTECTION)
        try:
            self.api.patch(kind.kind, name, {"metadata": {"finalizers": fins or None, "resourceVersion": str(e.rv)}},
                           namespace=ns, patch_type="merge", actor=PVC_ACTOR)
        except ApiError as err:
            if is_conflict(err):
                self.work.claims.add((ns, name))
            return False
        return True

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
        kind = self.api.kinds.by_group_plural(group, plural)
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

    def _deleting_with(self, uid: str, finalizer: str) -> Any:
        """The entry of owner ``uid`` when it is being deleted and still holds ``finalizer``, else None."""
        e = self.api.entry_by_uid(uid)
        if e is None:
            return None
        m = e.obj["metadata"]
        if not m.get("deletionTimestamp") or finalizer not in (m.get("finalizers") or []):
            return None
        return e

    def _process_foreground(self, uid: str) -> bool:
        e = self._deleting_with(uid, FOREGROUND)
        if e is None:
            return False
        did = False
        blocking = False
        for g, p, key in self.api.store.dependents_of(uid):
            dkind = self.api.kinds.by_group_plural(g, p)
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
        e = self._deleting_with(uid, ORPHAN)
        if e is None:
            return False
        for g, p, key in self.api.store.dependents_of(uid):
            dkind = self.api.kinds.by_group_plural(g, p)
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
        had_content = False
        delete_errors: list[str] = []
        failed: set[str] = set()
        kinds = [k for k in self.api.kinds.all() if k.namespaced]
        for k in kinds:
            for obj in list(self.api.objects(k, ns)):
                had_content = True
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:  # Background, as the namespace controller's deletes: no orphan finalizer is honoured
                    self.api.delete(k.kind, obj["metadata"]["name"], ns, api_version=k.api_version, actor=NS_ACTOR,
                                    preconditions={"uid": obj["metadata"]["uid"]}, propagation_policy="Background")
                    did = True
                except ApiError as err:
                    if err.code not in (404, 405):  # (the rest of this resource waits for the next pass)
                        delete_errors.append(err.message)
                        failed.add(k.plural + "." + k.group)
                        break
        # what is left, and whether a finalizer or a pod's grace period explains it (deleteAllContentForGroupVersionResource)
        remaining: dict[tuple[str, str], int] = {}
        finalizers: Counter[str] = Counter()
        deleted_at = parse_time(entry.obj["metadata"]["deletionTimestamp"])
        for k in kinds:
            left = list(self.api.objects(k, ns)) if k.plural + "." + k.group not in failed else None
            if not left:  # (a resource whose delete failed is not counted: its error says enough)
                continue
            remaining[(k.plural, k.group)] = len(left)
            held = Counter(f for o in left for f in o["metadata"].get("finalizers") or ())
            finalizers.update(held)
            if not held and not (k.builtin and k.kind == "Pod" and self._pods_in_grace(left, deleted_at)):
                delete_errors.append(f"unexpected items still remain in namespace: {ns} for gvr: "
                                     f"{k.group}/{k.version}, Resource={k.plural}")
        did = self._set_deletion_conditions(entry.obj, failing_conditions(remaining, finalizers, delete_errors)) or did
        if not remaining and not delete_errors and (had_content or (entry.obj.get("spec") or {}).get("finalizers")):
            try:
                self.api.finalize_namespace(ns, actor=NS_ACTOR)
                did = True
            except ApiError:
                self.work.namespaces.add(ns)
        return did

    def _pods_in_grace(self, pods: list[dict[str, Any]], deleted_at: datetime) -> bool:
        """``estimateGracefulTerminationForPods``: may the pods left still be in their grace period?

        The longest ``terminationGracePeriodSeconds`` of the pods not yet finished, counted from
        the namespace's deletion.
        """
        grace = max((int((p.get("spec") or {}).get("terminationGracePeriodSeconds") or 0) for p in pods
                     if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")), default=0)
        return self.api.clock.now() - deleted_at < timedelta(seconds=grace)

    def _set_deletion_conditions(self, ns_obj: dict[str, Any], failing: dict[str, tuple[str, str]]) -> bool:
        """Write the namespace's deletion conditions (status) when they changed; True if written."""
        status = ns_obj.get("status") or {}
        conditions = update_conditions(status.get("conditions"), failing, self.api.clock.timestamp())
        if conditions is None:
            return False
        body = {**ns_obj, "status": {**status, "conditions": conditions}}
        try:
            self.api.update(body, subresource="status", actor=NS_ACTOR)
        except ApiError:
            self.work.namespaces.add(ns_obj["metadata"]["name"])
            return False
        return True

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
                    self.work.attempt.add(retry)
                if owner_uid:
                    self.work.foreground.add(owner_uid)
                if orphan_uid:
                    self.work.orphan.add(orphan_uid)
            return False

    def _delete(self, kind: Kind, ns: str, name: str, policy: str, uid: str) -> bool:
        try:
            self.api.delete(kind.kind, name, ns or None, api_version=kind.api_version, propagation_policy=policy,
                            preconditions={"uid": uid}, actor=GC_ACTOR)
            return True
        except ApiError:
            return False


def _pod_uses_claim(pod: dict[str, Any], claim: str) -> bool:
    """``podUsesPVC``: a scheduled pod (``spec.nodeName`` set), whatever its phase, with a volume naming the
    claim (a generic ephemeral volume's claim, ``<pod>-<volume>``, while the pod is not finished)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return False
    finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        ref = v.get("persistentVolumeClaim")
        if isinstance(ref, dict) and ref.get("claimName") == claim:
            return True
        if not finished and v.get("ephemeral") is not None and f"{pod['metadata']['name']}-{v.get('name')}" == claim:
            return True
    return False
