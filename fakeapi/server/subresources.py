"""Subresources with verbs of their own: a namespace's ``/finalize``, a pod's ``/binding``."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import errors
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.server.pipeline import Outcome, Pipeline, Write


class Subresources(Pipeline):
    """``finalize_namespace`` and ``bind_pod``."""

    def finalize_namespace(self, name: str, *, actor: str = "namespace-controller") -> dict[str, Any]:
        """The namespace ``/finalize`` subresource: drop ``spec.finalizers`` (deletes it when nothing else holds it)."""
        k = self.resolve_kind("Namespace", "v1")

        def run() -> Outcome:
            table = self._table(k)
            e = table.get("", name)
            if e is None:
                raise errors.not_found("", "namespaces", name)
            new = fast_copy(e.obj)
            new.setdefault("spec", {}).pop("finalizers", None)
            if not new["spec"]:
                new.pop("spec")
            if not new["metadata"].get("finalizers") and new["metadata"].get("deletionTimestamp"):
                rv = self._commit(Write(k, table, old=e, delete=True))
                return Outcome(new, 200, rv, True, name)
            new["metadata"].pop("resourceVersion", None)
            rv = self._commit(Write(k, table, new, old=e))
            return Outcome(self._read(k, new), 200, rv, True, name)

        return self._run("update", k, "", name, "finalize", actor, run)

    def bind_pod(self, name: str, namespace: str, node: str, *, actor: str = "default-scheduler") -> dict[str, Any]:
        """The ``pods/binding`` subresource: assign a pod to a node, as the scheduler does.

        Sets ``spec.nodeName`` and the ``PodScheduled`` condition; 409 when the pod is
        already bound or being deleted. Bound pods are deleted gracefully (the kubelet
        confirms), unbound ones at once. As kube-apiserver's ``BindingREST`` (a storage
        update past the field manager), it leaves managedFields as they were: no manager owns
        ``spec.nodeName`` or the ``PodScheduled`` condition (kubernetes/kubernetes#127508).
        """
        k = self.resolve_kind("Pod", "v1")

        def run() -> Outcome:
            table = self._table(k)
            e = table.get(namespace, name)
            if e is None:
                raise errors.not_found("", "pods", name)
            spec = e.obj.get("spec") or {}
            if spec.get("nodeName"):
                raise errors.conflict("", "pods", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            if e.obj["metadata"].get("deletionTimestamp"):
                raise errors.conflict("", "pods", name, f"pod {name} is being deleted, cannot be assigned to a host")
            # a new snapshot sharing what the binding leaves as it was
            status = dict(e.obj.get("status") or {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": self.clock.timestamp()})
            status["conditions"] = conds
            new = {**e.obj, "metadata": dict(e.obj["metadata"]), "spec": {**spec, "nodeName": node},
                   "status": status}
            new["metadata"].pop("resourceVersion", None)
            rv = self._commit(Write(k, table, new, old=e))
            return Outcome({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                            201, rv, True, name)

        return self._run("create", k, namespace, name, "binding", actor, run)
