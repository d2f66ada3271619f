"""What networking.k8s.io/v1 Ingress validation checks beyond the OpenAPI schema (``pkg/apis/networking/validation``).

A rule's host is a DNS name (a wildcard only as its first label), each path has a type and, for
``Exact`` and ``Prefix``, an absolute path without ``//``, ``/./``, ``/../`` or encoded slashes;
each backend names a service and a port by name or number, or a resource, never both.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from .errors import Cause, GoValue
from .metavalidation import invalid, is_dns1123_subdomain, not_supported, required, validate_name
from .servicevalidation import port_name_errors, port_number_errors

_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_INVALID_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_SUFFIXES = ("/..", "/.")
_WILDCARD_RE = re.compile(r"^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                 "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character "
                 "(e.g. '*.example.com', regex used for validation is "
                 "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def ingress_causes(obj: dict[str, Any]) -> list[Cause]:
    """``validateIngressSpec``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    rules = [r for r in spec.get("rules") or () if isinstance(r, dict)]
    backend = spec.get("defaultBackend")
    if not rules and backend is None:
        shown = GoValue("[]networking.IngressRule(nil)" if spec.get("rules") is None else "[]networking.IngressRule{}")
        causes.append(invalid("spec", shown, "either `defaultBackend` or `rules` must be specified"))
    if isinstance(backend, dict):
        causes += _backend_causes(backend, "spec.defaultBackend")
    for i, rule in enumerate(rules):
        path = f"spec.rules[{i}]"
        host = rule.get("host") or ""
        if host:
            if _is_ip(host):
                causes.append(invalid(f"{path}.host", host, "must be a DNS name, not an IP address"))
            if "*" in host:
                if len(host) > 253 or not _WILDCARD_RE.match(host):
                    causes.append(invalid(f"{path}.host", host, _WILDCARD_MSG))
            else:
                causes += [invalid(f"{path}.host", host, msg) for msg in is_dns1123_subdomain(host)]
        http = rule.get("http")
        if isinstance(http, dict):
            causes += _http_causes(http, f"{path}.http")
    for i, tls in enumerate(spec.get("tls") or ()):
        if not isinstance(tls, dict):
            continue
        for j, host in enumerate(tls.get("hosts") or ()):
            if isinstance(host, str) and "*" in host:
                if not _WILDCARD_RE.match(host):
                    causes.append(invalid(f"spec.tls[{i}].hosts[{j}]", host, _WILDCARD_MSG))
            elif isinstance(host, str):
                causes += [invalid(f"spec.tls[{i}].hosts[{j}]", host, msg) for msg in is_dns1123_subdomain(host)]
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        causes += [invalid("spec.ingressClassName", class_name, msg) for msg in validate_name(class_name, "subdomain")]
    return causes


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _http_causes(http: dict[str, Any], path: str) -> list[Cause]:
    """``validateHTTPIngressRuleValue`` and ``validateHTTPIngressPath``."""
    paths = [p for p in http.get("paths") or () if isinstance(p, dict)]
    causes: list[Cause] = []
    if not paths:
        causes.append(required(f"{path}.paths"))
    for i, p in enumerate(paths):
        ppath = f"{path}.paths[{i}]"
        ptype, value = p.get("pathType"), p.get("path") or ""
        if ptype is None:
            causes.append(required(f"{ppath}.pathType", "pathType must be specified"))
            continue
        if ptype in ("Exact", "Prefix"):
            if not value.startswith("/"):
                causes.append(invalid(f"{ppath}.path", value, "must be an absolute path"))
            if value:
                causes += [invalid(f"{ppath}.path", value, f"must not contain '{seq}'")
                           for seq in _INVALID_SEQUENCES if seq in value]
                causes += [invalid(f"{ppath}.path", value, f"cannot end with '{suffix}'")
                           for suffix in _INVALID_SUFFIXES if value.endswith(suffix)]
        elif ptype == "ImplementationSpecific":
            if value and not value.startswith("/"):
                causes.append(invalid(f"{ppath}.path", value, "must be an absolute path"))
        else:
            causes.append(not_supported(f"{ppath}.pathType", ptype, _PATH_TYPES))
        backend = p.get("backend")
        causes += _backend_causes(backend if isinstance(backend, dict) else {}, f"{ppath}.backend")
    return causes


def _backend_causes(backend: dict[str, Any], path: str) -> list[Cause]:
    """``validateIngressBackend``: a service (a name, and a port by name or number) or a resource."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        if isinstance(resource, dict) and not resource.get("kind"):
            return [required(f"{path}.resource.kind")]
        return []
    if not isinstance(service, dict):
        return [invalid(path, "", "resource or service backend is required")]
    causes: list[Cause] = []
    name = service.get("name") or ""
    if not name:
        causes.append(required(f"{path}.service.name"))
    else:
        causes += [invalid(f"{path}.service.name", name, msg) for msg in validate_name(name, "dns1035")]
    port = service.get("port")
    port_name, number = (port.get("name") or "", port.get("number") or 0) if isinstance(port, dict) else ("", 0)
    if port_name and number:
        causes.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        causes += [invalid(f"{path}.service.port.name", port_name, msg) for msg in port_name_errors(port_name)]
    elif number:
        causes += [invalid(f"{path}.service.port.number", number, msg) for msg in port_number_errors(number)]
    else:
        causes.append(required(path, "port name or number is required"))
    return causes

