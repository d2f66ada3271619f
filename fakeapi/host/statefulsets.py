"""The StatefulSet controller of kube-controller-manager, as one actor on the clock.

A served cluster runs it (:class:`~fakeapi.host.cluster.ServedCluster`) beside the ReplicaSet
and Deployment controllers (:mod:`fakeapi.host.workloads`), so a client's StatefulSet gets its
pods and the kubelet makes them Ready. What it follows of upstream ``pkg/controller/statefulset``:

* **Identity.** The pods of a set named ``web`` with ``replicas: 3`` are ``web-0``, ``web-1`` and
  ``web-2`` (from ``spec.ordinals.start`` when set), each with ``hostname`` its own name and
  ``subdomain`` the set's ``serviceName``, the template's labels plus
  ``statefulset.kubernetes.io/pod-name`` (the pod's name), ``apps.kubernetes.io/pod-index`` (its
  ordinal) and ``controller-revision-hash`` (the revision it was made from), and a controller
  ownerReference. A pod whose name parses as ``<set>-<ordinal>`` and that the selector matches
  is adopted when it has no controller.
* **Storage.** Each ``volumeClaimTemplates`` entry gives the pod a PersistentVolumeClaim
  ``<claim>-<set>-<ordinal>`` (created before the pod when missing, labelled with the selector's
  ``matchLabels``) and a volume of the claim's name that mounts it.
* **Ordering.** With ``podManagementPolicy: OrderedReady`` (the default) one pod is created at a
  time, in ordinal order, each once every lower ordinal is Running, Ready and available for
  ``minReadySeconds``; scale down deletes the highest ordinal first, one at a time, waiting for
  the one being deleted to go. ``Parallel`` creates and deletes every pod at once. A pod that
  failed or succeeded is deleted, and made again once it is gone.
* **Revisions.** The revision of a pod template is upstream's ControllerRevision data, the patch
  ``{"spec":{"template":{...,"$patch":"replace"}}}`` as Go's ``encoding/json`` writes it (keys
  sorted, no spaces, ``<``, ``>`` and ``&`` escaped), hashed with 32-bit FNV-1 together with the
  collision count and rendered by ``rand.SafeEncodeString``; its name is ``<set>-<hash>``
  (``history.ControllerRevisionName``): the name a real cluster gives the same stored template
  (upstream's ``testdata/compatibility_revision_1.34.0.json`` is reproduced). With the ``RollingUpdate`` strategy, once every pod is
  healthy the highest-ordinal pod at or above ``rollingUpdate.partition`` that is not at the update
  revision is deleted (and made again at it), one at a time; ``OnDelete`` only makes deleted pods
  again at the update revision.
* **Status** (upstream ``updateStatefulSet``): ``replicas`` (the pods the set owns),
  ``readyReplicas`` (Running and Ready), ``availableReplicas`` (ready for ``minReadySeconds``),
  ``currentReplicas`` and ``updatedReplicas`` (pods at the current and update revisions),
  ``currentRevision``, ``updateRevision``, ``collisionCount`` and ``observedGeneration``; a rolling
  update is complete, and the current revision becomes the update revision, once every pod is
  updated and ready. Zero counts are left out where the Go struct's field is ``omitempty``.

Not modelled: ControllerRevision objects (the kind is not served: the revisions' templates are
kept by the controller, in memory), the ``maxUnavailable`` rolling update (an alpha feature),
``persistentVolumeClaimRetentionPolicy`` (claims are always retained), revision history
clean-up, and repairing a pod whose identity or storage was changed after it was made.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from fakeapi.codec.gostructs import k8s
from fakeapi.host.workloads import PodOwnerActor, safe_encode
from fakeapi.machinery import errors
from fakeapi.machinery.selectors import SelectorError, selector_from_object

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind
    from fakeapi.server.apiserver import APIServer

Obj = dict[str, Any]

ACTOR = "statefulset-controller"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL_NAME = re.compile(r"^(.*)-([0-9]+)$")
#: The Go ``MaxInt32``: an ordinal that does not fit is no ordinal (``strconv.ParseInt(s, 10, 32)``).
_MAX_INT32 = 2**31 - 1


def parent_and_ordinal(name: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: the set a pod's name says it belongs to and its ordinal, or ("", -1)."""
    m = _ORDINAL_NAME.match(name)
    if m is None:
        return "", -1
    ordinal = int(m.group(2))
    return (m.group(1), ordinal) if ordinal <= _MAX_INT32 else (m.group(1), -1)


def fnv32(data: bytes) -> int:
    """The 32-bit FNV-1 hash (Go's ``hash/fnv.New32``: multiply, then xor)."""
    h = 0x811C9DC5
    for b in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ b
    return h


def go_json(value: Any) -> bytes:
    """``json.Marshal`` of decoded JSON: keys sorted, compact, and ``<``, ``>``, ``&``, U+2028 and U+2029
    escaped as Go's encoder escapes them."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text.encode()


def revision_data(template: Obj) -> bytes:
    """The ControllerRevision data of a pod template (upstream ``getPatch``)."""
    return go_json({"spec": {"template": {**template, "$patch": "replace"}}})


def revision_name(set_name: str, template: Obj, collision_count: int = 0) -> str:
    """``<set>-<hash>``: upstream ``HashControllerRevision`` of the template's revision data with the
    collision count, under ``ControllerRevisionName``'s 223-byte prefix limit."""
    h = safe_encode(str(fnv32(revision_data(template) + str(collision_count).encode())))
    return f"{set_name[:223]}-{h}"


def _condition_true(pod: Obj, ctype: str) -> Obj | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c if c.get("status") == "True" else None
    return None


def running_and_ready(pod: Obj) -> bool:
    """``isRunningAndReady``: phase Running and the Ready condition true."""
    return (pod.get("status") or {}).get("phase") == "Running" and _condition_true(pod, "Ready") is not None


def running_and_available(pod: Obj, min_ready: int, now: datetime) -> bool:
    """``isRunningAndAvailable``: running and ready, for at least ``min_ready`` seconds."""
    if not running_and_ready(pod):
        return False
    if min_ready <= 0:
        return True
    ready = _condition_true(pod, "Ready") or {}
    since = ready.get("lastTransitionTime")
    if not since:
        return False
    return datetime.fromisoformat(since.replace("Z", "+00:00")) + timedelta(seconds=min_ready) <= now


def _created(pod: Obj) -> bool:
    """``isCreated``: the pod has a phase (the server and kubelet know it)."""
    return bool((pod.get("status") or {}).get("phase"))


def _terminating(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")


def _revision_of(pod: Obj) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL, ""))


@dataclass(frozen=True)
class Create:
    """Make the pod of ``ordinal`` from the template of ``revision``."""

    ordinal: int
    revision: str


@dataclass(frozen=True)
class Delete:
    """Delete the pod ``name`` (a condemned, failed or outdated pod)."""

    name: str


@dataclass
class Plan:
    """What one sync does (its pod actions, in order) and the status it then writes."""

    actions: list[Create | Delete] = field(default_factory=list)
    status: Obj = field(default_factory=dict)
    #: The earliest time a pod becomes available (``minReadySeconds``), when one is waiting on the clock.
    wake: datetime | None = None


def plan(sset: Obj, pods: list[Obj], current: str, update: str, now: datetime) -> Plan:
    """One pass of upstream ``updateStatefulSet`` over ``pods`` (the pods the set owns), as data: the
    creations and deletions to make, in order, and the status that results (before
    ``completeRollingUpdate``). Pure: it reads its arguments only."""
    spec, meta = sset.get("spec") or {}, sset.get("metadata") or {}
    replica_count = int(spec.get("replicas", 1))
    start = int((spec.get("ordinals") or {}).get("start", 0))
    min_ready = int(spec.get("minReadySeconds", 0))
    strategy = spec.get("updateStrategy") or {}
    rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
    partition = int((strategy.get("rollingUpdate") or {}).get("partition", 0))
    monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
    out = Plan()
    st: Obj = {"observedGeneration": meta.get("generation", 1), "replicas": 0, "readyReplicas": 0,
               "availableReplicas": 0, "currentReplicas": 0, "updatedReplicas": 0,
               "currentRevision": current, "updateRevision": update,
               "collisionCount": int((sset.get("status") or {}).get("collisionCount", 0))}
    out.status = st
    replicas: list[Obj | None] = [None] * replica_count
    condemned: list[Obj] = []
    for p in pods:
        st["replicas"] += 1
        if running_and_ready(p):
            st["readyReplicas"] += 1
            if running_and_available(p, min_ready, now):
                st["availableReplicas"] += 1
            elif min_ready > 0:
                since = (_condition_true(p, "Ready") or {}).get("lastTransitionTime")
                if since:
                    due = datetime.fromisoformat(since.replace("Z", "+00:00")) + timedelta(seconds=min_ready)
                    out.wake = due if out.wake is None else min(out.wake, due)
        if _created(p) and not _terminating(p):
            st["currentReplicas"] += _revision_of(p) == current
            st["updatedReplicas"] += _revision_of(p) == update
        _, ordinal = parent_and_ordinal(p["metadata"]["name"])
        if start <= ordinal < start + replica_count:
            replicas[ordinal - start] = p
        elif ordinal >= 0:
            condemned.append(p)
    condemned.sort(key=lambda p: parent_and_ordinal(p["metadata"]["name"])[1])
    if meta.get("deletionTimestamp"):
        return out

    def revision_for(ordinal: int) -> str:
        # newVersionedStatefulSetPod: below the partition, pods stay at the current revision
        return current if rolling and ordinal < start + partition else update

    unhealthy = [p for p in [*(r for r in replicas if r is not None), *condemned]
                 if not (running_and_ready(p) and not _terminating(p))]
    first_unhealthy = min(unhealthy, key=lambda p: parent_and_ordinal(p["metadata"]["name"])[1], default=None)
    if any(r is None for r in replicas):
        # a missing pod counts as unhealthy, and it has the lowest ordinal of those
        first_missing = start + next(i for i, r in enumerate(replicas) if r is None)
        if first_unhealthy is None or first_missing < parent_and_ordinal(first_unhealthy["metadata"]["name"])[1]:
            first_unhealthy = None
    for i, pod in enumerate(replicas):
        ordinal = start + i
        if pod is not None and _finished(pod):
            if not _terminating(pod):
                out.actions.append(Delete(pod["metadata"]["name"]))
            if monotonic:
                return out
            continue
        if pod is None:
            rev = revision_for(ordinal)
            out.actions.append(Create(ordinal, rev))
            st["replicas"] += 1
            st["currentReplicas"] += rev == current
            st["updatedReplicas"] += rev == update
            if monotonic:
                return out
            continue
        if _terminating(pod) and monotonic:
            return out
        if monotonic and not running_and_available(pod, min_ready, now):
            return out
    for pod in reversed(condemned):
        if _terminating(pod):
            if monotonic:
                return out
            continue
        if monotonic and not running_and_ready(pod) and pod is not first_unhealthy:
            return out
        out.actions.append(Delete(pod["metadata"]["name"]))
        st["currentReplicas"] -= _revision_of(pod) == current
        st["updatedReplicas"] -= _revision_of(pod) == update
        if monotonic:
            return out
    if not rolling:
        return out
    for i in range(len(replicas) - 1, partition - 1, -1):
        pod = replicas[i]
        if pod is None:
            continue
        if _revision_of(pod) != update and not _terminating(pod):
            out.actions.append(Delete(pod["metadata"]["name"]))
            st["currentReplicas"] -= 1
            return out
        if not (running_and_ready(pod) and not _terminating(pod)):
            return out
    return out


def complete_rolling_update(sset: Obj, status: Obj) -> None:
    """``completeRollingUpdate``: every pod updated and ready ends a rolling update."""
    rolling = ((sset.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    if rolling and status["updatedReplicas"] == status["replicas"] and status["readyReplicas"] == status["replicas"]:
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


def _status_omitempty() -> frozenset[str]:
    """The ``StatefulSetStatus`` fields Go leaves out when zero (from the Go struct facts)."""
    return frozenset(f.name for f in k8s().json_fields("k8s.io/api/apps/v1.StatefulSetStatus")
                     if f.omitempty and f.name != "collisionCount")  # (a pointer: 0 is written)


class StatefulSetController(PodOwnerActor):
    """The StatefulSet controller (see the module docstring): ``next_due``/``run`` for the host."""

    name = ACTOR
    synced = (("StatefulSet", ACTOR),)

    def __init__(self, api: APIServer) -> None:
        self._omitempty = _status_omitempty()
        #: The pod template of each revision name seen, by the set's uid (the ControllerRevisions' data).
        self._revisions: dict[str, dict[str, Obj]] = {}
        super().__init__(api)

    def _on_event(self, etype: str, kind: Kind, obj: Obj, old: Obj | None) -> None:
        super()._on_event(etype, kind, obj, old)
        if etype == "DELETED" and kind.builtin and kind.group == "apps" and kind.kind == "StatefulSet":
            self._revisions.pop((obj.get("metadata") or {}).get("uid", ""), None)

    def sync(self, kind: str, obj: Obj) -> None:
        """One StatefulSet's sync."""
        self._sync(obj)

    def _owned_pods(self, sset: Obj, selector: Any) -> list[Obj]:
        meta = sset["metadata"]
        out = []
        for p in self.api.list("Pod", meta["namespace"], actor=ACTOR)["items"]:
            pmeta = p["metadata"]
            ref = next((r for r in pmeta.get("ownerReferences") or [] if r.get("controller")), None)
            if ref is not None:
                if ref.get("uid") == meta["uid"]:
                    out.append(p)
                continue
            # ClaimPods with the isMemberOf filter: an orphan of this set's name that the selector matches
            if pmeta.get("deletionTimestamp") or parent_and_ordinal(pmeta["name"])[0] != meta["name"] \
                    or not selector.matches(pmeta.get("labels") or {}):
                continue
            refs = [*list(pmeta.get("ownerReferences") or []), self._owner_ref(sset)]
            out.append(self.api.patch("Pod", pmeta["name"], {"metadata": {
                "ownerReferences": refs, "resourceVersion": pmeta["resourceVersion"]}},
                namespace=meta["namespace"], actor=ACTOR))
        return out

    @staticmethod
    def _owner_ref(sset: Obj) -> Obj:
        return {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sset["metadata"]["name"],
                "uid": sset["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}

    def _sync(self, sset: Obj) -> None:
        meta, spec = sset["metadata"], sset.get("spec") or {}
        try:
            selector = selector_from_object(spec.get("selector"))
        except SelectorError:
            return
        template = spec.get("template") or {}
        collision = int((sset.get("status") or {}).get("collisionCount", 0))
        update = revision_name(meta["name"], template, collision)
        known = self._revisions.setdefault(meta["uid"], {})
        known[update] = copy.deepcopy(template)
        current = str((sset.get("status") or {}).get("currentRevision") or "")
        if current not in known:
            current = update  # (no history yet: the update revision is the current one)
        pods = self._owned_pods(sset, selector)
        now = self.api.clock.now()
        result = plan(sset, pods, current, update, now)
        if result.wake is not None:
            self._next = result.wake if self._next is None else min(self._next, result.wake)
        for action in result.actions:
            if isinstance(action, Create):
                self._create_pod(sset, action.ordinal, action.revision, known[action.revision])
            else:
                with contextlib.suppress(errors.ApiError):  # (already gone)
                    self.api.delete("Pod", action.name, meta["namespace"], actor=ACTOR)
        complete_rolling_update(sset, result.status)
        self._write_status(sset, result.status)

    def _create_pod(self, sset: Obj, ordinal: int, revision: str, template: Obj) -> None:
        """``newStatefulSetPod`` with its claims: the PVCs first (kept if there), then the pod."""
        meta, spec = sset["metadata"], sset.get("spec") or {}
        ns, name = meta["namespace"], f"{meta['name']}-{ordinal}"
        tmeta = template.get("metadata") or {}
        pod_spec = copy.deepcopy(template.get("spec") or {})
        claim_volumes: list[Obj] = []
        match_labels = dict((spec.get("selector") or {}).get("matchLabels") or {})
        for claim in spec.get("volumeClaimTemplates") or []:
            cname = (claim.get("metadata") or {}).get("name", "")
            claim_name = f"{cname}-{meta['name']}-{ordinal}"
            pvc = copy.deepcopy(claim)
            pvc["apiVersion"], pvc["kind"] = "v1", "PersistentVolumeClaim"
            pvc_meta = pvc.setdefault("metadata", {})
            pvc_meta.update(name=claim_name, namespace=ns,
                            labels={**(pvc_meta.get("labels") or {}), **match_labels})
            pvc.pop("status", None)
            try:
                self.api.create(pvc, namespace=ns, actor=ACTOR)
            except errors.ApiError as e:
                if not errors.is_already_exists(e):
                    raise
            claim_volumes.append({"name": cname, "persistentVolumeClaim": {"claimName": claim_name}})
        if claim_volumes:
            taken = {v["name"] for v in claim_volumes}
            pod_spec["volumes"] = claim_volumes + [v for v in pod_spec.get("volumes") or []
                                                   if v.get("name") not in taken]
        pod_spec["hostname"] = name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        pod_meta: Obj = {"name": name,
                         "labels": {**(tmeta.get("labels") or {}), POD_NAME_LABEL: name,
                                    POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision},
                         "ownerReferences": [self._owner_ref(sset)]}
        for key in ("annotations", "finalizers"):
            if tmeta.get(key):
                pod_meta[key] = copy.deepcopy(tmeta[key])
        try:
            self.api.create({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec},
                            namespace=ns, actor=ACTOR)
        except errors.ApiError as e:
            if not errors.is_already_exists(e):
                raise
            self._dirty = True  # (the old one is still going: the next sync)

    def _write_status(self, sset: Obj, status: Obj) -> None:
        old = sset.get("status") or {}
        new = {k: v for k, v in status.items() if not (k in self._omitempty and not v)}
        for k in ("conditions",):  # (not the controller's to set here: kept as they are)
            if k in old:
                new[k] = old[k]
        if new == old:
            return
        patch: Obj = {"status": {**{k: None for k in old if k not in new}, **new}}
        self.api.patch("StatefulSet", sset["metadata"]["name"], patch, namespace=sset["metadata"]["namespace"],
                       api_version="apps/v1", subresource="status", actor=ACTOR)
