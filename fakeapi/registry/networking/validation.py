"""What networking.k8s.io/v1 Ingress and NetworkPolicy validation checks beyond the OpenAPI schema
(``pkg/apis/networking/validation``).

Ingress: a rule's host is a DNS name (a wildcard only as its first label), each path has a type and, for
``Exact`` and ``Prefix``, an absolute path without ``//``, ``/./``, ``/../`` or encoded slashes;
each backend names a service and a port by name or number, or a resource, never both.

NetworkPolicy: the pod selector is a valid label selector; each rule's ports have a known protocol and
a port number or name (``endPort`` only after a number, not below it); each peer is pod and/or namespace
selectors or an ``ipBlock`` whose CIDR and exceptions parse as ``netutils.ParseCIDRSloppy`` parses them,
each exception strictly inside the block; at most two policy types, each ``Ingress`` or ``Egress``.
The strategy's warnings (``networkPolicyWarnings``) name the CIDRs in a non-standard form.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from fakeapi.machinery.errors import Cause, GoValue
from fakeapi.machinery.metavalidation import (
    forbidden,
    go_quote,
    invalid,
    is_dns1123_subdomain,
    not_supported,
    required,
    validate_label_selector,
    validate_name,
)
from fakeapi.registry.core.servicevalidation import port_name_errors, port_number_errors

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



# --- NetworkPolicy ----------------------------------------------------------------------------

#: ``ValidateNetworkPolicyPort``'s list, in Go's order (not sorted).
_NP_PROTOCOLS = ["TCP", "UDP", "SCTP"]
_NP_POLICY_TYPES = ["Ingress", "Egress"]
_CIDR_INVALID = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_RULE_PEERS = (("ingress", "from"), ("egress", "to"))


def network_policy_causes(obj: dict[str, Any], *, allow_invalid_label_value: bool = False,
                          allowed_cidrs: frozenset[str] = frozenset()) -> list[Cause]:
    """``ValidateNetworkPolicy``'s spec part (``ValidateNetworkPolicySpec``): the pod selector, each
    rule's ports and peers, the policy types.

    The options are ``NetworkPolicyValidationOptions``' (``AllowInvalidLabelValueInSelector``,
    ``AllowCIDRsEvenIfInvalid``): both off on a create.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    causes = validate_label_selector(spec.get("podSelector"), "spec.podSelector",
                                     allow_invalid_label_value=allow_invalid_label_value)
    for rules_key, peers_key in _RULE_PEERS:
        rules = spec.get(rules_key)
        for i, rule in enumerate(rules if isinstance(rules, list) else ()):
            if not isinstance(rule, dict):
                continue
            path = f"spec.{rules_key}[{i}]"
            ports = rule.get("ports")
            for j, port in enumerate(ports if isinstance(ports, list) else ()):
                if isinstance(port, dict):
                    causes += _np_port_causes(port, f"{path}.ports[{j}]")
            peers = rule.get(peers_key)
            for j, peer in enumerate(peers if isinstance(peers, list) else ()):
                if isinstance(peer, dict):
                    causes += _np_peer_causes(peer, f"{path}.{peers_key}[{j}]", allow_invalid_label_value,
                                              allowed_cidrs)
    types = spec.get("policyTypes")
    types = types if isinstance(types, list) else []
    if len(types) > len(_NP_POLICY_TYPES):
        shown = GoValue("[]networking.PolicyType{" + ", ".join(go_quote(str(t)) for t in types) + "}")
        causes.append(invalid("spec.policyTypes", shown, "may not specify more than two policyTypes"))
        return causes
    causes += [not_supported(f"spec.policyTypes[{i}]", t, _NP_POLICY_TYPES)
               for i, t in enumerate(types) if t not in _NP_POLICY_TYPES]
    return causes


def network_policy_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate`` beyond ``ValidateNetworkPolicy``: ``ValidateNetworkPolicyUpdate``
    validates the spec a second time (each spec cause is listed twice, as kube-apiserver lists them; its
    message names each once), now letting every CIDR of the stored policy through as it was.

    ``ValidationOptionsForNetworking`` allows invalid label values in selectors when the stored pod
    selector is invalid. (A stored policy passed these very rules here, so neither option loosens
    anything in this server; they are ported as written.)
    """
    ospec = old.get("spec")
    ospec = ospec if isinstance(ospec, dict) else {}
    allow_values = bool(validate_label_selector(ospec.get("podSelector"), "spec.podSelector"))
    return network_policy_causes(obj, allow_invalid_label_value=allow_values, allowed_cidrs=_policy_cidrs(ospec))


def _policy_cidrs(spec: dict[str, Any]) -> frozenset[str]:
    """Every ``ipBlock`` CIDR and exception of a policy spec (``ValidateNetworkPolicyUpdate``'s ``existingCIDRs``)."""
    out: set[str] = set()
    for block, _path in _ip_blocks(spec):
        cidr = block.get("cidr")
        if isinstance(cidr, str):
            out.add(cidr)
        excepts = block.get("except")
        out.update(e for e in (excepts if isinstance(excepts, list) else ()) if isinstance(e, str))
    return frozenset(out)


def _ip_blocks(spec: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """The ``ipBlock`` of each peer of each rule, with its path, ingress rules first."""
    out: list[tuple[dict[str, Any], str]] = []
    for rules_key, peers_key in _RULE_PEERS:
        rules = spec.get(rules_key)
        for i, rule in enumerate(rules if isinstance(rules, list) else ()):
            peers = rule.get(peers_key) if isinstance(rule, dict) else None
            for j, peer in enumerate(peers if isinstance(peers, list) else ()):
                block = peer.get("ipBlock") if isinstance(peer, dict) else None
                if isinstance(block, dict):
                    out.append((block, f"spec.{rules_key}[{i}].{peers_key}[{j}].ipBlock"))
    return out


def _np_port_causes(port: dict[str, Any], path: str) -> list[Cause]:
    """``ValidateNetworkPolicyPort``: a known protocol; a port number (1-65535) with an optional ``endPort``
    not below it, or a port name (IANA_SVC_NAME) without one."""
    causes: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _NP_PROTOCOLS:
        causes.append(not_supported(f"{path}.protocol", protocol, _NP_PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    if isinstance(number, int) and not isinstance(number, bool):
        causes += [invalid(f"{path}.port", number, msg) for msg in port_number_errors(number)]
        if isinstance(end, int):
            if end < number:
                causes.append(invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
            causes += [invalid(f"{path}.endPort", end, msg) for msg in port_number_errors(end)]
    elif isinstance(number, str):
        if isinstance(end, int):
            causes.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        causes += [invalid(f"{path}.port", number, msg) for msg in port_name_errors(number)]
    elif isinstance(end, int):
        causes.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    return causes


def _np_peer_causes(peer: dict[str, Any], path: str, allow_invalid_label_value: bool,
                    allowed_cidrs: frozenset[str]) -> list[Cause]:
    """``ValidateNetworkPolicyPeer``: pod and/or namespace selectors (valid label selectors), or an ``ipBlock``."""
    causes: list[Cause] = []
    peers = 0
    for key in ("podSelector", "namespaceSelector"):
        selector = peer.get(key)
        if selector is not None:
            peers += 1
            causes += validate_label_selector(selector, f"{path}.{key}",
                                              allow_invalid_label_value=allow_invalid_label_value)
    block = peer.get("ipBlock")
    if block is not None:
        peers += 1
        causes += _ip_block_causes(block if isinstance(block, dict) else {}, f"{path}.ipBlock", allowed_cidrs)
    if peers == 0:
        causes.append(required(path, "must specify a peer"))
    elif peers > 1 and block is not None:
        causes.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return causes


def _ip_block_causes(block: dict[str, Any], path: str, allowed_cidrs: frozenset[str]) -> list[Cause]:
    """``ValidateIPBlock``: a CIDR (``IsValidCIDRForLegacyField``, the ``StrictIPCIDRValidation`` gate off, as
    it is by default), each exception a CIDR strictly inside it."""
    cidr = block.get("cidr")
    cidr = cidr if isinstance(cidr, str) else ""
    if not cidr:
        return [required(f"{path}.cidr")]
    causes = _legacy_cidr_causes(f"{path}.cidr", cidr, allowed_cidrs)
    net = parse_cidr_sloppy(cidr)
    if net is None:
        return causes
    excepts = block.get("except")
    for i, text in enumerate(excepts if isinstance(excepts, list) else ()):
        text = text if isinstance(text, str) else ""
        epath = f"{path}.except[{i}]"
        causes += _legacy_cidr_causes(epath, text, allowed_cidrs)
        inner = parse_cidr_sloppy(text)
        if inner is None:
            continue
        if not net.contains(inner.network) or net.ones >= inner.ones:
            causes.append(invalid(epath, text, "must be a strict subset of `cidr`"))
    return causes


def _legacy_cidr_causes(path: str, value: str, allowed_cidrs: frozenset[str]) -> list[Cause]:
    """``IsValidCIDRForLegacyField`` without strict validation: what ``netutils.ParseCIDRSloppy`` parses;
    a CIDR of the stored object passes as it is."""
    if value in allowed_cidrs or parse_cidr_sloppy(value) is not None:
        return []
    return [invalid(path, value, _CIDR_INVALID)]


def network_policy_warnings(obj: dict[str, Any]) -> list[str]:
    """The strategy's ``networkPolicyWarnings``: ``GetWarningsForCIDR`` for each ``ipBlock``'s CIDR and
    exceptions (a CIDR with bits set beyond its prefix, leading zeros, an IPv4-mapped IPv6 address, an
    IPv6 address not in RFC 5952 form)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    out: list[str] = []
    for block, path in _ip_blocks(spec):
        cidr = block.get("cidr")
        if isinstance(cidr, str):
            out += cidr_warnings(f"{path}.cidr", cidr)
        excepts = block.get("except")
        for i, text in enumerate(excepts if isinstance(excepts, list) else ()):
            if isinstance(text, str):
                out += cidr_warnings(f"{path}.except[{i}]", text)
    return out


def cidr_warnings(path: str, value: str) -> list[str]:
    """``utilvalidation.GetWarningsForCIDR`` (nothing for a value that does not parse)."""
    net = parse_cidr_sloppy(value)
    if net is None:
        return []
    out: list[str] = []
    if _to16(net.ip) != _to16(net.network):
        single = f"{ip_string(net.ip)}/{net.bits}"
        out.append(f"{path}: CIDR value {go_quote(value)} is ambiguous in this context "
                   f"(should be {go_quote(net.string())} or {go_quote(single)}?)")
    four_in_six = net.bits == 128 and _to4(net.ip) is not None
    if not net.strict or four_in_six:
        out.append(f"{path}: non-standard CIDR value {go_quote(value)} will be considered invalid in a future "
                   f"Kubernetes release: use {go_quote(net.string())}")
    if not out and net.bits == 128:
        canonical = f"{ip_string(net.ip)}/{net.ones}"
        if canonical != value:
            out.append(f"{path}: IPv6 CIDR value {go_quote(value)} should be in RFC 5952 canonical format "
                       f"({go_quote(canonical)})")
    return out


# --- Go's net.ParseCIDR of Go 1.16 (k8s.io/utils/net's ParseCIDRSloppy) ------------------------

_V4_IN_V6 = bytes(10) + b"\xff\xff"
_BIG = 0xFFFFFF


class CIDR:
    """A parsed CIDR as Go's ``ParseCIDR`` returns it: the address (``ip``, 4 or 16 bytes as written:
    an IPv4 literal is 4), the masked network, the prefix length (``ones``) of a ``bits``-bit mask;
    ``strict``: ``netip.ParsePrefix`` parses it too (no leading zeros, at most 4 hex digits a group)."""

    __slots__ = ("bits", "ip", "network", "ones", "strict")

    def __init__(self, ip: bytes, ones: int, bits: int, strict: bool) -> None:
        self.ip = ip
        self.ones = ones
        self.bits = bits
        self.strict = strict
        self.network = bytes(b & m for b, m in zip(ip, _mask(ones, bits), strict=True))

    def _number_and_mask(self) -> tuple[bytes, bytes] | None:
        """``networkNumberAndMask``."""
        number = _to4(self.network) or self.network
        mask = _mask(self.ones, self.bits)
        if len(mask) == 4 and len(number) != 4:
            return None
        if len(mask) == 16 and len(number) == 4:
            mask = mask[12:]
        return number, mask

    def contains(self, ip: bytes) -> bool:
        """``(*IPNet).Contains``."""
        nm = self._number_and_mask()
        if nm is None:
            return False
        number, mask = nm
        ip = _to4(ip) or ip
        if len(ip) != len(number):
            return False
        return all(n & m == b & m for n, m, b in zip(number, mask, ip, strict=True))

    def string(self) -> str:
        """``(*IPNet).String``."""
        nm = self._number_and_mask()
        if nm is None:
            return "<nil>"
        number, mask = nm
        ones = sum(bin(b).count("1") for b in mask)
        return f"{ip_string(number)}/{ones}"


def _mask(ones: int, bits: int) -> bytes:
    value = ((1 << ones) - 1) << (bits - ones) if ones else 0
    return value.to_bytes(bits // 8, "big")


def _to4(ip: bytes) -> bytes | None:
    if len(ip) == 4:
        return ip
    if len(ip) == 16 and ip[:12] == _V4_IN_V6:
        return ip[12:]
    return None


def _to16(ip: bytes) -> bytes:
    return _V4_IN_V6 + ip if len(ip) == 4 else ip


def ip_string(ip: bytes) -> str:
    """``net.IP.String``: dotted decimal for an IPv4 (or IPv4-mapped) address, else RFC 5952."""
    four = _to4(ip)
    if four is not None:
        return ".".join(str(b) for b in four)
    groups = [ip[i] << 8 | ip[i + 1] for i in range(0, 16, 2)]
    best_start, best_len, i = -1, 0, 0
    while i < 8:
        j = i
        while j < 8 and groups[j] == 0:
            j += 1
        if j - i > best_len:
            best_start, best_len = i, j - i
        i = j + 1 if j > i else i + 1
    text = [format(g, "x") for g in groups]
    if best_len < 2:
        return ":".join(text)
    return ":".join(text[:best_start]) + "::" + ":".join(text[best_start + best_len:])


def _dtoi(s: str) -> tuple[int, int, bool]:
    """Go's ``dtoi``: the decimal number at the start of ``s``, its length, ok."""
    n = i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= _BIG:
            return _BIG, i, False
        i += 1
    return (n, i, i > 0)


def _xtoi(s: str) -> tuple[int, int, bool]:
    """Go's ``xtoi``: the hexadecimal number at the start of ``s``, its length, ok."""
    n = i = 0
    while i < len(s) and s[i] in "0123456789abcdefABCDEF":
        n = n * 16 + int(s[i], 16)
        if n >= _BIG:
            return 0, i, False
        i += 1
    return (n, i, i > 0)


def _parse_ipv4(s: str) -> tuple[bytes, bool] | None:
    """Go 1.16's ``parseIPv4`` (leading zeros allowed); with whether ``netip`` accepts it too."""
    out = bytearray()
    strict = True
    for i in range(4):
        if not s:
            return None
        if i > 0:
            if s[0] != ".":
                return None
            s = s[1:]
        n, c, ok = _dtoi(s)
        if not ok or n > 0xFF:
            return None
        if c > 1 and s[0] == "0":
            strict = False
        s = s[c:]
        out.append(n)
    if s:
        return None
    return bytes(out), strict


def _parse_ipv6(s: str) -> tuple[bytes, bool] | None:
    """Go 1.16's ``parseIPv6`` (an embedded IPv4 address allowed last); with whether ``netip`` accepts it too."""
    ip = bytearray(16)
    strict = True
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if not s:
            return bytes(ip), strict
    i = 0
    while i < 16:
        n, c, ok = _xtoi(s)
        if not ok or n > 0xFFFF:
            return None
        if c < len(s) and s[c] == ".":
            if (ellipsis < 0 and i != 12) or i + 4 > 16:
                return None
            four = _parse_ipv4(s)
            if four is None:
                return None
            ip[i:i + 4] = four[0]
            strict = strict and four[1]
            s = ""
            i += 4
            break
        if c > 4:
            strict = False
        ip[i] = n >> 8
        ip[i + 1] = n & 0xFF
        i += 2
        s = s[c:]
        if not s:
            break
        if s[0] != ":" or len(s) == 1:
            return None
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                return None
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        return None
    if i < 16:
        if ellipsis < 0:
            return None
        n = 16 - i
        ip[ellipsis + n:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        return None
    return bytes(ip), strict


def parse_cidr_sloppy(s: str) -> CIDR | None:
    """``netutils.ParseCIDRSloppy`` (Go 1.16's ``net.ParseCIDR``: IPv4 octets may have leading zeros, the
    prefix length too); None when it fails."""
    slash = s.find("/")
    if slash < 0:
        return None
    addr, mask = s[:slash], s[slash + 1:]
    parsed = _parse_ipv4(addr)
    bits = 32
    if parsed is None:
        parsed = _parse_ipv6(addr)
        bits = 128
    n, i, ok = _dtoi(mask)
    if parsed is None or not ok or i != len(mask) or n > bits:
        return None
    ip, strict = parsed
    return CIDR(ip, n, bits, strict and not (len(mask) > 1 and mask[0] == "0"))
