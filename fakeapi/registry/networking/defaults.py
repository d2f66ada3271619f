"""Defaults of networking.k8s.io/v1 NetworkPolicies (``pkg/apis/networking/v1/defaults.go``)."""

from __future__ import annotations

from fakeapi.registry.core.defaults import JSONDict, dict_at, list_at


def default_network_policy(obj: JSONDict) -> None:
    """``SetObjectDefaults_NetworkPolicy`` (networking/v1): ``SetDefaults_NetworkPolicy`` (empty ``policyTypes``:
    ``Ingress``, and ``Egress`` when there are egress rules) and ``SetDefaults_NetworkPolicyPort`` (a port's
    nil ``protocol``: ``TCP``) on each rule's ports.

    ``spec.podSelector`` is a ``metav1.LabelSelector`` value, never nil: an absent one is the empty
    selector (all pods), as Go decodes it and as it is stored (``{}``), so that an update that leaves it
    out changes no spec (nor the generation).
    """
    spec = dict_at(obj, "spec")
    if type(spec.get("podSelector")) is not dict:
        spec["podSelector"] = {}
    types = spec.get("policyTypes")
    if type(types) is not list or not types:
        egress = spec.get("egress")
        spec["policyTypes"] = ["Ingress", "Egress"] if type(egress) is list and egress else ["Ingress"]
    for rules_key in ("ingress", "egress"):
        for rule in list_at(spec, rules_key):
            for port in list_at(rule, "ports"):
                if port.get("protocol") is None:
                    port["protocol"] = "TCP"
