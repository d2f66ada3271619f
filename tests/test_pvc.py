"""core/v1 PersistentVolumeClaims: defaults, validation, the frozen spec, and the pvc-protection finalizer.

The StorageObjectInUseProtection admission plugin adds ``kubernetes.io/pvc-protection`` to every
claim; kube-controller-manager's pvc-protection controller removes it from a claim being deleted
once no scheduled pod uses it (and puts it back on a live claim that lost it).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, drain, expect_error, field_causes, make_api

PROTECTION = "kubernetes.io/pvc-protection"


def _pvc(name: str = "data", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                            "metadata": {"name": name, "namespace": "ns"},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    body["spec"].update(spec)
    return body


def _pod(name: str, claim: str, *, node: str | None = "node-1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox:1"}],
                            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "spec": spec}



def test_a_claim_is_defaulted_and_protected() -> None:
    api = make_api()
    out = api.create(_pvc())
    assert out["spec"]["volumeMode"] == "Filesystem" and out["status"] == {"phase": "Pending"}
    assert out["metadata"]["finalizers"] == [PROTECTION]


@pytest.mark.parametrize(("spec", "causes"), [
    ({"accessModes": []}, [("spec.accessModes", "Required value: at least 1 access mode is required")]),
    ({"accessModes": ["ReadWriteSometimes"]},
     [("spec.accessModes", 'Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
                           '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"')]),
    ({"resources": {}}, [("spec.resources[storage]", "Required value")]),
    ({"resources": {"requests": {"storage": "0"}}},
     [("spec.resources[storage]", 'Invalid value: "0": must be greater than zero')]),
])
def test_invalid_claims(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_pvc(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


def test_the_spec_is_frozen_but_a_bound_claim_may_grow() -> None:
    api = make_api()
    stored = api.create(_pvc())
    grown = copy.deepcopy(stored)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    err = assert_rejected(api, lambda: api.update(grown), 422, "Invalid")
    assert field_causes(err) == [("spec", "Forbidden: spec is immutable after creation except resources.requests and "
                                     "volumeAttributesClassName for bound claims")]
    # the binder sets the volume name once, and the phase
    api.patch("PersistentVolumeClaim", "data", {"spec": {"volumeName": "pv-1"}}, namespace="ns")
    api.patch("PersistentVolumeClaim", "data", {"status": {"phase": "Bound"}}, namespace="ns", subresource="status")
    out = api.patch("PersistentVolumeClaim", "data", {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                    namespace="ns")
    assert out["spec"]["resources"]["requests"]["storage"] == "2Gi"
    err = assert_rejected(api, lambda: api.patch("PersistentVolumeClaim", "data",
                                                 {"spec": {"resources": {"requests": {"storage": "1Gi"}}}},
                                                 namespace="ns"), 422, "Invalid")
    assert field_causes(err) == [("spec.resources.requests.storage", "Forbidden: field can not be less than previous value")]


def test_a_claim_in_use_waits_for_its_pods() -> None:
    api = make_api()
    api.create(_pvc())
    api.create(_pod("user", "data"))
    api.create(_pod("unscheduled", "data", node=None))  # not scheduled: does not hold the claim
    api.delete("PersistentVolumeClaim", "data", "ns")
    drain(api)
    held = api.get("PersistentVolumeClaim", "data", "ns")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == [PROTECTION]
    # a finished pod still holds it (podUsesPVC does not look at the phase)
    api.patch("Pod", "user", {"status": {"phase": "Succeeded"}}, namespace="ns", subresource="status")
    drain(api)
    assert api.get("PersistentVolumeClaim", "data", "ns")["metadata"]["finalizers"] == [PROTECTION]
    api.delete("Pod", "user", "ns", grace_period_seconds=0)
    drain(api)
    expect_error(lambda: api.get("PersistentVolumeClaim", "data", "ns"), 404)
    releases = [c for c in api.trace.calls if c.actor == "pvc-protection-controller"]
    assert [(c.verb, c.name) for c in releases] == [("patch", "data")]


def test_an_unused_claim_goes_at_once_and_a_live_one_gets_its_finalizer_back() -> None:
    api = make_api()
    api.create(_pvc())
    api.patch("PersistentVolumeClaim", "data", {"metadata": {"finalizers": None}}, namespace="ns")
    drain(api)
    assert api.get("PersistentVolumeClaim", "data", "ns")["metadata"]["finalizers"] == [PROTECTION]
    api.delete("PersistentVolumeClaim", "data", "ns")
    drain(api)
    expect_error(lambda: api.get("PersistentVolumeClaim", "data", "ns"), 404)
