"""The Go type model of the ARC kinds (``apis/actions.github.com/v1alpha1``), as ARC_SPEC.md marks it.

Every field is ``omitempty`` unless noted; ``ptr`` fields are Go pointers
(omitempty drops only nil), ``struct`` fields are Go value structs (always
emitted), ``no-omit`` fields send their zero values. The pod templates are
``corev1.PodTemplateSpec`` (value in ``spec.template``, pointer in
``spec.listenerTemplate`` and the listener's ``spec.template``); the runner
spec inlines one (``metadata`` and ``spec`` value structs).
"""

from __future__ import annotations

from functools import lru_cache

from fakeapi.codec.gomodel import (
    INT,
    STRING,
    GoField,
    GoType,
    builtin_go_type,
    go_type_from_structural,
    map_of,
    struct,
)

from . import constants as c
from .crds import POD_TEMPLATE_SPEC, object_schema


def pod_template_spec_type() -> GoType:
    """``corev1.PodTemplateSpec``."""
    return builtin_go_type(POD_TEMPLATE_SPEC)


@lru_cache(maxsize=1)
def resource_meta_type() -> GoType:
    """``ResourceMeta``: ``labels`` and ``annotations`` string maps (omitempty)."""
    return struct(
        "ResourceMeta",
        [
            GoField("labels", True, False, map_of(STRING)),
            GoField("annotations", True, False, map_of(STRING)),
        ],
    )


@lru_cache(maxsize=1)
def ephemeral_runner_spec_type() -> GoType:
    """``EphemeralRunnerSpec``: config URL, secret, scale set id, secret metadata, inlined PodTemplateSpec."""
    pts = pod_template_spec_type()
    return struct(
        "EphemeralRunnerSpec",
        [
            GoField("githubConfigUrl", True, False, STRING),
            GoField("githubConfigSecret", True, False, STRING),
            GoField("runnerScaleSetId", True, False, INT),
            GoField("ephemeralRunnerConfigSecretMetadata", True, True, resource_meta_type()),
            pts.fields["metadata"],
            pts.fields["spec"],
        ],
    )


@lru_cache(maxsize=1)
def arc_go_types() -> dict[str, GoType]:
    """The Go type of each ARC kind, by kind name."""
    pts = pod_template_spec_type()
    meta = resource_meta_type()
    runner_spec = ephemeral_runner_spec_type()
    ars = go_type_from_structural(
        object_schema(c.KIND_ARS),
        overrides={
            "spec.minRunners": "ptr",
            "spec.maxRunners": "ptr",
            "spec.template": (pts, "struct"),
            "spec.listenerTemplate": (pts, "ptr"),
            "spec.ephemeralRunnerSetMetadata": (meta, "ptr"),
            "spec.ephemeralRunnerMetadata": (meta, "ptr"),
            "spec.autoscalingListener": (meta, "ptr"),
            "status.phase": "no-omit",
            "status.currentRunners": "no-omit",
            "status.pendingEphemeralRunners": "no-omit",
            "status.runningEphemeralRunners": "no-omit",
            "status.failedEphemeralRunners": "no-omit",
        },
    )
    ers = go_type_from_structural(
        object_schema(c.KIND_ERS),
        overrides={
            "spec.patchID": "no-omit",
            "spec.ephemeralRunnerSpec": (runner_spec, "struct"),
            "spec.ephemeralRunnerMetadata": (meta, "ptr"),
            "status.currentReplicas": "no-omit",
            "status.pendingEphemeralRunners": "no-omit",
            "status.runningEphemeralRunners": "no-omit",
            "status.failedEphemeralRunners": "no-omit",
            "status.phase": "no-omit",
        },
    )
    er = go_type_from_structural(
        object_schema(c.KIND_ER),
        overrides={"spec": (runner_spec, "struct")},
    )
    al = go_type_from_structural(
        object_schema(c.KIND_AL),
        overrides={"spec.template": (pts, "ptr")},
    )
    return {c.KIND_ARS: ars, c.KIND_ERS: ers, c.KIND_ER: er, c.KIND_AL: al}


def listener_spec_type() -> GoType:
    """``AutoscalingListenerSpec``."""
    return arc_go_types()[c.KIND_AL].fields["spec"].type


def status_type(kind: str) -> GoType:
    """The Go type of an ARC kind's ``status``."""
    return arc_go_types()[kind].fields["status"].type
