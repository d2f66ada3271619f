"""rbac.authorization.k8s.io/v1: Roles, RoleBindings, ClusterRoles, ClusterRoleBindings and their strategies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.rbac import defaults
from fakeapi.registry.rbac.defaults import RBAC_GROUP
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj

if TYPE_CHECKING:
    from fakeapi.registry.rbac import validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    validation = lazy_module(__name__, "fakeapi.registry.rbac.validation")


class RoleStrategy(BuiltinStrategy):
    """Roles: ``ValidateRole`` (namespaced rules: no non-resource URLs)."""

    spec = BuiltinSpec(RBAC_GROUP, "v1", "Role", "roles", "io.k8s.api.rbac.v1.Role")
    #: AllowUnconditionalUpdate in upstream pkg/registry/rbac/role/strategy.go: true
    allow_unconditional_update = True
    #: ``AllowCreateOnUpdate`` is true for Roles and ClusterRoles.
    allow_create_on_update = True

    def validate(self, obj: Obj) -> list[Cause]:
        """Each rule's verbs, groups and resources."""
        return validation.policy_rule_causes(obj.get("rules"), self.spec.namespaced)


class ClusterRoleStrategy(RoleStrategy):
    """ClusterRoles: ``ValidateClusterRole``."""

    spec = BuiltinSpec(RBAC_GROUP, "v1", "ClusterRole", "clusterroles", "io.k8s.api.rbac.v1.ClusterRole",
                       namespaced=False)
    #: AllowUnconditionalUpdate in upstream pkg/registry/rbac/clusterrole/strategy.go: true
    allow_unconditional_update = True


class RoleBindingStrategy(BuiltinStrategy):
    """RoleBindings: the roleRef's and subjects' API groups defaulted, the roleRef immutable."""

    spec = BuiltinSpec(RBAC_GROUP, "v1", "RoleBinding", "rolebindings", "io.k8s.api.rbac.v1.RoleBinding")
    #: AllowUnconditionalUpdate in upstream pkg/registry/rbac/rolebinding/strategy.go: true
    allow_unconditional_update = True
    #: ``AllowCreateOnUpdate`` is true for RoleBindings and ClusterRoleBindings.
    allow_create_on_update = True
    #: A ClusterRoleBinding: only ClusterRoles, and service accounts name their namespace.
    cluster = False

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_RoleBinding``/``SetDefaults_ClusterRoleBinding``."""
        defaults.default_role_binding(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateRoleBinding``/``ValidateClusterRoleBinding``."""
        return validation.role_binding_causes(obj, cluster=self.cluster)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """The roleRef cannot change."""
        return validation.role_ref_causes(obj, old)


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    """ClusterRoleBindings."""

    spec = BuiltinSpec(RBAC_GROUP, "v1", "ClusterRoleBinding", "clusterrolebindings",
                       "io.k8s.api.rbac.v1.ClusterRoleBinding", namespaced=False)
    #: AllowUnconditionalUpdate in upstream pkg/registry/rbac/clusterrolebinding/strategy.go: true
    allow_unconditional_update = True
    cluster = True


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (
    RoleStrategy(), RoleBindingStrategy(), ClusterRoleStrategy(), ClusterRoleBindingStrategy(),
)
