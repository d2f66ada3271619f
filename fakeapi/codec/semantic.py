"""Semantic equality: Go's ``apiequality.Semantic.DeepEqual`` on the typed values of two objects.

With a :class:`~fakeapi.codec.gomodel.GoType` the JSON values are compared as the Go
values they decode to (reference §7.3):

- nil and empty slices are equal; nil and empty maps are equal;
- an absent or ``null`` field equals its zero value when the field is a Go value
  (``""``, ``0``, ``false``, a value struct ``{}``), but a nil pointer differs
  from a pointer to a zero value (``securityContext: {}`` ≠ absent);
- fields unknown to the type are ignored (a Go decoder drops them);
- quantities compare by value (``1000m == "1" == 1``), times by instant,
  IntOrString by kind and value (``1 != "1"``).

Without a type (unstructured content, ``map[string]interface{}`` in Go) the
comparison is strict, as Go's is there: ``[]`` differs from an absent key and a
``null`` value differs from an absent key (map lengths differ); JSON numbers
compare by value (``1 == 1.0``) and a bool never equals a number. The server
uses this for the generation rule of custom resources.

:func:`loose_equal` is the fixture matcher's rule for values it has no Go type
for (docs/FIXTURES.md "Matching rules"): ``null``, ``[]``, ``{}`` and an
absent key are all equal, as they are to a Go controller reading typed fields.
"""

from __future__ import annotations

from typing import Any

from fakeapi.codec.gomodel import GoField, GoType, parse_time
from fakeapi.machinery.quantity import parse_quantity


def semantic_equal(a: Any, b: Any, t: GoType | None = None) -> bool:
    """``apiequality.Semantic.DeepEqual`` of ``a`` and ``b`` decoded into Go type ``t``.

    ``t=None`` compares unstructured JSON strictly (see the module docstring).
    """
    if t is None:
        return _strict_ueq(a, b)
    return _veq(a, b, t)


def loose_equal(a: Any, b: Any) -> bool:
    """Unstructured equality where ``null``, ``[]``, ``{}`` and an absent key are all equal.

    What a Go controller sees through typed fields, used by the fixture matcher where
    it has no Go type for a value.
    """
    return _ueq(a, b)


def _strict_ueq(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        return all(k in b and _strict_ueq(v, b[k]) for k, v in a.items())
    if ta is list:
        return tb is list and len(a) == len(b) and all(_strict_ueq(x, y) for x, y in zip(a, b))
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    return ta is tb and bool(a == b)


def _ueq(a: Any, b: Any) -> bool:
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if a is None:
        return (tb is list or tb is dict) and _empty_ueq(b)
    if b is None:
        return (ta is list or ta is dict) and _empty_ueq(a)
    if ta is dict:
        if tb is not dict:
            return False
        for k, v in a.items():
            w = b.get(k)
            if not _ueq(v, w):
                return False
        return all(k in a or _ueq(None, w) for k, w in b.items())
    if ta is list:
        if tb is not list or len(a) != len(b):
            return False
        return all(_ueq(x, y) for x, y in zip(a, b))
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    return ta is tb and bool(a == b)


def _empty_ueq(v: Any) -> bool:
    """True when ``v`` (a list or dict) equals null: empty, or a dict of null-equal values."""
    if type(v) is list:
        return not v
    return all(w is None or ((type(w) is list or type(w) is dict) and _empty_ueq(w)) for w in v.values())


def _feq(x: Any, y: Any, f: GoField) -> bool:
    """Compare two values of a struct field (None = absent or null)."""
    if x is None and y is None:
        return True
    if (x is None or y is None) and f.pointer and f.type.kind not in ("slice", "map", "any"):
        return False
    return _veq(x, y, f.type)


def _veq(x: Any, y: Any, t: GoType) -> bool:
    """Compare two values of Go type ``t`` as values (None decodes to the zero value)."""
    if x is y and (type(x) is dict or type(x) is list):
        return True  # one JSON document (a shared snapshot): equal to itself
    k = t.kind
    if k == "struct":
        if x is None:
            x = {}
        if y is None:
            y = {}
        if type(x) is not dict or type(y) is not dict:
            return _ueq(x, y)
        fields = t.fields
        # the fields set on either side (a field absent from both is equal): the keys, not every field
        for name in x.keys() | y.keys() if len(x) + len(y) < len(fields) else fields:
            f = fields.get(name)
            if f is None:
                continue  # not a field of the type: not compared
            vx = x.get(name)
            vy = y.get(name)
            if (vx is not None or vy is not None) and not _feq(vx, vy, f):
                return False
        return True
    if k == "slice":
        if x is None:
            x = []
        if y is None:
            y = []
        if type(x) is not list or type(y) is not list:
            return _ueq(x, y)
        if len(x) != len(y):
            return False
        elem = t.elem
        if elem is None:
            return _ueq(x, y)
        if t.elem_pointer:  # []*T: a nil element is not the zero value
            return all((a is None) == (b is None) and (a is None or _veq(a, b, elem)) for a, b in zip(x, y))
        return all(_veq(a, b, elem) for a, b in zip(x, y))
    if k == "map":
        if x is None:
            x = {}
        if y is None:
            y = {}
        if type(x) is not dict or type(y) is not dict:
            return _ueq(x, y)
        if x.keys() != y.keys():
            return False
        elem = t.elem
        if elem is None:
            return _ueq(x, y)
        if t.elem_pointer:  # map[string]*T: a nil value is not the zero value
            return all((v is None) == (y[key] is None) and (v is None or _veq(v, y[key], elem))
                       for key, v in x.items())
        return all(_veq(v, y[key], elem) for key, v in x.items())
    if k == "string":
        return (x if x is not None else "") == (y if y is not None else "") and _same_kind(x, y, str)
    if k in ("int", "float"):
        xv = 0 if x is None else x
        yv = 0 if y is None else y
        if type(xv) is bool or type(yv) is bool:
            return xv is yv
        return bool(xv == yv)
    if k == "bool":
        return bool(x) is bool(y) if (x is None or type(x) is bool) and (y is None or type(y) is bool) else x == y
    if k == "time":
        return _time_eq(x, y)
    if k == "quantity":
        return _quantity_eq(x, y)
    if k == "intorstring":
        xv = 0 if x is None else x
        yv = 0 if y is None else y
        if type(xv) is float and xv.is_integer():
            xv = int(xv)
        if type(yv) is float and yv.is_integer():
            yv = int(yv)
        return type(xv) is type(yv) and bool(xv == yv)
    return _ueq(x, y)


def _same_kind(x: Any, y: Any, want: type) -> bool:
    return (x is None or type(x) is want) and (y is None or type(y) is want)


def _time_eq(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return (x is None and y is None) or _is_zero_time(x if y is None else y)
    if x == y:
        return True
    try:
        return parse_time(x) == parse_time(y)
    except (TypeError, ValueError):
        return False


def _is_zero_time(v: Any) -> bool:
    try:
        return parse_time(v) == parse_time("0001-01-01T00:00:00Z")
    except (TypeError, ValueError):
        return False


def _quantity_eq(x: Any, y: Any) -> bool:
    if x == y and type(x) is type(y):
        return True
    try:
        return parse_quantity(0 if x is None else x) == parse_quantity(0 if y is None else y)
    except ValueError:
        return False
