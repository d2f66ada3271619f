"""The ``arc`` bundle: ARC's controllers, the simulated Actions service and listener, operations, invariants.

``install(host, settings)`` registers the four CRDs (with their Go types),
the three controllers (``autoscalingrunnerset``, ``ephemeralrunnerset``,
``ephemeralrunner``; there is no ``autoscalinglistener`` controller: the
listener is simulated), the listener actor, and the service's view of runner
pods. ``settings`` is the case's ``services.arc`` (docs/ARC.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fakeapi.harness.bundles import Bundle, OpContext
from fakeapi.server.clock import parse_duration

from . import constants as c
from .actions_service import ActionsService
from .autoscalingrunnerset import AutoscalingRunnerSetReconciler
from .crds import crd_snapshots
from .ephemeralrunner import EphemeralRunnerReconciler
from .ephemeralrunnerset import EphemeralRunnerSetReconciler
from .gotypes import arc_go_types
from .listener import ListenerSimulator, RunnerPodWatcher
from .resourcebuilder import listener_name, scale_set_id
from .revision import applied_revision, has_job, is_done, spec_revision

Obj = dict[str, Any]

CONTROLLERS = (c.CONTROLLER_ARS, c.CONTROLLER_ERS, c.CONTROLLER_ER)


@dataclass
class ArcState:
    """What an installed ``arc`` bundle holds (``OpContext.state``)."""

    service: ActionsService
    controller_namespace: str
    ars: AutoscalingRunnerSetReconciler
    ers: EphemeralRunnerSetReconciler
    er: EphemeralRunnerReconciler
    listener: ListenerSimulator
    pods: RunnerPodWatcher
    #: Highest (spec, applied) revision seen per ERS uid (arc.revision-monotonic).
    revisions: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: EphemeralRunners as they were when their deletion was requested, by (namespace, name).
    deleted_runners: dict[tuple[str, str], Obj] = field(default_factory=dict)
    #: How many trace calls arc.busy-runners-kept has checked.
    checked_calls: int = 0


def register_kinds(api: Any) -> None:
    """Register the four ARC CRDs with the server (once) and attach their Go types."""
    types = arc_go_types()
    for snapshot in crd_snapshots():
        kind_name = snapshot.kind
        kind = api.kinds.find(kind_name, c.API_VERSION)
        if kind is None:
            kind = api.install_crd(snapshot)  # (as register_crd, computed once per process)
        kind.go_type = types[kind_name]


def install(host: Any, settings: dict[str, Any] | None) -> ArcState:
    """Install the bundle on a host: kinds, the Actions service, controllers, listener and pod watcher."""
    settings = dict(settings or {})
    api = host.api
    register_kinds(api)
    actions = dict(settings.get("actions") or {})
    service = ActionsService(
        runner_groups=actions.get("runnerGroups"),
        rejected_images=list(actions.get("rejectedImages") or []),
        faults=lambda service, call, actor: api.faults.for_service(service, call, actor),
    )
    service.seed(actions.get("scaleSets"), actions.get("runners"))
    kubelet_settings = dict(settings.get("kubelet") or {})
    if host.kubelet is not None and "startDelay" in kubelet_settings:
        delay = kubelet_settings["startDelay"]
        # "never": pods are not started at all (upstream's envtest runs no kubelet).
        host.kubelet.start_delay = None if delay == "never" else _duration(delay)
    namespace = str(settings.get("controllerNamespace") or c.DEFAULT_CONTROLLER_NAMESPACE)
    ars = AutoscalingRunnerSetReconciler(service, namespace)
    ers = EphemeralRunnerSetReconciler(service)
    er = EphemeralRunnerReconciler(service)
    pods = RunnerPodWatcher(api, service, host.kubelet)
    listener = ListenerSimulator(api, service)
    state = ArcState(service, namespace, ars, ers, er, listener, pods)
    api.add_listener(functools.partial(_track_runner_deletion, state))
    ars.setup(host)
    ers.setup(host)
    er.setup(host)
    host.add_actor(listener)
    return state


def _duration(value: Any) -> timedelta:
    if isinstance(value, timedelta):
        return value
    return parse_duration(value)


def _track_runner_deletion(state: ArcState, etype: str, kind: Any, obj: Obj, old: Obj | None) -> None:
    if kind.kind != c.KIND_ER or kind.group != c.GROUP:
        return
    meta = obj["metadata"]
    newly_deleting = etype == "DELETED" or (
        meta.get("deletionTimestamp") and not ((old or {}).get("metadata") or {}).get("deletionTimestamp")
    )
    if newly_deleting:
        # The state the runner had when its deletion was requested (status does not change on delete).
        state.deleted_runners[(meta.get("namespace", ""), meta["name"])] = obj


# --------------------------------------------------------------------------- operations


def _find_ars(ctx: OpContext, args: dict[str, Any]) -> Obj:
    name, ns = args.get("name"), args.get("namespace")
    if not name or not ns:
        raise ValueError("arc: name and namespace of an AutoscalingRunnerSet are required")
    kind = ctx.host.api.kinds.find(c.KIND_ARS, c.API_VERSION)
    for obj in ctx.host.api.objects(kind, ns):
        if obj["metadata"]["name"] == name:
            return dict(obj)
    raise ValueError(f"arc: no AutoscalingRunnerSet {ns}/{name}")


def op_queue_jobs(ctx: OpContext, args: Any) -> None:
    """``arc.queue_jobs: {name, namespace, count}``: queue jobs for an ARS's scale set."""
    if not isinstance(args, dict):
        raise ValueError("arc.queue_jobs takes {name, namespace, count}")
    count = args.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError("arc.queue_jobs: count must be a non-negative integer")
    ars = _find_ars(ctx, args)
    sid = scale_set_id(ars)
    state: ArcState = ctx.state
    if sid <= 0 or sid not in state.service.scale_sets:
        raise ValueError(f"arc.queue_jobs: {args['namespace']}/{args['name']} has no scale set registered yet")
    state.service.queue_jobs(sid, count)


def op_delete_scale_set(ctx: OpContext, args: Any) -> None:
    """``arc.delete_scale_set: {name, namespace}``: the ARS's scale set disappears from the Actions service
    out of band (as when deleted in the organization's settings), with its jobs and runners."""
    if not isinstance(args, dict):
        raise ValueError("arc.delete_scale_set takes {name, namespace}")
    ars = _find_ars(ctx, args)
    sid = scale_set_id(ars)
    state: ArcState = ctx.state
    if sid <= 0 or sid not in state.service.scale_sets:
        raise ValueError(f"arc.delete_scale_set: {args['namespace']}/{args['name']} has no scale set on the service")
    state.service.delete_runner_scale_set(sid, actor="test")


def op_finish_jobs(ctx: OpContext, args: Any) -> None:
    """``arc.finish_jobs: {<target of runners>, exitCode}``: end those runners' jobs and runner containers."""
    if not isinstance(args, dict):
        raise ValueError("arc.finish_jobs takes a target of EphemeralRunners and exitCode")
    target = {k: v for k, v in args.items() if k != "exitCode"}
    target.setdefault("kind", c.KIND_ER)
    code = args.get("exitCode", 0)
    if not isinstance(code, int) or isinstance(code, bool):
        raise ValueError("arc.finish_jobs: exitCode must be an integer")
    state: ArcState = ctx.state
    kubelet = ctx.host.kubelet
    if kubelet is None:
        raise ValueError("arc.finish_jobs needs the host's kubelet")
    for runner in ctx.resolve(target):
        meta = runner["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        state.service.runner_exited(name)
        kubelet.exit(ns, name, c.RUNNER_CONTAINER, code)


def op_reject_image(ctx: OpContext, args: Any) -> None:
    """``arc.reject_image: <image>``: the service rejects runners with this image (they exit 7)."""
    if not isinstance(args, str) or not args:
        raise ValueError("arc.reject_image takes an image name")
    state: ArcState = ctx.state
    state.service.reject_image(args)


def op_accept_image(ctx: OpContext, args: Any) -> None:
    """``arc.accept_image: <image>``: stop rejecting this image."""
    if not isinstance(args, str) or not args:
        raise ValueError("arc.accept_image takes an image name")
    state: ArcState = ctx.state
    state.service.accept_image(args)


# --------------------------------------------------------------------------- invariants


def _objects(host: Any, kind_name: str) -> list[Obj]:
    kind = host.api.kinds.find(kind_name, c.API_VERSION)
    if kind is None:
        return []
    out: list[Obj] = host.api.objects(kind)
    return out


def inv_applied_never_ahead(host: Any, state: Any) -> list[str]:
    """``arc.applied-never-ahead``: applied revision <= spec revision on every ERS."""
    out = []
    for ers in _objects(host, c.KIND_ERS):
        if applied_revision(ers) > spec_revision(ers):
            m = ers["metadata"]
            out.append(
                f"EphemeralRunnerSet {m.get('namespace')}/{m['name']}: applied revision "
                f"{applied_revision(ers)} is ahead of spec revision {spec_revision(ers)}"
            )
    return out


def inv_revision_monotonic(host: Any, state: ArcState) -> list[str]:
    """``arc.revision-monotonic``: neither the spec nor the applied revision of an ERS ever decreases."""
    out = []
    for ers in _objects(host, c.KIND_ERS):
        m = ers["metadata"]
        uid = str(m.get("uid", ""))
        now = (spec_revision(ers), applied_revision(ers))
        before = state.revisions.get(uid)
        if before is not None:
            if now[0] < before[0]:
                out.append(f"EphemeralRunnerSet {m.get('namespace')}/{m['name']}: spec revision went from "
                           f"{before[0]} to {now[0]}")
            if now[1] < before[1]:
                out.append(f"EphemeralRunnerSet {m.get('namespace')}/{m['name']}: applied revision went from "
                           f"{before[1]} to {now[1]}")
            now = (max(now[0], before[0]), max(now[1], before[1]))
        state.revisions[uid] = now
    return out


def inv_busy_runners_kept(host: Any, state: ArcState) -> list[str]:
    """``arc.busy-runners-kept``: the EphemeralRunnerSet controller never deletes a runner that has a job
    and is not done."""
    out = []
    calls = host.api.trace.calls
    for call in calls[state.checked_calls:]:
        if call.actor != c.CONTROLLER_ERS or call.verb != "delete" or call.kind != c.KIND_ER or call.code >= 300:
            continue
        runner = state.deleted_runners.get((call.namespace, call.name))
        if runner is not None and has_job(runner) and not is_done(runner):
            phase = (runner.get("status") or {}).get("phase", "")
            out.append(f"ephemeralrunnerset deleted EphemeralRunner {call.namespace}/{call.name} while it ran job "
                       f"{(runner.get('status') or {}).get('jobId')} (phase {phase or 'unset'})")
    state.checked_calls = len(calls)
    return out


def inv_no_listener_while_parked(host: Any, state: ArcState) -> list[str]:
    """``arc.no-listener-while-parked``: no listener exists while its ARS is Outdated."""
    listeners = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in _objects(host, c.KIND_AL)
    }
    out = []
    for ars in _objects(host, c.KIND_ARS):
        if (ars.get("status") or {}).get("phase") != c.ARS_PHASE_OUTDATED:
            continue
        m = ars["metadata"]
        key = (state.controller_namespace, listener_name(ars))
        if key in listeners:
            out.append(f"AutoscalingRunnerSet {m.get('namespace')}/{m['name']} is Outdated but listener "
                       f"{key[0]}/{key[1]} exists")
    return out


# --------------------------------------------------------------------------- schemas

_TARGET_PROPS: dict[str, Any] = {
    "kind": {"type": "string"},
    "apiVersion": {"type": "string"},
    "namespace": {"type": "string"},
    "name": {"type": "string"},
    "selector": {"type": ["string", "object"]},
    "where": {"type": "object"},
    "pick": {"type": ["string", "integer"]},
}

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "controllerNamespace": {"type": "string"},
        "actions": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "runnerGroups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id", "name"],
                        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    },
                },
                "rejectedImages": {"type": "array", "items": {"type": "string"}},
                "scaleSets": {
                    "type": "array",
                    "description": "Scale sets already registered (for cases that run no AutoscalingRunnerSet controller).",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id"],
                        "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string"},
                                       "runnerGroupId": {"type": "integer"},
                                       "labels": {"type": "array", "items": {"type": "string"}}},
                    },
                },
                "runners": {
                    "type": "array",
                    "description": "Runners already registered, each in one of scaleSets.",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id", "name", "scaleSetId"],
                        "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string"},
                                       "scaleSetId": {"type": "integer"}},
                    },
                },
            },
        },
        "kubelet": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"startDelay": {"type": ["string", "number"],
                                          "description": "Time from pod creation to Running, or never."}},
        },
    },
}

OPERATION_SCHEMAS: dict[str, dict[str, Any]] = {
    "arc.queue_jobs": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "namespace"],
        "properties": {
            "name": {"type": "string"},
            "namespace": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
        },
    },
    "arc.delete_scale_set": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "namespace"],
        "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
    },
    "arc.finish_jobs": {
        "type": "object",
        "additionalProperties": False,
        "properties": {**_TARGET_PROPS, "exitCode": {"type": "integer"}},
    },
    "arc.reject_image": {"type": "string", "minLength": 1},
    "arc.accept_image": {"type": "string", "minLength": 1},
}

bundle = Bundle(
    name="arc",
    install=install,
    operations={
        "arc.queue_jobs": op_queue_jobs,
        "arc.finish_jobs": op_finish_jobs,
        "arc.delete_scale_set": op_delete_scale_set,
        "arc.reject_image": op_reject_image,
        "arc.accept_image": op_accept_image,
    },
    invariants={
        "arc.applied-never-ahead": inv_applied_never_ahead,
        "arc.revision-monotonic": inv_revision_monotonic,
        "arc.busy-runners-kept": inv_busy_runners_kept,
        "arc.no-listener-while-parked": inv_no_listener_while_parked,
    },
    settings_schema=SETTINGS_SCHEMA,
    operation_schemas=OPERATION_SCHEMAS,
    controllers=CONTROLLERS,
    kinds=c.ARC_KINDS,
    services={"actions": ("GetRunnerGroupByName", "GetRunnerScaleSet", "GetRunnerScaleSetById",
                          "CreateRunnerScaleSet", "UpdateRunnerScaleSet", "DeleteRunnerScaleSet",
                          "GenerateJitRunnerConfig", "GetRunnerByName", "RemoveRunner")},
    description=(
        "actions-runner-controller's scale-set controllers (autoscalingrunnerset, ephemeralrunnerset, "
        "ephemeralrunner) with a simulated Actions service and listener (docs/ARC.md)."
    ),
)
