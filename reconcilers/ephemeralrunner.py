"""The EphemeralRunner controller (docs/ARC.md "EphemeralRunner controller").

Registers a runner with the Actions service (JIT config in a Secret), runs its
pod, and turns the runner container's exit into the runner's phase: 0 ->
Succeeded (and the runner goes), 7 -> Outdated (the service rejected the runner
spec), anything else -> a recorded failure and a new pod after a back-off.
On deletion it removes the runner from the service first. Port of ARC's
``ephemeralrunner_controller.go``.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from fakeapi.host.builder import Result
from fakeapi.host.client import Client
from fakeapi.host.predicates import resource_version_changed
from fakeapi.machinery.errors import ApiError
from fakeapi.server.clock import format_time, parse_time

from . import constants as c
from .actions_service import ActionsError, ActionsService, is_job_still_running
from .common import (
    SHARED_READS,
    UNCACHED_KINDS,
    Ctx,
    creation_time,
    delete_if_present,
    delete_ignore_not_found,
    get_or_none,
    has_finalizer,
    patch_finalizers,
    patch_status,
)
from .gotypes import status_type
from .podstate import init_container_failed, latest_ready
from .predicates import owned_pod, primary_runner
from .resourcebuilder import (
    build_jit_secret,
    build_runner_pod,
    encoded_runner_pod_spec,
    meta,
    runner_pod_metadata,
    secret_runner_id,
    secret_runner_name,
    spec,
    status,
)
from .revision import has_job, is_done, runner_id

Obj = dict[str, Any]


def runner_container_status(pod: Obj) -> Obj | None:
    """The status of the pod's ``runner`` container, if reported."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        if cs.get("name") == c.RUNNER_CONTAINER:
            return dict(cs)
    return None


def has_container_hook_configured(er: Obj) -> bool:
    """The ``runner`` container sets ``ACTIONS_RUNNER_CONTAINER_HOOKS`` (upstream
    ``HasContainerHookConfigured``: kubernetes container mode)."""
    for container in (spec(er).get("spec") or {}).get("containers") or ():
        if container.get("name") != c.RUNNER_CONTAINER:
            continue
        return any(env.get("name") == "ACTIONS_RUNNER_CONTAINER_HOOKS" for env in container.get("env") or ())
    return False


def _encoded_runner_pod(client: Any, er: Obj, secret: Obj) -> Obj | None:
    """``client.encode(build_runner_pod(er, secret))`` with the pod spec's encoding made once per
    runner spec (:func:`~reconcilers.resourcebuilder.encoded_runner_pod_spec`): for the host's
    client reading shared decoded forms; None where it does not answer (then the pod is built and
    encoded as it is).

    Go encodes each field of a struct on its own: the pod is its encoding with an empty spec, the
    spec then put in its place.
    """
    if not SHARED_READS or type(client) is not Client or not client.go_codec:
        return None
    kind = client.api.kinds.find("Pod", "v1")
    if kind is None or kind.go_type is None:
        return None
    spec_field = kind.go_type.fields.get("spec")
    if spec_field is None:
        return None
    secret_name = str(meta(secret).get("name", ""))
    encoded_spec = encoded_runner_pod_spec(spec(er).get("spec"), secret_name, spec_field.type)
    if encoded_spec is None:
        return None
    try:
        out = client.encode({"apiVersion": "v1", "kind": "Pod",
                             "metadata": runner_pod_metadata(er, secret, shared=True), "spec": {}}, kind)
    except ValueError:  # (GoDecodeError): the pod is built and encoded as it is, and raises it
        return None
    out["spec"] = encoded_spec
    return out


class RetryableJitError(Exception):
    """The JIT config could not be made this time; requeue (upstream ``retryableError``)."""


class FatalJitError(Exception):
    """The JIT config can never be made for this runner; delete it (upstream ``fatalError``)."""


def last_failure(er: Obj) -> datetime | None:
    """The time of the runner's most recent recorded failure."""
    times = []
    for v in (status(er).get("failures") or {}).values():
        try:
            times.append(parse_time(str(v)))
        except ValueError:
            continue
    return max(times) if times else None


class EphemeralRunnerReconciler:
    """Reconciles EphemeralRunners; ``reconcile(ctx, req)`` is the host's reconcile function."""

    name = c.CONTROLLER_ER

    def __init__(self, service: ActionsService) -> None:
        self.service = service

    def setup(self, host: Any) -> Any:
        """Register with the host: for EphemeralRunner, owns Pod (ARC's predicates)."""
        return (
            host.controller(self.name)
            .for_(c.KIND_ER, api_version=c.API_VERSION, predicates=primary_runner)
            .owns("Pod", api_version="v1", predicates=owned_pod)
            .with_event_filter(resource_version_changed)
            .with_options(unsafe_disable_deep_copy=SHARED_READS, disable_cache_for=UNCACHED_KINDS)
            .complete(self.reconcile)
        )

    def reconcile(self, ctx: Ctx, req: Any) -> Any:
        """One pass over one EphemeralRunner, as upstream's ``Reconcile``."""
        client = ctx.client
        # 1. Not found -> done; being deleted -> unregister, clean up, release.
        er = get_or_none(client, c.KIND_ER, req.name, req.namespace)
        if er is None:
            return None
        if meta(er).get("deletionTimestamp"):
            return self._finalize(ctx, er)

        # 2. Done: its pod and secret go; the set deletes the runner.
        if is_done(er):
            delete_if_present(client, "Pod", req.name, req.namespace)
            delete_if_present(client, "Secret", req.name, req.namespace)
            return None

        # 3. Finalizers (upstream adds them and carries on in the same pass).
        missing = [f for f in (c.FINALIZER_ER, c.FINALIZER_ER_REGISTRATION) if not has_finalizer(er, f)]
        if missing:
            er = patch_finalizers(client, er, add=missing)

        # 4. Registration: JIT config in a Secret of the same name; runner id and name in status.
        secret = get_or_none(client, "Secret", req.name, req.namespace)
        if secret is None:
            try:
                jit = self._jit_config(er)
            except RetryableJitError:
                return Result(requeue=True)
            except FatalJitError:
                # The name belongs to a runner of another scale set: this runner can never register.
                delete_ignore_not_found(client, c.KIND_ER, req.name, req.namespace)
                return None
            secret = client.create(build_jit_secret(er, jit.runner_id, jit.runner_name, jit.encoded_jit_config,
                                                    int(spec(er).get("runnerScaleSetId") or 0)))
        if runner_id(er) == 0:
            rid = secret_runner_id(secret)
            if rid == 0:
                # upstream: "Runner config secret is corrupted: missing runnerId" -> delete it, requeue.
                delete_ignore_not_found(client, "Secret", req.name, req.namespace)
                return Result(requeue=True)
            er = self._set_status(client, er, {"runnerId": rid, "runnerName": secret_runner_name(secret)})

        # 5. Failures: give up after too many; back off before the next pod.
        failures = status(er).get("failures") or {}
        if len(failures) > c.MAX_FAILURES:
            delete_ignore_not_found(client, c.KIND_ER, req.name, req.namespace)
            return None
        last = last_failure(er)
        if last is not None:
            wait_until = last + c.FAILURE_BACKOFF[min(len(failures), len(c.FAILURE_BACKOFF) - 1)]
            now = ctx.now()
            if now < wait_until:
                return Result(requeue_after=wait_until - now)

        # 6. No pod -> create one, phase Pending (upstream createPod and its error handling).
        pod = get_or_none(client, "Pod", req.name, req.namespace)
        if pod is None:
            return self._create_pod(ctx, er, secret)
        if meta(pod).get("deletionTimestamp"):
            return None

        # 7. Pod state (upstream's switch over the pod phase and the runner container's state).
        cs = runner_container_status(pod)
        state = (cs or {}).get("state") or {}
        terminated = state.get("terminated")
        if (pod.get("status") or {}).get("phase") == "Failed":
            if terminated is None:
                # The runner container never got to start: a new pod.
                self._delete_runner_or_pod(ctx, er, pod)
                return None
            code = int(terminated.get("exitCode", 0))
            if code == 0:
                # A sidecar failed the pod; the runner's own exit says the job succeeded.
                self._succeeded(client, er)
                return None
            if code == c.EXIT_CODE_OUTDATED:
                self._mark_as_outdated(client, er)
                return None
            self._delete_runner_or_pod(ctx, er, pod)
            return None
        if init_container_failed(pod):
            self._delete_runner_or_pod(ctx, er, pod)
            return None
        if cs is None:
            return None  # starting: no container state yet
        if terminated is None:
            self._update_run_status_from_pod(client, er, pod)
            return None
        code = int(terminated.get("exitCode", 0))
        if code == c.EXIT_CODE_OUTDATED:
            self._mark_as_outdated(client, er)
        elif code != 0:
            self._delete_runner_or_pod(ctx, er, pod)
        else:
            self._succeeded(client, er)
        return None

    # ------------------------------------------------------------------ steps

    def _create_pod(self, ctx: Ctx, er: Obj, secret: Obj) -> Any:
        """Create the runner pod (upstream ``createPod``) and record phase Pending.

        AlreadyExists -> wait for the pod's event (requeue after 5s); Invalid ->
        phase Failed, reason ``InvalidPod``, runner removed from the service;
        Forbidden for an exceeded resource quota -> retry every 30s until the
        runner is 10 minutes old, then delete the runner (its set makes a new
        one); any other Forbidden -> as Invalid.
        """
        client = ctx.client
        m = meta(er)
        encoded = _encoded_runner_pod(client, er, secret)
        try:
            if encoded is not None:
                client.create(encoded, encoded=True)
            else:
                client.create(build_runner_pod(er, secret, shared=SHARED_READS))
        except ApiError as e:
            if e.reason == "AlreadyExists":
                return Result(requeue_after=c.POD_EXISTS_REQUEUE)
            if e.reason == "Forbidden" and "exceeded quota:" in (e.message or ""):
                created = creation_time(er)
                if created is not None and created + c.QUOTA_GIVE_UP_AGE < ctx.now():
                    delete_ignore_not_found(client, c.KIND_ER, m["name"], m.get("namespace", ""))
                    return None
                return Result(requeue_after=c.QUOTA_REQUEUE)
            if e.reason in ("Invalid", "Forbidden"):
                self._mark_as_failed(client, er, f"Failed to create the pod: {e.message}", c.ER_REASON_INVALID_POD)
                return None
            raise
        self._set_status(client, er, {"phase": c.ER_PHASE_PENDING}, read_answer=False)
        return None

    def _succeeded(self, client: Any, er: Obj) -> None:
        """The runner finished its job: phase Succeeded, then the runner is deleted (upstream deletes it at once; the port records the phase first)."""
        m = meta(er)
        self._set_status(client, er, {"phase": c.ER_PHASE_SUCCEEDED}, read_answer=False)
        delete_ignore_not_found(client, c.KIND_ER, m["name"], m.get("namespace", ""))

    def _remove_from_service(self, er: Obj) -> None:
        """upstream ``deleteRunnerFromService``: every error of the service's RemoveRunner is returned,
        NotFound included (upstream wraps and returns it; the reconcile is retried with back-off)."""
        self.service.remove_runner(runner_id(er), actor=self.name)

    def _mark_as_failed(self, client: Any, er: Obj, message: str, reason: str) -> None:
        """upstream ``markAsFailed``: phase Failed with the reason and message, then off the service."""
        er = self._set_status(client, er, {"phase": c.ER_PHASE_FAILED, "reason": reason, "message": message})
        self._remove_from_service(er)

    def _mark_as_outdated(self, client: Any, er: Obj) -> None:
        """upstream ``markAsOutdated``: phase Outdated (reason ``Outdated``), then off the service."""
        er = self._set_status(client, er, {"phase": c.ER_PHASE_OUTDATED, "reason": c.ER_REASON_OUTDATED,
                                           "message": c.ER_MESSAGE_OUTDATED})
        self._remove_from_service(er)

    def _delete_runner_or_pod(self, ctx: Ctx, er: Obj, pod: Obj) -> None:
        """upstream ``deleteEphemeralRunnerOrPod``: a runner with a job goes (and off the service, errors
        ignored); otherwise its pod is deleted and the failure recorded (``deletePodAsFailed``)."""
        client = ctx.client
        m = meta(er)
        if has_job(er):
            delete_ignore_not_found(client, c.KIND_ER, m["name"], m.get("namespace", ""))
            with contextlib.suppress(ActionsError):  # upstream logs it and carries on
                self._remove_from_service(er)
            return
        if not meta(pod).get("deletionTimestamp"):
            delete_ignore_not_found(client, "Pod", m["name"], m.get("namespace", ""))
        pst = pod.get("status") or {}
        pod_uid = str(meta(pod).get("uid") or meta(pod).get("name"))
        failures = {**(status(er).get("failures") or {}), pod_uid: format_time(ctx.now())}
        self._set_status(client, er, {"failures": failures, "ready": False, "reason": pst.get("reason", ""),
                                      "message": pst.get("message", "")}, read_answer=False)

    def _update_run_status_from_pod(self, client: Any, er: Obj, pod: Obj) -> None:
        """upstream ``updateRunStatusFromPod``: ``ready`` from the pod's latest Ready condition (by
        lastTransitionTime), for any runner container state that is not terminated.

        Deliberate divergence (from upstream PR #4646): upstream here also
        copies the pod's phase (Pending/Running) onto the runner; in this port
        the listener sets a runner Running when it assigns it a job, so the
        pod's phase only fills in Pending where the phase was never written
        (step 6 created the pod but a crash came before the phase).
        """
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return  # upstream: only the non-terminal statuses are taken from the pod here
        values: dict[str, Any] = {"ready": latest_ready(pod)}
        if not status(er).get("phase"):
            values["phase"] = c.ER_PHASE_PENDING
        self._set_status(client, er, values, read_answer=False)

    # ------------------------------------------------------------------ helpers

    def _set_status(self, client: Any, er: Obj, values: dict[str, Any], *, read_answer: bool = True) -> Obj:
        """Merge-patch the runner's status with ``values`` (nothing is sent when nothing changes;
        ``read_answer=False``: the caller drops the answer, which is then not decoded)."""
        return patch_status(client, er, values, status_type(c.KIND_ER), read_answer=read_answer)

    def _jit_config(self, er: Obj) -> Any:
        """Ask the service for a JIT config (upstream ``createRunnerJitConfig``).

        A name the service already has: registered for this scale set (a previous
        pass died before storing its secret) -> removed, :class:`RetryableJitError`;
        gone by now -> :class:`RetryableJitError`; registered for another scale
        set -> :class:`FatalJitError`.
        """
        sid = int(spec(er).get("runnerScaleSetId") or 0)
        name = meta(er)["name"]
        try:
            return self.service.generate_jit_runner_config(sid, name, actor=self.name)
        except ActionsError as e:
            if e.status_code != 409:
                raise
        existing = self.service.get_runner_by_name(name, actor=self.name)
        if existing is None:
            raise RetryableJitError(f"runner {name!r} existed, retry configuration")
        if existing.scale_set_id != sid:
            raise FatalJitError(f"runner with the name {name!r} belongs to runner scale set {existing.scale_set_id}")
        self.service.remove_runner(existing.id, actor=self.name)
        raise RetryableJitError(f"runner {name!r} existed in this scale set and was removed, retry configuration")

    def _registered_id(self, ctx: Ctx, er: Obj) -> int:
        """The runner id: from status, else from the JIT secret, else looked up by name."""
        rid = runner_id(er)
        if rid:
            return rid
        secret = get_or_none(ctx.client, "Secret", meta(er)["name"], meta(er).get("namespace", ""))
        if secret is not None and secret_runner_id(secret):
            return secret_runner_id(secret)
        found = self.service.get_runner_by_name(meta(er)["name"], actor=self.name)
        return found.id if found is not None else 0

    def _finalize(self, ctx: Ctx, er: Obj) -> Any:
        """A runner being deleted (upstream's deletion branch): off the service (registration finalizer),
        then its pod and secret, then the container-hook pods and secrets (``runner-pod=<name>``) when
        the runner container configures container hooks, then the main finalizer.

        Off the service as upstream ``cleanupRunnerFromService``: ``JobStillRunning`` requeues after
        30s; any other error of RemoveRunner, NotFound included, is raised and the registration
        finalizer kept (the host retries with back-off)."""
        client = ctx.client
        name, ns = meta(er)["name"], meta(er).get("namespace", "")
        if not has_finalizer(er, c.FINALIZER_ER):
            return None
        if has_finalizer(er, c.FINALIZER_ER_REGISTRATION):
            rid = self._registered_id(ctx, er)
            if rid:
                try:
                    self.service.remove_runner(rid, actor=self.name)
                except ActionsError as e:
                    if is_job_still_running(e):
                        return Result(requeue_after=c.JOB_STILL_RUNNING_REQUEUE)
                    raise  # NotFound too: upstream cleanupRunnerFromService returns it
            # What follows reads only the answer's name, namespace, kind, finalizers and the runner
            # container's env names, which decoding leaves as stored: the stored answer, undecoded
            # (issue 22: a decode nobody else reads before the next write replaces it).
            er = patch_finalizers(client, er, remove=[c.FINALIZER_ER_REGISTRATION], read_answer=False)
        delete_if_present(client, "Pod", name, ns)
        delete_if_present(client, "Secret", name, ns)
        if has_container_hook_configured(er):
            self._cleanup_container_hook_resources(client, er)
        try:
            patch_finalizers(client, er, remove=[c.FINALIZER_ER], read_answer=False)
        except ApiError as e:
            from fakeapi.machinery.errors import is_not_found

            if not is_not_found(e):
                raise
        return None

    def _cleanup_container_hook_resources(self, client: Any, er: Obj) -> None:
        """upstream ``cleanupContainerHooksResources``: delete the pods and secrets labelled
        ``runner-pod=<runner name>`` (kubernetes container mode's job pods); every delete is tried."""
        name, ns = meta(er)["name"], meta(er).get("namespace", "")
        errs: list[ApiError] = []
        for kind in ("Pod", "Secret"):
            for obj in client.list(kind, ns, labels={c.LABEL_RUNNER_POD: name}):
                if meta(obj).get("deletionTimestamp"):
                    continue
                try:
                    delete_ignore_not_found(client, kind, meta(obj)["name"], ns)
                except ApiError as e:
                    errs.append(e)
        if errs:
            raise errs[0]
