"""Every built-in kind through the Go client: what a controller-runtime client writes is stored as Go encodes it.

The project's test run checks every stored snapshot against its Go encoding
(``FAKEAPI_CHECK_SNAPSHOTS=1``): a kind whose create strategy resets its status, or whose
defaults or allocations add fields, must still store what Go would marshal.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.host.client import Client

_TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}}
_SELECTOR = {"matchLabels": {"app": "a"}}

BODIES: list[dict[str, Any]] = [
    {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "ing", "namespace": "ns"},
     "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [
         {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "a", "port": {"number": 80}}}}]}}]}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "ns"},
     "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                                                      {"namespaceSelector": {}}],
                                             "ports": [{"port": 8080, "endPort": 8090}, {"port": "metrics"}]}],
              "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "a"}}}]}]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "ns"},
     "spec": {"minAvailable": 1, "selector": _SELECTOR}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "ns"},
     "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
         "restartPolicy": "Never", "containers": [{"name": "a", "image": "x:1"}]}}}}}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
     "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "ns"},
     "spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "ns"},
     "spec": {"serviceName": "s", "selector": _SELECTOR, "template": _TEMPLATE,
              "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                        "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}}}}]}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "ns"},
     "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
     "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "x:1"}]}}}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "ns"},
     "spec": {"type": "NodePort", "selector": {"app": "a"}, "ports": [{"port": 80}]}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc", "namespace": "ns"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cr"},
     "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "crb"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"},
     "subjects": [{"kind": "User", "name": "u"}]},
    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": "ns"},
     "spec": {"holderIdentity": "a"}},
]


@pytest.mark.parametrize("body", BODIES, ids=[b["kind"] for b in BODIES])
def test_a_go_client_creates_and_updates_it(body: dict[str, Any]) -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    client = Client(api)
    created = client.create(body)
    assert created["metadata"]["uid"]
    labels = {**(created["metadata"].get("labels") or {}), "touched": "yes"}
    updated = client.update({**created, "metadata": {**created["metadata"], "labels": labels}})
    assert updated["metadata"]["labels"]["touched"] == "yes"
    api.check_snapshots()
