"""Subresources with verbs of their own, served by the kind's strategy (a namespace's ``/finalize``,
a pod's ``/binding``: :attr:`fakeapi.registry.strategy.Strategy.subresource_verbs`).

The server runs the generic steps (look up, the strategy's write, commit, answer); what the write
changes is the strategy's.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import errors
from fakeapi.server.pipeline import Outcome, Pipeline, Write


class Subresources(Pipeline):
    """``write_subresource``, and the two public shorthands ``finalize_namespace`` and ``bind_pod``."""

    def write_subresource(self, kind: str, api_version: str | None, name: str, namespace: str | None,
                          subresource: str, body: dict[str, Any], *, actor: str = "user") -> dict[str, Any]:
        """A write of a subresource the kind's strategy declares: 404 for a missing object or a
        subresource it does not declare; otherwise what the strategy makes of the stored object is
        committed (or the object deleted) and answered with the strategy's response or the object."""
        k = self.resolve_kind(kind, api_version)
        verb = k.strategy.subresource_verbs.get(subresource)
        ns = (namespace or "") if k.namespaced else ""
        if verb is None:
            raise errors.not_found(k.group, k.plural, name)

        def run() -> Outcome:
            table = self._table(k)
            e = table.get(ns, name)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            w = k.strategy.write_subresource(self, subresource, e.obj, body)
            if w.delete:
                rv = self._commit(Write(k, table, old=e, delete=True))
                return Outcome(w.response if w.response is not None else w.obj, w.code, rv, True, name)
            new = w.obj
            new["metadata"].pop("resourceVersion", None)
            rv = self._commit(Write(k, table, new, old=e))
            return Outcome(w.response if w.response is not None else self._read(k, new), w.code, rv, True, name)

        return self._run(verb, k, ns, name, subresource, actor, run)

    def finalize_namespace(self, name: str, *, actor: str = "namespace-controller") -> dict[str, Any]:
        """The namespace ``/finalize`` subresource: drop ``spec.finalizers`` (deletes it when nothing else holds it)."""
        return self.write_subresource("Namespace", "v1", name, None, "finalize", {}, actor=actor)

    def bind_pod(self, name: str, namespace: str, node: str, *, actor: str = "default-scheduler") -> dict[str, Any]:
        """The ``pods/binding`` subresource: assign a pod to a node, as the scheduler does.

        Sets ``spec.nodeName`` and the ``PodScheduled`` condition; 409 when the pod is
        already bound or being deleted. Bound pods are deleted gracefully (the kubelet
        confirms), unbound ones at once. managedFields stay as they were (the strategy's
        ``write_subresource`` says why).
        """
        return self.write_subresource("Pod", "v1", name, namespace, "binding", {"target": {"name": node}}, actor=actor)
