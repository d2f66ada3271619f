"""apps/v1 ReplicaSets: defaults, validation, generation, status and selection as kube-apiserver keeps them.

No replica set controller runs (as under envtest): what a test sees is what the API server does on
its own. Messages are those of ``pkg/apis/apps/validation`` (``ValidateReplicaSetSpec``,
``ValidatePodTemplateSpecForReplicaSet``, ``ValidateReplicaSetStatus``) and the ReplicaSet strategy
(``pkg/registry/apps/replicaset``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, drain, expect_error, field_causes, make_api, owner_ref

from fakeapi.codec.gomodel import builtin_go_type, go_roundtrip
from fakeapi.host.client import Client
from fakeapi.http.discovery import api_resource_list
from fakeapi.server.apiserver import APIServer

_NEGATIVE = "must be greater than or equal to 0"
_ABOVE_REPLICAS = "cannot be greater than status.replicas"


def _rs(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }
    body["spec"].update(spec)
    return body


def _deployment(name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }


# ------------------------------------------------------------------------------- defaults


def test_a_created_replica_set_is_defaulted() -> None:
    api = make_api()
    body = _rs()
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    out = api.create(body)
    spec = out["spec"]
    assert spec["replicas"] == 1
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always" and pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["terminationGracePeriodSeconds"] == 30 and pod_spec["schedulerName"] == "default-scheduler"
    assert pod_spec["securityContext"] == {}
    container = pod_spec["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent" and container["terminationMessagePolicy"] == "File"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    # what SetDefaults_Pod adds to a Pod itself is not a template's
    assert "enableServiceLinks" not in pod_spec
    assert container["resources"] == {"limits": {"cpu": "1"}}
    # none of a Deployment's own defaults
    assert set(spec) == {"replicas", "selector", "template"}


def test_the_template_gets_the_same_defaults_as_a_deployments() -> None:
    api = make_api()
    rs = api.create(_rs())
    deployment = api.create(_deployment())
    assert rs["spec"]["template"] == deployment["spec"]["template"]


def test_zero_replicas_are_kept() -> None:
    api = make_api()
    out = api.create(_rs(replicas=0))
    assert out["spec"]["replicas"] == 0
    assert api.get("ReplicaSet", "web", "ns")["spec"]["replicas"] == 0


# ---------------------------------------------------------------------- generation, status


def test_a_create_starts_at_generation_1_with_a_reset_status() -> None:
    api = make_api()
    body = _rs()
    body["status"] = {"replicas": 3, "readyReplicas": 3}
    out = api.create(body)
    assert out["metadata"]["generation"] == 1
    assert out["status"] == {"replicas": 0}  # ReplicaSetStatus{}: replicas has no omitempty


@pytest.mark.parametrize(("patch", "generation"), [
    ({"metadata": {"labels": {"a": "b"}}}, 1),
    # (unlike a Deployment's: a ReplicaSet's annotations are not copied anywhere)
    ({"metadata": {"annotations": {"a": "b"}}}, 1),
    ({"spec": {"replicas": 3}}, 2),
    ({"spec": {"minReadySeconds": 5}}, 2),
    ({"spec": {"template": {"metadata": {"labels": {"tier": "front"}}}}}, 2),
])
def test_the_generation_follows_the_spec_only(patch: dict[str, Any], generation: int) -> None:
    api = make_api()
    api.create(_rs())
    out = api.patch("ReplicaSet", "web", patch, namespace="ns")
    assert out["metadata"]["generation"] == generation


def test_an_update_that_changes_nothing_in_the_spec_keeps_the_generation() -> None:
    api = make_api()
    stored = api.create(_rs())
    out = api.update(stored)
    assert out["metadata"]["generation"] == 1


def test_a_status_write_keeps_the_generation() -> None:
    api = make_api()
    api.create(_rs())
    api.patch("ReplicaSet", "web", {"spec": {"replicas": 3}}, namespace="ns")
    out = api.patch("ReplicaSet", "web", {"status": {"replicas": 3, "observedGeneration": 2}}, namespace="ns",
                    subresource="status")
    assert out["metadata"]["generation"] == 2 and out["status"] == {"replicas": 3, "observedGeneration": 2}


def test_a_status_write_keeps_the_spec_and_a_spec_write_keeps_the_status() -> None:
    api = make_api()
    api.create(_rs())
    out = api.patch("ReplicaSet", "web", {"spec": {"replicas": 5}, "status": {"replicas": 5}}, namespace="ns",
                    subresource="status")
    assert out["spec"]["replicas"] == 1 and out["status"] == {"replicas": 5}
    out = api.patch("ReplicaSet", "web", {"spec": {"replicas": 5}, "status": {"replicas": 9}}, namespace="ns")
    assert out["spec"]["replicas"] == 5 and out["status"] == {"replicas": 5}
    stored = api.get("ReplicaSet", "web", "ns")
    stored["status"] = {"replicas": 7}
    assert api.update(stored)["status"] == {"replicas": 5}


# ----------------------------------------------------------------------- create validation


@pytest.mark.parametrize(("spec", "causes"), [
    ({"replicas": -1}, [("spec.replicas", f"Invalid value: -1: {_NEGATIVE}")]),
    ({"minReadySeconds": -5}, [("spec.minReadySeconds", f"Invalid value: -5: {_NEGATIVE}")]),
    # (Go's message names a deployment for a ReplicaSet too; an empty selector selects everything, so the
    # template's labels are not compared with it)
    ({"selector": {}}, [("spec.selector", "Invalid value: &LabelSelector{MatchLabels:map[string]string{},"
                                       "MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid "
                                       "for deployment")]),
    ({"selector": {"matchLabels": {"app": "api"}}},
     [("spec.template.metadata.labels",
       'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`')]),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}},
     [("spec.template.metadata.labels",
       'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`')]),
    ({"replicas": -1, "minReadySeconds": -1, "selector": {"matchLabels": {"app": "api"}}},
     [("spec.replicas", f"Invalid value: -1: {_NEGATIVE}"), ("spec.minReadySeconds", f"Invalid value: -1: {_NEGATIVE}"),
      ("spec.template.metadata.labels",
       'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`')]),
])
def test_invalid_replica_sets(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_rs(**spec)), 422, "Invalid")
    assert field_causes(err) == causes
    assert err.message.startswith('ReplicaSet.apps "web" is invalid: ')


def test_a_missing_selector_is_required_and_selects_nothing() -> None:
    api = make_api()
    body = _rs()
    del body["spec"]["selector"]
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    # LabelSelectorAsSelector(nil) is labels.Nothing(): the template's labels do not match it either
    assert field_causes(err) == [
        ("spec.selector", "Required value"),
        ("spec.template.metadata.labels",
         'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'),
    ]


@pytest.mark.parametrize(("pod_spec", "causes"), [
    ({"restartPolicy": "OnFailure"},
     [("spec.template.spec.restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"')]),
    ({"restartPolicy": "Never"},
     [("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"')]),
    ({"activeDeadlineSeconds": 30},
     [("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")]),
    ({"restartPolicy": "OnFailure", "activeDeadlineSeconds": 30},
     [("spec.template.spec.restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"'),
      ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")]),
])
def test_the_template_must_restart_always_and_have_no_deadline(pod_spec: dict[str, Any],
                                                                causes: list[tuple[str, str]]) -> None:
    api = make_api()
    body = _rs()
    body["spec"]["template"]["spec"].update(pod_spec)
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == causes


def test_the_templates_pod_spec_is_validated() -> None:
    api = make_api()
    body = _rs()
    body["spec"]["template"]["spec"]["containers"].append({"name": "c", "image": "busybox"})
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == [("spec.template.spec.containers[1].name", 'Duplicate value: "c"')]


def test_a_value_of_the_wrong_type_is_a_decode_error() -> None:
    api = make_api()
    assert_rejected(api, lambda: api.create(_rs(replicas="3")), 400, "BadRequest",
                    'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: json: cannot unmarshal string into '
                    "Go struct field ReplicaSetSpec.spec.replicas of type int32")


# ----------------------------------------------------------------------- update validation


def test_the_selector_is_immutable() -> None:
    api = make_api()
    stored = api.create(_rs())
    changed = copy.deepcopy(stored)
    changed["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    err = assert_rejected(api, lambda: api.update(changed), 422, "Invalid")
    assert field_causes(err) == [("spec.selector", "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: web,"
                                                   "tier: front,},MatchExpressions:[]LabelSelectorRequirement{},}: "
                                                   "field is immutable")]


def test_the_template_and_replicas_may_change() -> None:
    api = make_api()
    api.create(_rs())
    patch = {"spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}
    out = api.patch("ReplicaSet", "web", patch, namespace="ns", patch_type="strategic")
    assert out["spec"]["replicas"] == 4
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_an_update_validates_the_spec_twice() -> None:
    # the strategy's ValidateUpdate runs ValidateReplicaSet and then ValidateReplicaSetUpdate, and both
    # validate the spec: each spec cause is listed twice; the message names it once (ToAggregate)
    api = make_api()
    api.create(_rs())
    err = assert_rejected(api, lambda: api.patch("ReplicaSet", "web", {"spec": {"replicas": -2}}, namespace="ns"),
                          422, "Invalid")
    assert field_causes(err) == [("spec.replicas", f"Invalid value: -2: {_NEGATIVE}")] * 2
    assert err.message == f'ReplicaSet.apps "web" is invalid: spec.replicas: Invalid value: -2: {_NEGATIVE}'


# ----------------------------------------------------------------------- status validation


@pytest.mark.parametrize(("status", "causes"), [
    ({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 2, "observedGeneration": 1,
      "terminatingReplicas": 1}, []),
    ({"replicas": 1, "terminatingReplicas": 0}, []),
    ({"fullyLabeledReplicas": 1},
     [("status.fullyLabeledReplicas", f"Invalid value: 1: {_ABOVE_REPLICAS}")]),
    ({"replicas": 1, "readyReplicas": 2},
     [("status.readyReplicas", f"Invalid value: 2: {_ABOVE_REPLICAS}")]),
    ({"replicas": 2, "readyReplicas": 2, "availableReplicas": 3},
     [("status.availableReplicas", f"Invalid value: 3: {_ABOVE_REPLICAS}"),
      ("status.availableReplicas", "Invalid value: 3: cannot be greater than readyReplicas")]),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     [("status.availableReplicas", "Invalid value: 2: cannot be greater than readyReplicas")]),
    ({"replicas": 1, "observedGeneration": -1},
     [("status.observedGeneration", f"Invalid value: -1: {_NEGATIVE}")]),
    ({"replicas": 1, "terminatingReplicas": -1},
     [("status.terminatingReplicas", f"Invalid value: -1: {_NEGATIVE}")]),
    ({"replicas": 1, "fullyLabeledReplicas": -1, "readyReplicas": -1, "availableReplicas": -1},
     [("status.fullyLabeledReplicas", f"Invalid value: -1: {_NEGATIVE}"),
      ("status.readyReplicas", f"Invalid value: -1: {_NEGATIVE}"),
      ("status.availableReplicas", f"Invalid value: -1: {_NEGATIVE}")]),
    # (0 fully labeled, ready and available are more than -1 too, and Go says so)
    ({"replicas": -1}, [("status.replicas", f"Invalid value: -1: {_NEGATIVE}")] + [
        (f"status.{f}", f"Invalid value: 0: {_ABOVE_REPLICAS}")
        for f in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas")]),
])
def test_a_status_write_is_validated(status: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    api.create(_rs())

    def write() -> dict[str, Any]:
        return api.patch("ReplicaSet", "web", {"status": status}, namespace="ns", subresource="status")

    if not causes:
        assert write()["status"] == status
        return
    err = assert_rejected(api, write, 422, "Invalid")
    assert field_causes(err) == causes
    assert err.message.startswith('ReplicaSet.apps "web" is invalid: ')


def test_a_spec_write_does_not_validate_the_stored_status() -> None:
    api = make_api()
    api.create(_rs())
    api.patch("ReplicaSet", "web", {"status": {"replicas": 2, "readyReplicas": 2}}, namespace="ns",
              subresource="status")
    out = api.patch("ReplicaSet", "web", {"spec": {"replicas": 0}}, namespace="ns")
    assert out["spec"]["replicas"] == 0 and out["status"] == {"replicas": 2, "readyReplicas": 2}


# ----------------------------------------------------------------------------- selection


def test_status_replicas_is_a_selectable_field() -> None:
    api = make_api()
    for name in ("a", "b", "c"):
        api.create(_rs(name))
    api.patch("ReplicaSet", "b", {"status": {"replicas": 3}}, namespace="ns", subresource="status")

    def names(selector: str) -> list[str]:
        return [i["metadata"]["name"] for i in api.list("ReplicaSet", "ns", field_selector=selector)["items"]]

    assert names("status.replicas=3") == ["b"]
    assert names("status.replicas=0") == ["a", "c"]
    assert names("status.replicas!=0") == ["b"]
    assert names("status.replicas=3,metadata.name=b") == ["b"]
    assert names("metadata.namespace=ns,status.replicas=1") == []


def test_a_field_the_replica_set_does_not_select_on_is_refused() -> None:
    api = make_api()
    api.create(_rs())
    expect_error(lambda: api.list("ReplicaSet", "ns", field_selector="spec.replicas=1"), 400, "BadRequest",
                 "field label not supported: spec.replicas")


def test_a_watch_selects_on_status_replicas() -> None:
    api = make_api()
    api.create(_rs())
    watch = api.watch("ReplicaSet", "ns", field_selector="status.replicas=2")
    api.patch("ReplicaSet", "web", {"status": {"replicas": 2}}, namespace="ns", subresource="status")
    api.patch("ReplicaSet", "web", {"status": {"replicas": 1}}, namespace="ns", subresource="status")
    assert [e.type for e in watch.poll()] == ["ADDED", "DELETED"]


# ------------------------------------------------------------------- garbage collection


@pytest.mark.parametrize("policy", [None, "Background", "Foreground"])
def test_a_replica_set_owned_by_a_deployment_is_collected_with_it(policy: str | None) -> None:
    api = make_api()
    deployment = api.create(_deployment())
    rs = _rs("web-5d8f7c")
    rs["metadata"]["ownerReferences"] = [owner_ref(deployment, controller=True, block=True)]
    api.create(rs)
    api.create(_rs("unowned"))
    api.delete("Deployment", "web", "ns", propagation_policy=policy)
    if policy == "Foreground":
        # the owner waits, marked, until its blocking dependent is gone
        assert api.get("Deployment", "web", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]
    drain(api)
    expect_error(lambda: api.get("Deployment", "web", "ns"), 404)
    expect_error(lambda: api.get("ReplicaSet", "web-5d8f7c", "ns"), 404)
    assert [i["metadata"]["name"] for i in api.list("ReplicaSet", "ns")["items"]] == ["unowned"]
    deletes = [c.name for c in api.trace.calls if c.actor == "garbage-collector" and c.verb == "delete"]
    assert "web-5d8f7c" in deletes


def test_an_orphaned_replica_set_stays_without_its_owner_reference() -> None:
    api = make_api()
    deployment = api.create(_deployment())
    rs = _rs("web-5d8f7c")
    rs["metadata"]["ownerReferences"] = [owner_ref(deployment, controller=True, block=True)]
    api.create(rs)
    api.delete("Deployment", "web", "ns", propagation_policy="Orphan")
    drain(api)
    expect_error(lambda: api.get("Deployment", "web", "ns"), 404)
    assert "ownerReferences" not in api.get("ReplicaSet", "web-5d8f7c", "ns")["metadata"]


def test_pods_owned_by_a_replica_set_are_collected_with_it() -> None:
    api = make_api()
    rs = api.create(_rs())
    api.create({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-x", "namespace": "ns", "labels": {"app": "web"},
                             "ownerReferences": [owner_ref(rs, controller=True, block=True)]},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}})
    api.delete("ReplicaSet", "web", "ns")
    drain(api)
    assert api.list("Pod", "ns")["items"] == []


# ----------------------------------------------------------------------------- Go client


def test_zero_replicas_survive_a_go_client_round_trip() -> None:
    api = make_api()
    client = Client(api, "ctrl")
    created = client.create(_rs(replicas=0))
    assert created["spec"]["replicas"] == 0
    read = client.get("ReplicaSet", "web", "ns")
    assert read["spec"]["replicas"] == 0
    labels = {**(read["metadata"].get("labels") or {}), "touched": "yes"}
    updated = client.update({**read, "metadata": {**read["metadata"], "labels": labels}})
    assert updated["spec"]["replicas"] == 0 and updated["metadata"]["generation"] == 1
    assert api.get("ReplicaSet", "web", "ns")["spec"]["replicas"] == 0
    api.check_snapshots()


def test_the_go_type_model() -> None:
    rs_type = builtin_go_type("io.k8s.api.apps.v1.ReplicaSet")
    obj = {"spec": {"replicas": 0, "minReadySeconds": 0, "selector": {"matchLabels": {"app": "web"}}},
           "status": {"replicas": 0, "readyReplicas": 0, "terminatingReplicas": 0, "observedGeneration": 0}}
    out = go_roundtrip(obj, rs_type)
    # *int32 replicas keeps 0; int32 minReadySeconds (omitempty) drops it; the template is a value struct
    assert out["spec"] == {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {}, "spec": {"containers": None}}}
    # status.replicas has no omitempty; terminatingReplicas is *int32
    assert out["status"] == {"replicas": 0, "terminatingReplicas": 0}


# ------------------------------------------------------------------------------ discovery


def test_listed_and_served_under_apps() -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create(_rs())
    assert [d["metadata"]["name"] for d in api.list("ReplicaSet", "ns", api_version="apps/v1")["items"]] == ["web"]
    kind = api.resolve_kind("rs")
    assert (kind.plural, kind.group, kind.version, kind.namespaced) == ("replicasets", "apps", "v1", True)
    assert api.resolve_kind("replicasets") is kind and api.resolve_kind("apps/v1/ReplicaSet") is kind
    resources = api_resource_list(api.kinds, "apps", "v1")
    assert resources is not None
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["replicasets"]["shortNames"] == ["rs"] and by_name["replicasets"]["kind"] == "ReplicaSet"
    assert by_name["replicasets/status"]["verbs"] == ["get", "patch", "update"]
    assert [r["name"] for r in resources["resources"]] == [
        "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets",
        "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]


def test_a_selector_expression_is_validated() -> None:
    """``ValidateReplicaSetSpec`` checks the selector with ``ValidateLabelSelector`` first."""
    api = make_api()
    body = _rs(selector={"matchLabels": {"app": "web"},
                         "matchExpressions": [{"key": "tier", "operator": "In", "values": []}]})
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert ("spec.selector.matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'") in field_causes(err)
