"""coordination.k8s.io/v1 Leases: what leader election (client-go's resourcelock) reads and writes."""

from __future__ import annotations

from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api

from fakeapi.host.client import Client


def _lease(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "my-controller-leader", "namespace": "ns"}, "spec": spec}


def test_a_leader_election_round() -> None:
    """Acquire, renew with an optimistic update, and lose it to a stale resourceVersion (409)."""
    api = make_api()
    held = api.create(_lease(holderIdentity="pod-a", leaseDurationSeconds=15, acquireTime="2026-01-01T00:00:00.000000Z",
                             renewTime="2026-01-01T00:00:00.000000Z", leaseTransitions=0))
    assert held["spec"]["renewTime"] == "2026-01-01T00:00:00.000000Z"  # MicroTime: microseconds kept
    renewed = dict(held, spec={**held["spec"], "renewTime": "2026-01-01T00:00:10.123456Z"})
    out = api.update(renewed)
    assert out["spec"]["renewTime"] == "2026-01-01T00:00:10.123456Z"
    stale = dict(held, spec={**held["spec"], "holderIdentity": "pod-b", "leaseTransitions": 1})
    assert_rejected(api, lambda: api.update(stale), 409, "Conflict")


def test_a_go_client_keeps_zero_transitions() -> None:
    """leaseTransitions is a pointer: a Go client sends 0, it is not dropped by omitempty."""
    api = make_api()
    out = Client(api).create(_lease(holderIdentity="pod-a", leaseTransitions=0))
    assert out["spec"]["leaseTransitions"] == 0


@pytest.mark.parametrize(("spec", "cause"), [
    ({"leaseDurationSeconds": 0}, ("spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0")),
    ({"leaseTransitions": -1}, ("spec.leaseTransitions", "Invalid value: -1: must be greater than or equal to 0")),
    ({"preferredHolder": "pod-b"}, ("spec.preferredHolder", "Forbidden: may only be specified if `strategy` is defined")),
])
def test_invalid_leases(spec: dict[str, Any], cause: tuple[str, str]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_lease(**spec)), 422, "Invalid")
    assert field_causes(err) == [cause]
