"""apps/v1 StatefulSets: defaults (volume claim templates too), validation, the frozen spec, status counts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api

FROZEN = ("Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
          "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
          "are forbidden")


def _sts(name: str = "db", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "pg", "image": "postgres:16"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                           "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}]},
    }
    body["spec"].update(spec)
    return body



def test_a_stateful_set_is_defaulted() -> None:
    api = make_api()
    out = api.create(_sts())
    spec = out["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    claim = spec["volumeClaimTemplates"][0]
    assert claim["spec"]["volumeMode"] == "Filesystem" and claim["status"] == {"phase": "Pending"}
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    # (replicas and availableReplicas are not omitempty in Go)
    assert out["metadata"]["generation"] == 1 and out["status"] == {"replicas": 0, "availableReplicas": 0}


@pytest.mark.parametrize(("spec", "causes"), [
    ({"podManagementPolicy": "Fast"}, [("spec.podManagementPolicy",
                                        "Invalid value: \"Fast\": must be 'OrderedReady' or 'Parallel'")]),
    ({"updateStrategy": {"type": "Sometimes"}},
     [("spec.updateStrategy", "Invalid value: \"Sometimes\": must be 'RollingUpdate' or 'OnDelete'")]),
    ({"replicas": -1}, [("spec.replicas", "Invalid value: -1: must be greater than or equal to 0")]),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
     [("spec.updateStrategy.rollingUpdate", "Invalid value: apps.RollingUpdateStatefulSetStrategy{...}: only allowed "
                                            "for updateStrategy 'RollingUpdate'")]),
    ({"selector": {"matchLabels": {"app": "other"}}},
     [("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"db"}: `selector` does not match '
                                        "template `labels`")]),
])
def test_invalid_stateful_sets(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_sts(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


def test_a_template_that_does_not_restart_always() -> None:
    api = make_api()
    body = _sts()
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == [("spec.template.spec.restartPolicy",
                             'Unsupported value: "Never": supported values: "Always"')]


def test_only_some_of_the_spec_may_change() -> None:
    """The famous one: a volume claim template (or the selector, the service name) cannot change."""
    api = make_api()
    stored = api.create(_sts())
    out = api.patch("StatefulSet", "db", {"spec": {"replicas": 3}}, namespace="ns", api_version="apps/v1")
    assert out["spec"]["replicas"] == 3 and out["metadata"]["generation"] == 2
    bigger = copy.deepcopy(stored)
    bigger["metadata"].pop("resourceVersion")
    bigger["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "5Gi"
    err = assert_rejected(api, lambda: api.update(bigger), 422, "Invalid")
    assert field_causes(err) == [("spec", FROZEN)]
    err = assert_rejected(api, lambda: api.patch("StatefulSet", "db", {"spec": {"serviceName": "other"}},
                                                 namespace="ns"), 422, "Invalid")
    assert field_causes(err) == [("spec", FROZEN)]
    # a PUT of the object as created by a client (no defaults of its own) changes nothing frozen
    fresh = _sts(replicas=2)
    assert api.update(fresh)["spec"]["replicas"] == 2


@pytest.mark.parametrize(("status", "causes"), [
    ({"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "availableReplicas": 3}, []),
    ({"replicas": 1, "readyReplicas": 2}, [("status.readyReplicas",
                                            "Invalid value: 2: cannot be greater than status.replicas")]),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     [("status.availableReplicas", "Invalid value: 2: cannot be greater than status.readyReplicas")]),
])
def test_a_status_write_is_validated(status: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    api.create(_sts())

    def write() -> dict[str, Any]:
        return api.patch("StatefulSet", "db", {"status": status}, namespace="ns", subresource="status")

    if not causes:
        assert write()["status"] == status
        return
    err = assert_rejected(api, write, 422, "Invalid")
    assert field_causes(err) == causes
