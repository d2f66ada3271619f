"""What kube-apiserver's decoders report for JSON that does not fit a built-in kind's Go types.

A built-in kind is decoded into its Go struct before defaulting and validation, so a value of
the wrong JSON type never reaches validation:

- a create or update body goes through ``encoding/json`` (``sigs.k8s.io/json``):
  :func:`unmarshal_error` gives its error (``json: cannot unmarshal string into Go struct
  field DeploymentSpec.spec.replicas of type int32``), which the server answers with 400;
- a JSON or merge patch is applied to JSON and the result decoded the same way;
- a strategic merge patch's result is a map that ``runtime.DefaultUnstructuredConverter``
  turns into the struct: :func:`fakeapi.codec.fromunstructured.from_unstructured_error` gives
  its (different) error, over this module's checks of single values. Both patch errors are
  answered with 422 (``patch: Invalid value``).

Custom resources are decoded as unstructured JSON: none of this applies to them.
Pure functions, driven by :class:`fakeapi.codec.gomodel.GoType`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from fakeapi.codec.gomodel import BOOL, FLOAT, STRING, GoType, go_type_string
from fakeapi.machinery.jsonutil import go_json_type
from fakeapi.machinery.metavalidation import go_quote

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


#: The scalar Go types a JSON value of exactly this Python type always fits: a struct's field
#: holding one is not visited. (Integers have a range for the JSON decoder, not the converter.)
_EXACT: dict[GoType, type] = {STRING: str, BOOL: bool, FLOAT: float}


_NO_BASE: dict[str, Any] = {}


class _Abort(Exception):
    """An error an ``UnmarshalJSON`` method returned: decoding stops there (Go returns it at once)."""


def unmarshal_error(doc: Any, t: GoType, *, sorted_keys: bool = False, base: Any = None) -> str | None:
    """The error ``json.Unmarshal`` of ``doc`` into Go type ``t`` returns, or None.

    Go's decoder keeps going after a value of the wrong type and reports the first one, in
    document order (``sorted_keys``: the document is a Go map marshalled, keys sorted), with
    the struct holding the field and the field's path from the root. An error from a type's
    own ``UnmarshalJSON`` (``metav1.Time``, ``resource.Quantity``, ``intstr.IntOrString``)
    stops decoding and wins over an earlier type error.

    ``base``: a document that decodes without error (a stored object) whose values ``doc`` shares
    (a patch's result): a value that is ``base``'s own at the same place is not walked again.
    """
    if (_fits_struct(doc, t, base if type(base) is dict else _NO_BASE) if t.kind == "struct" and type(doc) is dict
            and doc is not base else _fits_value(doc, t, base)):
        return None  # (the common case: no decoder, no paths kept for a message there is none of)
    d = _Decoder(sorted_keys)
    try:
        d.value(doc, t, "", (), base)
    except _Abort as e:
        return str(e)
    return d.saved


def _fits_value(v: Any, t: GoType, base: Any) -> bool:
    """Does ``v`` decode into ``t`` without error? The walk of :meth:`_Decoder.value` with no error
    kept, no field path and no key order (an error is reported in some order; none is in every one).

    True only where the decoder saves no error and raises none; False sends the caller to the
    decoder for its message (so a False it would not need costs time, never an answer).
    """
    if v is None or v is base:
        return True
    k = t.kind
    tv = type(v)
    if k == "struct":
        return tv is dict and _fits_struct(v, t, base if type(base) is dict else _NO_BASE)
    if k == "map":
        if tv is not dict:
            return False
        elem = t.elem
        if elem is None or elem.kind == "any" or (elem is STRING and _only_strings(map(type, v.values()))):
            return True
        bd = base if type(base) is dict else _NO_BASE
        for key, sub in v.items():  # noqa: SIM110 (a loop, not all(): no generator on the write path)
            if not _fits_value(sub, elem, bd.get(key)):
                return False
        return True
    if k == "slice":
        if tv is not list:
            return False
        elem = t.elem
        if elem is None or elem.kind == "any" or (elem is STRING and _only_strings(map(type, v))):
            return True
        for sub in v:  # noqa: SIM110 (as above)
            if not _fits_value(sub, elem, None):
                return False
        return True
    if k == "string":
        return tv is str and (t.name != "[]byte" or base64_error(v) is None)
    if k == "int":
        return tv is int and _fits(v, t.name)
    if k == "float":
        return tv is int or tv is float
    if k == "bool":
        return tv is bool
    if k == "time":
        return tv is str and _time_error(v, t.micro) is None
    if k == "quantity":
        return quantity_error(v) is None
    if k == "intorstring":
        return tv is str or (tv is int and _fits(v, "int32"))
    return True  # (any, union: nothing the decoder checks)


def _fits_struct(v: dict[str, Any], t: GoType, bd: dict[str, Any]) -> bool:
    """:func:`_fits_value` of a JSON object into a struct (the decoder's field plan, inline)."""
    plan = t._dec
    if plan is None:
        plan = _decode_plan(t)
    for key, sub in v.items():
        p = plan.get(key)
        if p is None:
            continue
        ts = type(sub)
        if ts is p[0] or sub is None:
            continue
        if ts is dict:
            if ts is p[1] and _only_strings(map(type, sub.values())):
                continue  # a map[string]string
            b = bd.get(key)
            if sub is b:
                continue
            st = p[3]
            if st.kind == "struct":
                if sub and not _fits_struct(sub, st, b if type(b) is dict else _NO_BASE):
                    return False  # ({} fits every struct)
            elif not _fits_value(sub, st, b):
                return False
        elif ts is list:
            if ts is p[1] and _only_strings(map(type, sub)):
                continue
            es = p[4]
            if es is not None:  # a slice of structs: the decoder walks its elements without a base
                if bd.get(key) is sub:
                    continue
                for x in sub:
                    if x is not None and not (type(x) is dict and _fits_struct(x, es, _NO_BASE)):
                        return False
                continue
            if not _fits_value(sub, p[3], bd.get(key)):
                return False
        elif ts is int and p[2] is not None:
            if not p[2][0] <= sub <= p[2][1]:
                return False
        elif ts is str and p[5] is not None:
            if _time_error(sub, p[5]) is not None:
                return False
        elif not _fits_value(sub, p[3], bd.get(key)):
            return False
    return True


class _Decoder:
    """One ``json.Unmarshal``: the first saved error and the key order."""

    __slots__ = ("saved", "sorted_keys")

    def __init__(self, sorted_keys: bool) -> None:
        self.saved: str | None = None
        self.sorted_keys = sorted_keys

    def save(self, message: str) -> None:
        if self.saved is None:
            self.saved = message

    def value(self, v: Any, t: GoType, struct: str, path: tuple[str, ...], base: Any = None) -> None:
        if v is None or v is base:
            return  # null leaves any Go value as it is; the base's own value decodes
        k = t.kind
        tv = type(v)
        if k == "struct":
            if tv is not dict:
                self.save(_type_error(v, t, struct, path))
                return
            items = sorted(v.items()) if self.sorted_keys else v.items()
            plan = t._dec
            if plan is None:
                plan = _decode_plan(t)
            bd = base if type(base) is dict else _NO_BASE
            for key, sub in items:
                p = plan.get(key)
                if p is None:
                    continue  # (unknown fields are skipped: strict decoding reports them elsewhere)
                ts = type(sub)
                if ts is p[0]:
                    continue  # a scalar of the one JSON type that always fits
                if ts is p[1]:  # a []string or map[string]string: fits when every element is a string
                    if _only_strings(map(type, sub.values() if ts is dict else sub)):
                        continue
                elif ts is int and p[2] is not None and p[2][0] <= sub <= p[2][1]:
                    continue  # an integer in range
                elif ts is str and p[5] is not None and _time_error(sub, p[5]) is None:
                    continue  # a time that parses (the check remembered)
                elif ts is list and p[4] is not None:  # a slice of structs: each element visited here
                    if bd is not _NO_BASE and bd.get(key) is sub:
                        continue  # the base's own slice decodes
                    at = (*path, key)
                    for x in sub:
                        if x is not None:
                            self.value(x, p[4], t.name, at)
                    continue
                self.value(sub, p[3], t.name, (*path, key), bd.get(key))
        elif k == "map":
            if tv is not dict:
                self.save(_type_error(v, t, struct, path))
                return
            elem = t.elem
            if elem is STRING and _only_strings(map(type, v.values())):
                return
            if elem is not None and elem.kind != "any":
                bd = base if type(base) is dict else _NO_BASE
                for key in sorted(v) if self.sorted_keys else v:
                    self.value(v[key], elem, struct, path, bd.get(key))
        elif k == "slice":
            if tv is not list:
                self.save(_type_error(v, t, struct, path))
                return
            elem = t.elem
            if elem is STRING and _only_strings(map(type, v)):
                return
            if elem is not None and elem.kind != "any":
                for sub in v:
                    self.value(sub, elem, struct, path)
        elif k == "string":
            if tv is not str:
                self.save(_type_error(v, t, struct, path))
            elif t.name == "[]byte":
                bad = base64_error(v)
                if bad is not None:
                    self.save(bad)
        elif k == "int":
            if tv is not int:
                self.save(_type_error(v, t, struct, path, number=tv is float))
            elif not _fits(v, t.name):
                self.save(_type_error(v, t, struct, path, number=True))
        elif k == "float":
            if tv is not int and tv is not float:
                self.save(_type_error(v, t, struct, path))
        elif k == "bool":
            if tv is not bool:
                self.save(_type_error(v, t, struct, path))
        elif k == "time":
            # metav1.Time.UnmarshalJSON: json.Unmarshal into a string, then time.Parse
            if tv is not str:
                raise _Abort(_unmarshal_type_error(_value_text(v), "string", struct, path))
            bad = _time_error(v, t.micro)
            if bad is not None:
                raise _Abort(bad)
        elif k == "quantity":
            bad = quantity_error(v)
            if bad is not None:
                raise _Abort(bad)
        elif k == "intorstring" and tv is not str and (tv is not int or not _fits(v, "int32")):
            # IntOrString.UnmarshalJSON: a JSON string is its string, anything else json.Unmarshal into int32
            raise _Abort(_unmarshal_type_error(_value_text(v, number=tv in (int, float)), "int32", struct, path))


#: Are all these types ``str``? Called on ``map(type, values)``: a check made in C.
_only_strings = frozenset({str}).issuperset


def _decode_plan(t: GoType) -> dict[str, tuple[Any, ...]]:
    """A struct's fields for the decode check: name -> (the JSON type a value always fits as, or None;
    ``list``/``dict`` for a ``[]string``/``map[string]string``, else None; an integer's range, or None;
    the field's Go type; a slice's element type when it is a struct, else None; for a time, whether it is
    a MicroTime, else None). Values the first three let through need no visit, nor a time that parses; a
    slice of structs has its elements visited at once. Free-form fields (``any``) are left out: they
    decode whatever they hold."""
    plan: dict[str, tuple[Any, ...]] = {}
    for name, f in t.fields.items():
        ft = f.type
        k = ft.kind
        exact = _EXACT.get(ft)
        container: type | None = None
        if k in ("slice", "map") and ft.elem is STRING:
            container = list if k == "slice" else dict
        bounds: tuple[int, int] | None = None
        if k == "int":
            bounds = _INT32 if ft.name == "int32" else _INT64
        elif k == "intorstring":  # (IntOrString.UnmarshalJSON: a string, or an int32)
            exact, bounds = str, _INT32
        if k in ("any", "union"):
            continue  # (any JSON value decodes, or its own walk checks it: never visited, as unknown fields)
        elem = ft.elem if k == "slice" and ft.elem is not None and ft.elem.kind == "struct" else None
        micro = ft.micro if k == "time" else None
        plan[name] = (exact, container, bounds, ft, elem, micro)
    t._dec = plan
    return plan


def _fits(v: int, name: str) -> bool:
    lo, hi = _INT32 if name == "int32" else _INT64
    return lo <= v <= hi


def _value_text(v: Any, *, number: bool = False) -> str:
    """``UnmarshalTypeError.Value``: the JSON kind, or ``number <text>`` for a number Go could not parse."""
    if number and type(v) is not bool and isinstance(v, (int, float)):
        return f"number {v!r}"
    return go_json_type(v)


def _type_error(v: Any, t: GoType, struct: str, path: tuple[str, ...], *, number: bool = False) -> str:
    return _unmarshal_type_error(_value_text(v, number=number), go_type_string(t), struct, path)


def _unmarshal_type_error(value: str, type_name: str, struct: str, path: tuple[str, ...]) -> str:
    """``UnmarshalTypeError.Error()`` with the decoder's context (Go 1.20+: the full field path)."""
    if struct or path:
        return f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(path)} of type {type_name}"
    return f"json: cannot unmarshal {value} into Go value of type {type_name}"


# --- the types with their own UnmarshalJSON ------------------------------------------------------


def quantity_error(v: Any) -> str | None:
    """``resource.Quantity.UnmarshalJSON``'s error for a JSON value (its text, unquoted), or None."""
    if type(v) is bool:
        return _QUANTITY_FORMAT
    if not isinstance(v, (str, int, float)):
        return _QUANTITY_FORMAT  # an object or array's text never matches the quantity pattern
    # (imported on first use: a server's start meets no quantity; issue 22)
    from fakeapi.machinery.quantity import parse_quantity

    try:
        parse_quantity(v.strip() if isinstance(v, str) else v)
    except (ValueError, ZeroDivisionError) as e:
        text = str(e)
        for go_message in (_QUANTITY_FORMAT, "unable to parse numeric part of quantity",
                           "unable to parse quantity's suffix"):
            if text.startswith(go_message):
                return go_message
        return _QUANTITY_FORMAT
    return None


_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
#: The layouts as Go's ``nextStdChunk`` splits them: (literal prefix, element) pairs.
_CHUNKS = (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"))
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def time_parse_error(text: str, *, micro: bool = False) -> str | None:
    """``time.Parse(RFC3339 or RFC3339Micro, text)``'s error message, or None when it parses.

    Ported from Go's ``time.parse`` for these two layouts: the element that failed and the text
    left at it (``cannot parse "x" as "2006"``), a field out of range, or extra text.
    """
    layout = _RFC3339_MICRO if micro else _RFC3339

    def cannot(value: str, elem: str) -> str:
        return f"parsing time {go_quote(text)} as {go_quote(layout)}: cannot parse {go_quote(value)} as {go_quote(elem)}"

    def out_of_range(what: str) -> str:
        return f"parsing time {go_quote(text)}: {what} out of range"

    value = text
    year = month = day = -1
    for prefix, elem in _CHUNKS:
        if not value.startswith(prefix):
            return cannot(value, prefix)
        value = value[len(prefix):]
        hold = value
        if elem == "2006":
            if len(value) < 4 or not _digits(value[:4]):
                return cannot(hold, elem)
            year, value = int(value[:4]), value[4:]
            continue
        n, value, ok = _getnum(value, fixed=elem != "15")
        if not ok:
            return cannot(hold, elem)
        limits = {"01": (1, 12, "month"), "15": (0, 23, "hour"), "04": (0, 59, "minute"), "05": (0, 59, "second")}
        if elem in limits:
            lo, hi, what = limits[elem]
            if not lo <= n <= hi:
                return out_of_range(what)
        if elem == "01":
            month = n
        elif elem == "02":
            day = n
        elif elem == "05" and not micro and len(value) >= 2 and value[0] in ".," and _digits(value[1]):
            end = 2
            while end < len(value) and _digits(value[end]):
                end += 1
            value = value[end:]  # a fraction the layout does not name is read all the same
    if micro:
        if len(value) < 7 or value[0] not in ".," or not _digits(value[1:7]):
            return cannot(value, ".000000")
        value = value[7:]
    hold = value
    if value.startswith("Z"):
        value = value[1:]
    elif len(value) < 6 or value[3] != ":" or value[0] not in "+-" or not (
            _digits(value[1:3]) and _digits(value[4:6])):
        return cannot(hold, "Z07:00")
    else:
        if int(value[1:3]) > 24:
            return out_of_range("time zone offset hour")
        if int(value[4:6]) > 60:
            return out_of_range("time zone offset minute")
        value = value[6:]
    if value:
        return f"parsing time {go_quote(text)}: extra text: {go_quote(value)}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > (29 if month == 2 and leap else _DAYS[month - 1]):
        return out_of_range("day")
    return None


@lru_cache(maxsize=1024)
def _time_error(text: str, micro: bool) -> str | None:
    """:func:`time_parse_error`, remembered (a cluster's timestamps repeat)."""
    return time_parse_error(text, micro=micro)


def _getnum(s: str, *, fixed: bool) -> tuple[int, str, bool]:
    """Go's ``getnum``: one or two leading digits (exactly two when ``fixed``)."""
    if not _digits(s[:1]):
        return 0, s, False
    if not _digits(s[1:2]):
        if fixed:
            return 0, s, False
        return int(s[0]), s[1:], True
    return int(s[:2]), s[2:], True


def _digits(s: str) -> bool:
    """Is ``s`` non-empty and all ASCII digits (Go's ``isDigit``)?"""
    return s.isascii() and s.isdigit()


def base64_error(text: str) -> str | None:
    """``base64.StdEncoding.Decode``'s error (``illegal base64 data at input byte N``), or None.

    Ported from Go's ``decodeQuantum``: ``\\r`` and ``\\n`` are skipped anywhere, padding is
    required, and N is a byte offset into the UTF-8 text.
    """
    if _B64_PLAIN.fullmatch(text):  # (the common case, checked at C speed: no line breaks, padded right)
        return None
    src = text.encode()
    n = len(src)
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return _corrupt(si - j)
            c = src[si]
            si += 1
            if c in _B64_ALPHABET:
                j += 1
                continue
            if c in (0x0A, 0x0D):
                continue
            if c != 0x3D:  # '='
                return _corrupt(si - 1)
            if j in (0, 1):
                return _corrupt(si - 1)
            if j == 2:
                while si < n and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    return _corrupt(n)
                if src[si] != 0x3D:
                    return _corrupt(si - 1)
                si += 1
            while si < n and src[si] in (0x0A, 0x0D):
                si += 1
            return _corrupt(si) if si < n else None


_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
#: Text the decoding loop of :func:`base64_error` accepts without a line break: whole quanta, the last one
#: perhaps padded (``xx==`` or ``xxx=``), nothing after the padding.
_B64_PLAIN = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _corrupt(at: int) -> str:
    return f"illegal base64 data at input byte {at}"
