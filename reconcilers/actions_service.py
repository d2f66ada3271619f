"""A simulated GitHub Actions service: the part of it ARC's scale-set controllers talk to.

State: runner groups, runner scale sets, registered runners (from JIT configs,
ids 1, 2, 3, ... in order of request), a job queue per scale set, and the set
of runner images the service rejects. Calls can be failed by fault rules
``{on: {service: actions, call: <Call>}}``; a rule's ``error`` names the
failure: ``JobStillRunning``, ``NotFound`` (or any other reason, which becomes
a generic service error).

Calls are deterministic and take no time. Every change bumps :attr:`version`,
so simulators can tell cheaply whether something changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SERVICE = "actions"


class ActionsError(Exception):
    """An error answered by the Actions service."""

    def __init__(self, message: str, status_code: int = 500, reason: str = "") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.reason = reason or "ActionsError"


class JobStillRunningError(ActionsError):
    """RemoveRunner on a runner that still has a job assigned (HTTP 400 ``JobStillRunningException``)."""

    def __init__(self, runner_id: int) -> None:
        super().__init__(f"runner {runner_id} is still running a job", 400, "JobStillRunning")


class NotFoundError(ActionsError):
    """The named runner, scale set or runner group does not exist (HTTP 404)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found", 404, "NotFound")


def is_job_still_running(err: BaseException) -> bool:
    """True for :class:`JobStillRunningError`."""
    return isinstance(err, JobStillRunningError)


def is_not_found(err: BaseException) -> bool:
    """True for :class:`NotFoundError`."""
    return isinstance(err, NotFoundError)


@dataclass
class RunnerGroup:
    """A runner group (``{id, name}``)."""

    id: int
    name: str


@dataclass
class ScaleSet:
    """A runner scale set registered on the service."""

    id: int
    name: str
    runner_group_id: int
    runner_group_name: str
    labels: list[str] = field(default_factory=list)
    config_url: str = ""


@dataclass
class Job:
    """One workflow job: queued (``runner_id`` None) or assigned to a runner."""

    seq: int
    scale_set_id: int
    job_id: str
    request_id: int
    repository: str
    workflow_ref: str
    workflow_run_id: int
    display_name: str
    runner_id: int | None = None


@dataclass
class Runner:
    """A runner registered through a JIT config."""

    id: int
    name: str
    scale_set_id: int


@dataclass
class JitConfig:
    """What GenerateJitRunnerConfig answers."""

    runner_id: int
    runner_name: str
    encoded_jit_config: str


FaultLookup = Callable[[str, str, str], Any]


class ActionsService:
    """The simulated service. ``faults(service, call, actor)`` returns a matching fault rule or None."""

    def __init__(
        self,
        runner_groups: list[dict[str, Any]] | None = None,
        rejected_images: list[str] | None = None,
        faults: FaultLookup | None = None,
    ) -> None:
        groups: list[dict[str, Any]] = (
            runner_groups if runner_groups is not None else [{"id": 1, "name": "Default"}]
        )
        self.runner_groups: list[RunnerGroup] = [RunnerGroup(int(g["id"]), str(g["name"])) for g in groups]
        self.rejected_images: set[str] = set(rejected_images or ())
        self.scale_sets: dict[int, ScaleSet] = {}
        self.runners: dict[int, Runner] = {}
        self.jobs: list[Job] = []
        self.completed_jobs: list[Job] = []
        self.calls: list[tuple[str, str]] = []
        self.version = 0
        self._faults = faults
        self._next_scale_set_id = 1
        self._next_runner_id = 1
        self._next_job = 1

    def seed(self, scale_sets: list[dict[str, Any]] | None = None, runners: list[dict[str, Any]] | None = None) -> None:
        """Start from scale sets and runners already registered (``services.arc.actions.scaleSets`` /
        ``runners``), as a case that runs no AutoscalingRunnerSet controller needs; later ids follow them."""
        for spec in scale_sets or ():
            group_id = int(spec.get("runnerGroupId", 1))
            group = next((g for g in self.runner_groups if g.id == group_id), None)
            if group is None:
                raise ValueError(f"scaleSets: no runner group {group_id}")
            sid = int(spec["id"])
            name = str(spec.get("name") or f"scale-set-{sid}")
            self.scale_sets[sid] = ScaleSet(sid, name, group.id, group.name, [str(x) for x in spec.get("labels") or [name]])
            self._next_scale_set_id = max(self._next_scale_set_id, sid + 1)
        for spec in runners or ():
            rid = int(spec["id"])
            sid = int(spec["scaleSetId"])
            if sid not in self.scale_sets:
                raise ValueError(f"runners: runner {rid} names scale set {sid}, which is not in scaleSets")
            self.runners[rid] = Runner(rid, str(spec["name"]), sid)
            self._next_runner_id = max(self._next_runner_id, rid + 1)

    # --- internals ---------------------------------------------------------------------

    def _changed(self) -> None:
        self.version += 1

    def _call(self, call: str, actor: str) -> None:
        self.calls.append((actor, call))
        if self._faults is None:
            return
        rule = self._faults(SERVICE, call, actor)
        if rule is None:
            return
        err = getattr(rule, "error", None)
        reason = err.get("reason", "") if isinstance(err, dict) else str(err or "")
        message = err.get("message") if isinstance(err, dict) else None
        if reason == "JobStillRunning":
            raise JobStillRunningError(0)
        if reason == "NotFound":
            raise NotFoundError(str(message or call))
        code = int(err.get("code", 500)) if isinstance(err, dict) else 500
        raise ActionsError(str(message or f"injected {reason or 'InternalError'} fault on {call}"), code, reason)

    # --- runner groups and scale sets --------------------------------------------------

    def get_runner_group_by_name(self, name: str, *, actor: str = "") -> RunnerGroup:
        """The runner group with that name (case-insensitive); NotFoundError when there is none."""
        self._call("GetRunnerGroupByName", actor)
        for g in self.runner_groups:
            if g.name.lower() == name.lower():
                return g
        raise NotFoundError(f"runner group {name!r}")

    def get_runner_scale_set(self, runner_group_id: int, name: str, *, actor: str = "") -> ScaleSet | None:
        """The scale set with that name in that runner group, or None."""
        self._call("GetRunnerScaleSet", actor)
        for s in self.scale_sets.values():
            if s.runner_group_id == runner_group_id and s.name.lower() == name.lower():
                return s
        return None

    def get_runner_scale_set_by_id(self, scale_set_id: int, *, actor: str = "") -> ScaleSet:
        """The scale set with that id; NotFoundError when there is none."""
        self._call("GetRunnerScaleSetById", actor)
        s = self.scale_sets.get(scale_set_id)
        if s is None:
            raise NotFoundError(f"runner scale set {scale_set_id}")
        return s

    def create_runner_scale_set(
        self, name: str, runner_group_id: int, labels: list[str] | None = None, config_url: str = "", *, actor: str = ""
    ) -> ScaleSet:
        """Register a new scale set (ids 1, 2, ... in order of creation)."""
        self._call("CreateRunnerScaleSet", actor)
        group = next((g for g in self.runner_groups if g.id == runner_group_id), None)
        if group is None:
            raise NotFoundError(f"runner group {runner_group_id}")
        s = ScaleSet(self._next_scale_set_id, name, group.id, group.name, list(labels or [name]), config_url)
        self._next_scale_set_id += 1
        self.scale_sets[s.id] = s
        self._changed()
        return s

    def update_runner_scale_set(
        self, scale_set_id: int, *, name: str | None = None, runner_group_id: int | None = None, actor: str = ""
    ) -> ScaleSet:
        """Rename a scale set or move it to another runner group."""
        self._call("UpdateRunnerScaleSet", actor)
        s = self.scale_sets.get(scale_set_id)
        if s is None:
            raise NotFoundError(f"runner scale set {scale_set_id}")
        if name is not None:
            s.name = name
        if runner_group_id is not None:
            group = next((g for g in self.runner_groups if g.id == runner_group_id), None)
            if group is None:
                raise NotFoundError(f"runner group {runner_group_id}")
            s.runner_group_id, s.runner_group_name = group.id, group.name
        self._changed()
        return s

    def delete_runner_scale_set(self, scale_set_id: int, *, actor: str = "") -> None:
        """Remove a scale set with its queued jobs and runners; a missing one is not an error (ARC ignores 404)."""
        self._call("DeleteRunnerScaleSet", actor)
        if self.scale_sets.pop(scale_set_id, None) is None:
            return
        self.jobs = [j for j in self.jobs if j.scale_set_id != scale_set_id]
        for rid in [r.id for r in self.runners.values() if r.scale_set_id == scale_set_id]:
            del self.runners[rid]
        self._changed()

    # --- runners -----------------------------------------------------------------------

    def generate_jit_runner_config(self, scale_set_id: int, runner_name: str, *, actor: str = "") -> JitConfig:
        """Register a runner for a scale set; runner ids are 1, 2, 3, ... in order of request."""
        self._call("GenerateJitRunnerConfig", actor)
        if scale_set_id not in self.scale_sets:
            raise NotFoundError(f"runner scale set {scale_set_id}")
        existing = next((r for r in self.runners.values() if r.name == runner_name), None)
        if existing is not None:
            # Runner names are unique on the service (whatever the scale set): a duplicate is a 409
            # (scaleset.RunnerExistsError); ARC then looks the runner up by name.
            raise ActionsError(f"runner {runner_name!r} already exists", 409, "AlreadyExists")
        r = Runner(self._next_runner_id, runner_name, scale_set_id)
        self._next_runner_id += 1
        self.runners[r.id] = r
        self._changed()
        return JitConfig(r.id, r.name, f"jit-{scale_set_id}-{r.id}")

    def get_runner_by_name(self, name: str, *, actor: str = "") -> Runner | None:
        """The registered runner with that name, or None."""
        self._call("GetRunnerByName", actor)
        return next((r for r in self.runners.values() if r.name == name), None)

    def remove_runner(self, runner_id: int, *, actor: str = "") -> None:
        """Deregister a runner; JobStillRunningError while a job is assigned to it.

        A runner the service does not hold (removed before, or never registered,
        id 0) is removed without an error: upstream ARC removes every runner it
        scales down twice (the set's ``deleteEphemeralRunnerWithActionsClient``,
        then the runner's registration finalizer) and a finished runner has
        already deregistered itself, while both callers fail on any answer but
        success or JobStillRunning; upstream's fake client answers so too. A
        NotFound answer comes only from a fault rule.
        """
        self._call("RemoveRunner", actor)
        if runner_id not in self.runners:
            return
        if any(j.runner_id == runner_id for j in self.jobs):
            raise JobStillRunningError(runner_id)
        del self.runners[runner_id]
        self._changed()

    # --- jobs --------------------------------------------------------------------------

    def queue_jobs(self, scale_set_id: int, count: int) -> list[Job]:
        """Queue ``count`` jobs for a scale set (oldest first in :meth:`queued`)."""
        s = self.scale_sets.get(scale_set_id)
        if s is None:
            raise NotFoundError(f"runner scale set {scale_set_id}")
        repo = _repository(s.config_url)
        out = []
        for _ in range(count):
            n = self._next_job
            self._next_job += 1
            job = Job(
                seq=n,
                scale_set_id=scale_set_id,
                job_id=f"job-{n}",
                request_id=n,
                repository=repo,
                workflow_ref=f"{repo}/.github/workflows/ci.yaml@refs/heads/main",
                workflow_run_id=1000 + n,
                display_name=f"job {n}",
            )
            self.jobs.append(job)
            out.append(job)
        if out:
            self._changed()
        return out

    def queued(self, scale_set_id: int) -> list[Job]:
        """Queued (unassigned) jobs of a scale set, oldest first."""
        return [j for j in self.jobs if j.scale_set_id == scale_set_id and j.runner_id is None]

    def any_queued(self) -> bool:
        """Is a job of any scale set waiting for a runner?"""
        return any(j.runner_id is None for j in self.jobs)

    def assigned(self, scale_set_id: int) -> list[Job]:
        """Jobs of a scale set that are assigned to a runner."""
        return [j for j in self.jobs if j.scale_set_id == scale_set_id and j.runner_id is not None]

    def job_count(self, scale_set_id: int) -> int:
        """Queued plus assigned jobs of a scale set."""
        return sum(1 for j in self.jobs if j.scale_set_id == scale_set_id)

    def job_of_runner(self, runner_id: int) -> Job | None:
        """The job assigned to a runner, if any."""
        return next((j for j in self.jobs if j.runner_id == runner_id), None)

    def assign(self, job: Job, runner_id: int) -> None:
        """Assign a queued job to a registered runner."""
        if job.runner_id is not None:
            raise ValueError(f"{job.job_id} is already assigned")
        if runner_id not in self.runners:
            raise NotFoundError(f"runner {runner_id}")
        job.runner_id = runner_id
        self._changed()

    def runner_exited(self, runner_name: str) -> Job | None:
        """The runner's container exited: its job (if any) leaves the service, and an ephemeral
        runner that ran a job deregisters itself. Returns the finished job."""
        r = next((x for x in self.runners.values() if x.name == runner_name), None)
        if r is None:
            return None
        job = self.job_of_runner(r.id)
        if job is None:
            return None
        self.jobs.remove(job)
        self.completed_jobs.append(job)
        del self.runners[r.id]
        self._changed()
        return job

    def reject_image(self, image: str) -> None:
        """From now on, runners with this image exit with code 7 right after they start."""
        self.rejected_images.add(image)
        self._changed()

    def accept_image(self, image: str) -> None:
        """Stop rejecting this image."""
        self.rejected_images.discard(image)
        self._changed()


def _repository(config_url: str) -> str:
    """``owner/repo`` from a GitHub config URL (``https://github.com/owner/repo``), else the URL path."""
    path = config_url.split("://", 1)[-1].split("/", 1)[-1] if "/" in config_url else config_url
    return path.strip("/") or "example/repo"
