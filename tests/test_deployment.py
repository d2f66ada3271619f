"""apps/v1 Deployments: defaults, validation, generation and status as kube-apiserver keeps them.

No deployment controller runs (as under envtest): what a test sees is what the API server does
on its own. Messages are those of ``pkg/apis/apps/validation`` and the Deployment strategy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api

from fakeapi.server.apiserver import APIServer


def _deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }
    body["spec"].update(spec)
    return body



def test_a_created_deployment_is_defaulted() -> None:
    api = make_api()
    body = _deployment()
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    out = api.create(body)
    spec = out["spec"]
    assert out["metadata"]["generation"] == 1 and out["status"] == {}
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always" and pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["terminationGracePeriodSeconds"] == 30 and pod_spec["schedulerName"] == "default-scheduler"
    container = pod_spec["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent" and container["terminationMessagePolicy"] == "File"
    # what SetDefaults_Pod adds to a Pod itself is not a template's
    assert "enableServiceLinks" not in pod_spec
    assert container["resources"] == {"limits": {"cpu": "1"}}


def test_recreate_gets_no_rolling_update_and_zero_replicas_are_kept() -> None:
    api = make_api()
    out = api.create(_deployment(replicas=0, strategy={"type": "Recreate"}))
    assert out["spec"]["replicas"] == 0 and out["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(("spec", "causes"), [
    # (an empty selector selects everything: the template's labels are not compared with it)
    ({"selector": {}}, [("spec.selector", "Invalid value: &LabelSelector{MatchLabels:map[string]string{},"
                                       "MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for deployment")]),
    ({"selector": {"matchLabels": {"app": "api"}}},
     [("spec.template.metadata.labels",
       'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`')]),
    ({"replicas": -1}, [("spec.replicas", "Invalid value: -1: must be greater than or equal to 0")]),
    ({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}},
     [("spec.strategy.rollingUpdate", "Forbidden: may not be specified when strategy `type` is 'Recreate'")]),
    ({"strategy": {"type": "Rolling"}},
     [("spec.strategy", 'Unsupported value: "Rolling": supported values: "Recreate", "RollingUpdate"')]),
    ({"strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}},
     [("spec.strategy.rollingUpdate.maxUnavailable", "Invalid value: 0: may not be 0 when `maxSurge` is 0")]),
    ({"strategy": {"rollingUpdate": {"maxUnavailable": "150%"}}},
     [("spec.strategy.rollingUpdate.maxUnavailable", "Invalid value: 150%: must not be greater than 100%")]),
    ({"strategy": {"rollingUpdate": {"maxSurge": "lots"}}},
     [("spec.strategy.rollingUpdate.maxSurge", "Invalid value: lots: must be an integer or percentage (e.g '5%')")]),
    ({"minReadySeconds": 600}, [("spec.progressDeadlineSeconds", "Invalid value: 600: must be greater than minReadySeconds")]),
])
def test_invalid_deployments(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_deployment(**spec)), 422, "Invalid")
    assert field_causes(err) == causes
    assert err.message.startswith('Deployment.apps "web" is invalid: ')


def test_a_template_that_does_not_restart_always_or_has_a_deadline() -> None:
    api = make_api()
    body = _deployment()
    body["spec"]["template"]["spec"].update(restartPolicy="OnFailure", activeDeadlineSeconds=30)
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == [
        ("spec.template.spec.restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"'),
        ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"),
    ]


def test_a_missing_selector_is_required() -> None:
    api = make_api()
    body = _deployment()
    del body["spec"]["selector"]
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert ("spec.selector", "Required value") in field_causes(err)


def test_a_value_of_the_wrong_type_is_a_decode_error() -> None:
    api = make_api()
    assert_rejected(api, lambda: api.create(_deployment(replicas="3")), 400, "BadRequest",
                    'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into '
                    "Go struct field DeploymentSpec.spec.replicas of type int32")


def test_the_selector_is_immutable() -> None:
    api = make_api()
    stored = api.create(_deployment())
    changed = copy.deepcopy(stored)
    changed["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    err = assert_rejected(api, lambda: api.update(changed), 422, "Invalid")
    assert field_causes(err) == [("spec.selector", "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: web,"
                                              "tier: front,},MatchExpressions:[]LabelSelectorRequirement{},}: "
                                              "field is immutable")]


def test_the_generation_follows_the_spec_and_the_annotations() -> None:
    api = make_api()
    api.create(_deployment())
    out = api.patch("Deployment", "web", {"metadata": {"labels": {"a": "b"}}}, namespace="ns")
    assert out["metadata"]["generation"] == 1  # labels: no
    out = api.patch("Deployment", "web", {"metadata": {"annotations": {"a": "b"}}}, namespace="ns")
    assert out["metadata"]["generation"] == 2  # annotations: copied to the ReplicaSets, so yes
    out = api.patch("Deployment", "web", {"spec": {"replicas": 3}}, namespace="ns")
    assert out["metadata"]["generation"] == 3
    out = api.patch("Deployment", "web", {"status": {"replicas": 3, "observedGeneration": 3}}, namespace="ns",
                    subresource="status")
    assert out["metadata"]["generation"] == 3 and out["status"]["replicas"] == 3


def test_a_strategic_merge_patch_merges_containers_by_name() -> None:
    api = make_api()
    api.create(_deployment())
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"},
                                                            {"name": "side", "image": "busybox"}]}}}}
    out = api.patch("Deployment", "web", patch, namespace="ns", patch_type="strategic")
    containers = out["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("c", "nginx:1.27"), ("side", "busybox")]
    assert containers[1]["imagePullPolicy"] == "Always"  # the new one defaulted (no tag: latest)


@pytest.mark.parametrize(("status", "causes"), [
    ({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3}, []),
    ({"readyReplicas": 1}, [("status.readyReplicas", "Invalid value: 1: cannot be greater than status.replicas")]),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     [("status.availableReplicas", "Invalid value: 2: cannot be greater than readyReplicas")]),
    # (0 ready, updated and available are more than -1 too, and Go says so)
    ({"replicas": -1}, [("status.replicas", "Invalid value: -1: must be greater than or equal to 0")] + [
        (f"status.{f}", "Invalid value: 0: cannot be greater than status.replicas")
        for f in ("updatedReplicas", "readyReplicas", "availableReplicas")]),
])
def test_a_status_write_is_validated(status: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    api.create(_deployment())

    def write() -> dict[str, Any]:
        return api.patch("Deployment", "web", {"status": status}, namespace="ns", subresource="status")

    if not causes:
        assert write()["status"] == status
        return
    err = assert_rejected(api, write, 422, "Invalid")
    assert field_causes(err) == causes


def test_a_status_write_keeps_the_spec_and_a_spec_write_keeps_the_status() -> None:
    api = make_api()
    api.create(_deployment())
    out = api.patch("Deployment", "web", {"spec": {"replicas": 5}, "status": {"replicas": 5}}, namespace="ns",
                    subresource="status")
    assert out["spec"]["replicas"] == 1 and out["status"] == {"replicas": 5}
    out = api.patch("Deployment", "web", {"spec": {"replicas": 5}, "status": {"replicas": 9}}, namespace="ns")
    assert out["spec"]["replicas"] == 5 and out["status"] == {"replicas": 5}


def test_listed_and_served_under_apps() -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create(_deployment())
    assert [d["metadata"]["name"] for d in api.list("Deployment", "ns", api_version="apps/v1")["items"]] == ["web"]
    assert api.resolve_kind("deploy").plural == "deployments"
