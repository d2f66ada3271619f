"""What apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet validation checks beyond the OpenAPI schema
(``pkg/apis/apps/validation``).

No controller runs for them here (as under envtest): an operator's test creates them, reads them
and writes their status itself. These are the rules such a test meets: a selector that matches
the pod template's labels, a template that restarts ``Always``, a strategy that can make
progress, an immutable selector (a StatefulSet's whole spec but a few fields), and a status
whose counts are consistent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fakeapi.machinery.errors import Cause, GoValue
from fakeapi.machinery.metavalidation import (
    forbidden,
    go_string_map,
    invalid,
    label_selector_string,
    not_supported,
    required,
    validate_label_selector,
    validate_labels,
)
from fakeapi.machinery.selectors import LabelSelector, SelectorError, selector_from_object

_NEGATIVE = "must be greater than or equal to 0"
_PERCENT_RE = re.compile(r"^[0-9]+%$")


PodSpecCauses = Callable[[dict[str, Any], str], list[Cause]]


def deployment_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidateDeploymentSpec``; ``pod_spec_causes(spec, path)`` validates the template's pod spec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes = nonnegative(spec, "replicas", "spec")
    selector = spec.get("selector")
    if selector is None:
        return [*causes, required("spec.selector")]
    causes += validate_label_selector(selector, "spec.selector")
    causes += empty_selector_causes(selector, "deployment")
    try:
        compiled = selector_from_object(selector if isinstance(selector, dict) else {})
    except SelectorError:
        causes.append(invalid("spec.selector", label_selector_string(selector), "invalid label selector"))
    else:
        causes += _template_causes(spec.get("template"), compiled, pod_spec_causes)
    causes += _strategy_causes(spec.get("strategy"))
    causes += nonnegative(spec, "minReadySeconds", "spec")
    causes += nonnegative(spec, "revisionHistoryLimit", "spec")
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        causes += nonnegative(spec, "progressDeadlineSeconds", "spec")
        if deadline <= int(spec.get("minReadySeconds") or 0):
            causes.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return causes


def pod_template_causes(template: dict[str, Any], selector: LabelSelector,
                        pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """A workload's pod template: the selector matches its labels (unless it selects everything), the
    labels are valid (``ValidatePodTemplateSpec``), and so is the pod spec."""
    meta = template.get("metadata")
    labels = (meta.get("labels") if isinstance(meta, dict) else None) or {}
    causes: list[Cause] = []
    if not selector.empty and not selector.matches(labels):
        shown = go_string_map(labels if isinstance(meta, dict) and meta.get("labels") is not None else None)
        causes.append(invalid("spec.template.metadata.labels", shown, "`selector` does not match template `labels`"))
    causes += validate_labels(labels, "spec.template.labels")
    tspec = template.get("spec")
    if isinstance(tspec, dict):
        causes += pod_spec_causes(tspec, "spec.template.spec")
    return causes


def _template_causes(template: Any, selector: LabelSelector, pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidatePodTemplateSpecForReplicaSet``."""
    if not isinstance(template, dict):
        return [required("spec.template")]
    causes = pod_template_causes(template, selector, pod_spec_causes)
    tspec = template.get("spec")
    if isinstance(tspec, dict):
        policy = tspec.get("restartPolicy")
        if policy != "Always":
            causes.append(not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
        if tspec.get("activeDeadlineSeconds") is not None:
            causes.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                    "activeDeadlineSeconds in ReplicaSet is not Supported"))
    return causes


def _strategy_causes(strategy: Any) -> list[Cause]:
    """``ValidateDeploymentStrategy`` and ``ValidateRollingUpdateDeployment``."""
    if not isinstance(strategy, dict):
        return []
    stype = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if stype == "Recreate":
        if rolling is not None:
            return [forbidden("spec.strategy.rollingUpdate",
                              "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if stype != "RollingUpdate":
        return [not_supported("spec.strategy", stype, ["Recreate", "RollingUpdate"])]
    if not isinstance(rolling, dict):
        return [required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")]
    path = "spec.strategy.rollingUpdate"
    causes: list[Cause] = []
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        causes += int_or_percent_causes(value, f"{path}.{name}")
    if _int_or_percent(unavailable) == 0 and _int_or_percent(surge) == 0:
        causes.append(invalid(f"{path}.maxUnavailable", int_or_string(unavailable), "may not be 0 when `maxSurge` is 0"))
    causes += over_100_percent_causes(unavailable, f"{path}.maxUnavailable")
    return causes


def int_or_string(value: Any) -> GoValue:
    """An ``*intstr.IntOrString`` BadValue: its ``String()``, the number or the text, unquoted."""
    return GoValue(str(value))


def over_100_percent_causes(value: Any, path: str) -> list[Cause]:
    """``IsNotMoreThan100Percent``: a percentage above 100% is refused."""
    if isinstance(value, str) and _PERCENT_RE.match(value) and int(value[:-1]) > 100:
        return [invalid(path, int_or_string(value), "must not be greater than 100%")]
    return []


def int_or_percent_causes(value: Any, path: str) -> list[Cause]:
    """``ValidatePositiveIntOrPercent``: a percentage (``25%``) or a non-negative integer."""
    if isinstance(value, str):
        if not _PERCENT_RE.match(value):
            return [invalid(path, int_or_string(value), "must be an integer or percentage (e.g '5%')")]
        return []
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, int_or_string(value), _NEGATIVE)]
    return []


def _int_or_percent(value: Any) -> int | None:
    """``getIntOrPercentValue``: the number, or the percentage's number (None when it is neither)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _PERCENT_RE.match(value):
        return int(value[:-1])
    return None


def deployment_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """The Deployment strategy's ``ValidateUpdate``: ``spec.selector`` is immutable in apps/v1."""
    new_sel = (obj.get("spec") or {}).get("selector")
    old_sel = (old.get("spec") or {}).get("selector")
    if _selector_key(new_sel) != _selector_key(old_sel):
        return [invalid("spec.selector", label_selector_string(new_sel), "field is immutable")]
    return []


def _selector_key(sel: Any) -> Any:
    """A LabelSelector as ``apiequality.Semantic.DeepEqual`` compares it: empty and absent parts alike."""
    if not isinstance(sel, dict):
        return sel
    return (sel.get("matchLabels") or {}, sel.get("matchExpressions") or [])


def deployment_status_causes(status: Any) -> list[Cause]:
    """``ValidateDeploymentStatus``: counts not negative, and none above the replicas it counts among."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for name in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                 "unavailableReplicas", "terminatingReplicas", "collisionCount"):
        causes += nonnegative(status, name, "status")

    def count(name: str) -> int:
        v = status.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    replicas = count("replicas")
    for name in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if count(name) > replicas:
            causes.append(invalid(f"status.{name}", count(name), "cannot be greater than status.replicas"))
    if count("availableReplicas") > count("readyReplicas"):
        causes.append(invalid("status.availableReplicas", count("availableReplicas"),
                              "cannot be greater than readyReplicas"))
    return causes


def replica_set_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidateReplicaSetSpec``: counts not negative, a selector that is set and not empty (Go's message
    says "deployment" for a ReplicaSet too), and the template (``ValidatePodTemplateSpecForReplicaSet``).

    A missing selector selects nothing (``LabelSelectorAsSelector(nil)``): the template's labels are
    reported as not matching it as well.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes = nonnegative(spec, "replicas", "spec")
    causes += nonnegative(spec, "minReadySeconds", "spec")
    selector = spec.get("selector")
    if selector is None:
        causes.append(required("spec.selector"))
    else:
        causes += validate_label_selector(selector, "spec.selector")
        causes += empty_selector_causes(selector, "deployment")
    try:
        compiled = selector_from_object(selector if isinstance(selector, dict) else None)
    except SelectorError:
        causes.append(invalid("spec.selector", label_selector_string(selector), "invalid label selector"))
    else:
        causes += _template_causes(spec.get("template"), compiled, pod_spec_causes)
    return causes


def replica_set_update_causes(obj: dict[str, Any], old: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """The ReplicaSet strategy's ``ValidateUpdate`` beyond ``ValidateReplicaSet``: ``ValidateReplicaSetUpdate``
    validates the spec a second time (so an invalid spec's causes appear twice, as kube-apiserver lists
    them; its message names each once), then ``spec.selector`` is immutable in apps/v1."""
    return replica_set_causes(obj, pod_spec_causes) + deployment_update_causes(obj, old)


def replica_set_status_causes(status: Any) -> list[Cause]:
    """``ValidateReplicaSetStatus``: counts not negative, none above the replicas, available not above ready."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for name in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "terminatingReplicas",
                 "observedGeneration"):
        causes += nonnegative(status, name, "status")

    def count(name: str) -> int:
        v = status.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if count(name) > count("replicas"):
            causes.append(invalid(f"status.{name}", count(name), "cannot be greater than status.replicas"))
    if count("availableReplicas") > count("readyReplicas"):
        causes.append(invalid("status.availableReplicas", count("availableReplicas"),
                              "cannot be greater than readyReplicas"))
    return causes


def empty_selector_causes(selector: Any, word: str) -> list[Cause]:
    """A workload's set but empty ``spec.selector``: Go's "empty selector is invalid for <word>" (the
    word is Go's: a ReplicaSet's says "deployment")."""
    if isinstance(selector, dict) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return [invalid("spec.selector", label_selector_string(selector), f"empty selector is invalid for {word}")]
    return []


def nonnegative(parent: dict[str, Any], name: str, path: str) -> list[Cause]:
    """``ValidateNonnegativeField``."""
    v = parent.get(name)
    if isinstance(v, int) and not isinstance(v, bool) and v < 0:
        return [invalid(f"{path}.{name}", v, _NEGATIVE)]
    return []


def _dict_at(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]`` when it is an object, else an empty one."""
    v = parent.get(key)
    return v if isinstance(v, dict) else {}


def _no_pod_spec_causes(spec: dict[str, Any], path: str) -> list[Cause]:
    """A StatefulSet's template spec is not validated as a pod's (``ValidatePodTemplateSpecForStatefulSet``)."""
    return []


def stateful_set_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidateStatefulSetSpec``: policies, strategy, counts, selector and template."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        causes.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        causes.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = _dict_at(spec, "updateStrategy")
    stype, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if not stype:
        causes.append(required("spec.updateStrategy"))
    elif stype == "OnDelete":
        if rolling is not None:
            causes.append(invalid("spec.updateStrategy.rollingUpdate", _ROLLING_UPDATE_SHOWN,
                                  "only allowed for updateStrategy 'RollingUpdate'"))
    elif stype == "RollingUpdate":
        if isinstance(rolling, dict):
            causes += nonnegative(rolling, "partition", "spec.updateStrategy.rollingUpdate")
    else:
        causes.append(invalid("spec.updateStrategy", stype, "must be 'RollingUpdate' or 'OnDelete'"))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            if retention.get(key) not in ("Retain", "Delete"):
                causes.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", retention.get(key),
                                            ["Retain", "Delete"]))
    causes += nonnegative(spec, "replicas", "spec")
    causes += nonnegative(spec, "minReadySeconds", "spec")
    selector = spec.get("selector")
    if selector is None:
        causes.append(required("spec.selector"))
    else:
        causes += empty_selector_causes(selector, "statefulset")
    template = _dict_at(spec, "template")
    try:
        compiled = selector_from_object(selector if isinstance(selector, dict) else None)
    except SelectorError:
        causes.append(invalid("spec.selector", label_selector_string(selector), ""))
    else:
        causes += pod_template_causes(template, compiled, _no_pod_spec_causes)
    tspec = _dict_at(template, "spec")
    if tspec.get("restartPolicy") != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", tspec.get("restartPolicy"), ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        causes.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                "activeDeadlineSeconds in StatefulSet is not Supported"))
    return causes


#: The BadValue of a rolling update given to an OnDelete StatefulSet: Go prints the struct with its
#: pointer fields' addresses (``%#v``), which cannot be reproduced; the type stands in for it.
_ROLLING_UPDATE_SHOWN = GoValue("apps.RollingUpdateStatefulSetStrategy{...}")


#: ``ValidateStatefulSetUpdate``: the spec fields an update may change.
STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                        "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
_STATEFUL_SET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")


def stateful_set_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateStatefulSetUpdate``: nothing but :data:`STATEFUL_SET_MUTABLE` may change (volume claim
    templates, selector, service name, pod management policy are frozen)."""
    from fakeapi.codec.semantic import semantic_equal

    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    frozen = {k: v for k, v in spec.items() if k not in STATEFUL_SET_MUTABLE}
    old_frozen = {k: v for k, v in old_spec.items() if k not in STATEFUL_SET_MUTABLE}
    if not semantic_equal(frozen, old_frozen):
        return [forbidden("spec", _STATEFUL_SET_FORBIDDEN)]
    return []


def stateful_set_status_causes(status: Any) -> list[Cause]:
    """``ValidateStatefulSetStatus``: counts not negative, none above the replicas, available not above ready."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for name in ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                 "availableReplicas", "collisionCount"):
        causes += nonnegative(status, name, "status")

    def count(name: str) -> int:
        v = status.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    for name in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        if count(name) > count("replicas"):
            causes.append(invalid(f"status.{name}", count(name), "cannot be greater than status.replicas"))
    if count("availableReplicas") > count("readyReplicas"):
        causes.append(invalid("status.availableReplicas", count("availableReplicas"),
                              "cannot be greater than status.readyReplicas"))
    return causes


def daemon_set_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidateDaemonSetSpec``: selector and template labels, the template, the update strategy, counts."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    selector = spec.get("selector")
    template = _dict_at(spec, "template")
    try:
        compiled = selector_from_object(selector if isinstance(selector, dict) else None)
    except SelectorError:
        causes.append(invalid("spec.selector", label_selector_string(selector), "invalid label selector"))
        compiled = None
    meta = _dict_at(template, "metadata")
    labels = meta.get("labels")
    # (a missing selector selects nothing: the template's labels never match it)
    if compiled is not None and not compiled.matches(labels or {}):
        causes.append(invalid("spec.template.metadata.labels", go_string_map(labels),
                              "`selector` does not match template `labels`"))
    causes += empty_selector_causes(selector, "daemonset")
    causes += validate_labels(labels or {}, "spec.template.labels")
    tspec = _dict_at(template, "spec")
    causes += pod_spec_causes(tspec, "spec.template.spec")
    if tspec.get("restartPolicy") != "Always":
        causes.append(not_supported("spec.template.spec.restartPolicy", tspec.get("restartPolicy"), ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        causes.append(invalid("spec.template.spec.activeDeadlineSeconds", tspec["activeDeadlineSeconds"],
                              "activeDeadlineSeconds in DaemonSet is not Supported"))
    causes += nonnegative(spec, "minReadySeconds", "spec")
    causes += _daemon_set_strategy_causes(_dict_at(spec, "updateStrategy"))
    causes += nonnegative(spec, "revisionHistoryLimit", "spec")
    return causes


def _daemon_set_strategy_causes(strategy: dict[str, Any]) -> list[Cause]:
    """``ValidateDaemonSetUpdateStrategy`` and ``ValidateRollingUpdateDaemonSet``."""
    stype = strategy.get("type")
    if stype == "OnDelete":
        return []
    if stype != "RollingUpdate":
        return [not_supported("spec.updateStrategy", stype, ["RollingUpdate", "OnDelete"])]
    rolling = strategy.get("rollingUpdate")
    path = "spec.updateStrategy.rollingUpdate"
    if not isinstance(rolling, dict):
        return [required(path)]
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes: list[Cause] = []
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        causes += int_or_percent_causes(value, f"{path}.{name}")
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        causes += over_100_percent_causes(value, f"{path}.{name}")
    has_unavailable, has_surge = _int_or_percent(unavailable) not in (0, None), _int_or_percent(surge) not in (0, None)
    if has_unavailable and has_surge:
        causes.append(invalid(f"{path}.maxSurge", int_or_string(surge), "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        causes.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return causes


def daemon_set_status_causes(status: Any) -> list[Cause]:
    """``ValidateDaemonSetStatus``: no count negative."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for name in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                 "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
                 "collisionCount"):
        causes += nonnegative(status, name, "status")
    return causes

