"""certificates.k8s.io/v1: CertificateSigningRequests (the ``approval`` subresource is served by fakeapi.http)."""

from __future__ import annotations

from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy


class CertificateSigningRequestStrategy(BuiltinStrategy):
    """CertificateSigningRequests: cluster-scoped, the status subresource, a ``spec.signerName`` field selector."""

    spec = BuiltinSpec("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
                       "io.k8s.api.certificates.v1.CertificateSigningRequest", namespaced=False, status=True,
                       fields=("spec.signerName",), short_names=("csr",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/certificates/certificates/strategy.go: true
    allow_unconditional_update = True


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (CertificateSigningRequestStrategy(),)
