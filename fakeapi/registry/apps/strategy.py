"""apps/v1: Deployments, ReplicaSets, StatefulSets, DaemonSets and their strategies
(``pkg/registry/apps/<resource>/strategy.go``): generation on spec changes, the status subresource,
selectors that match their templates and never change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj, spec_is_stored

if TYPE_CHECKING:
    from fakeapi.registry.apps import defaults, validation
    from fakeapi.registry.core import validation as core_validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    defaults = lazy_module(__name__, "fakeapi.registry.apps.defaults")
    validation = lazy_module(__name__, "fakeapi.registry.apps.validation")
    core_validation = lazy_module(__name__, "fakeapi.registry.core.validation", "core_validation")


class _WorkloadStrategy(BuiltinStrategy):
    """What the four workload kinds share: their status counts checked on a status write."""

    def status_causes(self, status: Any) -> list[Cause]:
        """The status rules (``ValidateXStatus``), on the status alone."""
        raise NotImplementedError

    def validate_status_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """The status counts, when the write changed the status."""
        return self.status_causes(obj.get("status")) if obj.get("status") is not old.get("status") else []


class DeploymentStrategy(_WorkloadStrategy):
    """Deployments: a change of the annotations bumps the generation too (they are copied to ReplicaSets)."""

    spec = BuiltinSpec("apps", "v1", "Deployment", "deployments", "io.k8s.api.apps.v1.Deployment", status=True,
                       initial_generation=1, short_names=("deploy",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/apps/deployment/strategy.go: true
    allow_unconditional_update = True
    annotations_bump_generation = True

    def status_causes(self, status: Any) -> list[Cause]:
        """``Validate...Status``: the counts."""
        return validation.deployment_status_causes(status)

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Deployment``."""
        if not spec_is_stored(obj, base):  # (a stored spec is defaulted already)
            defaults.default_deployment(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateDeployment``."""
        return validation.deployment_causes(obj, core_validation.pod_spec_causes)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """The selector is immutable (apps/v1)."""
        return validation.deployment_update_causes(obj, old)


class ReplicaSetStrategy(_WorkloadStrategy):
    """ReplicaSets: selectable by ``status.replicas``."""

    spec = BuiltinSpec("apps", "v1", "ReplicaSet", "replicasets", "io.k8s.api.apps.v1.ReplicaSet", status=True,
                       initial_generation=1, fields=("status.replicas",), short_names=("rs",),
                       categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/apps/replicaset/strategy.go: true
    allow_unconditional_update = True

    def status_causes(self, status: Any) -> list[Cause]:
        """``Validate...Status``: the counts."""
        return validation.replica_set_status_causes(status)

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_ReplicaSet``."""
        if not spec_is_stored(obj, base):  # (a stored spec is defaulted already)
            defaults.default_replica_set(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateReplicaSet``."""
        return validation.replica_set_causes(obj, core_validation.pod_spec_causes)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateReplicaSetUpdate`` (the spec's causes a second time, the selector immutable)."""
        return validation.replica_set_update_causes(obj, old, core_validation.pod_spec_causes)


class StatefulSetStrategy(_WorkloadStrategy):
    """StatefulSets: the spec is immutable but for a few fields."""

    spec = BuiltinSpec("apps", "v1", "StatefulSet", "statefulsets", "io.k8s.api.apps.v1.StatefulSet", status=True,
                       initial_generation=1, short_names=("sts",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/apps/statefulset/strategy.go: true
    allow_unconditional_update = True

    def status_causes(self, status: Any) -> list[Cause]:
        """``Validate...Status``: the counts."""
        return validation.stateful_set_status_causes(status)

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_StatefulSet``."""
        if not spec_is_stored(obj, base):  # (a stored spec is defaulted already)
            defaults.default_stateful_set(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateStatefulSet``."""
        return validation.stateful_set_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateStatefulSetUpdate``."""
        return validation.stateful_set_update_causes(obj, old)


class DaemonSetStrategy(_WorkloadStrategy):
    """DaemonSets."""

    spec = BuiltinSpec("apps", "v1", "DaemonSet", "daemonsets", "io.k8s.api.apps.v1.DaemonSet", status=True,
                       initial_generation=1, short_names=("ds",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/apps/daemonset/strategy.go: true
    allow_unconditional_update = True

    def status_causes(self, status: Any) -> list[Cause]:
        """``Validate...Status``: the counts."""
        return validation.daemon_set_status_causes(status)

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_DaemonSet``."""
        if not spec_is_stored(obj, base):  # (a stored spec is defaulted already)
            defaults.default_daemon_set(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateDaemonSet``."""
        return validation.daemon_set_causes(obj, core_validation.pod_spec_causes)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """The selector is immutable (apps/v1)."""
        return validation.deployment_update_causes(obj, old)


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (
    DeploymentStrategy(), ReplicaSetStrategy(), StatefulSetStrategy(), DaemonSetStrategy(),
)
