"""The subresources and review resources of kube-apiserver that are not stored objects.

Served by :class:`~fakeapi.http.rest.RestAPI` beside the stored kinds:

* ``serviceaccounts/token`` (TokenRequest, signed by :mod:`fakeapi.http.tokens`)
  and ``tokenreviews``, which validates such tokens;
* ``selfsubjectreviews`` (who the caller is: a service account's token names
  it, anything else is the administrator of the kubeconfig's client
  certificate), ``selfsubjectaccessreviews``, ``selfsubjectrulesreviews``,
  ``subjectaccessreviews`` and ``localsubjectaccessreviews``: **every request
  is allowed** (fakeapi has no RBAC authorizer), and each answer says so in its
  ``reason``;
* ``pods/log``: what the simulated kubelet's containers wrote
  (:meth:`~fakeapi.host.kubelet.Kubelet.write_log`); ``follow`` returns what
  is there and ends;
* ``pods/eviction``: a policy/v1 Eviction that deletes the pod unless a
  PodDisruptionBudget selecting it allows no disruption (429, as the eviction
  REST answers), its ``disruptionsAllowed`` computed at the request from the
  pods it selects as the disruption controller computes it;
* ``scale`` (autoscaling/v1 Scale) of Deployments, ReplicaSets, StatefulSets,
  ReplicationControllers and custom resources whose CRD version has
  ``subresources.scale``;
* ``certificatesigningrequests/approval``: only ``status.conditions`` change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from fakeapi.http import tokens
from fakeapi.http.tls import ADMIN_GROUPS, ADMIN_USER
from fakeapi.machinery import errors
from fakeapi.machinery.errors import ApiError, Cause

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind
    from fakeapi.server.apiserver import APIServer

Obj = dict[str, Any]

#: The answer of every access review.
ALLOW_REASON = "fakeapi allows every request: no RBAC authorizer is configured"

#: Review resources: (group, version, plural) -> (kind, namespaced).
REVIEWS: dict[tuple[str, str, str], tuple[str, bool]] = {
    ("authentication.k8s.io", "v1", "tokenreviews"): ("TokenReview", False),
    ("authentication.k8s.io", "v1", "selfsubjectreviews"): ("SelfSubjectReview", False),
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews"): ("SelfSubjectAccessReview", False),
    ("authorization.k8s.io", "v1", "selfsubjectrulesreviews"): ("SelfSubjectRulesReview", False),
    ("authorization.k8s.io", "v1", "subjectaccessreviews"): ("SubjectAccessReview", False),
    ("authorization.k8s.io", "v1", "localsubjectaccessreviews"): ("LocalSubjectAccessReview", True),
}

#: Built-in kinds with a ``scale`` subresource: (group, kind).
SCALABLE = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("", "ReplicationController")}

#: (group, kind, subresource) -> (verbs, the kind it answers with, its group/version).
KIND_SUBRESOURCES: dict[tuple[str, str, str], tuple[list[str], str, str]] = {
    ("", "Pod", "log"): (["get"], "Pod", "v1"),
    ("", "Pod", "eviction"): (["create"], "Eviction", "policy/v1"),
    ("", "ServiceAccount", "token"): (["create"], "TokenRequest", "authentication.k8s.io/v1"),
    ("certificates.k8s.io", "CertificateSigningRequest", "approval"): (
        ["get", "patch", "update"], "CertificateSigningRequest", "certificates.k8s.io/v1"),
    **{(g, k, "scale"): (["get", "patch", "update"], "Scale", "autoscaling/v1") for g, k in SCALABLE},
}


# ----------------------------------------------------------------- discovery facts


def review_groups() -> dict[str, list[str]]:
    """The groups (and versions) of the review resources."""
    out: dict[str, list[str]] = {}
    for g, v, _ in REVIEWS:
        out.setdefault(g, [])
        if v not in out[g]:
            out[g].append(v)
    return out


def review_resources(group: str, version: str) -> list[Obj]:
    """The APIResource entries of the review resources of one group/version."""
    return [{"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
             "verbs": ["create"]}
            for (g, v, plural), (kind, namespaced) in sorted(REVIEWS.items()) if (g, v) == (group, version)]


def crd_scale(kind: Kind) -> Obj | None:
    """The ``subresources.scale`` of a custom kind's version, or None."""
    scale = kind.extra.get("scale") if not kind.builtin else None
    return scale if isinstance(scale, dict) else None


def subresource_entries(kind: Kind) -> list[Obj]:
    """The APIResource entries of a kind's subresources served here (``pods/log``, ``deployments/scale``...)."""
    out = []
    for (g, k, sub), (verbs, answer, gv) in sorted(KIND_SUBRESOURCES.items(), key=lambda i: i[0][2]):
        if kind.builtin and (kind.group, kind.kind) == (g, k):
            group, _, version = gv.rpartition("/")
            out.append({"name": f"{kind.plural}/{sub}", "singularName": "", "namespaced": kind.namespaced,
                        "group": group, "version": version, "kind": answer, "verbs": list(verbs)})
    if crd_scale(kind) is not None:
        out.append({"name": f"{kind.plural}/scale", "singularName": "", "namespaced": kind.namespaced,
                    "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]})
    return out


def serves(kind: Kind, sub: str) -> bool:
    """Is ``sub`` a subresource of ``kind`` served here?"""
    if sub == "scale" and crd_scale(kind) is not None:
        return True
    return kind.builtin and (kind.group, kind.kind, sub) in KIND_SUBRESOURCES


# ----------------------------------------------------------------- identity


def user_of(api: APIServer, headers: Mapping[str, str]) -> Obj:
    """The caller: the service account a bearer token of this server names, else the administrator."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        status = tokens.issuer_for(api).review(api, auth[7:].strip(), None)
        if status.get("authenticated"):
            user: Obj = status["user"]
            return user
    return {"username": ADMIN_USER, "groups": list(ADMIN_GROUPS)}


# ----------------------------------------------------------------- small helpers


def _spec(body: Any) -> Obj:
    spec = body.get("spec") if isinstance(body, dict) else None
    return spec if isinstance(spec, dict) else {}


def _answer(kind: str, api_version: str, body: Any, status: Obj, **meta: Any) -> Obj:
    given: Obj = body["metadata"] if isinstance(body, dict) and isinstance(body.get("metadata"), dict) else {}
    metadata = {**given, **{k: v for k, v in meta.items() if v}}
    metadata.setdefault("creationTimestamp", None)
    return {"kind": kind, "apiVersion": api_version, "metadata": metadata, "spec": _spec(body), "status": status}


def _check_kind(body: Any, kind: str, api_version: str) -> None:
    if not isinstance(body, dict):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind})")
    if body.get("kind") not in (None, "", kind):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): object kind {body.get('kind')} "
            f"does not match {kind}")
    if body.get("apiVersion") not in (None, "", api_version):
        raise errors.bad_request(f"the API version in the data ({body.get('apiVersion')}) does not match the "
                                 f"expected API version ({api_version})")


# ----------------------------------------------------------------- reviews


def review(api: APIServer, group: str, version: str, plural: str, namespace: str | None, body: Any,
           headers: Mapping[str, str]) -> Obj:
    """The answer to a review (created, never stored)."""
    kind, _ = REVIEWS[(group, version, plural)]
    api_version = f"{group}/{version}"
    _check_kind(body, kind, api_version)
    spec = _spec(body)
    if kind == "TokenReview":
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise errors.invalid(group, kind, "", [Cause(errors.FIELD_VALUE_REQUIRED, "Required value: token",
                                                         "spec.token")])
        audiences = spec.get("audiences")
        status = tokens.issuer_for(api).review(api, token, audiences if isinstance(audiences, list) else None)
        return _answer(kind, api_version, body, status)
    if kind == "SelfSubjectReview":
        return {"kind": kind, "apiVersion": api_version, "metadata": {"creationTimestamp": api.clock.timestamp()},
                "status": {"userInfo": user_of(api, headers)}}
    if kind == "SelfSubjectRulesReview":
        return _answer(kind, api_version, body, {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False, "evaluationError": ALLOW_REASON})
    if kind == "LocalSubjectAccessReview":
        attrs = spec.get("resourceAttributes")
        if isinstance(attrs, dict) and attrs.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    return _answer(kind, api_version, body, {"allowed": True, "reason": ALLOW_REASON},
                   namespace=namespace if kind == "LocalSubjectAccessReview" else None)


# ----------------------------------------------------------------- kind subresources


class KindSubresources:
    """The subresources of stored kinds, for one server (``logs``: the kubelet's, when there is one)."""

    def __init__(self, api: APIServer) -> None:
        self.api = api
        #: Reads a container's log: (namespace, pod, container) -> [(time, line)]; None: nothing was written.
        self.logs: Callable[[str, str, str], list[tuple[datetime, str]]] | None = None

    def serve(self, method: str, kind: Kind, namespace: str | None, name: str, sub: str,
              query: Mapping[str, list[str]], body: bytes, content_type: str, actor: str) -> tuple[int, Any, str]:
        """(code, answer, content type) of one subresource request; ApiError on failure."""
        if sub == "log":
            if method != "GET":
                raise _method_not_allowed()
            return 200, self._log(namespace or "", name, query), "text/plain"
        if sub in ("eviction", "token"):
            if method != "POST":
                raise _method_not_allowed()
            decoded = _decode(body)
            if sub == "token":
                _check_kind(decoded, "TokenRequest", "authentication.k8s.io/v1")
                return 201, tokens.issuer_for(self.api).issue(self.api, namespace or "", name, _spec(decoded)), ""
            return 201, self._evict(namespace or "", name, decoded, actor), ""
        if sub == "scale":
            return self._scale(method, kind, namespace, name, body, content_type, actor)
        if sub == "approval":
            return self._approval(method, kind, name, body, actor)
        raise errors.resource_not_found()

    # -- pods/log -------------------------------------------------------------------------

    def _log(self, ns: str, name: str, query: Mapping[str, list[str]]) -> str:
        pod = self.api.get("Pod", name, ns, actor="kubelet")
        spec = pod.get("spec") or {}
        containers = [str(c.get("name")) for c in spec.get("containers") or []]
        init = [str(c.get("name")) for c in spec.get("initContainers") or []]
        container = _q(query, "container")
        if not container:
            if len(containers) != 1:
                msg = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
                if init:
                    msg += f" or one of the init containers: [{' '.join(init)}]"
                raise errors.bad_request(msg)
            container = containers[0]
        if container not in containers and container not in init:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        if _q(query, "previous") in ("true", "1"):
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        entries = list(self.logs(ns, name, container)) if self.logs is not None else []
        since = _q(query, "sinceSeconds")
        if since and since.isdigit():
            start = self.api.clock.now() - timedelta(seconds=int(since))
            entries = [e for e in entries if e[0] >= start]
        tail = _q(query, "tailLines")
        if tail and tail.lstrip("-").isdigit() and int(tail) >= 0:
            entries = entries[len(entries) - int(tail):] if int(tail) else []
        stamps = _q(query, "timestamps") in ("true", "1")
        text = "".join((f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z " if stamps else "") + line
                       + ("" if line.endswith("\n") else "\n") for t, line in entries)
        limit = _q(query, "limitBytes")
        if limit and limit.isdigit():
            text = text.encode()[: int(limit)].decode(errors="ignore")
        return text

    # -- pods/eviction --------------------------------------------------------------------

    def _evict(self, ns: str, name: str, body: Any, actor: str) -> Obj:
        _check_kind(body, "Eviction", "policy/v1")
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        if meta.get("name") not in (None, "", name):
            raise errors.bad_request(f"name in URL does not match name in Eviction object: {meta.get('name')}")
        pod = self.api.get("Pod", name, ns, actor=actor)
        options = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
        phase = (pod.get("status") or {}).get("phase")
        if phase not in ("Succeeded", "Failed", "Pending") and not pod["metadata"].get("deletionTimestamp"):
            for pdb in self._budgets(ns, pod):
                allowed, message = self._disruptions_allowed(ns, pdb)
                if allowed <= 0:
                    raise ApiError(errors.status_body(
                        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                        {"causes": [{"reason": "DisruptionBudget", "message": message}]}))
        self.api.delete("Pod", name, ns, actor=actor, grace_period_seconds=options.get("gracePeriodSeconds"),
                        preconditions=options.get("preconditions"),
                        propagation_policy=options.get("propagationPolicy"))
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _budgets(self, ns: str, pod: Obj) -> list[Obj]:
        from fakeapi.machinery.selectors import SelectorError, selector_from_object

        labels = pod["metadata"].get("labels") or {}
        out = []
        for pdb in self.api.list("PodDisruptionBudget", ns, actor="eviction")["items"]:
            sel = (pdb.get("spec") or {}).get("selector")
            if sel is None:
                continue
            try:
                if selector_from_object(sel).matches(labels):
                    out.append(pdb)
            except SelectorError:
                continue
        return out

    def _disruptions_allowed(self, ns: str, pdb: Obj) -> tuple[int, str]:
        """The disruption controller's arithmetic: healthy (Ready) pods the budget selects minus those it needs."""
        from fakeapi.machinery.selectors import SelectorError, selector_from_object

        spec = pdb.get("spec") or {}
        try:
            sel = selector_from_object(spec.get("selector") or {})
        except SelectorError:
            return 0, f"The disruption budget {pdb['metadata']['name']} has an invalid selector"
        pods = [p for p in self.api.list("Pod", ns, actor="eviction")["items"]
                if sel.matches(p["metadata"].get("labels") or {}) and not p["metadata"].get("deletionTimestamp")]
        expected = len(pods)
        healthy = sum(1 for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                             for c in (p.get("status") or {}).get("conditions") or []))
        if spec.get("maxUnavailable") is not None:
            desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, round_up=True))
        else:
            desired = _scaled(spec.get("minAvailable", 1), expected, round_up=True)
        return healthy - desired, (f"The disruption budget {pdb['metadata']['name']} needs {desired} healthy pods "
                                   f"and has {healthy} currently")

    # -- scale ----------------------------------------------------------------------------

    def _paths(self, kind: Kind) -> tuple[str, str, str | None]:
        scale = crd_scale(kind)
        if scale is None:
            return "spec.replicas", "status.replicas", None
        return (str(scale.get("specReplicasPath") or ".spec.replicas").lstrip("."),
                str(scale.get("statusReplicasPath") or ".status.replicas").lstrip("."),
                str(scale["labelSelectorPath"]).lstrip(".") if scale.get("labelSelectorPath") else None)

    def scale_of(self, kind: Kind, obj: Obj) -> Obj:
        """The autoscaling/v1 Scale of an object."""
        spec_path, status_path, selector_path = self._paths(kind)
        meta = obj["metadata"]
        replicas = _get(obj, spec_path)
        status: Obj = {"replicas": int(_get(obj, status_path) or 0)}
        if selector_path is not None:
            selector = _get(obj, selector_path)
            if isinstance(selector, str) and selector:
                status["selector"] = selector
        elif kind.builtin:
            selector_text = _format_selector((obj.get("spec") or {}).get("selector"), kind.kind)
            if selector_text:
                status["selector"] = selector_text
        out_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                    if k in meta}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": out_meta,
                "spec": {"replicas": int(replicas or 0)} if replicas else {}, "status": status}

    def _scale(self, method: str, kind: Kind, ns: str | None, name: str, body: bytes, content_type: str,
               actor: str) -> tuple[int, Any, str]:
        obj = self.api.get(kind.kind, name, ns, api_version=kind.api_version, actor=actor)
        current = self.scale_of(kind, obj)
        if method == "GET":
            return 200, current, ""
        if method == "PUT":
            wanted = _decode(body)
            _check_kind(wanted, "Scale", "autoscaling/v1")
        elif method == "PATCH":
            wanted = _patched(current, body, content_type)
        else:
            raise _method_not_allowed()
        replicas = _spec(wanted).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise errors.bad_request("json: cannot unmarshal into Go struct field ScaleSpec.spec.replicas of type int32")
        if replicas < 0:
            raise errors.invalid("autoscaling", "Scale", name, [Cause(
                errors.FIELD_VALUE_INVALID, f"Invalid value: {replicas}: must be greater than or equal to 0",
                "spec.replicas")])
        rv = ((wanted.get("metadata") or {}) if isinstance(wanted, dict) else {}).get("resourceVersion")
        if rv and rv != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(kind.group, kind.plural, name)
        spec_path, _, _ = self._paths(kind)
        updated = json.loads(json.dumps(obj))
        _set(updated, spec_path, replicas)
        out = self.api.update(updated, namespace=ns, actor=actor)
        return 200, self.scale_of(kind, out), ""

    # -- CSR approval ---------------------------------------------------------------------

    def _approval(self, method: str, kind: Kind, name: str, body: bytes, actor: str) -> tuple[int, Any, str]:
        obj = self.api.get(kind.kind, name, None, api_version=kind.api_version, actor=actor)
        if method == "GET":
            return 200, obj, ""
        if method != "PUT":
            raise _method_not_allowed()
        wanted = _decode(body)
        _check_kind(wanted, kind.kind, kind.api_version)
        conditions = (wanted.get("status") or {}).get("conditions") or []
        causes = []
        for i, c in enumerate(conditions):
            if not isinstance(c, dict) or c.get("type") not in ("Approved", "Denied", "Failed"):
                causes.append(Cause(errors.FIELD_VALUE_NOT_SUPPORTED, 'Unsupported value: "{}": supported values: '
                                    '"Approved", "Denied", "Failed"'.format((c or {}).get("type") if isinstance(
                                        c, dict) else c), f"status.conditions[{i}].type"))
        types = {c.get("type") for c in conditions if isinstance(c, dict) and c.get("status", "True") == "True"}
        if {"Approved", "Denied"} <= types:
            causes.append(Cause(errors.FIELD_VALUE_INVALID, "Invalid value: \"Approved\": Approved and Denied "
                                "conditions are mutually exclusive", "status.conditions"))
        if causes:
            raise errors.invalid(kind.group, kind.kind, name, causes)
        now = self.api.clock.timestamp()
        for c in conditions:
            c.setdefault("status", "True")
            c.setdefault("lastUpdateTime", now)
            c.setdefault("lastTransitionTime", now)
        updated = json.loads(json.dumps(obj))
        updated.setdefault("status", {})["conditions"] = conditions
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv:
            updated["metadata"]["resourceVersion"] = rv
        return 200, self.api.update(updated, subresource="status", actor=actor), ""


def _method_not_allowed() -> ApiError:
    return ApiError(errors.status_body(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {e}") from e


def _patched(current: Obj, body: bytes, content_type: str) -> Any:
    from fakeapi.machinery.patches import apply_json_patch, apply_merge_patch

    patch = _decode(body)
    if content_type == "application/json-patch+json":
        return apply_json_patch(current, patch)
    if content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        return apply_merge_patch(current, patch)  # (a Scale has no lists: strategic is a merge)
    raise errors.unsupported_media_type(["application/json-patch+json", "application/merge-patch+json",
                                         "application/strategic-merge-patch+json"])


def _q(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _set(obj: Obj, path: str, value: Any) -> None:
    parts = path.split(".")
    for part in parts[:-1]:
        nxt = obj.get(part)
        if not isinstance(nxt, dict):
            nxt = obj[part] = {}
        obj = nxt
    obj[parts[-1]] = value


def _scaled(value: Any, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, str) and value.endswith("%"):
        import math

        pct = int(value[:-1] or 0)
        return math.ceil(pct * total / 100) if round_up else (pct * total) // 100
    return int(value or 0)


def _format_selector(selector: Any, kind: str) -> str:
    """The Scale's selector as the scale REST writes it: ``LabelSelectorAsSelector(...).String()``
    (``labels.SelectorFromSet`` for a ReplicationController's map)."""
    from fakeapi.machinery.selectors import SelectorError, selector_from_map, selector_from_object

    if not isinstance(selector, dict):
        return ""
    try:
        return str(selector_from_map(selector) if kind == "ReplicationController" else selector_from_object(selector))
    except SelectorError:
        return ""
