"""The Service REST storage's allocations: IP families, cluster IPs and node ports.

Ported from ``pkg/registry/core/service/storage/alloc.go`` for a single-stack IPv4 cluster with
the default ranges (``--service-cluster-ip-range=10.96.0.0/12``, node ports 30000-32767). A
create gets an ``ipFamilyPolicy`` and ``ipFamilies``, a cluster IP (unless headless or
ExternalName) and node ports (NodePort and LoadBalancer services); an update keeps what the
client left out (``patchAllocatedValues``), so a PUT of a Service built from scratch keeps its
cluster IP. What is in use is what the stored Services hold (:class:`AllocationIndex`, kept by
the Service table): deleting one frees its IP and ports.
IPs and ports are picked at random, from the server's seeded generator (repeatable).
"""

from __future__ import annotations

import ipaddress
import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.metavalidation import go_string_slice, invalid
from fakeapi.registry.core.serviceindex import NONE, AllocationIndex, Held, held_by

SERVICE_CIDR = ipaddress.IPv4Network("10.96.0.0/12")
NODE_PORT_RANGE = (30000, 32767)
#: The first address: the ``default/kubernetes`` Service's in a real cluster.
KUBERNETES_SERVICE_IP = str(SERVICE_CIDR.network_address + 1)
_RESERVED = {KUBERNETES_SERVICE_IP}
#: The range's first address and size, as integers (``num_addresses`` is computed on every read).
_CIDR_BASE = int(SERVICE_CIDR.network_address)
_CIDR_SIZE = SERVICE_CIDR.num_addresses


def _headless(spec: dict[str, Any]) -> bool:
    return spec.get("clusterIP") == NONE or (spec.get("clusterIPs") or [None])[0] == NONE


def needs_cluster_ip(spec: dict[str, Any]) -> bool:
    """``needsClusterIP``: every type but ExternalName."""
    return spec.get("type") != "ExternalName"


def needs_node_ports(spec: dict[str, Any]) -> bool:
    """``needsNodePort``: NodePort and LoadBalancer services."""
    return spec.get("type") in ("NodePort", "LoadBalancer")


def in_use(services: Iterable[dict[str, Any]]) -> tuple[Held[str], Held[int]]:
    """The cluster IPs and node ports the given Services hold (a scan: what the index keeps)."""
    ips: Counter[str] = Counter()
    ports: Counter[int] = Counter()
    for svc in services:
        held = held_by(svc)
        ips.update(held[0])
        ports.update(held[1])
    return Held(ips, (), _RESERVED), Held(ports)


def index_in_use(index: AllocationIndex, except_key: str | None) -> tuple[Held[str], Held[int]]:
    """What the index says is in use (the Service at ``except_key`` left out), the reserved IP included."""
    return index.in_use(except_key, _RESERVED)


def index_ips_in_use(index: AllocationIndex, except_key: str | None) -> Held[str]:
    """The cluster IPs of :func:`index_in_use` (a Service that needs no node ports reads only these)."""
    return index.ips_in_use(except_key, _RESERVED)


def index_ports_in_use(index: AllocationIndex, except_key: str | None) -> Held[int]:
    """The node ports of :func:`index_in_use`."""
    return index.ports_in_use(except_key)


def normalize_cluster_ips(spec: dict[str, Any], old_spec: dict[str, Any] | None = None) -> None:
    """``normalizeClusterIPs``: what an old client's ``clusterIP`` alone means for ``clusterIPs``.

    On create, a ``clusterIP`` without ``clusterIPs`` fills them (a new client sets both). On
    update, ``clusterIPs`` left out while ``clusterIP`` stayed are kept; a ``clusterIP`` cleared
    with ``clusterIPs`` as they were clears them; a ``clusterIP`` changed with ``clusterIPs`` as
    they were replaces them (validation then judges the change).
    """
    ip, ips = spec.get("clusterIP") or "", spec.get("clusterIPs") or []
    if old_spec is None:
        if ip and not ips:
            spec["clusterIPs"] = [ip]
        return
    old_ip, old_ips = old_spec.get("clusterIP") or "", list(old_spec.get("clusterIPs") or ())
    if old_ips and not ips and old_ip == ip:
        ips = spec["clusterIPs"] = list(old_ips)
    if old_ip != ip:
        if old_ip and not ip and ips == old_ips:
            spec.pop("clusterIPs", None)
        if ip and ips == old_ips:
            spec["clusterIPs"] = [ip]


def cluster_ip_mismatch(spec: dict[str, Any]) -> list[Cause]:
    """``ValidateServiceClusterIPsRelatedFields``: ``clusterIPs[0]`` must be ``clusterIP``."""
    ips = spec.get("clusterIPs") or []
    if spec.get("type") != "ExternalName" and ips and spec.get("clusterIP") != ips[0]:
        return [invalid("spec.clusterIPs", go_string_slice(ips), "first value must match `clusterIP`")]
    return []


def init_ip_family_fields(spec: dict[str, Any], old_spec: dict[str, Any] | None) -> list[Cause]:
    """``initIPFamilyFields`` for a single-stack IPv4 cluster: the policy and the families.

    Errors (the service asks for what this cluster has not): dual-stack required, an IPv6 family.
    """
    if spec.get("type") == "ExternalName":
        return []
    if spec.get("ipFamilyPolicy") is None:
        if old_spec is not None and old_spec.get("ipFamilyPolicy") is not None:
            spec["ipFamilyPolicy"] = old_spec["ipFamilyPolicy"]
        elif spec.get("clusterIP") == NONE and not spec.get("selector"):
            spec["ipFamilyPolicy"] = "RequireDualStack"  # headless and selectorless defaults to dual
        else:
            spec["ipFamilyPolicy"] = "SingleStack"
    policy = spec["ipFamilyPolicy"]
    families = list(spec.get("ipFamilies") or ())
    causes: list[Cause] = []
    for i, ip in enumerate(spec.get("clusterIPs") or ()):
        if ip == NONE:
            break
        if i >= len(families) and isinstance(ip, str):
            if ":" in ip:
                causes.append(invalid(f"spec.clusterIPs[{i}]", go_string_slice(spec.get("clusterIPs")),
                                      "IPv6 is not configured on this cluster"))
            else:
                families.append("IPv4")
    if causes:
        return causes
    if spec.get("clusterIP") == NONE and not spec.get("selector"):
        families = families or ["IPv4"]
        if len(families) < 2 and policy != "SingleStack":
            families.append("IPv6" if families[0] == "IPv4" else "IPv4")
        spec["ipFamilies"] = families
        return []  # (headless and selectorless: any families, even on a single-stack cluster)
    if policy == "RequireDualStack":
        causes.append(invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
    for i, family in enumerate(families):
        if family != "IPv4":
            causes.append(invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster"))
    if causes:
        return causes
    spec["ipFamilies"] = families or ["IPv4"]
    return []


def allocate_cluster_ip(spec: dict[str, Any], ips: Held[str], rng: random.Random) -> list[Cause]:
    """``allocClusterIPs``: the one asked for, if free and in range, or one at random."""
    if not needs_cluster_ip(spec) or _headless(spec):
        return []
    wanted = (spec.get("clusterIPs") or [""])[0] or spec.get("clusterIP") or ""
    if wanted:
        problem = _ip_problem(wanted, ips)
        if problem:
            return [invalid("spec.clusterIPs", go_string_slice(spec.get("clusterIPs") or [wanted]),
                            f"failed to allocate IP {wanted}: {problem}")]
        ip = wanted
    else:
        ip = _random_ip(ips, rng)
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]
    ips.add(ip)
    return []


def _ip_problem(ip: str, ips: Held[str]) -> str:
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return f"the provided IP ({ip}) is not a valid IP"
    if addr not in SERVICE_CIDR or addr in (SERVICE_CIDR.network_address, SERVICE_CIDR.broadcast_address):
        return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"
    if ip in ips:
        return "provided IP is already allocated"
    return ""


def _random_ip(ips: Held[str], rng: random.Random) -> str:
    """A free address of the range, drawn at random (neither the network nor the broadcast address)."""
    while True:
        n = _CIDR_BASE + rng.randrange(1, _CIDR_SIZE - 1)
        ip = f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"  # (str(IPv4Address(n)), without the object)
        if ip not in ips:
            return ip


def allocate_node_ports(spec: dict[str, Any], ports: Held[int], rng: random.Random,
                        old_spec: dict[str, Any] | None = None) -> list[Cause]:
    """``initNodePorts``: each port's node port, the one asked for or one at random.

    Entries with the same port number (TCP and UDP of one port) share one node port. A
    LoadBalancer that opts out of node ports gets only those asked for. On update a port keeps the
    node port it had (a node port the service holds is not "in use" for it).
    """
    if not needs_node_ports(spec):
        return []
    mine: set[int] = set()
    if old_spec is not None and needs_node_ports(old_spec):
        mine = {p["nodePort"] for p in old_spec.get("ports") or () if isinstance(p, dict) and p.get("nodePort")}
    taken = ports - mine
    allocate = spec.get("type") == "NodePort" or spec.get("allocateLoadBalancerNodePorts") is not False
    entries = [p for p in spec.get("ports") or () if isinstance(p, dict)]
    by_port: dict[Any, int] = {}  # port number -> the node port its entries share
    for i, p in enumerate(entries):
        asked = p.get("nodePort") if isinstance(p.get("nodePort"), int) else 0
        if not asked and not allocate:
            continue  # (a LoadBalancer without node ports: requests are respected, nothing more)
        shared = by_port.get(p.get("port"))
        if shared and (not asked or asked == shared):
            p["nodePort"] = shared
            continue
        if not asked:  # a later entry of the same port may ask for one (findRequestedNodePort)
            asked = next((q.get("nodePort") for q in entries[i + 1:]
                          if q.get("port") == p.get("port") and isinstance(q.get("nodePort"), int)), 0) or 0
        if asked:
            lo, hi = NODE_PORT_RANGE
            if not lo <= asked <= hi:
                return [invalid(f"spec.ports[{i}].nodePort", asked,
                                f"provided port is not in the valid range. The range of valid ports is {lo}-{hi}")]
            if asked in taken:
                return [invalid(f"spec.ports[{i}].nodePort", asked, "provided port is already allocated")]
            np = asked
        else:
            np = _random_port(taken, rng)
        p["nodePort"] = np
        taken.add(np)
        by_port.setdefault(p.get("port"), np)
    if _needs_health_check_port(spec) and not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = _random_port(taken, rng)  # allocHealthCheckNodePort
    return []


def _random_port(taken: Held[int], rng: random.Random) -> int:
    lo, hi = NODE_PORT_RANGE
    while True:
        port = rng.randint(lo, hi)
        if port not in taken:
            return port


def _node_ports(spec: dict[str, Any]) -> list[Any]:
    return [p.get("nodePort") for p in spec.get("ports") or () if isinstance(p, dict)]


def _needs_health_check_port(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def drop_type_dependent_fields(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """``dropTypeDependentFields``: a type change drops what the new type has no use for.

    Only what the client left as it was: cluster IPs (to ExternalName), node ports, the health
    check node port. A value the client changed stays, for validation to judge.
    """
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec) and (
            spec.get("clusterIPs") == old_spec.get("clusterIPs")):
        for f in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            spec.pop(f, None)
    if needs_node_ports(old_spec) and not needs_node_ports(spec) and _node_ports(spec) == _node_ports(old_spec):
        for p in spec.get("ports") or ():
            if isinstance(p, dict):
                p.pop("nodePort", None)
    if _needs_health_check_port(old_spec) and not _needs_health_check_port(spec) and (
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")):
        spec.pop("healthCheckNodePort", None)


def patch_allocated_values(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """``patchAllocatedValues``: what an update leaves out of what was allocated is kept.

    The cluster IPs (while both need one); a port's node port, by the port's name, unless
    another port of the new spec uses it (while both need node ports); the health check node port.
    """
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_ports(old_spec) and needs_node_ports(spec):
        used = {np for np in _node_ports(old_spec) if np} & {np for np in _node_ports(spec) if np}
        by_name = {p.get("name") or "": p.get("nodePort") for p in old_spec.get("ports") or () if isinstance(p, dict)}
        for p in spec.get("ports") or ():
            if isinstance(p, dict) and not p.get("nodePort"):
                np = by_name.get(p.get("name") or "")
                if np and np not in used:
                    p["nodePort"] = np
    if (_needs_health_check_port(old_spec) and _needs_health_check_port(spec) and not spec.get("healthCheckNodePort")
            and old_spec.get("healthCheckNodePort")):
        spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
