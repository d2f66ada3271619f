"""policy/v1 PodDisruptionBudgets: validation of the bounds and the status a test writes in the controller's place."""

from __future__ import annotations

from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api


def _pdb(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}



def test_a_budget_and_its_zero_status() -> None:
    api = make_api()
    out = api.create(_pdb(minAvailable=2))
    assert out["spec"]["minAvailable"] == 2 and out["metadata"]["generation"] == 1
    # the four counts are not omitempty in Go: a new budget shows them at 0
    assert out["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    out = api.patch("PodDisruptionBudget", "web", {"status": {"currentHealthy": 3, "desiredHealthy": 2,
                                                              "disruptionsAllowed": 1, "expectedPods": 3}},
                    namespace="ns", subresource="status")
    assert out["status"]["disruptionsAllowed"] == 1


@pytest.mark.parametrize(("spec", "causes"), [
    ({"minAvailable": 1, "maxUnavailable": 1},
     [("spec", "Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set")]),
    ({"maxUnavailable": "150%"}, [("spec.maxUnavailable", "Invalid value: 150%: must not be greater than 100%")]),
    ({"minAvailable": -1}, [("spec.minAvailable", "Invalid value: -1: must be greater than or equal to 0")]),
    ({"unhealthyPodEvictionPolicy": "Never"},
     [("spec.unhealthyPodEvictionPolicy", 'Unsupported value: "Never": supported values: "AlwaysAllow", '
                                          '"IfHealthyBudget"')]),
])
def test_invalid_budgets(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_pdb(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


def test_a_negative_count_is_refused() -> None:
    api = make_api()
    api.create(_pdb(minAvailable=1))
    err = assert_rejected(api, lambda: api.patch("PodDisruptionBudget", "web", {"status": {"expectedPods": -1}},
                                                 namespace="ns", subresource="status"), 422, "Invalid")
    assert field_causes(err) == [("status.expectedPods", "Invalid value: -1: must be greater than or equal to 0")]
