"""A simulated kubelet: an actor on the virtual clock that runs pods through their lifecycle.

What it models (docs/HOST.md "The kubelet"):

* **Start.** ``start_delay`` after it first sees a new pod (its creation, on the
  virtual clock), it writes the pod's status as a kubelet would once every
  container runs: phase ``Running``, ``startTime``, one ``containerStatuses``
  entry per container (``state.running.startedAt``, ``ready``, ``started``,
  ``image``, ``restartCount: 0``) and the conditions ``PodScheduled``,
  ``Initialized``, ``ContainersReady`` and ``Ready`` set to ``True``. One
  strategic merge patch of the status subresource, as actor ``kubelet``.
  Then it calls every ``on_started`` hook with the pod (the stored snapshot:
  read it, never mutate it).
* **Exit.** :meth:`Kubelet.exit` ends one container with an exit code
  (``state.terminated`` with ``exitCode``, reason ``Completed`` or ``Error``,
  ``startedAt``, ``finishedAt``) and sets the phase by the kubelet's
  ``getPhase`` rules: with ``restartPolicy: Never`` the pod is ``Succeeded``
  once every container exited 0 and ``Failed`` once all exited and one did
  not exit 0 (``Running`` while others still run). With ``Always``, or
  ``OnFailure`` and a non-zero code, the container restarts at once: its
  ``lastState.terminated`` records the exit, ``restartCount`` goes up, it runs
  again and the pod stays ``Running`` (no CrashLoopBackOff delay is modelled).
* **Delete.** A pod with a ``deletionTimestamp`` and no finalizers left is
  deleted with grace period 0 and a UID precondition, as the kubelet's status
  manager confirms a graceful deletion (the server keeps pods that have a
  ``spec.nodeName`` until then). Containers are taken to stop at once: the
  grace period is not waited out. With :attr:`Kubelet.stop_before_delete` (a served
  cluster sets it) the stop is written first, as a kubelet reports it: every
  container terminated (exit 0, ``Completed``), ``Ready`` and ``ContainersReady``
  false, phase ``Succeeded`` (a pod being deleted reaches a terminal phase); by
  default no terminated state is written.

* **Schedule.** A pod without ``spec.nodeName`` is bound to :attr:`Kubelet.node_name`
  through the ``pods/binding`` subresource (actor ``default-scheduler``) as soon as
  the kubelet sees it, so deletions of started pods are graceful as on a real node.

* **Logs.** :meth:`Kubelet.write_log` records a line a container wrote (a simulator's
  runner writes one per job); :meth:`Kubelet.read_log` gives them back with their times
  (what ``pods/log`` serves). A pod's logs go when the pod is deleted.

Not modelled: init containers, probes, images, pod IPs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from fakeapi.machinery import errors
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.server.clock import Clock
from fakeapi.server.pipeline import patches_module
from fakeapi.server.watch import Event

Obj = dict[str, Any]
Key = tuple[str, str]

TERMINAL_PHASES = ("Succeeded", "Failed")
READY_CONDITIONS = ("PodScheduled", "Initialized", "ContainersReady", "Ready")


def pod_phase(statuses: list[Obj], restart_policy: str) -> str:
    """The phase the kubelet's ``getPhase`` reports for these container statuses (no init containers)."""
    running = stopped = succeeded = waiting = 0
    for st in statuses:
        state = st.get("state") or {}
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            if int((state["terminated"] or {}).get("exitCode", 0)) == 0:
                succeeded += 1
        elif "waiting" in state and ((st.get("lastState") or {}).get("terminated")):
            stopped += 1
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if restart_policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if restart_policy == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def _set_condition(conditions: list[Obj], ctype: str, status: str, ts: str,
                   reason: str = "", message: str = "") -> None:
    """Set one condition, keeping lastTransitionTime when its status does not change."""
    for c in conditions:
        if c.get("type") == ctype:
            if c.get("status") != status:
                c["lastTransitionTime"] = ts
            c["status"] = status
            for k, v in (("reason", reason), ("message", message)):
                if v:
                    c[k] = v
                else:
                    c.pop(k, None)
            return
    cond: Obj = {"type": ctype, "status": status, "lastTransitionTime": ts}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    conditions.append(cond)


class Kubelet:
    """The kubelet actor: ``next_due``/``run`` for the host, ``exit`` for tests and simulators."""

    name = "kubelet"

    def __init__(self, api: Any, *, start_delay: timedelta | None = timedelta(0)) -> None:
        self.api = api
        self.clock: Clock = api.clock
        #: Time from a pod's creation to Running; None: pods are never started (they are still bound and
        #: their deletions confirmed), like a test API server with no kubelet running containers.
        self.start_delay: timedelta | None = start_delay
        #: Called with the pod (the stored snapshot the status write made: read-only) right after it is Running.
        self.on_started: list[Callable[[Obj], None]] = []
        #: (namespace, name) of every pod this kubelet started, in order.
        self.pods_started: list[Key] = []
        self._pods: dict[Key, Obj] = {}
        #: Pods waiting to start: key -> (first seen, uid), in the order seen. Due at first seen + start_delay.
        self._seen: dict[Key, tuple[datetime, str]] = {}
        self._started: set[str] = set()
        self._deleting: set[Key] = set()
        #: Pods not bound to a node yet.
        self._unbound: set[Key] = set()
        #: The node every pod is bound to.
        self.node_name = "fakeapi-node"
        #: Write the containers' stop (terminated, not ready) before confirming a deletion.
        self.stop_before_delete = False
        #: What each container wrote: (namespace, pod, container) -> [(time, line)].
        self.logs: dict[tuple[str, str, str], list[tuple[datetime, str]]] = {}
        self._watch: Any = None
        self._rv = -1
        self._sync()  # list and watch pods from the start, as a node does when it registers

    # -- watching -------------------------------------------------------------------------

    def _sync(self) -> None:
        """Read pod events (cheap when nothing was written since last time)."""
        api = self.api
        if api.resource_version == self._rv and self._watch is not None:
            return
        if self._watch is None:
            listing = api.list("Pod", actor=self.name)
            for pod in listing.get("items") or []:
                self._saw(pod)
            self._watch = api.watch("Pod", resource_version=listing["metadata"]["resourceVersion"],
                                    actor=self.name)
        self._rv = api.resource_version
        w = self._watch
        events = w.poll_log()  # (the log's own entries: the watch filters nothing)
        if events is None:
            events = [Event(0, e.type, "", e.object, None) for e in w.poll(copy=False)]
        for ev in events:
            etype = ev.type
            if etype == "ADDED" or etype == "MODIFIED":
                self._saw(ev.obj)
            elif etype == "DELETED":
                meta = ev.obj["metadata"]
                key = (meta.get("namespace", ""), meta["name"])
                self._pods.pop(key, None)
                self._seen.pop(key, None)
                self._deleting.discard(key)
                self._unbound.discard(key)
                self._started.discard(meta.get("uid", ""))
                for log_key in [k for k in self.logs if k[:2] == key]:
                    del self.logs[log_key]
            elif etype == "ERROR":
                self._watch = None  # list again next time
                self._rv = -1

    def _saw(self, pod: Obj) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        uid = meta.get("uid", "")
        self._pods[key] = pod
        if not (pod.get("spec") or {}).get("nodeName") and not meta.get("deletionTimestamp"):
            self._unbound.add(key)
        else:
            self._unbound.discard(key)
        if meta.get("deletionTimestamp"):
            self._seen.pop(key, None)
            if meta.get("finalizers"):
                self._deleting.discard(key)
            else:
                self._deleting.add(key)
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Running", *TERMINAL_PHASES) or uid in self._started:
            self._seen.pop(key, None)
            return
        seen = self._seen.get(key)
        if seen is None or seen[1] != uid:
            # Re-inserted at the end: the dict stays ordered by the time a pod was first seen.
            self._seen.pop(key, None)
            self._seen[key] = (self.clock.now(), uid)

    # -- the actor protocol ---------------------------------------------------------------

    def next_due(self) -> datetime | None:
        """Now when a pod is to be deleted; else when the next pod is to start; None when idle."""
        self._sync()
        if self._deleting or self._unbound:
            return self.clock.now()
        if not self._seen or self.start_delay is None:
            return None
        first_seen, _ = next(iter(self._seen.values()))
        return first_seen + self.start_delay

    def run(self) -> bool:
        """Delete the pods whose deletion is confirmed, start the pods that are due; True if it did anything."""
        self._sync()
        did = False
        for key in sorted(self._unbound):
            self._unbound.discard(key)
            try:
                self.api.bind_pod(key[1], key[0], self.node_name)
                did = True
            except errors.ApiError:
                pass
        for key in sorted(self._deleting):
            self._deleting.discard(key)
            did = self._delete(key) or did
        if self.start_delay is None:
            return did
        now = self.clock.now()
        due = []
        for k, (t, _) in self._seen.items():
            if t + self.start_delay > now:
                break
            due.append(k)
        due.sort()
        for key in due:
            entry = self._seen.pop(key, None)
            if entry is not None:
                did = self._start(key, entry[1]) or did
        return did

    # -- actions --------------------------------------------------------------------------

    def _delete(self, key: Key) -> bool:
        pod = self._pods.get(key)
        if pod is None:
            return False
        status = pod.get("status") or {}
        if self.stop_before_delete and status.get("containerStatuses") and status.get("phase") not in TERMINAL_PHASES:
            ts = self.clock.timestamp()
            stopped = fast_copy(status)
            for st in stopped["containerStatuses"]:
                started = ((st.get("state") or {}).get("running") or {}).get("startedAt") or ts
                st["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started,
                                              "finishedAt": ts}}
                st["ready"] = False
                st["started"] = False
            conditions = list(stopped.get("conditions") or [])
            for ctype in READY_CONDITIONS[2:]:
                _set_condition(conditions, ctype, "False", ts, "PodCompleted")
            stopped["conditions"] = conditions
            stopped["phase"] = "Succeeded"
            try:
                pod = self._write_status(key, status, stopped)
            except errors.ApiError:
                return False
        try:
            self.api.delete("Pod", key[1], key[0], grace_period_seconds=0,
                            preconditions={"uid": pod["metadata"].get("uid")}, actor=self.name, shared=True)
        except errors.ApiError:
            return False
        return True

    def _start(self, key: Key, uid: str) -> bool:
        pod = self._pods.get(key)
        if pod is None or pod["metadata"].get("uid") != uid:
            return False
        ts = self.clock.timestamp()
        status = fast_copy(pod.get("status") or {})
        status["phase"] = "Running"
        status.setdefault("startTime", ts)
        status["containerStatuses"] = [
            self._running_status(c, ts) for c in (pod.get("spec") or {}).get("containers") or []
        ]
        conditions = list(status.get("conditions") or [])
        for ctype in READY_CONDITIONS:
            _set_condition(conditions, ctype, "True", ts)
        status["conditions"] = conditions
        try:
            started = self._write_status(key, pod.get("status") or {}, status, shared=True)
        except errors.ApiError:
            return False
        self._started.add(uid)
        self.pods_started.append(key)
        for hook in list(self.on_started):
            hook(started)
        return True

    @staticmethod
    def _running_status(container: Obj, ts: str, restart_count: int = 0) -> Obj:
        return {
            "name": container.get("name", ""),
            "image": container.get("image", ""),
            "imageID": "",
            "ready": True,
            "started": True,
            "restartCount": restart_count,
            "state": {"running": {"startedAt": ts}},
        }

    def _write_status(self, key: Key, old: Obj, status: Obj, *, shared: bool = False) -> Obj:
        """Patch the pod's status from ``old`` (as the kubelet last saw it) to ``status``.

        As the kubelet's status manager does, the body is the two-way strategic merge diff
        (``CreateTwoWayMergePatch``): changed fields, conditions by type with their order.
        ``shared``: answer with the stored pod itself (read-only), not a copy.
        """
        schema = self.api.resolve_kind("Pod", "v1").schema
        body = patches_module().create_strategic_merge_patch({"status": old}, {"status": status}, schema)
        out: Obj = self.api.patch("Pod", key[1], body, namespace=key[0], patch_type="strategic",
                                  subresource="status", actor=self.name, shared=shared, go_encoded=True)
        return out

    def write_log(self, namespace: str, name: str, container: str, text: str) -> None:
        """Record that ``container`` of the pod wrote ``text`` (one entry per line), at the clock's time."""
        now = self.clock.now()
        entries = self.logs.setdefault((namespace, name, container), [])
        entries.extend((now, line) for line in text.splitlines())

    def read_log(self, namespace: str, name: str, container: str) -> list[tuple[datetime, str]]:
        """The lines ``container`` of the pod wrote, with their times, oldest first."""
        return list(self.logs.get((namespace, name, container), ()))

    def exit(self, namespace: str, name: str, container: str, code: int) -> Obj:
        """End ``container`` of the pod with exit ``code``; returns the pod after the status write.

        A pod not started yet is started in the same write. Raises ValueError for an unknown pod or
        container, or a container that is not running.
        """
        self._sync()
        key = (namespace, name)
        pod = self._pods.get(key)
        if pod is None:
            raise ValueError(f"kubelet: no pod {namespace}/{name}")
        spec = pod.get("spec") or {}
        containers = spec.get("containers") or []
        if container not in [c.get("name") for c in containers]:
            raise ValueError(f"kubelet: pod {namespace}/{name} has no container {container!r}")
        policy = spec.get("restartPolicy") or "Always"
        ts = self.clock.timestamp()
        status = fast_copy(pod.get("status") or {})
        statuses = status.get("containerStatuses")
        if not statuses or status.get("phase") not in ("Running", *TERMINAL_PHASES):
            statuses = [self._running_status(c, ts) for c in containers]
            status.setdefault("startTime", ts)
        by_name = {st.get("name"): st for st in statuses}
        st = by_name.get(container)
        if st is None:
            st = self._running_status(next(c for c in containers if c.get("name") == container), ts)
            statuses.append(st)
        running = (st.get("state") or {}).get("running")
        if running is None:
            raise ValueError(f"kubelet: container {container!r} of pod {namespace}/{name} is not running")
        terminated = {
            "exitCode": int(code),
            "reason": "Completed" if int(code) == 0 else "Error",
            "startedAt": running.get("startedAt") or ts,
            "finishedAt": ts,
        }
        if policy == "Always" or (policy == "OnFailure" and int(code) != 0):
            st["state"] = {"running": {"startedAt": ts}}
            st["lastState"] = {"terminated": terminated}
            st["restartCount"] = int(st.get("restartCount") or 0) + 1
            st["ready"] = True
            st["started"] = True
        else:
            st["state"] = {"terminated": terminated}
            st["ready"] = False
            st["started"] = False
        status["containerStatuses"] = statuses
        phase = pod_phase(statuses, policy)
        if status.get("phase") in TERMINAL_PHASES:
            phase = status["phase"]  # a terminal phase never changes
        status["phase"] = phase
        conditions = list(status.get("conditions") or [])
        unready = [s.get("name", "") for s in statuses if not s.get("ready")]
        for ctype in READY_CONDITIONS[:2]:
            _set_condition(conditions, ctype, "True", ts)
        if not unready:
            for ctype in READY_CONDITIONS[2:]:
                _set_condition(conditions, ctype, "True", ts)
        elif phase in TERMINAL_PHASES:
            for ctype in READY_CONDITIONS[2:]:
                _set_condition(conditions, ctype, "False", ts, "PodCompleted")
        else:
            message = f"containers with unready status: [{' '.join(unready)}]"
            for ctype in READY_CONDITIONS[2:]:
                _set_condition(conditions, ctype, "False", ts, "ContainersNotReady", message)
        status["conditions"] = conditions
        self.api.trace.note(self.clock.now(), self.name,
                            f"container {container} of pod {namespace}/{name} exited with code {code}")
        out = self._write_status(key, pod.get("status") or {}, status)
        self._seen.pop(key, None)
        self._started.add(pod["metadata"].get("uid", ""))
        return out
