"""networking.k8s.io/v1: Ingresses and NetworkPolicies and their strategies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj

if TYPE_CHECKING:
    from fakeapi.registry.networking import defaults, validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    defaults = lazy_module(__name__, "fakeapi.registry.networking.defaults")
    validation = lazy_module(__name__, "fakeapi.registry.networking.validation")


class IngressStrategy(BuiltinStrategy):
    """Ingresses."""

    spec = BuiltinSpec("networking.k8s.io", "v1", "Ingress", "ingresses", "io.k8s.api.networking.v1.Ingress",
                       status=True, initial_generation=1, short_names=("ing",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/networking/ingress/strategy.go: true
    allow_unconditional_update = True

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateIngressCreate``: hosts, paths, backends."""
        return validation.ingress_causes(obj)


class NetworkPolicyStrategy(BuiltinStrategy):
    """NetworkPolicies: no status (networking/v1 NetworkPolicyStatus is gone, its protobuf tag
    tombstoned); PrepareForCreate sets generation 1, PrepareForUpdate bumps it on a spec change."""

    spec = BuiltinSpec("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies",
                       "io.k8s.api.networking.v1.NetworkPolicy", initial_generation=1, short_names=("netpol",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/networking/networkpolicy/strategy.go: true
    allow_unconditional_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_NetworkPolicy``: policy types, the ports' protocol."""
        defaults.default_network_policy(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateNetworkPolicy``."""
        return validation.network_policy_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateNetworkPolicyUpdate``: the spec a second time."""
        return validation.network_policy_update_causes(obj, old)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """``networkPolicyWarnings``: CIDRs in a non-standard form."""
        return validation.network_policy_warnings(obj)


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (IngressStrategy(), NetworkPolicyStrategy())
