"""policy/v1: PodDisruptionBudgets and their strategy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj

if TYPE_CHECKING:
    from fakeapi.registry.policy import validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    validation = lazy_module(__name__, "fakeapi.registry.policy.validation")


class PodDisruptionBudgetStrategy(BuiltinStrategy):
    """PodDisruptionBudgets: one bound, counts that add up."""

    spec = BuiltinSpec("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets",
                       "io.k8s.api.policy.v1.PodDisruptionBudget", status=True, initial_generation=1,
                       short_names=("pdb",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/policy/poddisruptionbudget/strategy.go: false
    allow_unconditional_update = False

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidatePodDisruptionBudget``."""
        return validation.disruption_budget_causes(obj)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidatePodDisruptionBudgetStatusUpdate``, when the write changed the status."""
        if obj.get("status") is old.get("status"):
            return []
        return validation.disruption_budget_status_causes(obj.get("status"))


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (PodDisruptionBudgetStrategy(),)
