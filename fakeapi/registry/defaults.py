"""Defaults the real apiserver applies to built-in kinds, as a controller can observe them.

A port of ``pkg/apis/core/v1/defaults.go`` (and the generated
``zz_generated.defaults.go`` that walks nested structs) for the kinds fakeapi
serves, plus what the Pod create strategy sets (``status.phase: Pending`` and
``status.qosClass``). Admission plugins (ServiceAccount token volume,
Priority, DefaultTolerationSeconds) are not part of this.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from fakeapi.machinery.quantity import format_quantity, parse_quantity, quantity_format

JSONDict = dict[str, Any]

_DEFAULT_MODE = 420  # 0644


def apply_builtin_defaults(kind: str, obj: JSONDict, base: JSONDict | None = None) -> None:
    """Apply the server-side defaults of built-in ``kind`` to ``obj``, in place (idempotent).

    Pod: PodSpec, containers, ports, probes, volumes, resources; ``status.phase``
    ``Pending`` and ``status.qosClass`` when absent. Secret: ``type: Opaque``, and ``stringData`` merged into ``data``.
    RoleBinding: the roleRef's and subjects' apiGroups. Namespace: the ``kubernetes.io/metadata.name`` label and ``status.phase:
    Active``. Deployment: replicas, strategy, revisionHistoryLimit, progressDeadlineSeconds and the pod
    template's spec. ReplicaSet: replicas and the pod template's spec. ReplicationController: selector, labels, replicas, template. Node: allocatable. NetworkPolicy: policy types, ports' protocol. Other kinds: nothing. ``base``: a stored object ``obj`` shares parts with; a
    Pod spec that *is* its spec was defaulted when stored and is not walked again.
    """
    if kind == "Pod":
        _pod(obj, base)
        return
    fn = _BY_KIND.get(kind)
    if fn is not None:
        fn(obj)


def _service(obj: JSONDict) -> None:
    """``SetDefaults_Service``: session affinity, type, each port's protocol and target port, traffic policies.

    What the Service storage allocates (cluster IPs, IP families, node ports) is
    :mod:`fakeapi.registry.core.serviceallocation`'s.
    """
    spec = _dict(obj, "spec")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    stype = spec["type"]
    for p in _list(spec, "ports"):
        if not p.get("protocol"):
            p["protocol"] = "TCP"
        if p.get("targetPort") in (None, 0, "") and isinstance(p.get("port"), int):
            p["targetPort"] = p["port"]
    accessible = stype in ("LoadBalancer", "NodePort") or (stype == "ClusterIP" and bool(spec.get("externalIPs")))
    if accessible and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and stype in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _job(obj: JSONDict) -> None:
    """``SetObjectDefaults_Job`` (batch/v1): the spec's defaults, the job's labels from its template's, the
    template's pod defaults.

    The selector and the template labels the server generates (``batch.kubernetes.io/controller-uid``)
    come later, with the uid (:func:`job_selector`).
    """
    spec = _dict(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    template = _dict(spec, "template")
    tmeta = template.get("metadata")
    labels = tmeta.get("labels") if type(tmeta) is dict else None
    meta = _dict(obj, "metadata")
    if labels is not None and not meta.get("labels"):
        meta["labels"] = dict(labels)
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = spec.get("podFailurePolicy")
    _pod_failure_policy(policy)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    _pod_template(spec)


#: The labels a Job's pods get from the server (the legacy ones too), and the one its selector uses.
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def job_selector(obj: JSONDict) -> None:
    """The Job strategy's ``generateSelector`` (unless ``manualSelector``), on create, once the uid is set.

    The template gets the job-name and controller-uid labels (those it does not set), the selector
    ``batch.kubernetes.io/controller-uid``. The job's own labels, when they came from the template's
    by default, show the new ones too (the defaults run again as the stored object is read back).
    """
    spec = _dict(obj, "spec")
    if spec.get("manualSelector") is True:
        return
    meta = obj["metadata"]
    template = _dict(spec, "template")
    tmeta = _dict(template, "metadata")
    labels = tmeta.get("labels")
    copied = labels is not None and meta.get("labels") == labels
    if type(labels) is not dict:
        labels = tmeta["labels"] = {}
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, meta.get("name") or "")
    for key in JOB_UID_LABELS:
        labels.setdefault(key, meta.get("uid") or "")
    selector = _dict(spec, "selector")
    match = _dict(selector, "matchLabels")
    match.setdefault(JOB_UID_LABELS[1], meta.get("uid") or "")
    if copied or not meta.get("labels"):
        meta["labels"] = dict(labels)


def _pod_template(spec: JSONDict) -> None:
    """A workload's ``spec.template``: ``SetDefaults_PodSpec`` and the nested defaults (containers,
    volumes, probes), not what ``SetDefaults_Pod`` adds to a Pod itself."""
    tspec = _dict(_dict(spec, "template"), "spec")
    _pod_spec(tspec, _list(tspec, "containers"), _list(tspec, "initContainers"), _list(tspec, "ephemeralContainers"))


def _cron_job(obj: JSONDict) -> None:
    """``SetObjectDefaults_CronJob``: concurrency, suspension, history limits, and the job template's pod
    template (``SetDefaults_Job`` is a Job's, not a template's)."""
    spec = _dict(obj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    job_spec = _dict(_dict(spec, "jobTemplate"), "spec")
    _pod_failure_policy(job_spec.get("podFailurePolicy"))
    _pod_template(job_spec)


def _pod_failure_policy(policy: Any) -> None:
    """``SetDefaults_PodFailurePolicyOnPodConditionsPattern``: a pattern's status defaults to True."""
    if type(policy) is dict:
        for rule in _list(policy, "rules"):
            for pattern in _list(rule, "onPodConditions"):
                if not pattern.get("status"):
                    pattern["status"] = "True"


def _daemon_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_DaemonSet`` (apps/v1): a rolling update of one unavailable pod and no surge,
    a history of 10, the pod template's defaults."""
    spec = _dict(obj, "spec")
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = 1
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _pod_template(spec)


def _pvc(obj: JSONDict) -> None:
    """``SetDefaults_PersistentVolumeClaim``: ``volumeMode: Filesystem`` and ``status.phase: Pending``."""
    spec = _dict(obj, "spec")
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def _stateful_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_StatefulSet`` (apps/v1): the spec's defaults, its pod template's, and each
    volume claim template's (``SetDefaults_PersistentVolumeClaim``: ``volumeMode``, ``status.phase``)."""
    spec = _dict(obj, "spec")
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        if strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and type(rolling) is dict and rolling.get("partition") is None:
        rolling["partition"] = 0
    retention = _dict(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        if not retention.get(key):
            retention[key] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _pod_template(spec)
    for claim in _list(spec, "volumeClaimTemplates"):
        _pvc(claim)


def _deployment(obj: JSONDict) -> None:
    """``SetObjectDefaults_Deployment`` (apps/v1): the spec's defaults and its pod template's.

    The template gets ``SetDefaults_PodSpec`` and the nested defaults of a Pod, not what
    ``SetDefaults_Pod`` adds to a Pod itself (requests from limits, ``enableServiceLinks``).
    """
    spec = _dict(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = _dict(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        for key in ("maxUnavailable", "maxSurge"):
            if rolling.get(key) is None:
                rolling[key] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    _pod_template(spec)


def _replica_set(obj: JSONDict) -> None:
    """``SetObjectDefaults_ReplicaSet`` (apps/v1): one replica, and the pod template's defaults (as a
    Deployment's template gets them)."""
    spec = _dict(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _pod_template(spec)


def _replication_controller(obj: JSONDict) -> None:
    """``SetDefaults_ReplicationController`` (core/v1): the template's labels as the selector and the
    object's labels when those are empty, one replica; the pod template's defaults."""
    spec = _dict(obj, "spec")
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if type(template) is dict else None
    if type(labels) is dict and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _dict(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if type(template) is dict:
        _pod_template(spec)


def _node(obj: JSONDict) -> None:
    """``SetDefaults_NodeStatus``: allocatable is the capacity when not given."""
    status = obj.get("status")
    if type(status) is dict and status.get("allocatable") is None and type(status.get("capacity")) is dict:
        status["allocatable"] = dict(status["capacity"])


def _dict(parent: JSONDict, key: str) -> JSONDict:
    v = parent.get(key)
    if type(v) is not dict:
        v = parent[key] = {}
    return v


def _empty(v: Any) -> bool:
    return v is None or v == "" or (v == 0 and type(v) is not bool)


# --- Pod ------------------------------------------------------------------------------------


def _pod(obj: JSONDict, base: JSONDict | None = None) -> None:
    spec = _dict(obj, "spec")
    if base is not None and spec is base.get("spec"):
        _pod_status(obj, spec)  # the stored spec, defaulted already
        return
    containers = _list(spec, "containers")
    init = _list(spec, "initContainers")
    ephemeral = _list(spec, "ephemeralContainers")
    for c in (*containers, *init):
        _requests_from_limits(c)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for c in (*containers, *init):
            for p in _list(c, "ports"):
                if _empty(p.get("hostPort")) and "containerPort" in p:
                    p["hostPort"] = p["containerPort"]
    _pod_spec(spec, containers, init, ephemeral)
    _pod_status(obj, spec)


def _pod_status(obj: JSONDict, spec: JSONDict) -> None:
    """What the Pod create strategy sets in status: ``phase: Pending`` and the QoS class, when absent."""
    status = obj.get("status")
    if type(status) is not dict:
        status = obj["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Pending"
    if not status.get("qosClass"):
        status["qosClass"] = pod_qos_class(spec)


def _list(parent: JSONDict, key: str) -> list[JSONDict]:
    v = parent.get(key)
    if type(v) is not list:
        return []
    return [x for x in v if type(x) is dict]


def service_account_alias(spec: JSONDict) -> None:
    """The PodSpec conversions' alias: ``serviceAccountName`` from the deprecated ``serviceAccount`` when
    empty, and ``serviceAccount`` always written back as ``serviceAccountName`` (both omitted when empty)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccount", None)


def _pod_spec(spec: JSONDict, containers: list[JSONDict], init: list[JSONDict], ephemeral: list[JSONDict]) -> None:
    service_account_alias(spec)
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for c in (*containers, *init, *ephemeral):
        _container(c)
    for v in _list(spec, "volumes"):
        _volume(v)
    for key in ("overhead",):
        if type(spec.get(key)) is dict:
            _round_resource_list(spec[key])
    res = spec.get("resources")
    if type(res) is dict:
        for key in ("limits", "requests"):
            if type(res.get(key)) is dict:
                _round_resource_list(res[key])


def _container(c: JSONDict) -> None:
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if image_tag(c.get("image")) == "latest" else "IfNotPresent"
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    res = c.get("resources")
    if type(res) is not dict:
        res = c["resources"] = {}
    for key in ("limits", "requests"):
        if type(res.get(key)) is dict:
            _round_resource_list(res[key])
    for p in _list(c, "ports"):
        if not p.get("protocol"):
            p["protocol"] = "TCP"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        pr = c.get(probe)
        if type(pr) is dict:
            _probe(pr)
    lc = c.get("lifecycle")
    if type(lc) is dict:
        for hook in ("postStart", "preStop"):
            h = lc.get(hook)
            if type(h) is dict:
                _handler(h)
    for e in _list(c, "env"):
        vf = e.get("valueFrom")
        if type(vf) is dict and type(vf.get("fieldRef")) is dict and not vf["fieldRef"].get("apiVersion"):
            vf["fieldRef"]["apiVersion"] = "v1"


def _probe(p: JSONDict) -> None:
    for key, default in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if _empty(p.get(key)):
            p[key] = default
    _handler(p)


def _handler(h: JSONDict) -> None:
    g = h.get("httpGet")
    if type(g) is dict:
        if not g.get("path"):
            g["path"] = "/"
        if not g.get("scheme"):
            g["scheme"] = "HTTP"
    grpc = h.get("grpc")
    if type(grpc) is dict and grpc.get("service") is None:
        grpc["service"] = ""


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)


_VOLUME_SOURCE_SET = frozenset(_VOLUME_SOURCES)


def _has_source(v: JSONDict) -> bool:
    """Does a volume set one of its sources? (``v.get(s) is not None`` for some source ``s``)."""
    for k, x in v.items():  # noqa: SIM110 (a loop, not any(): no generator on the write path)
        if x is not None and k in _VOLUME_SOURCE_SET:
            return True
    return False


def _volume(v: JSONDict) -> None:
    if not _has_source(v):
        v["emptyDir"] = {}
    for src in ("secret", "configMap", "downwardAPI", "projected"):
        s = v.get(src)
        if type(s) is dict and s.get("defaultMode") is None:
            s["defaultMode"] = _DEFAULT_MODE
    hp = v.get("hostPath")
    if type(hp) is dict and hp.get("type") is None:
        hp["type"] = ""
    proj = v.get("projected")
    if type(proj) is dict:
        for psrc in _list(proj, "sources"):
            sat = psrc.get("serviceAccountToken")
            if type(sat) is dict and sat.get("expirationSeconds") is None:
                sat["expirationSeconds"] = 3600
            _field_refs(psrc.get("downwardAPI"))
    _field_refs(v.get("downwardAPI"))
    img = v.get("image")
    if type(img) is dict and not img.get("pullPolicy"):
        img["pullPolicy"] = "Always" if image_tag(img.get("reference")) == "latest" else "IfNotPresent"
    eph = v.get("ephemeral")
    if type(eph) is dict:
        tmpl = eph.get("volumeClaimTemplate")
        if type(tmpl) is dict and type(tmpl.get("spec")) is dict and tmpl["spec"].get("volumeMode") is None:
            tmpl["spec"]["volumeMode"] = "Filesystem"


def _field_refs(dapi: Any) -> None:
    if type(dapi) is not dict:
        return
    for item in _list(dapi, "items"):
        fr = item.get("fieldRef")
        if type(fr) is dict and not fr.get("apiVersion"):
            fr["apiVersion"] = "v1"


def _requests_from_limits(c: JSONDict) -> None:
    """``SetDefaults_Pod``: a limit without a request defaults the request."""
    res = c.get("resources")
    if type(res) is not dict:
        return
    limits = res.get("limits")
    if type(limits) is not dict:
        return
    requests = res.get("requests")
    if type(requests) is not dict:
        requests = res["requests"] = {}
    for k, v in limits.items():
        if k not in requests:
            requests[k] = v


def _round_resource_list(rl: JSONDict) -> None:
    """``SetDefaults_ResourceList``: values are rounded up to milli precision."""
    for k, v in rl.items():
        r = _rounded_text(v) if type(v) is str else _rounded(v)
        if r is not None:
            rl[k] = r


def _rounded(v: Any) -> str | None:
    """``v`` rounded up to milli precision, or None when it needs no rounding (or is not a quantity)."""
    try:
        q = parse_quantity(v)
    except ValueError:
        return None
    milli = q * 1000
    if milli.denominator == 1:
        return None
    rounded = math.ceil(milli) if milli > 0 else -math.ceil(-milli)
    return format_quantity(Fraction(rounded, 1000), quantity_format(v))


#: :func:`_rounded` of a string (strings only: ``1``, ``1.0`` and ``True`` would share a cache key).
_rounded_text = lru_cache(maxsize=4096)(_rounded)


def image_tag(image: Any) -> str:
    """The tag ``parsers.ParseImageName`` gives an image reference: ``latest`` when none is set.

    A digest without a tag gives "" (so ``IfNotPresent``); an unparsable reference gives "".
    """
    if not isinstance(image, str):
        return ""
    return _image_tag(image)


@lru_cache(maxsize=4096)
def _image_tag(image: str) -> str:
    if not image or image != image.strip() or any(c.isupper() for c in _repo(image)):
        return ""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _repo(image: str) -> str:
    name = image.partition("@")[0]
    parts = name.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # the registry host may have capitals and a port
    repo = "/".join(parts)
    return repo.rsplit(":", 1)[0] if ":" in parts[-1] else repo


_QOS_RESOURCES = ("cpu", "memory")


def _amount(v: Any) -> int | Fraction | None:
    """A quantity in nano units (exact: every parsed quantity is a whole number of nanos); None unless > 0."""
    try:
        q = parse_quantity(v)
    except ValueError:
        return None
    if q <= 0:
        return None
    n = q * _NANOS
    return n.numerator if n.denominator == 1 else n


_NANOS = 10**9
#: :func:`_amount` of a string (strings only: ``1``, ``1.0`` and ``True`` would share a cache key).
_amount_text = lru_cache(maxsize=4096)(_amount)


def pod_qos_class(spec: JSONDict) -> str:
    """``qos.GetPodQOS``: ``Guaranteed``, ``Burstable`` or ``BestEffort`` from cpu/memory requests and limits.

    Pod-level ``spec.resources``, when set, decides alone (PodLevelResources).
    """
    requests: dict[str, int | Fraction] = {}
    limits: dict[str, int | Fraction] = {}
    guaranteed = True
    pod_res = spec.get("resources")
    if type(pod_res) is dict and (pod_res.get("requests") or pod_res.get("limits")):
        sources: list[JSONDict] = [pod_res]
    else:
        sources = [c.get("resources") or {} for c in (*_list(spec, "containers"), *_list(spec, "initContainers"))]
    for res in sources:
        if type(res) is not dict:
            continue
        req = res.get("requests") or {}
        lim = res.get("limits") or {}
        for name in _QOS_RESOURCES:
            if name in req:
                v = req[name]
                a = _amount_text(v) if type(v) is str else _amount(v)
                if a is not None:
                    requests[name] = requests.get(name, 0) + a
        found = 0
        for name in _QOS_RESOURCES:
            if name in lim:
                v = lim[name]
                a = _amount_text(v) if type(v) is str else _amount(v)
                if a is not None:
                    found += 1
                    limits[name] = limits.get(name, 0) + a
        if found != len(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed:
        for name, r in requests.items():
            if limits.get(name) != r:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


# --- other kinds ------------------------------------------------------------------------------


def _secret(obj: JSONDict) -> None:
    """``type: Opaque`` when unset; and ``stringData``, a write-only field, merged into ``data``.

    The merge is the v1-to-internal conversion's (``Convert_v1_Secret_To_core_Secret``): each
    value is base64-encoded into ``data`` (overwriting the same key), and ``stringData`` is never
    stored. Values that are not strings are left for validation to report.
    """
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.get("stringData")
    if type(string_data) is dict and all(type(v) is str for v in string_data.values()):
        del obj["stringData"]
        if string_data:
            data = obj.get("data")
            merged = dict(data) if type(data) is dict else {}  # (data may be a stored map: replaced, not changed)
            for k, v in string_data.items():
                merged[k] = base64.b64encode(v.encode()).decode()
            obj["data"] = merged


def _namespace(obj: JSONDict) -> None:
    meta = obj.get("metadata")
    if type(meta) is dict and meta.get("name"):
        labels = meta.get("labels")
        if type(labels) is not dict:
            labels = meta["labels"] = {}
        if labels.get("kubernetes.io/metadata.name") != meta["name"]:  # the map may be a stored one: no needless write
            labels["kubernetes.io/metadata.name"] = meta["name"]
    status = obj.get("status")
    if type(status) is not dict:
        status = obj["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Active"


#: The RBAC API group (its bindings' defaults here, their validation in builtinvalidation.py).
RBAC_GROUP = "rbac.authorization.k8s.io"


def _role_binding(obj: JSONDict) -> None:
    """``SetDefaults_RoleBinding`` and ``SetDefaults_Subject``: the roleRef's apiGroup is RBAC's; a
    User's or Group's subject apiGroup too (a ServiceAccount's stays empty)."""
    ref = obj.get("roleRef")
    if type(ref) is dict and not ref.get("apiGroup"):
        obj["roleRef"] = {**ref, "apiGroup": RBAC_GROUP}
    subjects = obj.get("subjects")
    if type(subjects) is list and any(type(s) is dict and not s.get("apiGroup") and s.get("kind") in ("User", "Group")
                                      for s in subjects):
        obj["subjects"] = [{**s, "apiGroup": RBAC_GROUP}
                           if type(s) is dict and not s.get("apiGroup") and s.get("kind") in ("User", "Group") else s
                           for s in subjects]


def _network_policy(obj: JSONDict) -> None:
    """``SetObjectDefaults_NetworkPolicy`` (networking/v1): ``SetDefaults_NetworkPolicy`` (empty ``policyTypes``:
    ``Ingress``, and ``Egress`` when there are egress rules) and ``SetDefaults_NetworkPolicyPort`` (a port's
    nil ``protocol``: ``TCP``) on each rule's ports.

    ``spec.podSelector`` is a ``metav1.LabelSelector`` value, never nil: an absent one is the empty
    selector (all pods), as Go decodes it and as it is stored (``{}``), so that an update that leaves it
    out changes no spec (nor the generation).
    """
    spec = _dict(obj, "spec")
    if type(spec.get("podSelector")) is not dict:
        spec["podSelector"] = {}
    types = spec.get("policyTypes")
    if type(types) is not list or not types:
        egress = spec.get("egress")
        spec["policyTypes"] = ["Ingress", "Egress"] if type(egress) is list and egress else ["Ingress"]
    for rules_key in ("ingress", "egress"):
        for rule in _list(spec, rules_key):
            for port in _list(rule, "ports"):
                if port.get("protocol") is None:
                    port["protocol"] = "TCP"


_BY_KIND: dict[str, Callable[[JSONDict], None]] = {
    "Pod": _pod,
    "Secret": _secret,
    "Namespace": _namespace,
    "RoleBinding": _role_binding,
    "Deployment": _deployment,
    "ReplicaSet": _replica_set,
    "Service": _service,
    "Job": _job,
    "StatefulSet": _stateful_set,
    "DaemonSet": _daemon_set,
    "CronJob": _cron_job,
    "PersistentVolumeClaim": _pvc,
    "ClusterRoleBinding": _role_binding,
    "NetworkPolicy": _network_policy,
    "ReplicationController": _replication_controller,
    "Node": _node,
}
