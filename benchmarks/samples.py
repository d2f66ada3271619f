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
