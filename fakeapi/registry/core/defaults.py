"""Defaults the real apiserver applies to the core group's kinds, as a controller can observe them.

A port of ``pkg/apis/core/v1/defaults.go`` (and the generated ``zz_generated.defaults.go`` that
walks nested structs) for Pods, Secrets, Services and PersistentVolumeClaims (a Namespace's are in
:mod:`fakeapi.registry.core.namespacedefaults`, which every server runs on start), plus
what the Pod create strategy sets (``status.phase: Pending`` and ``status.qosClass``), and the
pod template defaults the workload kinds of other groups share (:func:`pod_template_defaults`).
Admission plugins (ServiceAccount token volume, Priority, DefaultTolerationSeconds) are not part
of this. The other groups' defaults are in their own packages (``fakeapi.registry.<group>.defaults``).
"""

from __future__ import annotations

import base64
import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

from fakeapi.machinery.quantity import format_quantity, parse_quantity, quantity_format

JSONDict = dict[str, Any]

_DEFAULT_MODE = 420  # 0644


def default_service(obj: JSONDict) -> None:
    """``SetDefaults_Service``: session affinity, type, each port's protocol and target port, traffic policies.

    What the Service storage allocates (cluster IPs, IP families, node ports) is
    :mod:`fakeapi.registry.core.serviceallocation`'s.
    """
    spec = dict_at(obj, "spec")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    stype = spec["type"]
    for p in list_at(spec, "ports"):
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


def pod_template_defaults(spec: JSONDict) -> None:
    """A workload's ``spec.template``: ``SetDefaults_PodSpec`` and the nested defaults (containers,
    volumes, probes), not what ``SetDefaults_Pod`` adds to a Pod itself."""
    tspec = dict_at(dict_at(spec, "template"), "spec")
    _pod_spec(tspec, list_at(tspec, "containers"), list_at(tspec, "initContainers"), list_at(tspec, "ephemeralContainers"))


def default_pvc(obj: JSONDict) -> None:
    """``SetDefaults_PersistentVolumeClaim``: ``volumeMode: Filesystem`` and ``status.phase: Pending``."""
    spec = dict_at(obj, "spec")
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    status = dict_at(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def dict_at(parent: JSONDict, key: str) -> JSONDict:
    """``parent[key]``, made an empty dict first when it is not a dict (the defaults' walk into a struct)."""
    v = parent.get(key)
    if type(v) is not dict:
        v = parent[key] = {}
    return v


def _empty(v: Any) -> bool:
    return v is None or v == "" or (v == 0 and type(v) is not bool)


# --- Pod ------------------------------------------------------------------------------------


def default_pod(obj: JSONDict, base: JSONDict | None = None) -> None:
    spec = dict_at(obj, "spec")
    if base is not None and spec is base.get("spec"):
        _pod_status(obj, spec)  # the stored spec, defaulted already
        return
    containers = list_at(spec, "containers")
    init = list_at(spec, "initContainers")
    ephemeral = list_at(spec, "ephemeralContainers")
    for c in (*containers, *init):
        _requests_from_limits(c)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for c in (*containers, *init):
            for p in list_at(c, "ports"):
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


def list_at(parent: JSONDict, key: str) -> list[JSONDict]:
    """The dicts of the list ``parent[key]`` (the defaults' walk into a slice of structs), to read:
    the list itself when it holds nothing else."""
    v = parent.get(key)
    if type(v) is not list:
        return []
    if _only_dicts(map(type, v)):
        return v  # (every item a dict, the common case: the list itself, which the defaults only read)
    return [x for x in v if type(x) is dict]


#: Are all these types ``dict``? Called on ``map(type, items)``: a check made in C.
_only_dicts = frozenset({dict}).issuperset


def service_account_alias(spec: JSONDict) -> None:
    """The PodSpec conversions' alias: ``serviceAccountName`` from the deprecated ``serviceAccount`` when
    empty, and ``serviceAccount`` always written back as ``serviceAccountName`` (both omitted when empty)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccount", None)


def default_replication_controller(obj: JSONDict) -> None:
    """``SetDefaults_ReplicationController`` (core/v1): the template's labels as the selector and the
    object's labels when those are empty, one replica; the pod template's defaults."""
    spec = dict_at(obj, "spec")
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if type(template) is dict else None
    if type(labels) is dict and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = dict_at(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if type(template) is dict:
        pod_template_defaults(spec)


def default_node(obj: JSONDict) -> None:
    """``SetDefaults_NodeStatus``: allocatable is the capacity when not given."""
    status = obj.get("status")
    if type(status) is dict and status.get("allocatable") is None and type(status.get("capacity")) is dict:
        status["allocatable"] = dict(status["capacity"])


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
    for v in list_at(spec, "volumes"):
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
    for p in list_at(c, "ports"):
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
    for e in list_at(c, "env"):
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
        for psrc in list_at(proj, "sources"):
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
    for item in list_at(dapi, "items"):
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
        sources = [c.get("resources") or {} for c in (*list_at(spec, "containers"), *list_at(spec, "initContainers"))]
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


def default_secret(obj: JSONDict) -> None:
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
