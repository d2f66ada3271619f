"""What coordination.k8s.io/v1 Leases must satisfy beyond their OpenAPI schema (``pkg/apis/coordination/validation``)."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.metavalidation import forbidden, invalid


def lease_causes(spec: Any) -> list[Cause]:
    """``ValidateLeaseSpec``: a positive duration, transitions not negative, a preferred holder only with a strategy."""
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if isinstance(duration, int) and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    if isinstance(transitions, int) and transitions < 0:
        causes.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        causes.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return causes
