"""``metadata.managedFields`` on every write, and server-side apply, through APIServer.

Each test pins one behaviour of kube-apiserver's field manager
(``k8s.io/apimachinery/pkg/util/managedfields``) over structured-merge-diff:
who owns what after a create, update, status write or apply; apply conflicts
(409 with ``FieldManagerConflict`` causes) and ``force``; shared ownership; the
pruning of fields an applier stops applying; and the errors of a malformed apply.
The actor of a non-apply write is its field manager.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from support import expect_error, widget, widget_crd

from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer

NS = "default"
C = 'k:{"name":"c"}'
PORT = 'k:{"containerPort":80,"protocol":"TCP"}'


def deployment_config(**spec: Any) -> dict[str, Any]:
    """The applied configuration of Deployment ``default/d`` (``spec`` fields override its spec)."""
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]},
            },
        },
    }
    body["spec"].update(spec)
    return body


#: What the applier of :func:`deployment_config` owns.
DEPLOYMENT_FIELDS: dict[str, Any] = {
    "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {C: {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {PORT: {".": {}, "f:containerPort": {}}},
            }}},
        },
    },
}


def apply(api: APIServer, body: Any, *, manager: str = "kubectl", force: bool | None = None,
          name: str = "d") -> dict[str, Any]:
    """Server-side apply of ``body`` to Deployment ``default/<name>``."""
    return api.patch("Deployment", name, body, namespace=NS, api_version="apps/v1", patch_type="apply",
                     field_manager=manager, force=force)


def entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The managedFields entries of ``obj`` by manager name."""
    out = {e["manager"]: e for e in obj["metadata"].get("managedFields") or []}
    assert len(out) == len(obj["metadata"].get("managedFields") or []), "one entry per manager expected here"
    return out


def fields(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    """The ``fieldsV1`` of ``manager``'s entry."""
    out: dict[str, Any] = entries(obj)[manager]["fieldsV1"]
    return out


def pod_body(**labels: str) -> dict[str, Any]:
    """Pod ``default/p`` as ``kubectl run p --image=nginx`` creates it."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": NS, "labels": labels or {"run": "p"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}


# ------------------------------------------------------- non-apply writes

#: What ``kubectl run`` owns after creating :func:`pod_body` (the defaults included).
POD_FIELDS: dict[str, Any] = {
    "f:metadata": {"f:labels": {".": {}, "f:run": {}}},
    "f:spec": {
        "f:containers": {'k:{"name":"nginx"}': {
            ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {},
            "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
        }},
        "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
        "f:securityContext": {}, "f:terminationGracePeriodSeconds": {},
    },
}


def test_create_records_one_update_entry() -> None:
    """A create gives its field manager one ``Update`` entry owning what it set and the defaults
    (compared with the Go zero value, so ``spec`` itself is not a member); server-set metadata
    (name, uid, resourceVersion, ...) and status are never owned by a main-resource write."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    assert pod["metadata"]["managedFields"] == [{
        "manager": "kubectl-run",
        "operation": "Update",
        "apiVersion": "v1",
        "time": api.clock.timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": POD_FIELDS,
    }]
    assert api.get("Pod", "p", NS)["metadata"]["managedFields"] == pod["metadata"]["managedFields"]


def test_create_serializes_fields_in_go_order() -> None:
    """``fieldsV1`` is written as Go serializes it: ``.`` first, then elements sorted."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    text = json.dumps(pod["metadata"]["managedFields"][0]["fieldsV1"])
    assert text == json.dumps(POD_FIELDS)


def test_binding_records_no_manager() -> None:
    """``pods/binding`` writes the pod past the field manager (``BindingREST`` updates storage
    directly): ``spec.nodeName`` and the ``PodScheduled`` condition change, managedFields do
    not (kubernetes/kubernetes#127508: no entry owns ``k:{"type":"PodScheduled"}``)."""
    api = APIServer()
    before = api.create(pod_body(), actor="kubectl-run")
    clock_before = api.clock.timestamp()
    api.clock.advance(5)
    api.bind_pod("p", NS, "node-1")
    pod = api.get("Pod", "p", NS)
    assert pod["spec"]["nodeName"] == "node-1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]
    assert pod["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert pod["metadata"]["managedFields"] == before["metadata"]["managedFields"]
    assert pod["metadata"]["managedFields"][0]["time"] == clock_before


def test_second_updater_gets_its_own_entry() -> None:
    """An update by another manager records only what it changed, at its time; the creator's
    entry (and its time) is unchanged."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    first = copy.deepcopy(pod["metadata"]["managedFields"][0])
    api.clock.advance("1m")
    pod["metadata"]["labels"]["tier"] = "web"
    updated = api.update(pod, actor="labeler")
    assert entries(updated)["kubectl-run"] == first
    assert entries(updated)["labeler"] == {
        "manager": "labeler",
        "operation": "Update",
        "apiVersion": "v1",
        "time": api.clock.timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:tier": {}}}},
    }
    assert [e["manager"] for e in updated["metadata"]["managedFields"]] == ["kubectl-run", "labeler"]


def test_changing_a_field_takes_it_from_its_owner() -> None:
    """A changed value moves to the writer; a removed field leaves every manager."""
    api = APIServer()
    pod = api.create(pod_body(run="p", tier="web"), actor="kubectl-run")
    pod["metadata"]["labels"] = {"run": "q"}
    updated = api.update(pod, actor="relabeler")
    assert fields(updated, "kubectl-run")["f:metadata"] == {"f:labels": {}}  # (labels itself, a member)
    assert fields(updated, "relabeler") == {"f:metadata": {"f:labels": {"f:run": {}}}}


def test_noop_update_touches_nothing() -> None:
    """An update that changes nothing is not written: same resourceVersion, and the managedFields
    are unchanged (no entry for the new manager, no new time)."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    api.clock.advance("1m")
    again = api.update(copy.deepcopy(pod), actor="someone-else")
    assert again["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == pod["metadata"]["managedFields"]
    assert api.get("Pod", "p", NS) == pod


def test_rewriting_owned_fields_moves_only_the_time() -> None:
    """A writer changing again only fields its entry owns (the usual controller write) keeps every
    entry as it was; its own time moves with the clock, and nothing else does."""
    api = APIServer()
    api.create(pod_body(run="p", tier="web"), actor="kubectl-run")
    api.patch("Pod", "p", {"metadata": {"labels": {"tier": "db"}}}, namespace=NS, actor="relabeler")
    first = api.patch("Pod", "p", {"metadata": {"labels": {"tier": "cache"}}}, namespace=NS, actor="relabeler")
    assert fields(first, "relabeler") == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    again = api.patch("Pod", "p", {"metadata": {"labels": {"tier": "web"}}}, namespace=NS, actor="relabeler")
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]  # (same time: nothing moves)
    api.clock.advance("1m")
    later = api.patch("Pod", "p", {"metadata": {"labels": {"tier": "db"}}}, namespace=NS, actor="relabeler")
    before, after = entries(again), entries(later)
    assert after["kubectl-run"] == before["kubectl-run"]
    assert after["relabeler"] == {**before["relabeler"], "time": api.clock.timestamp()}
    assert after["relabeler"]["time"] != before["relabeler"]["time"]
    assert [e["manager"] for e in later["metadata"]["managedFields"]] == [
        e["manager"] for e in again["metadata"]["managedFields"]]


def test_rewriting_a_field_owned_with_another_manager_takes_it_from_them() -> None:
    """A field two managers own (an applier applied the value an updater had set) leaves the applier
    when the updater, which owns it already, changes it: the writer's own fields are not enough."""
    api = APIServer()
    api.create(pod_body(run="p"), actor="kubectl-run")
    api.patch("Pod", "p", {"metadata": {"labels": {"tier": "web"}}}, namespace=NS, actor="relabeler")
    shared = api.patch("Pod", "p", {"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": "p", "labels": {"tier": "web"}}},
                       namespace=NS, patch_type="apply", field_manager="applier")
    assert fields(shared, "applier") == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    assert fields(shared, "relabeler") == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    moved = api.patch("Pod", "p", {"metadata": {"labels": {"tier": "db"}}}, namespace=NS, actor="relabeler")
    assert "applier" not in entries(moved)
    assert fields(moved, "relabeler") == {"f:metadata": {"f:labels": {"f:tier": {}}}}


def test_update_without_managed_fields_keeps_them() -> None:
    """A client that drops ``metadata.managedFields`` from its body does not erase them: the
    stored entries are the starting point."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    body = copy.deepcopy(pod)
    del body["metadata"]["managedFields"]
    body["metadata"]["labels"]["tier"] = "web"
    updated = api.update(body, actor="labeler")
    assert set(entries(updated)) == {"kubectl-run", "labeler"}
    assert fields(updated, "kubectl-run") == POD_FIELDS


def test_single_empty_entry_resets_managed_fields() -> None:
    """``managedFields: [{}]`` in an update clears them (the documented reset)."""
    api = APIServer()
    pod = api.create(pod_body(), actor="kubectl-run")
    pod["metadata"]["managedFields"] = [{}]
    updated = api.update(pod, actor="janitor")
    assert "managedFields" not in updated["metadata"]
    assert "managedFields" not in api.get("Pod", "p", NS)["metadata"]


def test_custom_resource_create_owns_spec_itself() -> None:
    """A custom resource is compared with an empty object (not a Go zero value): ``spec`` is
    added, so it is a member (``.``), with the schema's defaults owned by the creator."""
    api = APIServer()
    api.register_crd(widget_crd())
    w = api.create(widget("w1", NS, spec={"items": ["a"]}), actor="creator")
    assert fields(w, "creator") == {"f:spec": {".": {}, "f:items": {}, "f:replicas": {}}}
    assert entries(w)["creator"]["apiVersion"] == "example.com/v1"


def test_status_write_records_a_status_entry() -> None:
    """A ``/status`` write's entry carries ``subresource: status`` and owns only status fields
    (spec sent along is ignored and not owned); the main entry is untouched."""
    api = APIServer()
    api.register_crd(widget_crd())
    w = api.create(widget("w1", NS, spec={"replicas": 3}), actor="creator")
    creator = copy.deepcopy(entries(w)["creator"])
    w["status"] = {"phase": "Ready"}
    w["spec"]["replicas"] = 9
    s = api.update(w, actor="widget-controller", subresource="status")
    assert s["spec"]["replicas"] == 3
    assert entries(s)["creator"] == creator
    assert entries(s)["widget-controller"] == {
        "manager": "widget-controller",
        "operation": "Update",
        "apiVersion": "example.com/v1",
        "time": api.clock.timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {".": {}, "f:phase": {}}},
        "subresource": "status",
    }


def test_main_resource_write_does_not_own_status() -> None:
    """With a status subresource, status in a main-resource write is reset and never owned."""
    api = APIServer()
    api.register_crd(widget_crd())
    w = api.create({**widget("w1", NS, spec={"replicas": 3}), "status": {"phase": "x"}}, actor="creator")
    assert "f:status" not in fields(w, "creator")


# ----------------------------------------------------------- apply basics


def test_apply_requires_a_field_manager() -> None:
    """An apply patch without ``fieldManager`` is an invalid PatchOptions (422)."""
    api = APIServer()
    expect_error(
        lambda: api.patch("Deployment", "d", deployment_config(), namespace=NS, api_version="apps/v1",
                          patch_type="apply"),
        422, "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{
            "reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
            "field": "fieldManager"}]})


@pytest.mark.parametrize("force", [True, False])
def test_force_on_a_non_apply_patch_is_rejected(force: bool) -> None:
    """``force`` (even false) may only accompany an apply patch (422)."""
    api = APIServer()
    apply(api, deployment_config())
    expect_error(
        lambda: api.patch("Deployment", "d", {"metadata": {"labels": {"a": "b"}}}, namespace=NS,
                          api_version="apps/v1", patch_type="merge", force=force),
        422, "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')


def test_apply_creates_a_missing_object() -> None:
    """An apply of a missing object creates it; its one entry is an ``Apply`` entry."""
    api = APIServer()
    created = apply(api, deployment_config())
    stored = api.get("Deployment", "d", NS)
    assert stored == created
    assert stored["metadata"]["uid"]
    assert stored["metadata"]["managedFields"] == [{
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": api.clock.timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": DEPLOYMENT_FIELDS,
    }]


def test_apply_owns_what_the_config_sets() -> None:
    """The applier owns exactly its configuration: ``spec.selector`` (an atomic LabelSelector) as
    one member, the port under its full key (``protocol`` filled from its default), and
    neither the server-set metadata nor the defaults the server added."""
    api = APIServer()
    d = apply(api, deployment_config())
    assert fields(d, "kubectl") == DEPLOYMENT_FIELDS
    assert fields(d, "kubectl")["f:spec"]["f:selector"] == {}
    assert d["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert d["spec"]["strategy"]["type"] == "RollingUpdate"  # defaulted, owned by no one


@pytest.mark.parametrize("form", ["dict", "json", "yaml"])
def test_apply_body_forms(form: str) -> None:
    """The applied configuration may be YAML or JSON text, or (in-process) a dict."""
    config = deployment_config()
    body: Any = {"dict": config, "json": json.dumps(config), "yaml": yaml.safe_dump(config)}[form]
    api = APIServer()
    d = apply(api, body)
    assert d["spec"]["replicas"] == 2
    assert fields(d, "kubectl") == DEPLOYMENT_FIELDS


def test_reapplying_the_same_config_is_a_noop() -> None:
    """Re-applying an identical configuration writes nothing: same resourceVersion, and the
    entry keeps its time."""
    api = APIServer()
    first = apply(api, deployment_config())
    api.clock.advance("1m")
    again = apply(api, deployment_config())
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]


def test_apply_that_changes_a_value_updates_the_time() -> None:
    """An apply that changes the object stamps its entry with the current time."""
    api = APIServer()
    first = apply(api, deployment_config())
    api.clock.advance("1m")
    again = apply(api, deployment_config(replicas=3))
    assert again["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    assert entries(again)["kubectl"]["time"] == api.clock.timestamp()
    assert fields(again, "kubectl") == DEPLOYMENT_FIELDS


def test_noop_apply_by_a_new_manager_records_it_without_a_time() -> None:
    """An apply that changes nothing still records its manager (the object is written for the new
    entry), but without a time: the time is set only when the object changed. Entries without
    a time sort before the others of their operation."""
    api = APIServer()
    first = apply(api, deployment_config())
    api.clock.advance("1m")
    d = apply(api, deployment_config(), manager="other")
    assert d["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    assert "time" not in entries(d)["other"]
    assert entries(d)["kubectl"] == entries(first)["kubectl"]
    assert [e["manager"] for e in d["metadata"]["managedFields"]] == ["other", "kubectl"]


def test_apply_to_the_status_subresource() -> None:
    """An apply to ``/status`` records an ``Apply`` entry with ``subresource: status`` owning only
    status; the spec in the configuration is ignored."""
    api = APIServer()
    api.register_crd(widget_crd())
    config = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"items": ["a"], "mode": "a"}}
    w = api.patch("Widget", "w1", config, namespace=NS, api_version="example.com/v1", patch_type="apply",
                  field_manager="kubectl")
    assert fields(w, "kubectl") == {"f:spec": {"f:items": {}, "f:mode": {}}}
    status = {**config, "spec": {"mode": "b"}, "status": {"phase": "Ready"}}
    s = api.patch("Widget", "w1", status, namespace=NS, api_version="example.com/v1", patch_type="apply",
                  field_manager="widget-controller", subresource="status")
    assert s["spec"] == {"items": ["a"], "mode": "a", "replicas": 1}
    assert s["status"] == {"phase": "Ready"}
    assert entries(s)["widget-controller"] == {
        "manager": "widget-controller",
        "operation": "Apply",
        "apiVersion": "example.com/v1",
        "time": api.clock.timestamp(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:phase": {}}},
        "subresource": "status",
    }
    assert fields(s, "kubectl") == fields(w, "kubectl")


# ------------------------------------------------------------- conflicts


def scale_by_hpa(api: APIServer, replicas: int = 5, image: str | None = None) -> dict[str, Any]:
    """A plain update of the Deployment by manager ``hpa``."""
    d = api.get("Deployment", "d", NS)
    d["spec"]["replicas"] = replicas
    if image is not None:
        d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return api.update(d, actor="hpa")


def test_update_takes_ownership_from_the_applier() -> None:
    """A plain update that changes an applied field takes it from the applier."""
    api = APIServer()
    apply(api, deployment_config())
    d = scale_by_hpa(api)
    assert fields(d, "hpa") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields(d, "kubectl")["f:spec"]
    assert [(e["manager"], e["operation"]) for e in d["metadata"]["managedFields"]] == [
        ("kubectl", "Apply"), ("hpa", "Update")]  # Apply entries sort first


def test_apply_conflict() -> None:
    """Re-applying a value another manager changed is a 409 Conflict naming the manager (with its
    apiVersion, being an updater) and the field; nothing is written."""
    api = APIServer()
    apply(api, deployment_config())
    before = scale_by_hpa(api)
    err = expect_error(
        lambda: apply(api, deployment_config()),
        409, "Conflict",
        'Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas',
        {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "hpa" using apps/v1',
                     "field": ".spec.replicas"}]})
    assert isinstance(err, ApiError)
    assert err.status["code"] == 409
    assert api.get("Deployment", "d", NS) == before


def test_apply_conflicts_on_several_fields() -> None:
    """Several conflicts: grouped by manager, one ``- <path>`` line each, one cause each."""
    api = APIServer()
    apply(api, deployment_config())
    scale_by_hpa(api, image="nginx:2")
    expect_error(
        lambda: apply(api, deployment_config()),
        409, "Conflict",
        'Apply failed with 2 conflicts: conflicts with "hpa" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="c"].image',
        {"causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "hpa" using apps/v1',
             "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": 'conflict with "hpa" using apps/v1',
             "field": '.spec.template.spec.containers[name="c"].image'},
        ]})


def test_conflict_with_another_applier() -> None:
    """An applier is named without an apiVersion (appliers are one manager whatever the version)."""
    api = APIServer()
    apply(api, deployment_config())
    config = deployment_config()
    config["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    expect_error(
        lambda: apply(api, config, manager="other"),
        409, "Conflict",
        'Apply failed with 1 conflict: conflict with "kubectl": .spec.template.spec.containers[name="c"].image')


def test_force_takes_the_field() -> None:
    """``force`` applies the value anyway and moves the field to the applier; a manager left
    owning nothing loses its entry."""
    api = APIServer()
    apply(api, deployment_config())
    scale_by_hpa(api)
    d = apply(api, deployment_config(), force=True)
    assert d["spec"]["replicas"] == 2
    assert set(entries(d)) == {"kubectl"}
    assert fields(d, "kubectl") == DEPLOYMENT_FIELDS


def test_same_value_is_shared_not_a_conflict() -> None:
    """Applying the value another manager set is no conflict: both own the field."""
    api = APIServer()
    apply(api, deployment_config())
    d = scale_by_hpa(api, replicas=5)
    shared = apply(api, deployment_config(replicas=5), manager="other")
    assert shared["spec"]["replicas"] == 5
    assert fields(shared, "hpa") == fields(d, "hpa") == {"f:spec": {"f:replicas": {}}}
    assert fields(shared, "other") == DEPLOYMENT_FIELDS


def test_two_appliers_of_the_same_config_share_everything() -> None:
    """Two appliers of the same configuration both own all of it."""
    api = APIServer()
    apply(api, deployment_config())
    d = apply(api, deployment_config(), manager="other")
    assert fields(d, "kubectl") == fields(d, "other") == DEPLOYMENT_FIELDS


# ---------------------------------------------------------------- pruning


def without_ports() -> dict[str, Any]:
    """:func:`deployment_config` without the container's ports."""
    config = deployment_config()
    del config["spec"]["template"]["spec"]["containers"][0]["ports"]
    return config


def test_prune_removes_what_only_the_applier_owned() -> None:
    """A field the applier applied before and no longer applies is removed when no one else owns it."""
    api = APIServer()
    apply(api, deployment_config())
    d = apply(api, without_ports())
    assert "ports" not in d["spec"]["template"]["spec"]["containers"][0]
    assert "f:ports" not in fields(d, "kubectl")["f:spec"]["f:template"]["f:spec"]["f:containers"][C]


def test_prune_keeps_what_another_manager_owns() -> None:
    """A field the applier stops applying stays while another manager owns it too."""
    api = APIServer()
    apply(api, deployment_config())
    apply(api, deployment_config(), manager="other")
    d = apply(api, without_ports())
    assert d["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "f:ports" not in fields(d, "kubectl")["f:spec"]["f:template"]["f:spec"]["f:containers"][C]
    assert fields(d, "other") == DEPLOYMENT_FIELDS


def test_prune_of_a_shared_label_then_of_the_last_owner() -> None:
    """Shared ownership released one applier at a time: the label stays until its last owner drops it."""
    api = APIServer()
    labelled = deployment_config()
    labelled["metadata"]["labels"] = {"team": "a"}
    apply(api, labelled)
    apply(api, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"team": "a"}}},
          manager="labeller")
    d = apply(api, deployment_config())
    assert d["metadata"]["labels"] == {"team": "a"}
    assert fields(d, "labeller") == {"f:metadata": {"f:labels": {"f:team": {}}}}
    assert "f:metadata" not in fields(d, "kubectl")
    d = apply(api, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}, manager="labeller")
    assert not d["metadata"].get("labels")
    assert set(entries(d)) == {"kubectl"}


def test_pruned_field_with_a_default_is_defaulted_again() -> None:
    """A pruned field that has a default is reset to it (``replicas`` back to 1)."""
    api = APIServer()
    apply(api, deployment_config(replicas=3))
    config = deployment_config()
    del config["spec"]["replicas"]
    d = apply(api, config)
    assert d["spec"]["replicas"] == 1
    assert "f:replicas" not in fields(d, "kubectl")["f:spec"]


# ------------------------------------------------------- malformed applies


@pytest.mark.parametrize(("change", "message"), [
    ({"metadata": {"name": "d", "managedFields": []}}, "metadata.managedFields must be nil"),
    ({"metadata": {"name": "d", "managedFields": [{"manager": "x", "operation": "Apply"}]}},
     "metadata.managedFields must be nil"),
    ({"apiVersion": "apps/v1beta1"},
     "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1"),
    ({"apiVersion": "v1"}, "Incorrect version specified in apply patch. Specified patch version: v1, expected: apps/v1"),
], ids=["managed-fields-empty", "managed-fields", "other-version", "core-version"])
def test_malformed_apply_is_a_bad_request(change: dict[str, Any], message: str) -> None:
    """An apply may not carry managedFields, and must name the endpoint's apiVersion (400);
    nothing is created."""
    api = APIServer()
    err = expect_error(lambda: apply(api, {**deployment_config(), **change}), 400, "BadRequest", message)
    assert err.message.startswith(message.split(".")[0])
    expect_error(lambda: api.get("Deployment", "d", NS), 404, "NotFound")


@pytest.mark.parametrize("exists", [False, True], ids=["create", "update"])
def test_apply_with_a_duplicate_key_fails_to_type(exists: bool) -> None:
    """A configuration whose keyed list repeats a key cannot be read as a typed object: a 500
    (a non-Status error, so no reason) naming the object and the duplicate."""
    api = APIServer()
    if exists:
        apply(api, deployment_config())
    config = deployment_config()
    config["spec"]["template"]["spec"]["containers"].append({"name": "c", "image": "busybox"})
    err = expect_error(lambda: apply(api, config), 500, "")
    assert err.message.startswith("failed to create typed patch object (default/d; apps/v1, Kind=Deployment):")
    assert 'duplicate entries for key [name="c"]' in err.message
    assert err.message == ("failed to create typed patch object (default/d; apps/v1, Kind=Deployment): "
                           '.spec.template.spec.containers: duplicate entries for key [name="c"]')


def test_apply_of_an_undeclared_field_to_a_built_in_fails_to_type() -> None:
    """A built-in's Go type has no room for an unknown field: whatever ``fieldValidation`` says, the
    configuration cannot be read as a typed object (500, ``field not declared in schema``)."""
    api = APIServer()
    config = {**deployment_config(), "bogus": 1}
    err = expect_error(lambda: apply(api, config), 500, "")
    assert err.message == ("failed to create typed patch object (default/d; apps/v1, Kind=Deployment): "
                           ".bogus: field not declared in schema")


def test_tracking_off_keeps_managed_fields_only_from_the_first_apply() -> None:
    """``APIServer(managed_fields=False)``: plain writes record nothing; an apply starts the
    bookkeeping for its object, and later writers of that object are recorded as usual."""
    api = APIServer(managed_fields=False)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {"a": "1"}}
    made = api.create(cm, actor="creator")
    assert "managedFields" not in made["metadata"]
    applied = api.patch("ConfigMap", "c", {**cm, "data": {"b": "2"}}, namespace=NS, patch_type="apply",
                        field_manager="applier")
    assert [(m["manager"], m["fieldsV1"]) for m in applied["metadata"]["managedFields"]] == [
        ("applier", {"f:data": {"f:b": {}}})]
    applied["data"]["a"] = "changed"
    updated = api.update(applied, actor="editor")
    assert {m["manager"] for m in updated["metadata"]["managedFields"]} == {"applier", "editor"}


def test_more_than_ten_updaters_are_capped_into_ancient_changes() -> None:
    """``capManagersManager``: past ten ``Update`` entries, the oldest are merged (per apiVersion)
    into one ``ancient-changes`` entry owning all their fields."""
    api = APIServer()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {}}
    obj = api.create(cm, actor="m00")
    for i in range(1, 12):
        obj.setdefault("data", {})[f"k{i:02}"] = "v"
        api.clock.advance("1s")
        obj = api.update(obj, actor=f"m{i:02}")
    managers = [m["manager"] for m in obj["metadata"]["managedFields"]]
    assert len(managers) == 10 and "ancient-changes" in managers
    ancient = next(m for m in obj["metadata"]["managedFields"] if m["manager"] == "ancient-changes")
    assert ancient["fieldsV1"] == {"f:data": {".": {}, "f:k01": {}, "f:k02": {}}}  # (m01 added the map)
    assert not {"m00", "m01", "m02"} & set(managers)


def test_answers_share_managed_fields_read_only() -> None:
    """Every answer is the caller's own copy but for managedFields, which it shares with the
    stored object (written only by the field manager; a Go client keeps them as raw bytes)."""
    api = APIServer()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {"a": "1"}}
    api.create(cm)
    first, second = api.get("ConfigMap", "c", NS), api.get("ConfigMap", "c", NS)
    assert first["data"] is not second["data"]
    assert first["metadata"]["managedFields"] is second["metadata"]["managedFields"]
    assert list(first["metadata"]) == list(api.get("ConfigMap", "c", NS, shared=True)["metadata"])  # (same order)


def test_changing_shared_managed_fields_in_place_is_caught() -> None:
    """With ``FAKEAPI_CHECK_SNAPSHOTS=1`` (this suite's setting) changing the shared list in place is
    reported; assigning a new one to the answer is the way to change them."""
    from fakeapi.codec.snapshots import SnapshotMutated

    api = APIServer()
    assert api.snapshot_guard is not None
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {"a": "1"}}
    got = api.create(cm)
    got["metadata"]["managedFields"] = []  # (a new list: fine)
    api.check_snapshots()
    api.get("ConfigMap", "c", NS)["metadata"]["managedFields"][0]["manager"] = "someone-else"
    with pytest.raises(SnapshotMutated):
        api.check_snapshots()


def test_apply_dry_run_stale_version_and_namespace() -> None:
    """An apply goes through the same gates as any write: a dry run that would create answers 201
    and stores nothing; a configuration with a stale resourceVersion is the optimistic lock's 409;
    one naming another namespace than the URL is a 400."""
    api = APIServer()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {"a": "1"}}

    def apply_cm(body: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return api.patch("ConfigMap", "c", body, namespace=NS, patch_type="apply", field_manager="m", **kw)

    dry = apply_cm(cm, dry_run=True)
    assert api.last_code == 201 and dry["metadata"]["managedFields"][0]["operation"] == "Apply"
    expect_error(lambda: api.get("ConfigMap", "c", NS), 404, "NotFound")
    apply_cm(cm)
    stale = {**cm, "metadata": {**cm["metadata"], "resourceVersion": "1"}, "data": {"a": "2"}}
    expect_error(lambda: apply_cm(stale), 409, "Conflict")
    elsewhere = {**cm, "metadata": {**cm["metadata"], "namespace": "kube-system"}}
    err = expect_error(lambda: apply_cm(elsewhere), 400, "BadRequest")
    assert err.message == "the namespace of the object (kube-system) does not match the namespace on the request (default)"


@pytest.mark.parametrize(("kind", "api_version", "body", "message"), [
    ("ConfigMap", "v1", {"data": {"a": 1}}, ".data.a: expected string, got &value.valueUnstructured{Value:1}"),
    ("Deployment", "apps/v1", {"spec": {"replicas": "3"}},
     ".spec.replicas: expected numeric (int or float), got string"),
    ("Deployment", "apps/v1", {"spec": {"paused": "yes"}}, ".spec.paused: expected boolean, got &{yes}"),
], ids=["string", "numeric", "boolean"])
def test_apply_of_a_wrong_scalar_to_a_built_in_fails_to_type(kind: str, api_version: str, body: dict[str, Any],
                                                              message: str) -> None:
    """structured-merge-diff checks a configuration's scalars against the type (``validateScalar``)
    before anything is decoded: a 500 in its words, not the decoder's 400."""
    api = APIServer()
    config = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "c"}, **body}
    err = expect_error(lambda: api.patch(kind, "c", config, namespace=NS, api_version=api_version,
                                         patch_type="apply", field_manager="m"), 500, "")
    group = api_version if "/" in api_version else "/" + api_version
    assert err.message == f"failed to create typed patch object (default/c; {group}, Kind={kind}): {message}"


@pytest.mark.parametrize(("kind", "api_version", "body", "message"), [
    ("ConfigMap", "v1", {"metadata": {"labels": ["a", "b"]}}, ".metadata.labels: expected map, got &{[a b]}"),
    ("ConfigMap", "v1", {"data": ["a"]}, ".data: expected map, got &{[a]}"),
    ("ConfigMap", "v1", {"metadata": {"finalizers": {"a": 1}}}, ".metadata.finalizers: expected list, got &{map[a:1]}"),
    ("Pod", "v1", {"spec": {"containers": {"name": "a"}}}, ".spec.containers: expected list, got &{map[name:a]}"),
    ("Pod", "v1", {"spec": {"containers": [{"name": "a", "image": "i", "command": "sh"}]}},
     '.spec.containers[name="a"].command: expected list, got &{sh}'),
    ("Deployment", "apps/v1", {"spec": {"selector": "app=a"}}, ".spec.selector: expected map, got &{app=a}"),
], ids=["list-labels", "list-data", "map-finalizers", "map-keyed-list", "string-atomic-list", "string-atomic-map"])
def test_apply_of_a_list_where_a_map_is_typed_is_a_500(kind: str, api_version: str, body: dict[str, Any],
                                                       message: str) -> None:
    """A map or a list of the wrong shape in an applied configuration (``metadata.labels`` a list,
    ``containers`` an object): structured-merge-diff's ``mapValue``/``listValue`` refuse it while
    typing the configuration, before the Go decoder would see it, so kube-apiserver answers 500
    ``failed to create typed patch object``, not the decoder's 400."""
    api = APIServer()
    meta = {"name": "c", **body.get("metadata", {})}
    config = {"apiVersion": api_version, "kind": kind, **body, "metadata": meta}
    err = expect_error(lambda: api.patch(kind, "c", config, namespace=NS, api_version=api_version,
                                         patch_type="apply", field_manager="m"), 500, "")
    group = api_version if "/" in api_version else "/" + api_version
    assert err.message == f"failed to create typed patch object (default/c; {group}, Kind={kind}): {message}"
    expect_error(lambda: api.get(kind, "c", NS, api_version=api_version), 404, "NotFound")


def test_apply_of_a_null_map_or_list_is_not_a_shape_error() -> None:
    """Null is a valid map and a valid list to structured-merge-diff (``IsNull`` first)."""
    api = APIServer()
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": None, "finalizers": None},
              "data": None}
    out = api.patch("ConfigMap", "c", config, namespace=NS, patch_type="apply", field_manager="m")
    assert api.last_code == 201 and "labels" not in out["metadata"]


def _reapply_script(api: APIServer) -> list[str]:
    """Re-applies of the same fields (values changed, or more fields) between other managers' writes
    that add fields nobody applied under the applier's list items: every answer, as JSON."""
    out: list[str] = []

    def step(fn: Any) -> None:
        try:
            out.append(json.dumps(fn(), sort_keys=False))
        except ApiError as e:
            out.append(json.dumps(e.status))

    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    base = deployment_config()
    base["spec"]["template"]["spec"]["containers"][0]["env"] = env
    step(lambda: apply(api, copy.deepcopy(base)))
    step(lambda: apply(api, copy.deepcopy(base)))  # (the same configuration again)
    step(lambda: api.patch("Deployment", "d", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "env": [{"name": "A", "valueFrom": None, "value": "1"}, {"name": "Z", "value": "z"}],
         "ports": [{"containerPort": 80, "name": "http"}]}]}}}},
        namespace=NS, patch_type="strategic"))
    for i in range(3):
        again = copy.deepcopy(base)
        again["spec"]["replicas"] = 3 + i
        again["spec"]["template"]["spec"]["containers"][0]["image"] = f"nginx:{i}"
        step(lambda again=again: apply(api, again))
    more = copy.deepcopy(base)
    more["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    more["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
    step(lambda: apply(api, copy.deepcopy(more)))
    step(lambda: apply(api, copy.deepcopy(more), manager="second"))  # (shared ownership)
    step(lambda: apply(api, copy.deepcopy(more)))
    step(lambda: apply(api, copy.deepcopy(base)))  # (fewer fields: pruned either way)
    step(lambda: apply(api, copy.deepcopy(base), manager="second", force=True))
    step(lambda: apply(api, copy.deepcopy(base), manager="second"))
    step(lambda: api.get("Deployment", "d", namespace=NS))
    return out


def test_a_reapply_of_the_same_fields_answers_as_an_eager_prune() -> None:
    """The skipped prune of a re-apply of every field applied before changes no answer (A/B against a
    server that prunes every re-apply, as ``Updater.prune`` does)."""
    served = APIServer()
    eager = APIServer()
    eager._eager_prune = True
    a, b = _reapply_script(served), _reapply_script(eager)
    assert len(a) == 13
    assert a == b
    assert '"f:env"' in a[-1] and '"user"' in a[-1]  # (another manager's fields under the applier's items)


def test_a_reapply_that_grows_the_object_past_etcds_limit_is_refused() -> None:
    """Only the merged object's size is measured on a re-apply (its values were all checked): over etcd's
    1.5 MiB it is 500 ``etcdserver: request is too large``, and the stored object stays as it was."""
    api = APIServer()

    def cm(**data: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big", "namespace": NS}, "data": data}

    first = api.patch("ConfigMap", "big", cm(a="x" * 800_000), namespace=NS, patch_type="apply", field_manager="one")
    with pytest.raises(ApiError) as err:
        api.patch("ConfigMap", "big", cm(b="y" * 800_000), namespace=NS, patch_type="apply", field_manager="two")
    assert (err.value.code, err.value.status["message"]) == (500, "etcdserver: request is too large")
    assert api.get("ConfigMap", "big", namespace=NS) == first
    again = api.patch("ConfigMap", "big", cm(a="z" * 800_000), namespace=NS, patch_type="apply", field_manager="one")
    assert again["data"] == {"a": "z" * 800_000}


@pytest.mark.parametrize("value", [
    {"data": {"a": "x" * 100}},
    {"data": {"a": "x" * 196_000}},  # (just past the fast answer's bound: measured the slow way)
    {"data": {"a": "é\n\"" * 500_000}},  # (escapes and multi-byte characters: over the limit)
    {"floats": [1e-7, 1e16, 0.5] * 70_000},  # (Go writes these floats longer than orjson does)
    {"big": [10**30] * 10},  # (past orjson's ints: the slow way)
], ids=["small", "near-the-bound", "escapes", "floats", "big-ints"])
def test_the_merged_objects_size_check_answers_as_the_body_check(value: dict[str, Any]) -> None:
    """An apply's size check of the merged object (orjson's length first, the body check's measure
    when that cannot settle it) answers as :func:`bodycheck.too_large`."""
    from fakeapi.machinery import bodycheck
    from fakeapi.server.patch import _too_large

    assert _too_large(value) == bodycheck.too_large(value)


def test_the_apply_memo_answers_as_a_server_without_it() -> None:
    """The field sets and merges an apply takes from the server's memo (a configuration's top-level
    fields seen before) answer as computing them afresh, through conflicts, forced applies, other
    managers' writes and a configuration its caller changes in place after applying it."""
    def run(memo: bool) -> list[Any]:
        api = APIServer()
        if not memo:
            api._apply_memo = None
        out: list[Any] = []

        def step(call: Any) -> None:
            try:
                out.append(call())
            except ApiError as err:
                out.append((err.code, err.status))

        config = deployment_config()
        for _ in range(3):
            step(lambda: api.patch("Deployment", "d", copy.deepcopy(config), namespace=NS, patch_type="apply",
                                   field_manager="one"))
        config["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"  # (changed in place)
        step(lambda: api.patch("Deployment", "d", config, namespace=NS, patch_type="apply", field_manager="one"))
        step(lambda: api.patch("Deployment", "d", deployment_config(replicas=5), namespace=NS, patch_type="apply",
                               field_manager="two"))
        step(lambda: api.patch("Deployment", "d", deployment_config(replicas=5), namespace=NS, patch_type="apply",
                               field_manager="two", force=True))
        step(lambda: api.patch("Deployment", "d", {"spec": {"replicas": 7}}, namespace=NS, field_manager="three"))
        for manager in ("one", "two", "one"):
            step(lambda m=manager: api.patch("Deployment", "d", copy.deepcopy(config), namespace=NS,
                                             patch_type="apply", field_manager=m, force=True))
        config["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:3"
        step(lambda: api.patch("Deployment", "d", config, namespace=NS, patch_type="apply", field_manager="one",
                               force=True))
        step(lambda: api.get("Deployment", "d", namespace=NS))
        if memo:  # (the memo was used: the merges of unchanged specs are in it)
            assert api._apply_memo is not None and api._apply_memo.merges and api._apply_memo.sets
        return out

    with_memo, without = run(True), run(False)
    assert json.dumps(with_memo, sort_keys=True) == json.dumps(without, sort_keys=True)
    assert with_memo[-1]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:3"
    assert any(isinstance(r, tuple) and r[0] == 409 for r in with_memo)


def test_an_apply_whose_metadata_is_not_a_map_is_refused_for_a_custom_resource_too() -> None:
    """A configuration's ``metadata`` that is not a map is ObjectMeta's type error (500 ``failed to create
    typed patch object``), for a custom resource as for a built-in kind, whether the object exists or not."""
    api = APIServer()
    api.create(widget_crd())
    body = {**widget("w", NS), "metadata": "x"}
    for _ in range(2):
        with pytest.raises(ApiError) as err:
            api.patch("Widget", "w", body, namespace=NS, patch_type="apply", field_manager="m")
        assert err.value.code == 500
        assert err.value.status["message"].endswith(".metadata: expected map, got &{x}")
        api.patch("Widget", "w", widget("w", NS), namespace=NS, patch_type="apply", field_manager="m")


def test_two_entries_are_encoded_in_the_order_of_a_sort_by_their_key() -> None:
    """``encode`` of two entries (ordered without a key function) against the sort of any number: every pair
    of entries alike but in one part of the sort key (operation, time, manager, apiVersion, subresource) or
    in none, in both orders, an empty one included (dropped)."""
    import itertools

    from fakeapi.machinery import fieldmanager as fm

    def entry(*, op: str = "Update", time: str | None = "t1", manager: str = "m", av: str = "v1", sub: str = "",
              fields: dict[str, Any] | None = None) -> fm.ManagerEntry:
        return fm.ManagerEntry(manager, op, av, {"f:spec": {}} if fields is None else fields, time, sub)

    variants = [entry(), entry(op="Apply"), entry(time=None, manager="n"), entry(time="t0", manager="z2"),
                entry(time="t2", manager="a2"), entry(op="Apply", time="t0", manager="b"),
                entry(manager="a"), entry(manager="z"), entry(av="v0"), entry(av="v2"), entry(sub="status"),
                entry(manager="e", fields={}), entry(manager="a", sub="s", fields={"f:status": {}})]
    pairs = [(a, b) for a, b in itertools.permutations(variants, 2) if a.key != b.key]
    assert len(pairs) == len(variants) * (len(variants) - 1)  # (every pair: keys all distinct)
    for a, b in pairs:
        managed = {a.key: a, b.key: b}
        expected = [e.encode() for e in sorted(managed.values(), key=fm._sort_key) if e.fields]
        assert fm.encode(managed) == expected, (a, b)
        assert [id(e) for e in fm.encode(managed)] == [id(e) for e in expected]
