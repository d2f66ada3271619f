"""What ``runtime.DefaultUnstructuredConverter`` reports for a strategic merge patch's result.

A strategic merge patch of a built-in kind is applied to a map, which the converter then turns
into the kind's Go struct: :func:`from_unstructured_error` gives the converter's error, and
:func:`go_sprint` prints the patch as the 422 shows it (``%+v``). Values with their own
``UnmarshalJSON`` (times, quantities, bytes) are checked by :mod:`fakeapi.codec.gounmarshal`.
A module of its own: only strategic merge patches need it, so a server imports it on the first
one (issue 22).
"""

from __future__ import annotations

from typing import Any

from fakeapi.codec.gomodel import INT, GoType
from fakeapi.codec.gounmarshal import (
    _EXACT,
    _fits,
    _time_error,
    _unmarshal_type_error,
    base64_error,
    quantity_error,
)
from fakeapi.machinery.jsonutil import go_json_type
from fakeapi.machinery.metavalidation import go_float

# --- runtime.DefaultUnstructuredConverter (a strategic merge patch's result) ----------------------

#: reflect's Kind of each unstructured value type (``int64`` and ``float64`` as util/json decodes numbers).
_REFLECT_KIND = {str: "string", int: "int64", float: "float64", bool: "bool", dict: "map", list: "slice"}
_SCALAR_KIND_NAMES = {"string": "string", "float": "float64", "bool": "bool"}
#: The scalar Go types the converter takes a value of exactly this Python type into without a check.
_EXACT_CONVERTED: dict[GoType, type] = {**_EXACT, INT: int}


def from_unstructured_error(doc: Any, t: GoType) -> str | None:
    """The error ``runtime.DefaultUnstructuredConverter.FromUnstructured`` returns for ``doc``, or None.

    It stops at the first error, whose message names reflect kinds (``unrecognized type:
    int32``, ``cannot convert int64 to string``, ``cannot restore struct from: string``).
    Go visits a struct's fields in their declaration order, which the schemas do not give:
    here they are visited in the document's order (only a document with several errors
    tells the two apart); a map's in key order (Go's is random).
    """
    if doc is None or t.kind in ("any", "union"):  # (a JSONSchemaProps union: not checked here)
        return None
    k = t.kind
    tv = type(doc)
    src = _REFLECT_KIND.get(tv, "interface")
    if k in ("string", "int", "float", "bool"):
        if k == "string" and t.name == "[]byte":
            if tv is str:
                bad = base64_error(doc) if doc else None
                return f"error decoding from json: {bad}" if bad else None
            return None if tv is list else f"cannot restore slice from {src}"
        dst = (t.name or "int64") if k == "int" else _SCALAR_KIND_NAMES[k]
        if (k == "string" and tv is str) or (k == "bool" and tv is bool):
            return None
        if tv is int and k in ("int", "float"):
            return None  # (converted without a range check)
        if tv is float and k == "float":
            return None
        if tv is float and k == "int":
            return None if doc.is_integer() else f"cannot convert float64 to {dst}"
        if tv is int and k == "string":
            return "cannot convert int64 to string"  # (an integer converts to a string in Go: a rune)
        return f"unrecognized type: {dst}"
    if k == "struct":
        return _struct_from_unstructured_error(doc, t) if tv is dict else f"cannot restore struct from: {src}"
    if k == "map":
        if tv is not dict:
            return f"cannot restore map from {src}"
        if t.elem is None:
            return None
        for key in sorted(doc):
            bad = from_unstructured_error(doc[key], t.elem)
            if bad is not None:
                return bad
        return None
    if k == "slice":
        if tv is not list:
            return f"cannot restore slice from {src}"
        if t.elem is None:
            return None
        for sub in doc:
            bad = from_unstructured_error(sub, t.elem)
            if bad is not None:
                return bad
        return None
    # a type with its own UnmarshalJSON, handed json.Marshal of the value
    if k == "time":
        if tv is not str:
            return _unmarshal_type_error(go_json_type(doc), "string", "", ())
        return _time_error(doc, t.micro)
    if k == "quantity":
        return quantity_error(doc)
    # intorstring: a string, or json.Unmarshal of the value's JSON into an int32
    if tv is str or (tv is int and _fits(doc, "int32")) or (tv is float and doc.is_integer() and _fits(int(doc), "int32")):
        return None
    number = tv is int or tv is float
    text = f"number {go_float(doc) if tv is float else doc}" if number else go_json_type(doc)
    return _unmarshal_type_error(text, "int32", "", ())


def _struct_from_unstructured_error(doc: dict[str, Any], t: GoType) -> str | None:
    """:func:`from_unstructured_error` of a map into a struct (the common shapes handled inline)."""
    fields = t.fields
    for name, sub in doc.items():
        f = fields.get(name)
        if f is None or sub is None:
            continue
        ft = f.type
        ts = type(sub)
        if _EXACT_CONVERTED.get(ft) is ts:
            continue
        fk = ft.kind
        if fk == "struct" and ts is dict:
            bad = _struct_from_unstructured_error(sub, ft)
        elif fk == "time" and ts is str:
            bad = _time_error(sub, ft.micro)
        elif fk == "slice" and ts is list and ft.elem is not None and ft.elem.kind == "struct":
            bad = None
            for x in sub:
                bad = (_struct_from_unstructured_error(x, ft.elem) if type(x) is dict
                       else from_unstructured_error(x, ft.elem))
                if bad is not None:
                    break
        else:
            bad = from_unstructured_error(sub, ft)
        if bad is not None:
            return bad
    return None


def go_sprint(v: Any) -> str:
    """``fmt.Sprintf("%+v", v)`` of an unstructured value: ``map[a:1 b:[x y]]``, keys sorted."""
    if v is None:
        return "<nil>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_sprint(x) for x in v) + "]"
    if isinstance(v, float):
        return go_float(v)
    return str(v)
