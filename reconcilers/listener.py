"""The simulated listener and the Actions service's view of runner pods (bundle ``arc``).

Two actors on the host's clock:

- :class:`ListenerSimulator` (actor ``listener``): for every AutoscalingListener
  that exists and is not being deleted, keeps its EphemeralRunnerSet's
  ``spec.replicas``/``spec.patchID`` current with one merge patch, and assigns
  queued jobs to idle registered runners (ARC_SPEC.md "Listener").
- :class:`RunnerPodWatcher` (part of the service): a job leaves the service when
  its runner's container exits; a runner whose image the service rejects exits
  with code 7 right after it starts (through the kubelet's ``on_started`` hook).

Both read the cluster from the server's stored snapshots (never mutated) and
write through a :class:`fakeapi.host.client.Client` with the Go codec, as actor
``listener``. They learn that something changed from the server's write
listeners, so they cost nothing while nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError, is_conflict, is_not_found

from . import constants as c
from .actions_service import ActionsService, Job
from .common import SHARED_READS
from .resourcebuilder import is_controlled_by, runner_image
from .revision import has_job, is_deleting, runner_id

Obj = dict[str, Any]

WATCHED_KINDS = frozenset({c.KIND_AL, c.KIND_ERS, c.KIND_ER, "Pod"})
#: The kinds the replica count reads (the others are read for job assignment only).
_SCALING_KINDS = frozenset({c.KIND_AL, c.KIND_ERS})


@dataclass
class ListenerState:
    """What one listener incarnation remembers: its patch id sequence."""

    uid: str
    last_count: int | None = None
    sequence: int = 0
    patch_id: int = 0


def clamp_replicas(count: int, min_runners: int | None, max_runners: int | None) -> int:
    """clamp(count, min (unset = 0), max (unset = no limit))."""
    lo = min_runners or 0
    n = max(count, lo)
    if max_runners is not None and n > max_runners:
        n = max(max_runners, lo)
    return n


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class ListenerSimulator:
    """The listener actor: ERS targets and job assignment for every live AutoscalingListener."""

    name = c.ACTOR_LISTENER

    def __init__(self, api: Any, service: ActionsService) -> None:
        self.api = api
        self.service = service
        self.client = Client(api, c.ACTOR_LISTENER, go_codec=True, unsafe_disable_deep_copy=SHARED_READS)
        self.states: dict[str, ListenerState] = {}
        self._dirty = True
        self._seen_version = -1
        api.add_listener(self._on_write)

    def _on_write(self, etype: str, kind: Any, obj: Obj, old: Obj | None) -> None:
        if self._dirty or kind.kind not in WATCHED_KINDS or kind.group not in ("", c.GROUP):
            return
        # runners and pods only matter while a job waits for one (job assignment)
        if kind.kind in _SCALING_KINDS or self.service.any_queued():
            self._dirty = True

    def next_due(self) -> datetime | None:
        """Now when anything it looks at changed since its last run; else None."""
        if self._dirty or self.service.version != self._seen_version:
            now: datetime = self.api.clock.now()
            return now
        return None

    def run(self) -> bool:
        """Bring every live listener's ERS target up to date and assign queued jobs.

        Returns True whenever it had changes to look at: the host suppresses an
        actor that reported idle until the API's resourceVersion or the clock
        moves, and the service's job queue changes without either.
        """
        looked = self._dirty or self.service.version != self._seen_version
        self._dirty = False
        self._seen_version = self.service.version
        did = False
        live: set[str] = set()
        al_kind = self.api.kinds.find(c.KIND_AL, c.API_VERSION)
        if al_kind is None:
            return False
        for listener in self.api.objects(al_kind):
            meta = listener["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            uid = str(meta.get("uid", ""))
            live.add(uid)
            state = self.states.setdefault(uid, ListenerState(uid))
            did = self._serve(listener, state) or did
        for uid in [u for u in self.states if u not in live]:
            del self.states[uid]
        return did or looked

    def _serve(self, listener: Obj, state: ListenerState) -> bool:
        spec = listener.get("spec") or {}
        ns = str(spec.get("autoscalingRunnerSetNamespace") or "")
        ers_name = str(spec.get("ephemeralRunnerSetName") or "")
        sid = _int_or_none(spec.get("runnerScaleSetId")) or 0
        ers = self._stored_set(ns, ers_name)
        if ers is None or is_deleting(ers):
            return False
        did = False
        # Job assignment first: the count below includes assigned jobs, so it is the same either way.
        queued = self.service.queued(sid)
        if queued:
            did = self._assign(ns, ers_name, queued) or did
        count = self.service.job_count(sid)
        if count != state.last_count:
            if count == 0:
                state.patch_id = 0
            else:
                state.sequence += 1
                state.patch_id = state.sequence
            state.last_count = count
        replicas = clamp_replicas(count, _int_or_none(spec.get("minRunners")), _int_or_none(spec.get("maxRunners")))
        es = ers.get("spec") or {}
        if (_int_or_none(es.get("replicas")) or 0) != replicas or (_int_or_none(es.get("patchID")) or 0) != state.patch_id:
            # What the Go listener sends: the merge patch between two typed objects, where
            # replicas is omitempty (0 -> null) and patchID is not (0 is sent).
            body = {"spec": {"replicas": replicas if replicas else None, "patchID": state.patch_id}}
            try:
                self.client.patch(c.KIND_ERS, ers_name, body, namespace=ns, api_version=c.API_VERSION)
                did = True
            except ApiError as e:
                if not is_not_found(e):
                    self._dirty = True  # try again
        return did

    def _stored_set(self, ns: str, name: str) -> Obj | None:
        """The stored EphemeralRunnerSet ``ns/name`` (a shared snapshot), or None.

        Looked up by its key (issue 22: not a walk over every set of the namespace on every run);
        without a namespace, the walk of :meth:`_stored_set_by_walk`.
        """
        ers_kind = self.api.kinds.find(c.KIND_ERS, c.API_VERSION)
        if not ns or ers_kind is None:
            return self._stored_set_by_walk(ns, name)
        entry = self.api.store.table(ers_kind.group, ers_kind.plural).get(ns, name)
        return entry.obj if entry is not None else None

    def _stored_set_by_walk(self, ns: str, name: str) -> Obj | None:
        """:meth:`_stored_set` as a walk over the stored sets of the namespace (the first of that name)."""
        ers_kind = self.api.kinds.find(c.KIND_ERS, c.API_VERSION)
        for obj in self.api.objects(ers_kind, ns):
            if obj["metadata"]["name"] == name:
                return obj
        return None

    def _assign(self, ns: str, ers_name: str, queued: list[Job]) -> bool:
        er_kind = self.api.kinds.find(c.KIND_ER, c.API_VERSION)
        pod_kind = self.api.kinds.find("Pod", "v1")
        running_pods = {
            p["metadata"]["name"]
            for p in self.api.objects(pod_kind, ns)
            if (p.get("status") or {}).get("phase") == "Running" and not is_deleting(p)
        }
        idle = [
            r
            for r in self.api.objects(er_kind, ns)
            if is_controlled_by(r, c.KIND_ERS, ers_name)
            and (r.get("status") or {}).get("phase") == c.ER_PHASE_PENDING
            and runner_id(r) != 0
            and not has_job(r)
            and not is_deleting(r)
            and r["metadata"]["name"] in running_pods
            and self.service.job_of_runner(runner_id(r)) is None
        ]
        idle.sort(key=lambda r: r["metadata"].get("creationTimestamp") or "")
        did = False
        for job, r in zip(queued, idle):
            body = {
                "metadata": {"resourceVersion": r["metadata"]["resourceVersion"]},
                "status": {
                    "phase": c.ER_PHASE_RUNNING,
                    "jobRequestId": job.request_id,
                    "jobId": job.job_id,
                    "jobRepositoryName": job.repository,
                    "jobWorkflowRef": job.workflow_ref,
                    "workflowRunId": job.workflow_run_id,
                    "jobDisplayName": job.display_name,
                },
            }
            try:
                self.client.patch(c.KIND_ER, r["metadata"]["name"], body, namespace=ns,
                                  api_version=c.API_VERSION, subresource="status")
            except ApiError as e:
                if is_conflict(e) or is_not_found(e):
                    self._dirty = True  # look again next run
                    continue
                raise
            self.service.assign(job, runner_id(r))
            did = True
        return did


class RunnerPodWatcher:
    """The service side of runner pods: jobs end when runner containers exit; rejected images exit 7."""

    name = c.ACTOR_ACTIONS

    def __init__(self, api: Any, service: ActionsService, kubelet: Any) -> None:
        self.api = api
        self.service = service
        self.kubelet = kubelet
        api.add_listener(self._on_write)
        if kubelet is not None:
            kubelet.on_started.append(self._on_started)

    def _on_write(self, etype: str, kind: Any, obj: Obj, old: Obj | None) -> None:
        if kind.kind != "Pod" or kind.group != "":
            return
        name = obj["metadata"]["name"]
        if etype == "DELETED":
            self.service.runner_exited(name)
            return
        if _runner_terminated(obj) and (old is None or not _runner_terminated(old)):
            self.service.runner_exited(name)

    def _on_started(self, pod: Obj) -> None:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if c.LABEL_EPHEMERAL_RUNNER not in labels:
            return
        if runner_image(pod) in self.service.rejected_images:
            meta = pod["metadata"]
            self.kubelet.exit(meta.get("namespace", ""), meta["name"], c.RUNNER_CONTAINER, c.EXIT_CODE_OUTDATED)

    def next_due(self) -> datetime | None:
        """Never due: it reacts to writes as they happen."""
        return None

    def run(self) -> bool:
        """Nothing to do on the clock."""
        return False


def _runner_terminated(pod: Obj) -> bool:
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        if cs.get("name") == c.RUNNER_CONTAINER:
            if (cs.get("state") or {}).get("terminated") is not None:
                return True
            return (cs.get("lastState") or {}).get("terminated") is not None
    return False
