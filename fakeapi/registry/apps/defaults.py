"""Defaults of apps/v1 Deployments, ReplicaSets, StatefulSets and DaemonSets (``pkg/apis/apps/v1/defaults.go``),
their pod templates' (core's :func:`~fakeapi.registry.core.defaults.pod_template_defaults`) included."""

from __future__ import annotations

from fakeapi.registry.core.defaults import JSONDict, default_pvc, dict_at, list_at, pod_template_defaults


def default_daemon_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_DaemonSet`` (apps/v1): a rolling update of one unavailable pod and no surge,
    a history of 10, the pod template's defaults."""
    spec = dict_at(obj, "spec")
    strategy = dict_at(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = dict_at(strategy, "rollingUpdate")
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = 1
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    pod_template_defaults(spec)


def default_stateful_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_StatefulSet`` (apps/v1): the spec's defaults, its pod template's, and each
    volume claim template's (``SetDefaults_PersistentVolumeClaim``: ``volumeMode``, ``status.phase``)."""
    spec = dict_at(obj, "spec")
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = dict_at(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        if strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and type(rolling) is dict and rolling.get("partition") is None:
        rolling["partition"] = 0
    retention = dict_at(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        if not retention.get(key):
            retention[key] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    pod_template_defaults(spec)
    for claim in list_at(spec, "volumeClaimTemplates"):
        default_pvc(claim)


def default_deployment(obj: JSONDict) -> None:
    """``SetObjectDefaults_Deployment`` (apps/v1): the spec's defaults and its pod template's.

    The template gets ``SetDefaults_PodSpec`` and the nested defaults of a Pod, not what
    ``SetDefaults_Pod`` adds to a Pod itself (requests from limits, ``enableServiceLinks``).
    """
    spec = dict_at(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = dict_at(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = dict_at(strategy, "rollingUpdate")
        for key in ("maxUnavailable", "maxSurge"):
            if rolling.get(key) is None:
                rolling[key] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    pod_template_defaults(spec)


def default_replica_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_ReplicaSet`` (apps/v1): one replica, and the pod template's defaults (as a
    Deployment's template gets them)."""
    spec = dict_at(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    pod_template_defaults(spec)
