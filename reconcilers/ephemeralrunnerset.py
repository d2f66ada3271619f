"""The EphemeralRunnerSet controller (docs/ARC.md "EphemeralRunnerSet controller").

Keeps a set's runners at ``spec.replicas``, rebuilds idle and pending runners
when ``spec.actionableRevision`` moves past ``status.appliedActionableRevision``
(and only then advances the applied revision), and holds the set in the
Outdated phase while a runner built from the current spec reports that the
Actions service rejected it. Port of ARC's ``ephemeralrunnerset_controller.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fakeapi.host.predicates import resource_version_changed
from fakeapi.machinery.errors import ApiError, is_conflict
from fakeapi.machinery.jsonutil import fast_copy

from . import constants as c
from .actions_service import ActionsError, ActionsService, is_job_still_running
from .common import (
    SHARED_READS,
    UNCACHED_KINDS,
    Ctx,
    delete_ignore_not_found,
    get_or_none,
    has_finalizer,
    list_runners,
    oldest_first,
    patch_finalizers,
    patch_status,
)
from .gotypes import status_type
from .predicates import owned_runner
from .resourcebuilder import build_ephemeral_runner, meta, spec, status
from .revision import (
    Classification,
    applied_revision,
    classify,
    has_job,
    runner_id,
    spec_revision,
)

Obj = dict[str, Any]

#: ``retry.DefaultBackoff.Steps``: how many times the applied-revision patch is tried on conflict.
APPLIED_PATCH_ATTEMPTS = 4


@dataclass
class CleanupResult:
    """What a cleanup pass found: how many runners were there."""

    remaining: int = 0


def _cleanup_marker(ers: Obj) -> int:
    v = status(ers).get("finishedRunnerCleanupPatchID")
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _with_marker(ers: Obj, patch_id: int) -> Obj:
    """The set as this reconcile now knows it: the cleanup marker it just recorded (upstream sets
    ``Status.FinishedRunnerCleanupPatchID`` in memory before ``updateStatus``)."""
    out = dict(ers)
    out["status"] = {**status(ers), "finishedRunnerCleanupPatchID": patch_id}
    return out


class EphemeralRunnerSetReconciler:
    """Reconciles EphemeralRunnerSets; ``reconcile(ctx, req)`` is the host's reconcile function."""

    name = c.CONTROLLER_ERS

    def __init__(self, service: ActionsService) -> None:
        self.service = service

    def setup(self, host: Any) -> Any:
        """Register with the host: for EphemeralRunnerSet, owns EphemeralRunner (ARC's predicates)."""
        return (
            host.controller(self.name)
            .for_(c.KIND_ERS, api_version=c.API_VERSION)
            .owns(c.KIND_ER, api_version=c.API_VERSION, predicates=owned_runner)
            .with_event_filter(resource_version_changed)
            .with_options(unsafe_disable_deep_copy=SHARED_READS, disable_cache_for=UNCACHED_KINDS)
            .complete(self.reconcile)
        )

    # ------------------------------------------------------------------ reconcile

    def reconcile(self, ctx: Ctx, req: Any) -> Any:
        """One pass over one EphemeralRunnerSet, step by step as ARC_SPEC.md lists them."""

        client = ctx.client
        # 1. Not found -> done.
        ers = get_or_none(client, c.KIND_ERS, req.name, req.namespace)
        if ers is None:
            return None

        # 2. Being deleted: clean up runners; remove the finalizer when none are left.
        if meta(ers).get("deletionTimestamp"):
            if not has_finalizer(ers, c.FINALIZER_ERS):
                return None
            runners = list_runners(client, req.namespace, req.name)
            if not runners:
                patch_finalizers(client, ers, remove=[c.FINALIZER_ERS])
                return None
            self.clean_up(ctx, ers, runners)
            return None

        # 3. No finalizer -> add it.
        if not has_finalizer(ers, c.FINALIZER_ERS):
            patch_finalizers(client, ers, add=[c.FINALIZER_ERS])
            return None

        applied = applied_revision(ers)
        target = spec_revision(ers)
        # 4. Apply a new revision: clean up first, advance the applied marker only after it succeeded.
        if target > applied:
            self.clean_up(ctx, ers, list_runners(client, req.namespace, req.name))
            self.patch_applied_revision(ctx, req.namespace, req.name, target)
            return None

        # 5. Outdated: keep cleaning up, never scale, never recompute the phase.
        if status(ers).get("phase") == c.ERS_PHASE_OUTDATED:
            self.clean_up(ctx, ers, list_runners(client, req.namespace, req.name))
            return None

        # 6. Classify against the applied revision.
        runners = list_runners(client, req.namespace, req.name)
        cls = classify(runners, applied)

        # 7. Stale outdated runners: their verdict is about a replaced spec; delete and replace them.
        if cls.stale_outdated:
            self._delete_all(client, cls.stale_outdated)
            self.update_status(ctx, ers, cls)
            return None

        # 8. Scale, when the listener's latest target has not been acted on yet (upstream after #4642).
        #    ``outdated`` runners are not in scale_total: this pass creates their replacements, and
        #    the Outdated phase it records parks the set (step 5 then cleans the idle ones up).
        s = spec(ers)
        patch_id = int(s.get("patchID") or 0)
        replicas = int(s.get("replicas") or 0)
        total = cls.scale_total()
        if patch_id == 0 or patch_id != cls.latest_patch_id:
            if cls.finished:
                # Deleting finished runners changes the count the listener's target was computed
                # against: record the patch id the cleanup belongs to, and leave scaling to the next pass.
                self.patch_finished_cleanup_patch_id(ctx, req.namespace, req.name, patch_id)
                self._delete_all(client, cls.finished)
                self.update_status(ctx, _with_marker(ers, patch_id), cls)
                return None
            # Runners being deleted still exist and still hold their registration.
            scale_up_total = total + len(cls.deleting)
            if scale_up_total < replicas:
                if self.scale_up_serviced_by_finished_cleanup(ctx, req.namespace, req.name, patch_id):
                    self.update_status(ctx, _with_marker(ers, patch_id), cls)
                    return None
                self._create_runners(client, ers, replicas - scale_up_total)
            elif patch_id > 0 and total >= replicas:
                pass  # a runner that has not reported Succeeded yet: the next patch cleans it up
            elif patch_id == 0 and total > replicas:
                self._delete_idle_runners(ctx, cls, total - replicas)

        # 9. Status.
        self.update_status(ctx, ers, cls)
        return None

    # ------------------------------------------------------------------ steps

    def _delete_all(self, client: Any, runners: list[Obj]) -> None:
        """Delete runners (NotFound ignored); every delete is tried, the first error is raised."""
        errs: list[ApiError] = []
        for r in runners:
            try:
                delete_ignore_not_found(client, c.KIND_ER, meta(r)["name"], meta(r).get("namespace", ""))
            except ApiError as e:
                errs.append(e)
        if errs:
            raise errs[0]

    def _create_runners(self, client: Any, ers: Obj, count: int) -> None:
        """Create ``count`` runners stamped with the set's current revision and patch id.

        Every runner of the batch has the same body (``generateName``): it is built and encoded
        once; each create but the last sends a copy of the encoded body, made from its serialised
        form (one orjson round trip: the same document as a deep copy, made in C), and the last
        sends the encoded body itself (the encoding is this call's own, as :meth:`Client.create`'s).
        """
        if count <= 0:
            return
        errs: list[ApiError] = []
        encoded = client.encode(build_ephemeral_runner(ers))
        for i in range(count):
            try:
                client.create(encoded if i == count - 1 else fast_copy(encoded), encoded=True)
            except ApiError as e:
                errs.append(e)
        if errs:
            raise errs[0]

    def _delete_idle_runners(self, ctx: Ctx, cls: Classification, count: int) -> None:
        """Scale down (upstream ``deleteIdleEphemeralRunners``): remove ``count`` idle registered runners,
        pending oldest first, then running; a runner whose removal fails is kept and the next one tried,
        and the first error is raised (NotFound from the service included)."""
        if count <= 0:
            return
        candidates = oldest_first(cls.pending) + oldest_first(cls.running)
        errs: list[Exception] = []
        deleted = 0
        for r in candidates:
            if runner_id(r) == 0 or has_job(r):
                continue
            try:
                ok = self._remove_and_delete(ctx, r)
            except (ApiError, ActionsError) as e:
                errs.append(e)
                continue
            if ok:
                deleted += 1
                if deleted == count:
                    break
        if errs:
            raise errs[0]

    def _remove_and_delete(self, ctx: Ctx, runner: Obj) -> bool:
        """Remove a runner from the service, then delete its ER (upstream
        ``deleteEphemeralRunnerWithActionsClient``).

        ``JobStillRunning`` leaves it (False, not an error). Every other error of
        RemoveRunner, NotFound included, is raised and the ER kept: upstream
        returns it, so the reconcile fails and is retried with the host's backoff.
        """
        rid = runner_id(runner)
        try:
            self.service.remove_runner(rid, actor=self.name)
        except ActionsError as e:
            if is_job_still_running(e):
                return False
            raise
        delete_ignore_not_found(ctx.client, c.KIND_ER, meta(runner)["name"], meta(runner).get("namespace", ""))
        return True

    def clean_up(self, ctx: Ctx, ers: Obj, runners: list[Obj]) -> CleanupResult:
        """Clean up runners (upstream ``cleanUpEphemeralRunners``), classified against the applied revision.

        Deletes every terminated runner; then removes every pending runner and
        every running runner without a job from the service and deletes it
        (``JobStillRunning`` leaves it; any other service error, NotFound
        included, keeps it, as :meth:`_remove_and_delete`). Runners running a
        job are never touched. Errors are collected and the first is raised.

        Upstream has no registration grace here (an earlier version of this port
        left unregistered runners younger than a minute alone): an unregistered
        pending runner is deleted at once, as upstream's test "deletes
        unregistered pending runner during actionable revision cleanup after
        restart with no cache" pins.
        """
        result = CleanupResult(remaining=len(runners))
        if not runners:
            return result
        cls = classify(runners, applied_revision(ers))
        self._delete_all(ctx.client, cls.terminated())
        errs: list[Exception] = []
        for r in cls.pending:
            try:
                self._remove_and_delete(ctx, r)
            except (ApiError, ActionsError) as e:
                errs.append(e)
        for r in cls.running:
            if has_job(r):
                continue
            try:
                self._remove_and_delete(ctx, r)
            except (ApiError, ActionsError) as e:
                errs.append(e)
        if errs:
            raise errs[0]
        return result

    def update_status(self, ctx: Ctx, ers: Obj, cls: Classification) -> None:
        """Merge-patch the counts and phase (no optimistic lock), only if something changed.

        Phase: Outdated if any current-revision runner is Outdated, else Running
        if unset, else unchanged. Never moves Outdated back to Running; never
        writes the applied revision. The answer is not read (every pass ends with this write:
        nothing looks at the set after it), so it is not decoded.
        """
        st = status(ers)
        phase = st.get("phase") or ""
        if cls.outdated:
            phase = c.ERS_PHASE_OUTDATED
        elif phase == "":
            phase = c.ERS_PHASE_RUNNING
        desired = {
            "currentReplicas": cls.scale_total(),
            "pendingEphemeralRunners": len(cls.pending),
            "runningEphemeralRunners": len(cls.running),
            "failedEphemeralRunners": len(cls.failed),
            "phase": phase,
        }
        if all(st.get(k, 0 if k != "phase" else "") == v for k, v in desired.items()):
            return
        patch_status(ctx.client, ers, desired, status_type(c.KIND_ERS), read_answer=False)

    def patch_finished_cleanup_patch_id(self, ctx: Ctx, namespace: str, name: str, patch_id: int) -> None:
        """Record ``status.finishedRunnerCleanupPatchID`` = ``patch_id`` (upstream
        ``patchFinishedRunnerCleanupPatchIDStatus``, #4642), retried on conflict.

        Each try reads the set through the uncached reader; an equal marker is
        left alone (an equality test, not >=: listener patch ids move backwards);
        otherwise a status merge patch with the resourceVersion it read.
        """
        reader = ctx.api_reader
        last: ApiError | None = None
        for _ in range(APPLIED_PATCH_ATTEMPTS):
            latest = reader.get(c.KIND_ERS, name, namespace)
            if _cleanup_marker(latest) == patch_id:
                return
            try:
                patch_status(ctx.client, latest, {"finishedRunnerCleanupPatchID": patch_id},
                             status_type(c.KIND_ERS), optimistic_lock=True)
                return
            except ApiError as e:
                if not is_conflict(e):
                    raise
                last = e
        assert last is not None
        raise last

    def scale_up_serviced_by_finished_cleanup(self, ctx: Ctx, namespace: str, name: str, patch_id: int) -> bool:
        """Whether the shortfall below ``spec.replicas`` was opened by this controller's own cleanup of
        finished runners for the current patch id (upstream ``scaleUpServicedByFinishedRunnerCleanup``).

        Patch id 0 is never suppressed. The marker is read uncached: the
        cache may not show the controller's own write yet, or show one a new
        revision has since cleared.
        """
        if patch_id == 0:
            return False
        latest = ctx.api_reader.get(c.KIND_ERS, name, namespace)
        return _cleanup_marker(latest) == patch_id

    def patch_applied_revision(self, ctx: Ctx, namespace: str, name: str, target: int) -> None:
        """Advance ``status.appliedActionableRevision`` to ``target`` (never lower it), retried on conflict.

        Each try reads the set and its runners through the uncached reader,
        sets applied = max(applied, target), classifies the runners against that
        value and sets the phase both ways (Outdated if any current-revision
        runner is Outdated, else Running), then writes only if something changed,
        as a status merge patch carrying the resourceVersion it read.
        """
        reader = ctx.api_reader
        last: ApiError | None = None
        for _ in range(APPLIED_PATCH_ATTEMPTS):
            latest = reader.get(c.KIND_ERS, name, namespace)
            advances = applied_revision(latest) < target
            new_applied = max(applied_revision(latest), target)
            runners = list_runners(reader, namespace, name)
            cls = classify(runners, new_applied)
            phase = c.ERS_PHASE_OUTDATED if cls.outdated else c.ERS_PHASE_RUNNING
            st = status(latest)
            values: dict[str, Any] = {"appliedActionableRevision": new_applied, "phase": phase}
            if advances:
                # The old marker belongs to the patch sequence of the replaced spec (#4642).
                values["finishedRunnerCleanupPatchID"] = 0
            if all(st.get(k, 0) == v for k, v in values.items()):
                return

            try:
                patch_status(ctx.client, latest, values, status_type(c.KIND_ERS), optimistic_lock=True)
                return
            except ApiError as e:
                if not is_conflict(e):
                    raise
                last = e
        assert last is not None
        raise last
