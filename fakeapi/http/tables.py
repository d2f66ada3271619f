"""Table responses: ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` (what ``kubectl get`` asks for).

A meta.k8s.io/v1 ``Table`` has column definitions and one row per object,
each row with its cells and the object (``includeObject``: ``None``,
``Object`` or the default ``PartialObjectMetadata``). The columns are:

* custom resources: ``Name``, then the CRD version's
  ``additionalPrinterColumns`` (their ``jsonPath`` read with ``jsonpath-ng``),
  or ``Age`` when it has none (the CRD default);
* the built-in kinds of this module's :data:`PRINTERS`: the columns of
  ``kubernetes/pkg/printers/internalversion/printers.go`` (priority 1 marks
  ``-o wide`` columns), their cells computed as the printers compute them;
* other built-in kinds: the default table convertor's ``Name`` and ``Created At``.

Ages are ``duration.HumanDuration`` of the server clock's time since creation.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from fakeapi.server.clock import parse_time

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind

Obj = dict[str, Any]
Column = tuple[str, str, str, int]  # name, type, description, priority


def wants_table(accept: str) -> bool:
    """Does the Accept header ask for a meta.k8s.io/v1 Table first (v1beta1 is answered as v1)?"""
    for part in accept.split(","):
        params = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in part.split(";")[1:])}
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
        if part.split(";", 1)[0].strip() in ("application/json", "*/*"):
            return False
    return False


def human_duration(d: timedelta) -> str:
    """``k8s.io/apimachinery/pkg/util/duration.HumanDuration``."""
    seconds = int(d.total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


@lru_cache(maxsize=1)
def _meta_docs() -> dict[str, str]:
    try:
        from fakeapi.machinery.openapi import definitions

        props = definitions()["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
        return {k: str(v.get("description", "")) for k, v in props.items()}
    except Exception:  # (the descriptions are documentation only)
        return {}


def _name_col() -> Obj:
    return {"name": "Name", "type": "string", "format": "name", "description": _meta_docs().get("name", ""),
            "priority": 0}


def _age_col() -> Obj:
    return {"name": "Age", "type": "string", "format": "", "description": _meta_docs().get("creationTimestamp", ""),
            "priority": 0}


class _Ctx:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def age(self, obj: Obj) -> str:
        ts = (obj.get("metadata") or {}).get("creationTimestamp")
        if not ts:
            return "<unknown>"
        return human_duration(self.now - parse_time(ts))

    def since(self, ts: Any) -> str:
        return human_duration(self.now - parse_time(ts)) if ts else "<none>"


def _s(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def _ready(conds: Any) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds or [] if isinstance(c, dict))


def _containers_images(spec: Any) -> tuple[str, str]:
    cs = _s(spec, "template", "spec", "containers") or []
    return ",".join(str(c.get("name", "")) for c in cs), ",".join(str(c.get("image", "")) for c in cs)


def _selector(sel: Any) -> str:
    from fakeapi.machinery.selectors import SelectorError, selector_from_map, selector_from_object

    try:
        if isinstance(sel, dict) and ("matchLabels" in sel or "matchExpressions" in sel):
            text = str(selector_from_object(sel))
        elif isinstance(sel, dict):
            text = str(selector_from_map(sel))
        else:
            return "<none>"
    except SelectorError:
        return "<invalid>"
    return text or "<none>"


def _pod(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    total = len(spec.get("containers") or [])
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    reason = status.get("reason") or status.get("phase") or ""
    for s in reversed(statuses):
        st = s.get("state") or {}
        if (st.get("waiting") or {}).get("reason"):
            reason = st["waiting"]["reason"]
        elif (st.get("terminated") or {}).get("reason"):
            reason = st["terminated"]["reason"]
    if (o.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [o["metadata"]["name"], f"{ready}/{total}", reason, str(restarts), c.age(o),
            status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", f"0/{len(gates)}" if gates else "<none>"]


def _replicas(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec)
    return [o["metadata"]["name"], int(spec.get("replicas") or 0), int(status.get("replicas") or 0),
            int(status.get("readyReplicas") or 0), c.age(o), names, images, _selector(spec.get("selector"))]


def _deployment(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec)
    return [o["metadata"]["name"], f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            int(status.get("updatedReplicas") or 0), int(status.get("availableReplicas") or 0), c.age(o),
            names, images, _selector(spec.get("selector"))]


def _stateful_set(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec)
    return [o["metadata"]["name"], f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            c.age(o), names, images]


def _daemon_set(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec)
    node_sel = _s(spec, "template", "spec", "nodeSelector")
    return [o["metadata"]["name"], int(status.get("desiredNumberScheduled") or 0),
            int(status.get("currentNumberScheduled") or 0), int(status.get("numberReady") or 0),
            int(status.get("updatedNumberScheduled") or 0), int(status.get("numberAvailable") or 0),
            _selector(node_sel) if node_sel else "<none>", c.age(o), names, images, _selector(spec.get("selector"))]


def _job(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec)
    completions = spec.get("completions")
    succeeded = int(status.get("succeeded") or 0)
    done = f"{succeeded}/{completions}" if completions is not None else f"{succeeded}/1 of {spec.get('parallelism', 1)}"
    conds = {x.get("type"): x.get("status") for x in status.get("conditions") or []}
    state = ("Complete" if conds.get("Complete") == "True" else "Failed" if conds.get("Failed") == "True"
             else "Suspended" if spec.get("suspend") else "Running")
    start, end = status.get("startTime"), status.get("completionTime")
    duration = human_duration(parse_time(end) - parse_time(start)) if start and end else (
        c.since(start) if start else "")
    return [o["metadata"]["name"], state, done, duration, c.age(o), names, images, _selector(spec.get("selector"))]


def _service(o: Obj, c: _Ctx) -> list[Any]:
    spec = o.get("spec") or {}
    ports = ",".join(f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
                     for p in spec.get("ports") or [])
    ingress = [i.get("ip") or i.get("hostname") for i in _s(o, "status", "loadBalancer", "ingress") or []]
    external = ",".join(filter(None, [*(spec.get("externalIPs") or []), *ingress])) or (
        "<pending>" if spec.get("type") == "LoadBalancer" else "<none>")
    if spec.get("type") == "ExternalName":
        external = spec.get("externalName") or "<none>"
    return [o["metadata"]["name"], spec.get("type", ""), spec.get("clusterIP") or "<none>", external,
            ports or "<none>", c.age(o), _selector(spec.get("selector")) if spec.get("selector") else "<none>"]


def _node(o: Obj, c: _Ctx) -> list[Any]:
    status = o.get("status") or {}
    conds = status.get("conditions") or []
    state = "Ready" if _ready(conds) else "NotReady" if conds else "Unknown"
    if (o.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    labels = (o.get("metadata") or {}).get("labels") or {}
    roles = sorted(k.rpartition("/")[2] for k in labels if k.startswith("node-role.kubernetes.io/"))
    addr = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    info = status.get("nodeInfo") or {}
    return [o["metadata"]["name"], state, ",".join(roles) or "<none>", c.age(o), info.get("kubeletVersion", ""),
            addr.get("InternalIP") or "<none>", addr.get("ExternalIP") or "<none>", info.get("osImage", ""),
            info.get("kernelVersion", ""), info.get("containerRuntimeVersion", "")]


def _pvc(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if (o.get("metadata") or {}).get("deletionTimestamp") else status.get("phase", "")
    return [o["metadata"]["name"], phase, spec.get("volumeName", ""), (status.get("capacity") or {}).get("storage", ""),
            ",".join({"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
                      "ReadWriteOncePod": "RWOP"}.get(m, m) for m in status.get("accessModes") or []),
            spec.get("storageClassName") or "<unset>", spec.get("volumeAttributesClassName") or "<unset>", c.age(o),
            spec.get("volumeMode", "")]


def _event(o: Obj, c: _Ctx) -> list[Any]:
    inv = o.get("involvedObject") or {}
    last = o.get("lastTimestamp") or o.get("eventTime") or (o.get("metadata") or {}).get("creationTimestamp")
    first = o.get("firstTimestamp") or o.get("eventTime")
    source = _s(o, "source", "component") or o.get("reportingComponent") or ""
    return [c.since(last), o.get("type", ""), o.get("reason", ""),
            f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}", inv.get("fieldPath", ""), source,
            str(o.get("message", "")).strip(), c.since(first), int(o.get("count") or 1), o["metadata"]["name"]]


def _pdb(o: Obj, c: _Ctx) -> list[Any]:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
            str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
            int(_s(o, "status", "disruptionsAllowed") or 0), c.age(o)]


def _cron_job(o: Obj, c: _Ctx) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers_images(spec.get("jobTemplate", {}).get("spec") or {})
    return [o["metadata"]["name"], spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            bool(spec.get("suspend")), len(status.get("active") or []),
            c.since(status.get("lastScheduleTime")), c.age(o), names, images,
            _selector(_s(spec, "jobTemplate", "spec", "selector"))]


def _col(name: str, typ: str = "string", priority: int = 0, description: str = "") -> Column:
    return (name, typ, description, priority)


_WORKLOAD_WIDE = [_col("Containers", priority=1, description="Names of each container in the template."),
                  _col("Images", priority=1, description="Images referenced by each container in the template."),
                  _col("Selector", priority=1, description="Label selector of the pods.")]

#: kind -> (columns after Name, the cells function: every cell including the name).
PRINTERS: dict[tuple[str, str], tuple[list[Column], Callable[[Obj, _Ctx], list[Any]]]] = {
    ("", "Pod"): ([_col("Ready"), _col("Status"), _col("Restarts"), _col("Age"), _col("IP", priority=1),
                   _col("Node", priority=1), _col("Nominated Node", priority=1),
                   _col("Readiness Gates", priority=1)], _pod),
    ("", "Namespace"): ([_col("Status"), _col("Age")],
                        lambda o, c: [o["metadata"]["name"], _s(o, "status", "phase") or "", c.age(o)]),
    ("", "ConfigMap"): ([_col("Data", "integer"), _col("Age")], lambda o, c: [
        o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}), c.age(o)]),
    ("", "Secret"): ([_col("Type"), _col("Data", "integer"), _col("Age")], lambda o, c: [
        o["metadata"]["name"], o.get("type", ""), len(o.get("data") or {}), c.age(o)]),
    ("", "ServiceAccount"): ([_col("Secrets", "integer"), _col("Age")], lambda o, c: [
        o["metadata"]["name"], len(o.get("secrets") or []), c.age(o)]),
    ("", "Service"): ([_col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), _col("Age"),
                       _col("Selector", priority=1)], _service),
    ("", "Node"): ([_col("Status"), _col("Roles"), _col("Age"), _col("Version"), _col("Internal-IP", priority=1),
                    _col("External-IP", priority=1), _col("OS-Image", priority=1), _col("Kernel-Version", priority=1),
                    _col("Container-Runtime", priority=1)], _node),
    ("", "PersistentVolumeClaim"): ([_col("Status"), _col("Volume"), _col("Capacity"), _col("Access Modes"),
                                     _col("StorageClass"), _col("VolumeAttributesClass"), _col("Age"),
                                     _col("VolumeMode", priority=1)], _pvc),
    ("", "ReplicationController"): ([_col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                                     _col("Age"), *_WORKLOAD_WIDE], _replicas),
    ("", "Event"): ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", priority=1),
                     _col("Source", priority=1), _col("Message"), _col("First Seen", priority=1),
                     _col("Count", "integer", priority=1), _col("Name", priority=1)], _event),
    ("apps", "Deployment"): ([_col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer"),
                              _col("Age"), *_WORKLOAD_WIDE], _deployment),
    ("apps", "ReplicaSet"): ([_col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                              _col("Age"), *_WORKLOAD_WIDE], _replicas),
    ("apps", "StatefulSet"): ([_col("Ready"), _col("Age"), *_WORKLOAD_WIDE[:2]], _stateful_set),
    ("apps", "DaemonSet"): ([_col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                             _col("Up-to-date", "integer"), _col("Available", "integer"), _col("Node Selector"),
                             _col("Age"), *_WORKLOAD_WIDE], _daemon_set),
    ("batch", "Job"): ([_col("Status"), _col("Completions"), _col("Duration"), _col("Age"), *_WORKLOAD_WIDE], _job),
    ("batch", "CronJob"): ([_col("Schedule"), _col("Timezone"), _col("Suspend", "boolean"), _col("Active", "integer"),
                            _col("Last Schedule"), _col("Age"), *_WORKLOAD_WIDE], _cron_job),
    ("coordination.k8s.io", "Lease"): ([_col("Holder"), _col("Age")], lambda o, c: [
        o["metadata"]["name"], _s(o, "spec", "holderIdentity") or "", c.age(o)]),
    ("policy", "PodDisruptionBudget"): ([_col("Min Available"), _col("Max Unavailable"),
                                         _col("Allowed Disruptions", "integer"), _col("Age")], _pdb),
}


def _jsonpath(obj: Obj, path: str) -> Any:
    from jsonpath_ng.exceptions import JsonPathParserError
    from jsonpath_ng.ext import parse

    try:
        found = [m.value for m in parse("$" + path.strip()).find(obj)]
    except (JsonPathParserError, Exception):  # (a column that does not parse shows nothing, as kubectl does)
        return None
    if not found:
        return None
    return found[0] if len(found) == 1 else ",".join(str(v) for v in found)


def _cr_columns(kind: Kind, crd: Obj | None) -> list[Obj]:
    cols: list[Obj] = []
    if crd is not None:
        for v in (crd.get("spec") or {}).get("versions") or []:
            if v.get("name") == kind.version:
                cols = list(v.get("additionalPrinterColumns") or [])
        if not cols:
            cols = list((crd.get("spec") or {}).get("additionalPrinterColumns") or [])
    if not cols:
        cols = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    return cols


def table(kind: Kind, items: list[Obj], *, now: datetime, crd: Obj | None = None, include: str = "",
          list_meta: Obj | None = None, columns: bool = True) -> Obj:
    """The Table of ``items`` (``include``: the ``includeObject`` option; ``columns``: with the column
    definitions, which a watch sends only in its first event)."""
    ctx = _Ctx(now)
    defs: list[Obj]
    cells: Callable[[Obj], list[Any]]
    printer = PRINTERS.get((kind.group, kind.kind)) if kind.builtin else None
    if not kind.builtin:
        cols = _cr_columns(kind, crd)
        defs = [_name_col()] + [{"name": c.get("name", ""), "type": c.get("type", "string"),
                                 "format": c.get("format", ""), "description": c.get("description", ""),
                                 "priority": int(c.get("priority") or 0)} for c in cols]

        def cr_cells(o: Obj) -> list[Any]:
            return [o["metadata"]["name"], *(_jsonpath(o, str(c.get("jsonPath", ""))) for c in cols)]

        cells = cr_cells
    elif printer is not None:
        defs = [_name_col()] + [{"name": n, "type": t, "format": "", "description": d, "priority": p}
                                for n, t, d, p in printer[0]]
        if defs[1]["name"] == "Age" or any(d["name"] == "Age" for d in defs):
            for d in defs:
                if d["name"] == "Age" and not d["description"]:
                    d["description"] = _age_col()["description"]
        fn = printer[1]
        if kind.kind == "Event":
            defs = defs[1:]  # (the Event printer has no leading Name column: Name is its last, wide one)

        def builtin_cells(o: Obj) -> list[Any]:
            return fn(o, ctx)

        cells = builtin_cells
    else:
        defs = [_name_col(), {"name": "Created At", "type": "date", "format": "",
                              "description": _meta_docs().get("creationTimestamp", ""), "priority": 0}]

        def default_cells(o: Obj) -> list[Any]:
            return [o["metadata"]["name"], (o.get("metadata") or {}).get("creationTimestamp")]

        cells = default_cells
    rows = []
    for o in items:
        row: Obj = {"cells": cells(o)}
        if include == "Object":
            row["object"] = {"apiVersion": kind.api_version, "kind": kind.kind, **o}  # (list items lack them)
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o.get("metadata") or {}}
        rows.append(row)
    out: Obj = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": dict(list_meta or {})}
    if columns:
        out["columnDefinitions"] = defs
    out["rows"] = rows
    return out
