"""coordination.k8s.io/v1: Leases and their strategy."""

from __future__ import annotations

from fakeapi.machinery.errors import Cause
from fakeapi.registry.coordination.validation import lease_causes
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj


class LeaseStrategy(BuiltinStrategy):
    """Leases: ``ValidateLease``."""

    spec = BuiltinSpec("coordination.k8s.io", "v1", "Lease", "leases", "io.k8s.api.coordination.v1.Lease")
    #: AllowUnconditionalUpdate in upstream pkg/registry/coordination/lease/strategy.go: false
    allow_unconditional_update = False
    #: ``AllowCreateOnUpdate`` is true for Leases (a PUT may create one).
    allow_create_on_update = True

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateLeaseSpec``."""
        return lease_causes(obj.get("spec"))


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (LeaseStrategy(),)
