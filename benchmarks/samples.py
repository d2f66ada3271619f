"""Objects the benchmarks share: a runner-sized Pod (the floor's reference object)."""

from __future__ import annotations

from typing import Any

NS = "arc-runners"

#: A Pod like the ones ARC's runners get: one container with env, resources and a volume.
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "runner-abcde",
        "namespace": NS,
        "labels": {"app.kubernetes.io/component": "runner", "actions.github.com/scale-set-name": "set"},
        "annotations": {"actions.github.com/patch-id": "1"},
        "ownerReferences": [{"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner", "name": "r",
                             "uid": "6c1e1d3c-0000-4000-8000-000000000001", "controller": True,
                             "blockOwnerDeletion": True}],
    },
    "spec": {
        "restartPolicy": "Never",
        "serviceAccountName": "runner",
        "containers": [{
            "name": "runner",
            "image": "ghcr.io/actions/actions-runner:latest",
            "command": ["/home/runner/run.sh"],
            "env": [{"name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
                     "valueFrom": {"secretKeyRef": {"name": "runner-abcde", "key": "jitToken"}}},
                    {"name": "RUNNER_WAIT_FOR_DOCKER_IN_SECONDS", "value": "120"}],
            "resources": {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            "volumeMounts": [{"name": "work", "mountPath": "/home/runner/_work"}],
        }],
        "volumes": [{"name": "work", "emptyDir": {}}],
    },
}


_TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "a"}},
                             "spec": {"containers": [{"name": "a", "image": "x:1"}]}}
_SELECTOR: dict[str, Any] = {"matchLabels": {"app": "a"}}
#: A kubelet's client certificate request (PEM, base64 as the API carries it), made with openssl.
_CSR_PEM = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIdU1JR1dBZ0VBTURReEZUQVRCZ05WQkFvTURITjVjM1JsYlRwdWIyUmxj"
    "ekViTUJrR0ExVUVBd3dTYzNsegpkR1Z0T201dlpHVTZibTlrWlMweE1Ga3dFd1lIS29aSXpqMENBUVlJS29aSXpqMERBUWNEUWdBRUY1NHZO"
    "OE1QCkFlaTM3ZkhJWGFSa1cydUhaVjlnenhPVGpNU3p5TEdyUnJCaXRkckQwM1dqQUtVdzlua3NXSGgvZlZWYkdHcEwKdWI0aHVKL2t0REV2"
    "VHFBQU1Bb0dDQ3FHU000OUJBTUNBMGNBTUVRQ0lCYVVORENuWk1HWUg0UnpNRENLZCsydAo4V2RmOExiMGVCRkE1ekZ1V1dqbEFpQkE5NEdj"
    "dlFXTHJHUUNHN29SZENJelhNSndaOHVwZEw3VEJFR2VZejk5CjZRPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==")


def builtin_sample(kind: str, name: str) -> dict[str, Any]:
    """A typical body of built-in ``kind`` named ``name`` (in namespace :data:`NS` when namespaced)."""
    if kind == "Pod":
        body: dict[str, Any] = {**POD, "metadata": {**POD["metadata"], "name": name}}
        return body
    return {"kind": kind, **_bodies(name)[kind]}


def _bodies(name: str) -> dict[str, dict[str, Any]]:
    """Every sample but the Pod's, by kind (without ``kind``)."""
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": {"app": "a"}}
    cluster = {"name": name, "labels": {"app": "a"}}
    bodies: dict[str, dict[str, Any]] = {
        "ConfigMap": {"apiVersion": "v1", "metadata": meta, "data": {"config.yaml": "a: 1\nb: [x, y]\n", "mode": "fast"}},
        "Secret": {"apiVersion": "v1", "metadata": meta, "type": "Opaque",
                   "data": {"token": "c2VjcmV0LXRva2VuLXZhbHVl", "ca.crt": "LS0tLS1CRUdJTi0tLS0t"}},
        "ServiceAccount": {"apiVersion": "v1", "metadata": meta, "secrets": [{"name": "token"}],
                           "imagePullSecrets": [{"name": "registry"}]},
        "Namespace": {"apiVersion": "v1", "metadata": cluster},
        "Event": {"apiVersion": "v1", "metadata": meta, "reason": "Started", "message": "Started container runner",
                  "type": "Normal", "count": 1, "source": {"component": "kubelet"},
                  "involvedObject": {"kind": "Pod", "namespace": NS, "name": "runner-abcde", "apiVersion": "v1"}},
        "Service": {"apiVersion": "v1", "metadata": meta,
                    "spec": {"selector": {"app": "a"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}},
        "ReplicationController": {"apiVersion": "v1", "metadata": meta,
                                  "spec": {"replicas": 0, "selector": {"app": "a"}, "template": _TEMPLATE}},
        "Node": {"apiVersion": "v1",
                 "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
                 "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
                          "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}},
        "PersistentVolumeClaim": {"apiVersion": "v1", "metadata": meta,
                                  "spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "1Gi"}}}},
        "Deployment": {"apiVersion": "apps/v1", "metadata": meta,
                       "spec": {"replicas": 2, "selector": _SELECTOR, "template": _TEMPLATE}},
        "ReplicaSet": {"apiVersion": "apps/v1", "metadata": meta,
                       "spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
        "StatefulSet": {"apiVersion": "apps/v1", "metadata": meta,
                        "spec": {"serviceName": "s", "selector": _SELECTOR, "template": _TEMPLATE}},
        "DaemonSet": {"apiVersion": "apps/v1", "metadata": meta, "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
        "Job": {"apiVersion": "batch/v1", "metadata": meta,
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "x:1"}]}}}},
        "CronJob": {"apiVersion": "batch/v1", "metadata": meta,
                    "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                        "restartPolicy": "Never", "containers": [{"name": "a", "image": "x:1"}]}}}}}},
        "Ingress": {"apiVersion": "networking.k8s.io/v1", "metadata": meta,
                    "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [
                        {"path": "/", "pathType": "Prefix",
                         "backend": {"service": {"name": "a", "port": {"number": 80}}}}]}}]}},
        "NetworkPolicy": {"apiVersion": "networking.k8s.io/v1", "metadata": meta,
                          "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 8080}]}]}},
        "PodDisruptionBudget": {"apiVersion": "policy/v1", "metadata": meta,
                                "spec": {"minAvailable": 1, "selector": _SELECTOR}},
        "Lease": {"apiVersion": "coordination.k8s.io/v1", "metadata": meta,
                  "spec": {"holderIdentity": "controller-0", "leaseDurationSeconds": 15}},
        "Role": {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": meta,
                 "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]},
        "RoleBinding": {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": meta,
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": NS}]},
        "ClusterRole": {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": cluster,
                        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        "ClusterRoleBinding": {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": cluster,
                               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"},
                               "subjects": [{"kind": "User", "name": "u"}]},
        "CertificateSigningRequest": {
            "apiVersion": "certificates.k8s.io/v1", "metadata": cluster,
            "spec": {"request": _CSR_PEM, "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                     "usages": ["digital signature", "client auth"], "expirationSeconds": 86400}},
        "CSIStorageCapacity": {"apiVersion": "storage.k8s.io/v1", "metadata": meta, "storageClassName": "standard",
                               "capacity": "100Gi", "maximumVolumeSize": "10Gi",
                               "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "zone-a"}}},
        "APIService": {
            "apiVersion": "apiregistration.k8s.io/v1",
            "metadata": {"name": f"v1beta1.{name}.example.com", "labels": {"app": "a"}},
            "spec": {"group": f"{name}.example.com", "version": "v1beta1", "groupPriorityMinimum": 100,
                     "versionPriority": 100, "insecureSkipTLSVerify": True,
                     "service": {"name": "metrics", "namespace": NS, "port": 443}}},
        "CustomResourceDefinition": {
            "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"name": f"{name}s.example.com", "labels": {"app": "a"}},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": "W" + name.replace("-", ""), "plural": f"{name}s"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {"type": "object", "properties": {
                             "size": {"type": "integer"}, "color": {"type": "string"}}}}}}}]}},
    }
    return bodies


#: Every built-in kind with a sample (``instructions_verbs.py --kinds all``).
SAMPLE_KINDS: tuple[str, ...] = ("Pod", *_bodies("x"))
