"""The mutating admission a cluster applies to new Pods, for a served fakeapi.

kube-apiserver's default admission chain changes every Pod it creates; clients
that read their pods back (test suites comparing specs, ``kubectl describe``)
expect those changes. Ported from the plugins of
``kubernetes/plugin/pkg/admission``:

* **ServiceAccount** (``serviceaccount/admission.go``): ``serviceAccountName``
  defaults to ``default``; unless ``automountServiceAccountToken`` is false,
  a projected volume ``kube-api-access-<5 random>`` (token, ``kube-root-ca.crt``,
  the namespace by the downward API; mode 0644) is added and mounted read-only
  at ``/var/run/secrets/kubernetes.io/serviceaccount`` in every init and
  regular container that has no mount there already. Not ported: the check
  that the service account exists (a served cluster's namespace bootstrap
  creates ``default`` soon after the namespace, and a client racing it would
  be refused), and the service account's own ``automountServiceAccountToken``.
* **DefaultTolerationSeconds** (``defaulttolerationseconds/admission.go``):
  tolerations for the ``not-ready`` and ``unreachable`` NoExecute taints for
  300 seconds, unless the pod tolerates them already.
* **Priority** (``priority/admission.go``): a pod without a priority class
  gets priority 0 (no global default class exists) and preemption policy
  ``PreemptLowerPriority``; the two system classes give their priorities.

:func:`install` adds them to an :class:`~fakeapi.server.apiserver.APIServer`'s
``admission`` hooks (a served cluster does; an in-process server has none,
as before).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from fakeapi.registry.core.defaults import service_account_alias

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind

Obj = dict[str, Any]

DEFAULT_SERVICE_ACCOUNT = "default"
#: ``ServiceAccountVolumeName``: the token volume's name is this, a dash and five random characters.
TOKEN_VOLUME_PREFIX = "kube-api-access-"
#: ``DefaultAPITokenMountPath``.
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: ``WarnOnlyBoundTokenExpirationSeconds``: the projected token's expiry (an hour and seven seconds).
TOKEN_EXPIRATION_SECONDS = 3607
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
#: ``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``.
DEFAULT_TOLERATION_SECONDS = 300
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
#: The system priority classes (``scheduling.SystemPriorityClasses``).
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
#: ``names.SimpleNameGenerator``'s alphabet (no vowels, no look-alike digits).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def token_volume(name: str) -> Obj:
    """The projected volume of ``TokenVolumeSource`` (mode set explicitly, as upstream does: #104464)."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one (bodies are not validated yet)."""
    return value if isinstance(value, list) else []


class PodAdmission:
    """The three plugins, as one ``APIServer.admission`` hook (Pods only; other kinds pass through)."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def __call__(self, kind: Kind, obj: Obj) -> None:
        """Admit one create body (mutated in place)."""
        if not (kind.builtin and kind.kind == "Pod" and not kind.group):
            return
        spec = obj.get("spec")
        if type(spec) is not dict:
            return
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if "kubernetes.io/config.mirror" not in annotations:  # (mirror pods are left alone)
            self.service_account(spec)
        self.tolerations(spec)
        self.priority(spec)

    def _suffix(self) -> str:
        return "".join(self._rng.choice(_ALPHABET) for _ in range(5))

    def service_account(self, spec: Obj) -> None:
        """The ServiceAccount plugin: the default account and the token volume, mounted everywhere."""
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
        service_account_alias(spec)
        if spec.get("automountServiceAccountToken") is False:
            return
        volumes = _list(spec.get("volumes"))
        name = next((v.get("name") for v in volumes
                     if type(v) is dict and str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)), None)
        has_volume = name is not None
        if name is None:
            name = TOKEN_VOLUME_PREFIX + self._suffix()
        needs_volume = False
        for key in ("initContainers", "containers"):
            for c in _list(spec.get(key)):
                if type(c) is not dict:
                    continue
                mounts = _list(c.get("volumeMounts"))
                if any(type(m) is dict and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                    continue
                c["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
                needs_volume = True
        if needs_volume and not has_volume:
            spec["volumes"] = [*volumes, token_volume(name)]

    @staticmethod
    def tolerations(spec: Obj) -> None:
        """DefaultTolerationSeconds: tolerate a not-ready or unreachable node for five minutes."""
        current = _list(spec.get("tolerations"))
        tolerated = {NOT_READY_TAINT: False, UNREACHABLE_TAINT: False}
        for t in current:
            if type(t) is not dict or t.get("effect") not in (None, "", "NoExecute"):
                continue
            for taint in tolerated:
                if t.get("key") in (None, "", taint):
                    tolerated[taint] = True
        added = [{"key": taint, "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": DEFAULT_TOLERATION_SECONDS} for taint, ok in tolerated.items() if not ok]
        if added:
            spec["tolerations"] = [*current, *added]

    @staticmethod
    def priority(spec: Obj) -> None:
        """Priority: 0 with no class (no global default exists), a system class's value; the preemption policy."""
        cls = spec.get("priorityClassName")
        if not cls:
            spec["priority"] = 0
        elif cls in SYSTEM_PRIORITIES:
            spec["priority"] = SYSTEM_PRIORITIES[cls]
        else:
            return  # (no PriorityClass kind is served: a named class is left as given)
        if not spec.get("preemptionPolicy"):
            spec["preemptionPolicy"] = "PreemptLowerPriority"


def install(api: Any) -> PodAdmission:
    """Add the Pod admission plugins to ``api`` (an APIServer: its ``admission`` hooks; once); returns the hook."""
    for hook in api.admission:
        if isinstance(hook, PodAdmission):
            return hook
    hook = PodAdmission(api.seed)
    api.admission.append(hook)
    return hook
