"""apiregistration.k8s.io/v1: APIServices (stored and listed; nothing is proxied to them)."""

from __future__ import annotations

from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy


class APIServiceStrategy(BuiltinStrategy):
    """APIServices: cluster-scoped, the status subresource, in the ``api-extensions`` category."""

    spec = BuiltinSpec("apiregistration.k8s.io", "v1", "APIService", "apiservices",
                       "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", namespaced=False, status=True,
                       categories=("api-extensions",))
    #: AllowUnconditionalUpdate in upstream kube-aggregator pkg/registry/apiservice/strategy.go: false (status too)
    allow_unconditional_update = False


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (APIServiceStrategy(),)
