"""The ReplicaSet and Deployment controllers of kube-controller-manager, as one actor on the clock.

A served cluster runs them (:class:`~fakeapi.host.cluster.ServedCluster`) so a client's
Deployment gets a ReplicaSet and pods, and the kubelet makes those pods Ready.

* **ReplicaSet** (upstream ``pkg/controller/replicaset``): the active pods a ReplicaSet's
  selector matches (not terminal, not being deleted) are counted; missing ones are created
  from ``spec.template`` (``generateName`` ``<rs>-``, the template's labels, a controller
  ownerReference), extra ones deleted (not-ready first, then the newest). Pods that match but
  have no controller are adopted. The status is derived from the pods: ``replicas``,
  ``fullyLabeledReplicas`` (pods carrying every template label), ``readyReplicas`` (``Ready``
  true), ``availableReplicas`` (ready for ``minReadySeconds``) and ``observedGeneration``.
* **Deployment** (upstream ``pkg/controller/deployment``): one ReplicaSet per pod template,
  named ``<deployment>-<pod-template-hash>`` and labelled with the hash; the ``RollingUpdate``
  strategy grows the new ReplicaSet up to ``replicas + maxSurge`` pods in all and shrinks the
  old ones while at least ``replicas - maxUnavailable`` stay available; ``Recreate`` shrinks
  every old ReplicaSet to 0 before the new one grows. The status counts replicas,
  ``updatedReplicas``, ``readyReplicas``, ``availableReplicas`` and ``unavailableReplicas``,
  with the conditions ``Available`` (``MinimumReplicasAvailable`` /
  ``MinimumReplicasUnavailable``) and ``Progressing`` (``NewReplicaSetCreated``,
  ``ReplicaSetUpdated``, ``NewReplicaSetAvailable``).

**The hash.** Upstream's ``ComputeHash`` feeds the Go ``spew`` dump of the ``PodTemplateSpec``
struct to fnv32a, then renders the decimal sum with ``rand.SafeEncodeString``. The spew dump of
a Go struct cannot be reproduced here, so the hash is fnv32a of the template's canonical JSON
(keys sorted) and the collision count, rendered the same way: a stable label of the same shape
(digits and consonants), not byte-equal to a real cluster's.

Not modelled: ``progressDeadlineSeconds`` (no ``ProgressDeadlineExceeded``), ``paused``,
rollback, ``revisionHistoryLimit`` clean-up, proportional scaling of several old ReplicaSets
during a rollout (old ones shrink oldest first).
"""

from __future__ import annotations

import contextlib
import json
import math
import struct
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from fnv_hash_fast import fnv1a_32

from fakeapi.machinery import errors
from fakeapi.machinery.selectors import SelectorError, selector_from_object

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind
    from fakeapi.server.apiserver import APIServer

Obj = dict[str, Any]

RS_ACTOR = "replicaset-controller"
DEPLOYMENT_ACTOR = "deployment-controller"
HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
#: ``k8s.io/apimachinery/pkg/util/rand``'s alphabet: no vowels (no words), no 0/1/3 (look-alikes).
SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped into :data:`SAFE_ALPHANUMS`."""
    return "".join(SAFE_ALPHANUMS[b % len(SAFE_ALPHANUMS)] for b in s.encode())


def fnv32a(data: bytes) -> int:
    """The 32-bit FNV-1a hash (Go's ``hash/fnv.New32a``), computed by the fnv-hash-fast library
    (C: a pure Python loop costs about 1,100 instructions a byte)."""
    return fnv1a_32(data)


def template_hash(template: Obj, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of a pod template (see the module docstring for how it differs
    from upstream's ``controller.ComputeHash``)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += struct.pack("<I", collision_count & 0xFFFFFFFF)
    return safe_encode(str(fnv32a(data)))


def _parse_time(ts: str | None) -> datetime | None:
    if not ts:
        return None
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _ready_since(pod: Obj) -> datetime | None:
    """When the pod's ``Ready`` condition became true; None when it is not ready."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            if c.get("status") != "True":
                return None
            return _parse_time(c.get("lastTransitionTime")) or datetime.min.replace(tzinfo=None)
    return None


def _active(pod: Obj) -> bool:
    """``controller.IsPodActive``: not terminal and not being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") \
        and not (pod.get("metadata") or {}).get("deletionTimestamp")


def _controller_of(obj: Obj) -> Obj | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def _int_or_percent(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        v = int(text[:-1]) * total / 100
        return math.ceil(v) if round_up else math.floor(v)
    return int(text)


class PodOwnerActor:
    """What the served cluster's pod-owning controllers share: an actor on the host's clock that is
    due at once after a change to a pod or to one of its ``apps/v1`` kinds (else when a pod it waits
    for becomes available, ``_next``), and whose run syncs every object of each of its kinds in
    order; a failed sync (a conflict, a closing namespace) leaves it due, so the next pass retries."""

    name: str
    #: The ``apps/v1`` kinds it syncs, in order, with the actor each one's list is made as.
    synced: tuple[tuple[str, str], ...] = ()

    def __init__(self, api: APIServer) -> None:
        self.api = api
        self._dirty = True
        self._next: datetime | None = None
        self._kinds = frozenset(k for k, _ in self.synced)
        api.add_listener(self._on_event)

    def _on_event(self, etype: str, kind: Kind, obj: Obj, old: Obj | None) -> None:
        if kind.builtin and ((kind.kind == "Pod" and not kind.group)
                             or (kind.group == "apps" and kind.kind in self._kinds)):
            self._dirty = True

    def next_due(self) -> datetime | None:
        """Now after a change to a pod or to one of its kinds; or when a pod becomes available."""
        if self._dirty:
            return self.api.clock.now()
        return self._next

    def sync(self, kind: str, obj: Obj) -> None:
        """Sync one object of one of :attr:`synced`'s kinds (each controller's own)."""
        raise TypeError(f"{type(self).__name__} syncs no {kind}")

    def run(self) -> bool:
        """Sync every object of each kind in :attr:`synced`, in order; True when anything was written."""
        self._dirty = False
        self._next = None
        before = self.api.resource_version
        for kind, actor in self.synced:
            for obj in self.api.list(kind, api_version="apps/v1", actor=actor)["items"]:
                try:
                    self.sync(kind, obj)
                except errors.ApiError:  # a conflict or a closing namespace: the next event retries
                    self._dirty = True
        return self.api.resource_version != before


class WorkloadControllers(PodOwnerActor):
    """The ReplicaSet and Deployment controllers (one actor; see the module docstring): every
    Deployment, then every ReplicaSet."""

    name = RS_ACTOR
    synced = (("Deployment", DEPLOYMENT_ACTOR), ("ReplicaSet", RS_ACTOR))

    def sync(self, kind: str, obj: Obj) -> None:
        """A Deployment's or a ReplicaSet's sync."""
        if kind == "Deployment":
            self._sync_deployment(obj)
        else:
            self._sync_replicaset(obj)

    # -- ReplicaSet ---------------------------------------------------------------------

    def _pods_of(self, owner: Obj, selector: Any) -> list[Obj]:
        meta = owner["metadata"]
        pods = self.api.list("Pod", meta["namespace"], actor=RS_ACTOR)["items"]
        out = []
        for p in pods:
            if not selector.matches((p.get("metadata") or {}).get("labels") or {}):
                continue
            ref = _controller_of(p)
            if ref is None and not (p["metadata"].get("deletionTimestamp")):
                p = self._adopt(owner, p)
            elif ref is None or ref.get("uid") != meta["uid"]:
                continue
            out.append(p)
        return out

    def _adopt(self, owner: Obj, pod: Obj) -> Obj:
        refs = [*list(pod["metadata"].get("ownerReferences") or []), self._owner_ref(owner, "ReplicaSet")]
        return self.api.patch("Pod", pod["metadata"]["name"], {"metadata": {
            "ownerReferences": refs, "resourceVersion": pod["metadata"]["resourceVersion"]}},
            namespace=pod["metadata"]["namespace"], actor=RS_ACTOR)

    @staticmethod
    def _owner_ref(owner: Obj, kind: str) -> Obj:
        return {"apiVersion": "apps/v1", "kind": kind, "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}

    def _available(self, pod: Obj, min_ready: int) -> bool:
        since = _ready_since(pod)
        if since is None:
            return False
        if min_ready <= 0:
            return True
        due = since + timedelta(seconds=min_ready)
        if due <= self.api.clock.now():
            return True
        self._next = due if self._next is None else min(self._next, due)
        return False

    def _sync_replicaset(self, rs: Obj) -> None:
        meta, spec = rs["metadata"], rs.get("spec") or {}
        if meta.get("deletionTimestamp"):
            return
        try:
            selector = selector_from_object(spec.get("selector"))
        except SelectorError:
            return
        pods = [p for p in self._pods_of(rs, selector) if _active(p)]
        want = int(spec.get("replicas", 1))
        ns = meta["namespace"]
        template = spec.get("template") or {}
        if len(pods) < want:
            tmeta = template.get("metadata") or {}
            for _ in range(want - len(pods)):
                pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"generateName": f"{meta['name']}-",
                                    "labels": dict(tmeta.get("labels") or {}),
                                    "annotations": dict(tmeta.get("annotations") or {}),
                                    "ownerReferences": [self._owner_ref(rs, "ReplicaSet")]},
                       "spec": template.get("spec") or {}}
                if not pod["metadata"]["annotations"]:
                    del pod["metadata"]["annotations"]
                pods.append(self.api.create(pod, namespace=ns, actor=RS_ACTOR))
        elif len(pods) > want:
            # upstream getPodsToDelete: unscheduled, then not-ready, then the most recently created
            def rank(p: Obj) -> tuple[int, int, str]:
                return (0 if not (p.get("spec") or {}).get("nodeName") else 1,
                        0 if _ready_since(p) is None else 1,
                        "".join(chr(255 - ord(c)) for c in p["metadata"].get("creationTimestamp", "")))
            doomed = sorted(pods, key=rank)[:len(pods) - want]
            for p in doomed:
                with contextlib.suppress(errors.ApiError):
                    self.api.delete("Pod", p["metadata"]["name"], ns, actor=RS_ACTOR,
                                    preconditions={"uid": p["metadata"]["uid"]})
            names = {p["metadata"]["name"] for p in doomed}
            pods = [p for p in pods if p["metadata"]["name"] not in names]
        tlabels = (template.get("metadata") or {}).get("labels") or {}
        min_ready = int(spec.get("minReadySeconds", 0))
        status = {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(1 for p in pods if all(
                (p["metadata"].get("labels") or {}).get(k) == v for k, v in tlabels.items())),
            "readyReplicas": sum(1 for p in pods if _ready_since(p) is not None),
            "availableReplicas": sum(1 for p in pods if self._available(p, min_ready)),
            "observedGeneration": meta.get("generation", 1),
        }
        self._write_status("ReplicaSet", rs, status, RS_ACTOR)

    def _write_status(self, kind: str, obj: Obj, status: Obj, actor: str) -> None:
        old = obj.get("status") or {}
        merged = {**old, **status}
        for k in ("readyReplicas", "availableReplicas", "fullyLabeledReplicas", "updatedReplicas",
                  "unavailableReplicas"):
            if merged.get(k) == 0:
                merged.pop(k)  # (omitempty: Go drops the zero)
        if merged == old:
            return
        patch: Obj = {"status": {**{k: None for k in old if k not in merged}, **merged}}
        self.api.patch(kind, obj["metadata"]["name"], patch, namespace=obj["metadata"]["namespace"],
                       api_version="apps/v1", subresource="status", actor=actor)

    # -- Deployment ---------------------------------------------------------------------

    def _sync_deployment(self, d: Obj) -> None:
        meta, spec = d["metadata"], d.get("spec") or {}
        if meta.get("deletionTimestamp"):
            return
        ns = meta["namespace"]
        try:
            selector = selector_from_object(spec.get("selector"))
        except SelectorError:
            return
        owned = []
        for rs in self.api.list("ReplicaSet", ns, api_version="apps/v1", actor=DEPLOYMENT_ACTOR)["items"]:
            ref = _controller_of(rs)
            if ref is not None and ref.get("uid") == meta["uid"] and not rs["metadata"].get("deletionTimestamp"):
                owned.append(rs)
            elif ref is None and selector.matches(rs["metadata"].get("labels") or {}):
                refs = [*list(rs["metadata"].get("ownerReferences") or []), self._owner_ref(d, "Deployment")]
                owned.append(self.api.patch("ReplicaSet", rs["metadata"]["name"], {"metadata": {
                    "ownerReferences": refs, "resourceVersion": rs["metadata"]["resourceVersion"]}},
                    namespace=ns, api_version="apps/v1", actor=DEPLOYMENT_ACTOR))
        template = spec.get("template") or {}
        collision = (d.get("status") or {}).get("collisionCount")
        h = template_hash(template, collision)
        new = next((rs for rs in owned
                    if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == h), None)
        olds = sorted((rs for rs in owned if rs is not new),
                      key=lambda r: r["metadata"].get("creationTimestamp", ""))
        replicas = int(spec.get("replicas", 1))
        strategy = spec.get("strategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        ru = strategy.get("rollingUpdate") or {}
        surge = _int_or_percent(ru.get("maxSurge", "25%"), replicas, True) if rolling else 0
        unavailable = _int_or_percent(ru.get("maxUnavailable", "25%"), replicas, False) if rolling else 0
        if rolling and surge == 0 and unavailable == 0:
            unavailable = 1  # (upstream ResolveFenceposts)
        progress_reason = ""
        if new is None:
            revision = 1 + max((int((r["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION, "0") or 0)
                                for r in owned), default=0)
            labels = {**((template.get("metadata") or {}).get("labels") or {}), HASH_LABEL: h}
            tmpl = {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}}
            sel = dict(spec.get("selector") or {})
            sel["matchLabels"] = {**(sel.get("matchLabels") or {}), HASH_LABEL: h}
            total_old = sum(int((r.get("spec") or {}).get("replicas", 0)) for r in olds)
            start = replicas if not olds else (
                max(0, min(replicas, replicas + surge - total_old)) if rolling else 0)
            if not rolling and any(int((r.get("status") or {}).get("replicas", 0)) for r in olds):
                start = 0
            body = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": f"{meta['name']}-{h}", "labels": labels,
                                 "annotations": {REVISION_ANNOTATION: str(revision),
                                                 "deployment.kubernetes.io/desired-replicas": str(replicas),
                                                 "deployment.kubernetes.io/max-replicas": str(replicas + surge)},
                                 "ownerReferences": [self._owner_ref(d, "Deployment")]},
                    "spec": {"replicas": start, "minReadySeconds": int(spec.get("minReadySeconds", 0)),
                             "selector": sel, "template": tmpl}}
            new = self.api.create(body, namespace=ns, actor=DEPLOYMENT_ACTOR)
            progress_reason = "NewReplicaSetCreated"
        else:
            total = sum(int((r.get("spec") or {}).get("replicas", 0)) for r in owned)
            cur = int((new.get("spec") or {}).get("replicas", 0))
            if not olds:
                target = replicas
            elif rolling:
                target = min(replicas, cur + max(0, replicas + surge - total))
            else:
                target = 0 if any(int((r.get("status") or {}).get("replicas", 0)) for r in olds) else replicas
            if target != cur:
                new = self._scale(new, target)
                progress_reason = "ReplicaSetUpdated"
            if olds:
                available = sum(int((r.get("status") or {}).get("availableReplicas", 0)) for r in owned)
                budget = available - (replicas - unavailable) if rolling else math.inf
                # first the old pods that are not available: shrinking them costs no availability
                for r in olds:
                    rcur = int((r.get("spec") or {}).get("replicas", 0))
                    unavail = rcur - int((r.get("status") or {}).get("availableReplicas", 0))
                    if rcur and unavail > 0:
                        self._scale(r, rcur - unavail)
                        progress_reason = "ReplicaSetUpdated"
                for r in self.api.list("ReplicaSet", ns, api_version="apps/v1", actor=DEPLOYMENT_ACTOR)["items"]:
                    if r["metadata"]["uid"] not in {o["metadata"]["uid"] for o in olds} or budget <= 0:
                        continue
                    rcur = int((r.get("spec") or {}).get("replicas", 0))
                    cut = int(min(rcur, budget))
                    if cut > 0:
                        self._scale(r, rcur - cut)
                        budget -= cut
                        progress_reason = "ReplicaSetUpdated"
        self._deployment_status(d, new, olds, replicas, unavailable, progress_reason)

    def _scale(self, rs: Obj, n: int) -> Obj:
        return self.api.patch("ReplicaSet", rs["metadata"]["name"], {
            "metadata": {"annotations": {"deployment.kubernetes.io/desired-replicas": None}},
            "spec": {"replicas": n}}, namespace=rs["metadata"]["namespace"], api_version="apps/v1",
            actor=DEPLOYMENT_ACTOR)

    def _deployment_status(self, d: Obj, new: Obj, olds: list[Obj], replicas: int, max_unavailable: int,
                           reason: str) -> None:
        ns = d["metadata"]["namespace"]
        fresh = {r["metadata"]["uid"]: r for r in self.api.list(
            "ReplicaSet", ns, api_version="apps/v1", actor=DEPLOYMENT_ACTOR)["items"]}
        rss = [fresh.get(r["metadata"]["uid"], r) for r in [new, *olds]]
        new = rss[0]

        def count(rs: Obj, key: str) -> int:
            return int((rs.get("status") or {}).get(key, 0))

        total = sum(count(r, "replicas") for r in rss)
        available = sum(count(r, "availableReplicas") for r in rss)
        updated = count(new, "replicas")
        old_status = d.get("status") or {}
        now = self.api.clock.timestamp()
        conds = {c.get("type"): dict(c) for c in old_status.get("conditions") or []}

        def cond(ctype: str, status: str, why: str, message: str) -> None:
            prev = conds.get(ctype)
            if prev and prev.get("status") == status and prev.get("reason") == why:
                return
            transition = prev["lastTransitionTime"] if prev and prev.get("status") == status else now
            conds[ctype] = {"type": ctype, "status": status, "lastUpdateTime": now,
                            "lastTransitionTime": transition, "reason": why, "message": message}

        if available >= replicas - max_unavailable:
            cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        else:
            cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
        rs_name = new["metadata"]["name"]
        complete = updated == replicas and count(new, "availableReplicas") == replicas and total == replicas
        if complete:
            cond("Progressing", "True", "NewReplicaSetAvailable",
                 f'ReplicaSet "{rs_name}" has successfully progressed.')
        elif reason == "NewReplicaSetCreated" and "Progressing" not in conds:
            cond("Progressing", "True", reason, f'Created new replica set "{rs_name}"')
        elif reason:
            cond("Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.')
        order = ["Available", "Progressing"]
        status: Obj = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": total, "updatedReplicas": updated,
            "readyReplicas": sum(count(r, "readyReplicas") for r in rss),
            "availableReplicas": available,
            "unavailableReplicas": max(0, replicas - available),
            "conditions": [conds[t] for t in order if t in conds]
            + [c for t, c in conds.items() if t not in order],
        }
        if old_status.get("collisionCount") is not None:
            status["collisionCount"] = old_status["collisionCount"]
        if status["replicas"] == 0:
            status.pop("replicas")
        if status["updatedReplicas"] == 0:
            status.pop("updatedReplicas")
        self._write_status("Deployment", d, status, DEPLOYMENT_ACTOR)
