"""The EphemeralRunner controller (docs/ARC.md "EphemeralRunner controller").

Registers a runner with the Actions service (JIT config in a Secret), runs its
pod, and turns the runner container's exit into the runner's phase: 0 ->
Succeeded (and the runner goes), 7 -> Outdated (the service rejected the runner
spec), anything else -> a recorded failure and a new pod after a back-off.
On deletion it removes the runner from the service first. Port of ARC's
``ephemeralrunner_controller.go``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakeapi.host.predicates import resource_version_changed
from fakeapi.machinery.errors import ApiError
from fakeapi.server.clock import format_time, parse_time

from . import constants as c
from .actions_service import ActionsError, ActionsService, is_job_still_running
from .actions_service import is_not_found as service_not_found
from .common import (
    SHARED_READS,
    Ctx,
    delete_if_present,
    delete_ignore_not_found,
    get_or_none,
    has_finalizer,
    patch_finalizers,
    patch_status,
)
from .gotypes import status_type
from .predicates import owned_pod, primary_runner
from .resourcebuilder import (
    build_jit_secret,
    build_runner_pod,
    meta,
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


def pod_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


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
            .with_options(unsafe_disable_deep_copy=SHARED_READS)
            .complete(self.reconcile)
        )

    def reconcile(self, ctx: Ctx, req: Any) -> Any:
        """One pass over one EphemeralRunner, step by step as ARC_SPEC.md lists them."""
        from fakeapi.host.builder import Result

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

        # 3. Finalizers.
        missing = [f for f in (c.FINALIZER_ER, c.FINALIZER_ER_REGISTRATION) if not has_finalizer(er, f)]
        if missing:
            patch_finalizers(client, er, add=missing)
            return None

        # 4. Registration: JIT config in a Secret of the same name; runner id and name in status.
        secret = get_or_none(client, "Secret", req.name, req.namespace)
        if secret is None:
            jit = self._jit_config(er)
            if jit is None:
                return Result(requeue=True)
            secret = client.create(build_jit_secret(er, jit.runner_id, jit.runner_name, jit.encoded_jit_config))
        rid, rname = secret_runner_id(secret), secret_runner_name(secret)
        if rid and (runner_id(er) != rid or status(er).get("runnerName") != rname):
            er = self._set_status(client, er, {"runnerId": rid, "runnerName": rname})

        # 5. Failures: give up after too many; back off before the next pod.
        failures = status(er).get("failures") or {}
        if len(failures) > c.MAX_FAILURES:
            delete_ignore_not_found(client, c.KIND_ER, req.name, req.namespace)
            return None

        # 6. No pod -> create one, phase Pending.
        pod = get_or_none(client, "Pod", req.name, req.namespace)
        if pod is None:
            last = last_failure(er)
            if last is not None:
                wait_until = last + c.FAILURE_BACKOFF[min(len(failures), len(c.FAILURE_BACKOFF) - 1)]
                now = ctx.now()
                if now < wait_until:
                    return Result(requeue_after=wait_until - now)
            client.create(build_runner_pod(er, req.name))
            self._set_status(client, er, {"phase": c.ER_PHASE_PENDING})
            return None
        if meta(pod).get("deletionTimestamp"):
            return None

        # 7. Pod state.
        cs = runner_container_status(pod) or {}
        terminated = (cs.get("state") or {}).get("terminated")
        pod_failed = (pod.get("status") or {}).get("phase") == "Failed"
        if terminated is not None or pod_failed:
            code = int((terminated or {}).get("exitCode", 1))
            if terminated is not None and code == 0:
                self._set_status(client, er, {"phase": c.ER_PHASE_SUCCEEDED})
                delete_ignore_not_found(client, c.KIND_ER, req.name, req.namespace)
                return None
            if terminated is not None and code == c.EXIT_CODE_OUTDATED:
                self._set_status(
                    client,
                    er,
                    {"phase": c.ER_PHASE_OUTDATED, "reason": c.ER_REASON_OUTDATED, "message": c.ER_MESSAGE_OUTDATED},
                )
                return None
            if has_job(er):
                delete_ignore_not_found(client, c.KIND_ER, req.name, req.namespace)
                return None
            pod_uid = str(meta(pod).get("uid") or meta(pod).get("name"))
            pst = pod.get("status") or {}
            now_text = format_time(ctx.now())

            failures = {**(status(er).get("failures") or {}), pod_uid: now_text}
            self._set_status(client, er, {"failures": failures, "ready": False, "reason": pst.get("reason", ""),
                                          "message": pst.get("message", "")})
            delete_ignore_not_found(client, "Pod", req.name, req.namespace)
            return None
        if (cs.get("state") or {}).get("running") is not None:
            values: dict[str, Any] = {"ready": pod_ready(pod)}
            if not status(er).get("phase"):
                # Step 6 created the pod but did not get to record the phase (a crash in between).
                values["phase"] = c.ER_PHASE_PENDING
            self._set_status(client, er, values)
        return None

    # ------------------------------------------------------------------ helpers

    def _set_status(self, client: Any, er: Obj, values: dict[str, Any]) -> Obj:
        """Merge-patch the runner's status with ``values`` (nothing is sent when nothing changes)."""
        return patch_status(client, er, values, status_type(c.KIND_ER))

    def _jit_config(self, er: Obj) -> Any:
        """Ask the service for a JIT config. A name already registered for this scale set (a
        previous pass died before storing its secret) is removed first and None returned (requeue)."""
        sid = int(spec(er).get("runnerScaleSetId") or 0)
        name = meta(er)["name"]
        try:
            return self.service.generate_jit_runner_config(sid, name, actor=self.name)
        except ActionsError as e:
            if e.status_code != 409:
                raise
        existing = self.service.get_runner_by_name(name, actor=self.name)
        if existing is None:
            return None
        if existing.scale_set_id != sid:
            raise ActionsError(f"runner {name!r} exists in another scale set", 409, "AlreadyExists")
        self.service.remove_runner(existing.id, actor=self.name)
        return None

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
        from fakeapi.host.builder import Result

        client = ctx.client
        name, ns = meta(er)["name"], meta(er).get("namespace", "")
        if has_finalizer(er, c.FINALIZER_ER_REGISTRATION):
            rid = self._registered_id(ctx, er)
            if rid:
                try:
                    self.service.remove_runner(rid, actor=self.name)
                except ActionsError as e:
                    if is_job_still_running(e):
                        return Result(requeue_after=c.JOB_STILL_RUNNING_REQUEUE)
                    if not service_not_found(e):
                        raise
            er = patch_finalizers(client, er, remove=[c.FINALIZER_ER_REGISTRATION])
        if not has_finalizer(er, c.FINALIZER_ER):
            return None
        delete_if_present(client, "Pod", name, ns)
        delete_if_present(client, "Secret", name, ns)
        try:
            patch_finalizers(client, er, remove=[c.FINALIZER_ER])
        except ApiError as e:
            from fakeapi.machinery.errors import is_not_found

            if not is_not_found(e):
                raise
        return None
