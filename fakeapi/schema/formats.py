"""The string formats a CRD schema may name (kube-openapi ``strfmt``, the ones apiextensions keeps).

Both validators of :class:`fakeapi.schema.compiled.CompiledSchema` check formats with these
functions: jsonschema-rs on the fast path, the ``jsonschema`` package in
:mod:`fakeapi.schema.schemaerrors` (the slow path, which words the causes). Format names carry
:data:`FMT_PREFIX` in the translated schemas so that neither validator's own checks apply.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from typing import Any

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-%s[0-9a-fA-F]{3}-%s[0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
_FORMAT_SOURCES: dict[str, str] = {
    "bsonobjectid": r"^[0-9a-fA-F]{24}$",
    "uuid": "^" + _UUID % ("[0-9a-fA-F]", "[0-9a-fA-F]") + "$",
    "uuid3": "^" + _UUID % ("3", "[0-9a-fA-F]") + "$",
    "uuid4": "^" + _UUID % ("4", "[89abAB]") + "$",
    "uuid5": "^" + _UUID % ("5", "[89abAB]") + "$",
    "mac": r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$",
    "hexcolor": r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
    "rgbcolor": (
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,"
        r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
    ),
    "ssn": r"^\d{3}[- ]?\d{2}[- ]?\d{4}$",
    "email": r"^[^@\s<>]+@[^@\s<>]+$",
    "hostname": (
        r"^(?=.{1,255}$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"
    ),
    "isbn10": r"^(?:[0-9]{9}[0-9Xx])$",
    "isbn13": r"^97[89][0-9]{10}$",
    "creditcard": (
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
        r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$"
    ),
    "date": r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$",
    "datetime": r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:?\d\d)?$",
    "duration": (
        r"^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^\d+\s*(ns|us|µs|ms|s|m|h|d|w|"
        r"nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$"
    ),
    "k8s-short-name": r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
    "k8s-long-name": r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
}


class _Patterns(dict[str, re.Pattern[str]]):
    """The format regexes, each compiled on first use (most schemas use none of them)."""

    def __missing__(self, name: str) -> re.Pattern[str]:
        rx = self[name] = re.compile(_FORMAT_SOURCES[name])
        return rx


_RE_FORMATS = _Patterns()


def _ip(kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        try:
            kind(s)
        except ValueError:
            return False
        return True

    return check


def _cidr(s: str) -> bool:
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return "/" in s


def _byte(s: str) -> bool:
    """Go's ``base64.StdEncoding`` (strfmt's check): padding required, ``\\r`` and ``\\n`` skipped anywhere."""
    try:
        base64.b64decode(s.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uri(s: str) -> bool:
    return bool(s) and not any(c.isspace() or ord(c) < 0x20 for c in s)


def _isbn(s: str) -> bool:
    t = s.replace("-", "").replace(" ", "")
    return bool(_RE_FORMATS["isbn10"].match(t) or _RE_FORMATS["isbn13"].match(t))


def _cc(s: str) -> bool:
    return bool(_RE_FORMATS["creditcard"].match(s.replace("-", "").replace(" ", "")))


def _re_check(name: str) -> Callable[[str], bool]:
    return lambda s: bool(_RE_FORMATS[name].match(s))


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _re_check("bsonobjectid"),
    "uri": _uri,
    "email": _re_check("email"),
    "hostname": _re_check("hostname"),
    "ipv4": _ip(ipaddress.IPv4Address),
    "ipv6": _ip(ipaddress.IPv6Address),
    "cidr": _cidr,
    "mac": _re_check("mac"),
    "uuid": _re_check("uuid"),
    "uuid3": _re_check("uuid3"),
    "uuid4": _re_check("uuid4"),
    "uuid5": _re_check("uuid5"),
    "isbn": _isbn,
    "isbn10": lambda s: bool(_RE_FORMATS["isbn10"].match(s.replace("-", "").replace(" ", ""))),
    "isbn13": lambda s: bool(_RE_FORMATS["isbn13"].match(s.replace("-", "").replace(" ", ""))),
    "creditcard": _cc,
    "ssn": _re_check("ssn"),
    "hexcolor": _re_check("hexcolor"),
    "rgbcolor": _re_check("rgbcolor"),
    "byte": _byte,
    "password": lambda s: True,
    "date": _re_check("date"),
    "duration": _re_check("duration"),
    "date-time": _re_check("datetime"),
    "datetime": _re_check("datetime"),
    "k8s-short-name": _re_check("k8s-short-name"),
    "k8s-long-name": _re_check("k8s-long-name"),
}

# Format names are prefixed in the translation so that the validators' built-in checks never apply.
FMT_PREFIX = "k8s:"


def format_fn(check: Callable[[str], bool]) -> Callable[[Any], bool]:
    """The check of a format as a validator calls it: a value that is not a string passes (its type is checked apart)."""
    return lambda v: not isinstance(v, str) or check(v)
