"""Built-in defaults (pkg/apis/core/v1/defaults.go) and the Pod create status (phase, qosClass)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.registry.builtin import apply_builtin_defaults
from fakeapi.registry.core.defaults import image_tag, pod_qos_class


def _pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def test_pod_defaults() -> None:
    pod = _pod({"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]})
    apply_builtin_defaults("Pod", pod)
    assert pod["spec"] == {
        "containers": [{
            "name": "c", "image": "busybox", "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "imagePullPolicy": "Always", "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "resources": {},
        }],
        "enableServiceLinks": True,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_pod_defaults_are_idempotent_and_keep_values() -> None:
    pod = _pod({"name": "c", "image": "x:1", "imagePullPolicy": "Never"}, restartPolicy="Never",
               terminationGracePeriodSeconds=0, enableServiceLinks=False)
    apply_builtin_defaults("Pod", pod)
    once = copy.deepcopy(pod)
    apply_builtin_defaults("Pod", pod)
    assert pod == once
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["terminationGracePeriodSeconds"] == 0
    assert pod["spec"]["enableServiceLinks"] is False
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"


@pytest.mark.parametrize(
    ("image", "tag", "policy"),
    [
        ("busybox", "latest", "Always"),
        ("busybox:latest", "latest", "Always"),
        ("busybox:1.36", "1.36", "IfNotPresent"),
        ("ghcr.io/actions/actions-runner:latest", "latest", "Always"),
        ("localhost:5000/app", "latest", "Always"),
        ("localhost:5000/app:v2", "v2", "IfNotPresent"),
        ("app@sha256:abcd", "", "IfNotPresent"),
        ("app:latest@sha256:abcd", "latest", "Always"),
        ("", "", "IfNotPresent"),
    ],
)
def test_image_pull_policy(image: str, tag: str, policy: str) -> None:
    assert image_tag(image) == tag
    pod = _pod({"name": "c", "image": image})
    apply_builtin_defaults("Pod", pod)
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_init_containers_probes_volumes_and_env() -> None:
    pod = _pod(
        {"name": "c", "image": "x:1",
         "livenessProbe": {"httpGet": {"port": 80}},
         "readinessProbe": {"grpc": {"port": 9000}},
         "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
         "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
        initContainers=[{"name": "i", "image": "x:1"}],
        volumes=[{"name": "empty"}, {"name": "s", "secret": {"secretName": "s"}},
                 {"name": "h", "hostPath": {"path": "/x"}},
                 {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}],
    )
    apply_builtin_defaults("Pod", pod)
    c = pod["spec"]["containers"][0]
    assert c["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                  "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert c["readinessProbe"]["grpc"] == {"port": 9000, "service": ""}
    assert c["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}
    assert c["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert pod["spec"]["initContainers"][0]["terminationMessagePolicy"] == "File"
    vols = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert vols["empty"] == {"name": "empty", "emptyDir": {}}
    assert vols["s"]["secret"] == {"secretName": "s", "defaultMode": 420}
    assert vols["h"]["hostPath"] == {"path": "/x", "type": ""}
    assert vols["p"]["projected"] == {"sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}],
                                      "defaultMode": 420}


def test_requests_default_to_limits_and_round_to_milli() -> None:
    pod = _pod({"name": "c", "image": "x", "resources": {"limits": {"cpu": "0.0001", "memory": "1Gi"},
                                                          "requests": {"memory": "512Mi"}}})
    apply_builtin_defaults("Pod", pod)
    res = pod["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "1m", "memory": "1Gi"}, "requests": {"memory": "512Mi", "cpu": "1m"}}


def test_host_network_ports() -> None:
    pod = _pod({"name": "c", "image": "x", "ports": [{"containerPort": 8080}]}, hostNetwork=True)
    apply_builtin_defaults("Pod", pod)
    assert pod["spec"]["containers"][0]["ports"][0]["hostPort"] == 8080


QOS: list[tuple[str, list[dict[str, Any]], str]] = [
    ("no resources", [{}], "BestEffort"),
    ("zero requests", [{"requests": {"cpu": "0"}}], "BestEffort"),
    ("requests only", [{"requests": {"cpu": "100m"}}], "Burstable"),
    ("limits == requests for cpu and memory", [{"limits": {"cpu": "1", "memory": "1Gi"},
                                                "requests": {"cpu": "1000m", "memory": "1024Mi"}}], "Guaranteed"),
    ("limits only (requests defaulted)", [{"limits": {"cpu": "1", "memory": "1Gi"}}], "Guaranteed"),
    ("memory limit missing", [{"limits": {"cpu": "1"}}], "Burstable"),
    ("one container without limits", [{"limits": {"cpu": "1", "memory": "1Gi"}}, {}], "Burstable"),
    ("requests below limits", [{"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}], "Burstable"),
    ("other resources ignored", [{"limits": {"nvidia.com/gpu": "1"}}], "BestEffort"),
]


@pytest.mark.parametrize(("name", "resources", "qos"), QOS, ids=[c[0] for c in QOS])
def test_qos_class(name: str, resources: list[dict[str, Any]], qos: str) -> None:
    pod = _pod(*({"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(resources)))
    apply_builtin_defaults("Pod", pod)
    assert pod["status"]["qosClass"] == qos


def test_pod_level_resources_decide_qos() -> None:
    spec = {"containers": [{"name": "c"}], "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                         "requests": {"cpu": "1", "memory": "1Gi"}}}
    assert pod_qos_class(spec) == "Guaranteed"


def test_status_phase_kept_when_set() -> None:
    pod = _pod({"name": "c", "image": "x"})
    pod["status"] = {"phase": "Running", "qosClass": "Burstable"}
    apply_builtin_defaults("Pod", pod)
    assert pod["status"] == {"phase": "Running", "qosClass": "Burstable"}


@pytest.mark.parametrize(
    ("kind", "obj", "expected"),
    [
        ("Secret", {"metadata": {"name": "s"}}, {"metadata": {"name": "s"}, "type": "Opaque"}),
        ("Secret", {"type": "kubernetes.io/tls"}, {"type": "kubernetes.io/tls"}),
        ("Namespace", {"metadata": {"name": "ns"}},
         {"metadata": {"name": "ns", "labels": {"kubernetes.io/metadata.name": "ns"}}, "status": {"phase": "Active"}}),
        ("ServiceAccount", {"metadata": {"name": "sa"}}, {"metadata": {"name": "sa"}}),
        ("Event", {"reason": "X"}, {"reason": "X"}),
        ("ConfigMap", {"data": {}}, {"data": {}}),
    ],
)
def test_other_kinds(kind: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    apply_builtin_defaults(kind, obj)
    assert obj == expected
