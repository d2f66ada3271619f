"""What policy/v1 PodDisruptionBudget validation checks beyond the OpenAPI schema (``pkg/apis/policy/validation``).

No disruption controller runs here: a test writes a budget's status itself, and the server
checks its counts.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause, GoValue
from fakeapi.machinery.metavalidation import invalid, label_selector_string, not_supported
from fakeapi.machinery.selectors import SelectorError, selector_from_object
from fakeapi.registry.apps.validation import int_or_percent_causes, nonnegative, over_100_percent_causes


def disruption_budget_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidatePodDisruptionBudgetSpec`` (policy/v1): one of minAvailable and maxUnavailable, each an
    integer or a percentage up to 100%, and a known unhealthy-pod eviction policy."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.append(invalid("spec", _PDB_SPEC_SHOWN, "minAvailable and maxUnavailable cannot be both set"))
    for name in ("minAvailable", "maxUnavailable"):
        value = spec.get(name)
        if value is None:
            continue
        causes += int_or_percent_causes(value, f"spec.{name}")
        causes += over_100_percent_causes(value, f"spec.{name}")
    selector = spec.get("selector")
    if selector is not None:
        try:
            selector_from_object(selector if isinstance(selector, dict) else {})
        except SelectorError as e:
            causes.append(invalid("spec.selector", label_selector_string(selector), str(e)))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        causes.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"]))
    return causes


#: The BadValue of a spec with both bounds: Go prints the struct with its pointers' addresses (``%#v``).
_PDB_SPEC_SHOWN = GoValue("policy.PodDisruptionBudgetSpec{...}")


def disruption_budget_status_causes(status: Any) -> list[Cause]:
    """``ValidatePodDisruptionBudgetStatusUpdate``: no count negative."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for name in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        causes += nonnegative(status, name, "status")
    return causes
