"""The Service allocation index answers as a scan of every stored Service would.

A create or update of a Service reads the cluster IPs and node ports in use from an index the
Service table keeps (:class:`fakeapi.registry.core.serviceindex.AllocationIndex`). Two servers
run the same seeded sequence of creates, updates, type changes, deletes and rejected requests
(a listener fails after the commit: the request journal undoes the write): one reads the index,
the other a fresh scan of the stored Services as before the index. Every answer, every stored
Service and the generator's draws must be the same, and after each call the index holds exactly
what the stored Services hold.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from support import make_api

from fakeapi.machinery.errors import ApiError
from fakeapi.registry.core import serviceallocation as alloc
from fakeapi.registry.core.serviceindex import AllocationIndex
from fakeapi.server.apiserver import APIServer

IPS = [f"10.96.0.{i}" for i in range(1, 6)] + ["10.95.0.1"]  # (10.96.0.1: the reserved one; one out of range)
PORTS = [30000, 30001, 30002, 30003, 29999]
TYPES = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]
NAMES = ["a", "b", "c", "d", "e"]


def _scan(api: APIServer) -> Any:
    """``service_allocations`` as a scan: an index built from every stored Service on each call."""
    def service_allocations(except_uid: str | None) -> tuple[AllocationIndex, str | None]:
        index = AllocationIndex()
        own: str | None = None
        for svc in api.stored("", "services"):
            key = f"{svc['metadata']['namespace']}/{svc['metadata']['name']}"
            index.add(key, svc)
            if except_uid is not None and svc["metadata"].get("uid") == except_uid:
                own = key
        return index, own
    return service_allocations


def _server(scan: bool) -> APIServer:
    api = make_api()

    def listener(etype: str, kind: Any, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if (obj["metadata"].get("labels") or {}).get("boom") == "true":
            raise RuntimeError("listener failed after the commit")

    api.add_listener(listener)
    if scan:
        api.service_allocations = _scan(api)  # type: ignore[method-assign]
    return api


def _spec(r: random.Random) -> dict[str, Any]:
    kind = r.choice(TYPES)
    if kind == "ExternalName":
        return {"type": kind, "externalName": "db.example.com", "ports": []}
    spec: dict[str, Any] = {"type": kind, "selector": {"app": "web"}}
    if r.random() < 0.5:
        spec["clusterIP"] = r.choice([*IPS, "None"])
    ports: list[dict[str, Any]] = []
    for i in range(r.randint(1, 3)):
        p: dict[str, Any] = {"name": f"p{i}", "port": r.choice([80, 81, 82]), "protocol": r.choice(["TCP", "UDP"])}
        if kind != "ClusterIP" and r.random() < 0.5:
            p["nodePort"] = r.choice(PORTS)
        ports.append(p)
    spec["ports"] = ports
    if kind == "LoadBalancer":
        if r.random() < 0.3:
            spec["allocateLoadBalancerNodePorts"] = False
        if r.random() < 0.4:
            spec["externalTrafficPolicy"] = "Local"
    return spec


def _step(api: APIServer, r: random.Random) -> Any:
    """One call (drawn from ``r``); its answer, or the status and message of its rejection."""
    name = r.choice(NAMES)
    verb = r.choice(["create", "create", "create", "update", "patch", "delete"])
    labels = {"boom": "true"} if r.random() < 0.25 else {}
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": _spec(r)}
    try:
        if verb == "create":
            return api.create(body)
        if verb == "update":
            return api.update(body)
        if verb == "patch":
            return api.patch("Service", name, {"metadata": {"labels": labels}, "spec": {"type": r.choice(TYPES)}},
                             namespace="ns")
        return api.delete("Service", name, namespace="ns")
    except ApiError as e:
        return ("rejected", e.code, str(e))


def _held(api: APIServer) -> tuple[set[str], set[int]]:
    index, _ = api.service_allocations(None)
    ips, ports = alloc.index_in_use(index, None)
    return ips.as_set(), ports.as_set()


@pytest.mark.parametrize("seed", range(8))
def test_the_index_allocates_as_the_scan(seed: int) -> None:
    indexed, scanned = _server(False), _server(True)
    r1, r2 = random.Random(seed), random.Random(seed)
    rejected_after_commit = 0
    for _ in range(60):
        a, b = _step(indexed, r1), _step(scanned, r2)
        assert a == b
        if isinstance(a, tuple) and a[1] == 500:
            rejected_after_commit += 1
        # the index holds what a scan of the stored Services finds, and no more
        scan_ips, scan_ports = alloc.in_use(indexed.stored("", "services"))
        assert _held(indexed) == (scan_ips.as_set(), scan_ports.as_set())
    assert list(indexed.stored("", "services")) == list(scanned.stored("", "services"))
    assert indexed.rng.random() == scanned.rng.random()
    assert rejected_after_commit  # (the sequence exercises the journal's undo)


def test_a_rejected_create_frees_what_it_allocated() -> None:
    """A create undone after its commit (a 500) leaves its node port and cluster IP free again."""
    api = _server(False)
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": "a", "namespace": "ns", "labels": {"boom": "true"}},
                            "spec": {"type": "NodePort", "clusterIP": "10.96.0.9",
                                     "ports": [{"port": 80, "nodePort": 30100}]}}
    with pytest.raises(ApiError) as err:
        api.create(body)
    assert err.value.code == 500
    assert _held(api) == ({alloc.KUBERNETES_SERVICE_IP}, set())
    body["metadata"]["labels"] = {}
    out = api.create(body)  # (the same IP and port: free again)
    assert out["spec"]["clusterIP"] == "10.96.0.9" and out["spec"]["ports"][0]["nodePort"] == 30100
    assert _held(api) == ({alloc.KUBERNETES_SERVICE_IP, "10.96.0.9"}, {30100})
    api.delete("Service", "a", namespace="ns")
    assert _held(api) == ({alloc.KUBERNETES_SERVICE_IP}, set())


def test_a_port_two_services_hold_stays_held_until_both_let_go() -> None:
    """The index counts holders: the index of a value held twice (stored before validation
    refused duplicates, or by one Service's TCP and UDP entries) is freed by the last one only."""
    index = AllocationIndex()
    svc = {"spec": {"clusterIPs": ["10.96.0.5"], "ports": [{"nodePort": 30001}, {"nodePort": 30001}]}}
    index.add("ns/a", svc)
    index.add("ns/b", {"spec": {"ports": [{"nodePort": 30001}], "healthCheckNodePort": 30002}})
    ips, ports = index.in_use("ns/b")
    assert 30001 in ports and 30002 not in ports and "10.96.0.5" in ips
    index.remove("ns/a")
    ips, ports = index.in_use()
    assert 30001 in ports and "10.96.0.5" not in ips
    assert 30001 not in ports - [30001] and 30001 in ports
    index.remove("ns/b")
    assert index.in_use()[1].as_set() == set() and not index.ports and not index.ips
