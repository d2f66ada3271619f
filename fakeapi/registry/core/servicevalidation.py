"""What ``ValidateService`` and ``ValidateServiceUpdate`` check beyond the OpenAPI schema.

The rules an operator's Services meet most (``pkg/apis/core/validation``): ports (required but
for headless and ExternalName services, named when there are several, numbers in range,
supported protocols, unique), the type and session affinity, no node port on a ClusterIP
service, an ExternalName's name, and cluster IPs that may not change once set.
"""

from __future__ import annotations

import re
from typing import Any

from fakeapi.machinery.errors import FIELD_VALUE_DUPLICATE, Cause, GoValue
from fakeapi.machinery.metavalidation import (
    bad_value,
    forbidden,
    go_quote,
    go_string_slice,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    not_supported,
    required,
    validate_labels,
)

_PORT_RANGE = "must be between 1 and 65535, inclusive"
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_AFFINITIES = ["ClientIP", "None"]
_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])*$")


def _duplicate(field: str, value: Any) -> Cause:
    return Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {bad_value(value)}", field)


def _headless(spec: dict[str, Any]) -> bool:
    return spec.get("clusterIP") == "None"


def service_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidateService`` (the spec part)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    stype = spec.get("type")
    ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
    if not ports and not _headless(spec) and stype != "ExternalName":
        causes.append(required("spec.ports"))
    if stype == "ExternalName":
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if not cname:
            causes.append(required("spec.externalName"))
        else:
            causes += [invalid("spec.externalName", cname, msg) for msg in is_dns1123_subdomain(cname)]
    names: set[str] = set()
    several = len(ports) > 1
    for i, p in enumerate(ports):
        more = _port_causes(p, i, several, names)
        if more:
            causes += more
    if spec.get("selector") is not None:
        causes += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity")
    if not affinity:
        causes.append(required("spec.sessionAffinity"))
    elif affinity not in _AFFINITIES:
        causes.append(not_supported("spec.sessionAffinity", affinity, _AFFINITIES))
    if not stype:
        causes.append(required("spec.type"))
    elif stype not in _TYPES:
        causes.append(not_supported("spec.type", stype, _TYPES))
    # (one pass over the ports; the causes come in the rules' order: ClusterIP node ports, duplicate
    # node ports, duplicate ports)
    forbidden_node_ports: list[Cause] = []
    duplicate_node_ports: list[Cause] = []
    duplicate_ports: list[Cause] = []
    node_ports: set[tuple[Any, Any]] = set()
    seen: set[tuple[Any, Any]] = set()
    for i, p in enumerate(ports):
        node_port = p.get("nodePort")
        protocol = p.get("protocol")
        if node_port:
            if stype == "ClusterIP":
                forbidden_node_ports.append(
                    forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"))
            key = (protocol, node_port)
            if key in node_ports:
                duplicate_node_ports.append(_duplicate(f"spec.ports[{i}].nodePort", node_port))
            node_ports.add(key)
        key = (protocol, p.get("port"))
        if key in seen:
            duplicate_ports.append(_duplicate(f"spec.ports[{i}]", GoValue(
                f'core.ServicePort{{Name:"", Protocol:{go_quote(str(protocol))}, AppProtocol:(*string)(nil), '
                f'Port:{p.get("port")}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}')))
        seen.add(key)
    return causes + forbidden_node_ports + duplicate_node_ports + duplicate_ports


def _port_causes(p: dict[str, Any], i: int, require_name: bool, names: set[str]) -> list[Cause]:
    """``validateServicePort`` of ``spec.ports[i]`` (the paths are made only for a cause)."""
    causes: list[Cause] = []
    name = p.get("name") or ""
    if require_name and not name:
        causes.append(required(f"spec.ports[{i}].name"))
    elif name:
        msgs = is_dns1123_label(name)
        if msgs:
            causes += [invalid(f"spec.ports[{i}].name", name, msg) for msg in msgs]
        if name in names:
            causes.append(_duplicate(f"spec.ports[{i}].name", name))
        names.add(name)
    port = p.get("port") or 0  # (absent: Go's zero value)
    if isinstance(port, int) and not 1 <= port <= 65535:
        causes.append(invalid(f"spec.ports[{i}].port", port, _PORT_RANGE))
    protocol = p.get("protocol")
    if not protocol:
        causes.append(required(f"spec.ports[{i}].protocol"))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(f"spec.ports[{i}].protocol", protocol, _PROTOCOLS))
    target = p.get("targetPort") or 0
    if type(target) is int:
        if not 1 <= target <= 65535:
            causes.append(invalid(f"spec.ports[{i}].targetPort", target, _PORT_RANGE))
    elif type(target) is str:
        msgs = port_name_errors(target)
        if msgs:
            causes += [invalid(f"spec.ports[{i}].targetPort", target, m) for m in msgs]
    return causes


def port_name_errors(value: str) -> list[str]:
    """``IsValidPortName``: an IANA service name (at most 15 characters, a letter, single inner hyphens)."""
    msgs = []
    if len(value) > 15:
        msgs.append("must be no more than 15 characters")
    if not _IANA_SVC_NAME.match(value):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in value):
        msgs.append("must contain at least one letter (a-z)")
    if "--" in value:
        msgs.append("must not contain consecutive hyphens")
    if value[:1] == "-" or value[-1:] == "-":
        msgs.append("must not begin or end with a hyphen")
    return msgs


def port_number_errors(value: int) -> list[str]:
    """``IsValidPortNum``."""
    return [] if 1 <= value <= 65535 else [_PORT_RANGE]


def service_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``validateUpgradeDowngradeClusterIPs`` for a single-stack cluster: cluster IPs may not change once set."""
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    if _headless(spec) and _headless(old_spec):
        return []
    new_ips, old_ips = list(spec.get("clusterIPs") or ()), list(old_spec.get("clusterIPs") or ())
    causes: list[Cause] = []
    if len(new_ips) == len(old_ips):
        for i, ip in enumerate(old_ips):
            if ip != new_ips[i]:
                causes.append(invalid(f"spec.clusterIPs[{i}]", go_string_slice(new_ips), "may not change once set"))
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            causes.append(invalid("spec.clusterIPs[0]", go_string_slice(new_ips or None), "primary clusterIP can not be unset"))
        elif new_ips[0] != old_ips[0]:
            causes.append(invalid("spec.clusterIPs[0]", go_string_slice(new_ips), "may not change once set"))
    elif old_ips and new_ips[0] != old_ips[0]:
        causes.append(invalid("spec.clusterIPs[0]", go_string_slice(new_ips), "may not change once set"))
    return causes
