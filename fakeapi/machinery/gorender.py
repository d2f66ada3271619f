"""Go's renderings of values in field errors, and the ``field.Error`` constructors.

What ``k8s.io/apimachinery/pkg/util/validation/field`` prints for a bad value (``%#v``-style
quoting, JSON for maps and slices, Go's float formatting) and the causes its ``Invalid``,
``Required``, ``Forbidden``, ``NotSupported`` and ``TooLong`` make, shared by the metadata rules
(:mod:`fakeapi.machinery.metavalidation`, which re-exports them) and every group's validation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, TypeGuard

from fakeapi.machinery.errors import (
    FIELD_VALUE_FORBIDDEN,
    FIELD_VALUE_INVALID,
    FIELD_VALUE_NOT_SUPPORTED,
    FIELD_VALUE_REQUIRED,
    FIELD_VALUE_TOO_LONG,
    Cause,
    GoValue,
)

# content.MaxLenError: current apimachinery says "bytes" (older releases said "characters").
_MAX_LEN_UNIT = "bytes"


def max_len_error(length: int) -> str:
    """``content.MaxLenError``."""
    return f"must be no more than {length} {_MAX_LEN_UNIT}"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``content.RegexError`` (note Go's double space before each ``or``)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            out += " or "
        out += "'" + ex + "', "
    return out + "regex used for validation is '" + fmt + "')"


EMPTY_ERROR = "must be non-empty"


def go_quote(s: str) -> str:
    """Go's ``%q`` / ``strconv.Quote`` of a string."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif o < 0x80 or ch.isprintable():
            out.append(ch)
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_json(value: Any, *, sort_keys: bool = False) -> str:
    """Go ``encoding/json.Marshal`` of a JSON value (dict order kept: pass Go's field order).

    ``sort_keys``: the value is Go maps (``map[string]interface{}``), marshalled in key order.
    Go escapes ``<``, ``>``, ``&``, U+2028 and U+2029 and keeps other non-ASCII as is.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    if any(c in text for c in "<>&\u2028\u2029"):
        text = (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    return text


def go_string_map(m: Any, type_name: str = "map[string]string") -> GoValue:
    """``%#v`` of a ``map[string]string``: ``map[string]string{"a":"b", "c":"d"}`` (keys sorted), nil ``(nil)``."""
    if m is None:
        return GoValue(f"{type_name}(nil)")
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(m.items()))
    return GoValue(f"{type_name}{{{items}}}")


def go_string_slice(values: Any) -> GoValue:
    """``%#v`` of a ``[]string``: ``[]string{"a", "b"}``, nil ``[]string(nil)`` (a BadValue or message part)."""
    if values is None:
        return GoValue("[]string(nil)")
    return GoValue("[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}")


def label_selector_string(sel: Any) -> GoValue:
    """``(*metav1.LabelSelector).String()`` (gogo-protobuf's): what a selector BadValue prints."""
    if not isinstance(sel, dict):
        return GoValue("nil")
    labels = "".join(f"{k}: {v}," for k, v in sorted((sel.get("matchLabels") or {}).items()))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in e.get('values') or ())}],}},"
        for e in sel.get("matchExpressions") or () if isinstance(e, dict))
    return GoValue(f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
                   f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def bad_value(value: Any) -> str:
    """Render a ``field.Error`` BadValue as ``ErrorBody`` does (a :class:`GoValue` as it is)."""
    if isinstance(value, GoValue):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


def go_float(f: float) -> str:
    """Go ``%v`` of a float64: shortest digits, exponent form below 1e-4 and from 1e21."""
    if f != f:
        return "NaN"
    if f in (_INF, -_INF):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if str(f).startswith("-") else "0"
    d = Decimal(repr(f)).normalize()
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    exp10 = len(digits) - 1 + exponent
    if exp10 < -4 or exp10 >= 21:
        mant = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
        esign = "-" if exp10 < 0 else "+"
        return ("-" if sign else "") + f"{mant}e{esign}{abs(exp10):02d}"
    return format(d, "f")


_INF = float("inf")


def invalid(field: str, value: Any, detail: str) -> Cause:
    """``field.Invalid``."""
    body = "Invalid value: " + bad_value(value)
    if detail:
        body += ": " + detail
    return Cause(FIELD_VALUE_INVALID, body, field)


def required(field: str, detail: str = "") -> Cause:
    """``field.Required``."""
    return Cause(FIELD_VALUE_REQUIRED, "Required value" + (": " + detail if detail else ""), field)


def forbidden(field: str, detail: str) -> Cause:
    """``field.Forbidden``."""
    return Cause(FIELD_VALUE_FORBIDDEN, "Forbidden" + (": " + detail if detail else ""), field)


def not_supported(field: str, value: Any, supported: Sequence[str]) -> Cause:
    """``field.NotSupported`` (a null value shows as ``""``)."""
    values = ", ".join(json.dumps(v) for v in supported)
    return Cause(FIELD_VALUE_NOT_SUPPORTED,
                 f"Unsupported value: {json.dumps(value if value is not None else '')}: supported values: {values}", field)


def too_long(field: str, max_length: int) -> Cause:
    """``field.TooLong``."""
    unit = "byte" if max_length == 1 else "bytes"
    return Cause(FIELD_VALUE_TOO_LONG, f"Too long: may not be more than {max_length} {unit}", field)


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC machinery for a plain dict."""
    return type(value) is dict or isinstance(value, Mapping)


def _blen(s: str) -> int:
    """Length in bytes, as Go's ``len(string)``."""
    return len(s) if s.isascii() else len(s.encode("utf-8"))
