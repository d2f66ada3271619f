"""Why an object is invalid: jsonschema's errors as the causes kube-apiserver reports (reference §6.2).

The slow path of :class:`fakeapi.schema.compiled.CompiledSchema` validation: imported (with the
``jsonschema`` package, slow to import) only once jsonschema-rs has found an object invalid.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

import jsonschema

from fakeapi.machinery.errors import (
    FIELD_VALUE_INVALID,
    FIELD_VALUE_NOT_SUPPORTED,
    FIELD_VALUE_REQUIRED,
    FIELD_VALUE_TOO_LONG,
    FIELD_VALUE_TOO_MANY,
    FIELD_VALUE_TYPE_INVALID,
    Cause,
    render_value,
)
from fakeapi.schema.formats import FMT_PREFIX, FORMAT_CHECKS, format_fn

Schema = dict[str, Any]


@cache
def _py_format_checker() -> jsonschema.FormatChecker:
    """The format checker of the detailed (jsonschema) validation, made on first use."""
    checker = jsonschema.FormatChecker(formats=())
    for name, fn in FORMAT_CHECKS.items():
        checker.checks(FMT_PREFIX + name)(format_fn(fn))
    return checker


def detailed_validator(js: Schema) -> jsonschema.protocols.Validator:
    """The jsonschema validator of a translated schema, with the Kubernetes formats."""
    return jsonschema.Draft202012Validator(js, format_checker=_py_format_checker())


def detailed_causes(validator: jsonschema.protocols.Validator, value: Any, base: str) -> list[Cause]:
    """Every cause of an invalid ``value`` (at path ``base``), deduplicated and sorted by field, reason, message."""
    out: list[Cause] = []
    seen: set[Cause] = set()
    for err in validator.iter_errors(value):
        for c in _error_causes(err, base):
            if c not in seen:
                seen.add(c)
                out.append(c)
    out.sort(key=lambda c: (c.field, c.reason, c.message))
    return out


def _path(parts: Iterable[Any], base: str = "") -> str:
    out = base
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out = f"{out}.{p}" if out else str(p)
    return out


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _num(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _quote_go(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _error_causes(err: jsonschema.ValidationError, base: str) -> list[Cause]:
    field = _path(err.absolute_path, base)
    where = field or "body"
    v = err.instance
    kw = err.validator
    vv: Any = err.validator_value
    if kw == "type":
        want = [vv] if isinstance(vv, str) else [t for t in vv if t != "null"]
        actual = _json_type(v)
        msg = f'Invalid value: "{actual}": {where} in body must be of type {",".join(want)}: "{actual}"'
        return [Cause(FIELD_VALUE_TYPE_INVALID, msg, field)]
    if kw == "required":
        if not isinstance(v, dict):
            return []
        return [Cause(FIELD_VALUE_REQUIRED, "Required value", _path([r], field)) for r in vv if r not in v]
    if kw == "enum":
        allowed = [x if isinstance(x, str) else json.dumps(x) for x in vv if x is not None]
        msg = f"Unsupported value: {render_value(v)}: supported values: " + ", ".join(_quote_go(x) for x in allowed)
        return [Cause(FIELD_VALUE_NOT_SUPPORTED, msg, field)]
    if kw == "maxLength":
        unit = "byte" if vv == 1 else "bytes"
        return [Cause(FIELD_VALUE_TOO_LONG, f"Too long: may not be more than {vv} {unit}", field)]
    if kw in ("maxItems", "maxProperties"):
        unit = "item" if vv == 1 else "items"
        return [Cause(FIELD_VALUE_TOO_MANY, f"Too many: {len(v)}: must have at most {vv} {unit}", field)]
    if kw == "format":
        fmt = str(vv).removeprefix(FMT_PREFIX)
        msg = f"Invalid value: {render_value(v)}: {where} in body must be of type {fmt}: {_quote_go(str(v))}"
        return [Cause(FIELD_VALUE_TYPE_INVALID, msg, field)]
    value: Any = v
    if kw == "minLength":
        detail = f"should be at least {vv} chars long"
    elif kw == "pattern":
        detail = f"should match '{vv}'"
    elif kw == "minimum":
        detail = f"should be greater than or equal to {_num(vv)}"
    elif kw == "exclusiveMinimum":
        detail = f"should be greater than {_num(vv)}"
    elif kw == "maximum":
        detail = f"should be less than or equal to {_num(vv)}"
    elif kw == "exclusiveMaximum":
        detail = f"should be less than {_num(vv)}"
    elif kw == "multipleOf":
        detail = f"should be a multiple of {_num(vv)}"
    elif kw == "minItems":
        detail, value = f"should have at least {vv} items", len(v)
    elif kw == "minProperties":
        detail, value = f"should have at least {vv} properties", len(v)
    elif kw == "uniqueItems":
        detail, value = "shouldn't contain duplicates", ""
    elif kw == "anyOf":
        detail, value = "must validate at least one schema (anyOf)", ""
    elif kw == "oneOf":
        detail, value = "must validate one and only one schema (oneOf)", ""
    elif kw == "not":
        detail, value = "shouldn't validate the schema (not)", ""
    else:
        detail = err.message
    return [Cause(FIELD_VALUE_INVALID, f"Invalid value: {render_value(value)}: {where} in body {detail}", field)]
