"""storage.k8s.io/v1: CSIStorageCapacities."""

from __future__ import annotations

from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy


class CSIStorageCapacityStrategy(BuiltinStrategy):
    """CSIStorageCapacities: namespaced, no status."""

    spec = BuiltinSpec("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities",
                       "io.k8s.api.storage.v1.CSIStorageCapacity")
    #: AllowUnconditionalUpdate in upstream pkg/registry/storage/csistoragecapacity/strategy.go: false
    allow_unconditional_update = False


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (CSIStorageCapacityStrategy(),)
