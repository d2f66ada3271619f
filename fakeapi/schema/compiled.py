"""``CompiledSchema``: prune, default and validate objects of one kind, compiled once.

Two kinds of schema:

- ``structural=True``: a CRD's ``openAPIV3Schema`` (reference §6). :meth:`prepare`
  runs the request pipeline (prune, drop non-nullable nulls, default);
  :meth:`validate` checks the OpenAPI rules and the ``x-kubernetes-list-type``
  set/map uniqueness, with causes worded as kube-apiserver words them (§6.2).
- ``structural=False``: a built-in kind's kubernetes-validate schema.
  :meth:`prepare` prunes unknown fields (the Go decoder drops them) and reports
  them; :meth:`validate` checks types, enums and required fields.

Validation is two-speed: a jsonschema-rs validator answers ``is_valid`` on a
JSON Schema translation of the OpenAPI schema; only an invalid object goes
through the ``jsonschema`` package, whose errors are turned into
:class:`~fakeapi.machinery.errors.Cause` objects. ``metadata`` is never validated here
(the server validates ObjectMeta itself). CEL (``x-kubernetes-validations``)
is not evaluated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from fakeapi.machinery import openapi
from fakeapi.machinery.errors import Cause
from fakeapi.schema.formats import FMT_PREFIX, FORMAT_CHECKS, format_fn
from fakeapi.schema.structural import (
    apply_defaults,
    drop_nulls,
    go_body_fits,
    go_body_plan,
    has_defaults,
    inline_builtin_root,
    run_pipeline,
    run_pipeline_copy,
)

if TYPE_CHECKING:  # imported on first use: jsonschema (slow to import) only for invalid objects, via
    import jsonschema  # fakeapi.schema.schemaerrors; fakeapi.schema.listtypes only for CRD schemas

    from fakeapi.schema.listtypes import ListTypePlan

Schema = dict[str, Any]

_RS_FORMATS = {FMT_PREFIX + k: format_fn(v) for k, v in FORMAT_CHECKS.items()}


# --- translation of OpenAPI v3 (structural) to JSON Schema ---------------------------------------

_COPIED = (
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties",
    "minProperties", "multipleOf", "required",
)


def _translate_structural(node: Schema, *, skip: frozenset[str] = frozenset()) -> Schema:
    """One CRD schema node as JSON Schema 2020-12 (nullable, int-or-string, OpenAPI exclusive bounds)."""
    out: Schema = {}
    nullable = bool(node.get("nullable"))
    if node.get("x-kubernetes-int-or-string"):
        types: list[str] = ["integer", "string"]
    else:
        t = node.get("type")
        types = [t] if isinstance(t, str) else []
    if types:
        if nullable:
            types = [*types, "null"]
        out["type"] = types[0] if len(types) == 1 else types
    for k in _COPIED:
        if k in node:
            out[k] = node[k]
    if skip and "required" in out:
        out["required"] = [r for r in out["required"] if r not in skip]
    if "enum" in node:
        enum = list(node["enum"])
        if nullable and None not in enum:
            enum.append(None)
        out["enum"] = enum
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if bound in node:
            if node.get(exclusive) is True:
                out[exclusive] = node[bound]
            else:
                out[bound] = node[bound]
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in FORMAT_CHECKS:
        out["format"] = FMT_PREFIX + fmt
    props = node.get("properties")
    if props:
        out["properties"] = {k: _translate_structural(v) for k, v in props.items() if k not in skip}
    ap = node.get("additionalProperties")
    if isinstance(ap, dict):
        out["additionalProperties"] = _translate_structural(ap)
    it = node.get("items")
    if isinstance(it, dict):
        out["items"] = _translate_structural(it)
    for junctor in ("allOf", "anyOf", "oneOf"):
        subs = node.get(junctor)
        if subs and not (junctor == "anyOf" and node.get("x-kubernetes-int-or-string") and _is_int_or_string_anyof(subs)):
            out[junctor] = [_translate_structural(s) for s in subs]
    if isinstance(node.get("not"), dict):
        out["not"] = _translate_structural(node["not"])
    return out


def _is_int_or_string_anyof(subs: list[Schema]) -> bool:
    return sorted(str(s.get("type")) for s in subs) == ["integer", "string"] and all(len(s) == 1 for s in subs)


def _translate_builtin(root: Schema, *, skip: frozenset[str]) -> Schema:
    """A kubernetes-validate kind schema as one self-contained JSON Schema (reachable ``$defs`` only)."""
    defs: dict[str, Schema] = {}
    pending: list[str] = []

    def node(n: Schema) -> Schema:
        ref = n.get("$ref")
        if isinstance(ref, str):
            name = openapi.ref_name(ref)
            if name not in defs:
                defs[name] = {}
                pending.append(name)
            return {"$ref": f"#/$defs/{name}"}
        out: Schema = {}
        t = n.get("type")
        types = [t] if isinstance(t, str) else list(t or [])
        if "oneOf" in n:  # Quantity, IntOrString
            alts: list[str] = []
            for a in n["oneOf"]:
                at = a.get("type")
                alts.extend([at] if isinstance(at, str) else list(at or []))
            types = list(dict.fromkeys(alts))
        if types:
            out["type"] = types[0] if len(types) == 1 else types
        for k in ("required", "maxLength", "minLength", "pattern", "maxItems", "minItems", "minimum", "maximum"):
            if k in n:
                out[k] = n[k]
        if "enum" in n:
            enum = list(n["enum"])
            if "null" in types and None not in enum:
                enum.append(None)
            out["enum"] = enum
        fmt = n.get("format")
        if isinstance(fmt, str) and fmt in FORMAT_CHECKS:
            out["format"] = FMT_PREFIX + fmt
        props = n.get("properties")
        if props:
            out["properties"] = {k: node(v) for k, v in props.items()}
        ap = n.get("additionalProperties")
        if isinstance(ap, dict):
            out["additionalProperties"] = node(ap)
        it = n.get("items")
        if isinstance(it, dict):
            out["items"] = node(it)
        return out

    top = node(root)
    if skip:
        top["properties"] = {k: v for k, v in top.get("properties", {}).items() if k not in skip}
        if "required" in top:
            top["required"] = [r for r in top["required"] if r not in skip]
    while pending:
        name = pending.pop()
        defs[name] = node(openapi.definitions()[name])
    if defs:
        top["$defs"] = defs
    return top


# --- the compiled schema -------------------------------------------------------------------------------


class _Validator:
    """A JSON Schema compiled twice: jsonschema-rs for the fast yes/no, jsonschema for details.

    The values found valid are remembered by their JSON (the last :data:`_VALID_MEMO_SIZE`, each under
    :data:`_VALID_MEMO_BYTES`): the same status, the same spec come back write after write, and a value
    whose JSON is one of them is valid without asking again (validity is a function of the JSON value,
    and the server validates decoded bodies: JSON values alone). A schema that says nothing of
    ``metadata`` (a whole object's, ``metadata`` skipped) is asked about the object without it, so
    objects that differ only in their names share the answer.
    """

    def __init__(self, js: Schema, base: str) -> None:
        self.js = js
        self.base = base
        import jsonschema_rs  # (here, when a first validator is built: its extension imports email, socket,
        # decimal and datetime, about a fifth of a cold start's instructions; issue 22)

        self.rs: jsonschema_rs.Validator = jsonschema_rs.validator_for(js, formats=_RS_FORMATS, validate_formats=True)
        self._py: jsonschema.protocols.Validator | None = None
        self._valid: dict[bytes, None] = {}
        self._meta_blind = _meta_blind(js)

    def causes(self, value: Any) -> list[Cause]:
        """The causes of ``value``'s invalidity (none: valid)."""
        try:  # (the memo's key: the JSON of what the schema looks at)
            key = orjson.dumps({**value, "metadata": None} if self._meta_blind and type(value) is dict else value)
        except TypeError:  # (what orjson cannot write: asked every time)
            key = b""
        valid = self._valid
        if key in valid:
            return []
        if self.rs.is_valid(value):
            if 0 < len(key) < _VALID_MEMO_BYTES:
                if len(valid) >= _VALID_MEMO_SIZE:
                    valid.clear()
                valid[key] = None
            return []
        from fakeapi.schema import schemaerrors  # the slow path: only invalid objects need it

        if self._py is None:
            self._py = schemaerrors.detailed_validator(self.js)
        return schemaerrors.detailed_causes(self._py, value, self.base)


#: How many valid values a validator remembers (the memo starts again when full), and the largest JSON it keeps.
_VALID_MEMO_SIZE = 512
_VALID_MEMO_BYTES = 16384
#: Keywords of an object schema that constrain only the properties it names (and the type).
_PROPERTY_KEYWORDS = frozenset({"type", "properties", "required", "$defs", "description", "title"})


def _meta_blind(js: Schema) -> bool:
    """Does the (translated) schema leave ``metadata`` unconstrained: an object schema naming only its
    properties, ``metadata`` not among them? Its answer is then the same whatever the value's metadata."""
    props = js.get("properties")
    required = js.get("required") or []
    return (js.get("type") == "object" and set(js) <= _PROPERTY_KEYWORDS and isinstance(props, dict)
            and "metadata" not in props and isinstance(required, list) and "metadata" not in required)


class CompiledSchema:
    """The schema machinery of one kind, compiled once and used on every write.

    ``schema`` is a CRD's ``openAPIV3Schema`` (``structural=True``) or a
    built-in kind's root schema from :func:`fakeapi.machinery.openapi.builtin_schema`.
    """

    def __init__(self, schema: Schema, *, structural: bool) -> None:
        self.schema = schema
        self.structural = structural
        self._prune_schema = schema if structural else inline_builtin_root(schema)
        # computed on first use (a kind may be served and never written)
        self._defaults_known: bool | None = None
        self._list_types_known: tuple[ListTypePlan | None, ListTypePlan | None] | None = None
        self._validators: dict[tuple[str, bool], _Validator] = {}

    # -- pipeline --

    def prepare(self, obj: dict[str, Any]) -> list[str]:
        """Prune unknown fields (and, for CRDs, drop non-nullable nulls and apply defaults) in place.

        Returns the warnings for the pruned fields: ``unknown field "spec.unknown"``.
        """
        pruned = run_pipeline(obj, self._prune_schema)
        return [f'unknown field "{p}"' for p in pruned]

    def prepare_copy(self, obj: dict[str, Any], metadata: Any, *, normalize: bool = True,
                     base: dict[str, Any] | None = None, prune_metadata: bool = True) -> tuple[dict[str, Any], list[str]]:
        """:meth:`prepare` on a copy of ``obj`` (integral floats made ints unless not ``normalize``), made in the same walk.

        Returns (the copy, the warnings); ``obj`` is not changed. ``metadata``, the caller's
        own copy of ``obj["metadata"]``, is used (and pruned in place) in the copy. ``base``: a
        stored object whose parts ``obj`` shares; those are shared by the copy too
        (:func:`~fakeapi.schema.structural.run_pipeline_copy`). ``prune_metadata=False``: ``metadata`` is
        a copy of stored metadata, pruned already.
        """
        out, pruned = run_pipeline_copy(obj, self._prune_schema, metadata, normalize=normalize, base=base,
                                        prune_metadata=prune_metadata)
        return out, [f'unknown field "{p}"' for p in pruned]

    def prunes_nothing(self, obj: dict[str, Any], go_type: Any, base: dict[str, Any] | None = None) -> bool:
        """Would :meth:`prepare_copy` leave ``obj``, a body a Go client marshals from ``go_type``, as it is
        (its metadata aside)? Built-in kinds only (:func:`~fakeapi.schema.structural.go_body_plan`);
        ``base``: as for :meth:`prepare_copy`."""
        if self.structural or go_type is None:
            return False
        return go_body_fits(obj, go_body_plan(self._prune_schema, go_type), base)

    @property
    def _defaults(self) -> bool:
        """Does the (structural) schema default anything?"""
        if self._defaults_known is None:
            self._defaults_known = self.structural and has_defaults(self.schema)
        return self._defaults_known

    @property
    def _list_types(self) -> ListTypePlan | None:
        """The plan to the set/map lists of the whole object (structural schemas only)."""
        return self._lt_plans()[0]

    @property
    def _status_list_types(self) -> ListTypePlan | None:
        """The plan to the set/map lists of ``status`` (structural schemas only)."""
        return self._lt_plans()[1]

    def _lt_plans(self) -> tuple[ListTypePlan | None, ListTypePlan | None]:
        if self._list_types_known is None:
            if self.structural:  # built-in schemas declare no list types (nor does a ready server need the module)
                from fakeapi.schema.listtypes import compile_plan

                self._list_types_known = (compile_plan(self.schema), compile_plan(self._status_schema()))
            else:
                self._list_types_known = (None, None)
        return self._list_types_known

    def default(self, obj: dict[str, Any]) -> None:
        """Apply defaults only (what a read from storage does for CRDs); no-op for built-ins."""
        if self._defaults:
            drop_nulls(obj, self.schema)
            apply_defaults(obj, self.schema)

    # -- validation --

    def _validator(self, part: str, skip_metadata: bool) -> _Validator:
        key = (part, skip_metadata)
        v = self._validators.get(key)
        if v is None:
            skip = frozenset({"metadata"}) if skip_metadata else frozenset()
            if part == "":
                js = (
                    _translate_structural(self.schema, skip=skip)
                    if self.structural
                    else _translate_builtin(self.schema, skip=skip)
                )
            else:
                sub = self._status_schema()
                js = (
                    _translate_structural(sub)
                    if self.structural
                    else _translate_builtin(sub, skip=frozenset())
                )
            v = self._validators[key] = _Validator(js, part)
        return v

    def _status_schema(self) -> Schema:
        if self.structural:
            return dict((self.schema.get("properties") or {}).get("status") or {})
        sub = (openapi.resolve(self.schema).get("properties") or {}).get("status")
        return dict(sub) if isinstance(sub, dict) else {}

    def validate(self, obj: dict[str, Any], *, skip_metadata: bool = True,
                 old: dict[str, Any] | None = None) -> list[Cause]:
        """Validate an object against the schema; the causes kube-apiserver would report (empty: valid).

        ``metadata`` is skipped by default (ObjectMeta is validated by the server). ``old``: the
        stored object an update replaces; the list-type checks skip the parts ``obj`` shares with it.
        """
        causes = self._validator("", skip_metadata).causes(obj)
        plan = self._list_types
        if plan is not None:
            lt: list[Cause] = []
            plan.causes(obj, None, lt, old)
            if skip_metadata:
                lt = [c for c in lt if not c.field.startswith("metadata")]
            causes.extend(lt)
        return causes

    def validate_status(self, obj: dict[str, Any], *, old: dict[str, Any] | None = None) -> list[Cause]:
        """Validate only ``status`` against the status schema (for ``/status`` writes); ``old`` as for :meth:`validate`."""
        if "status" not in obj:
            return []
        status = obj["status"]
        if old is not None and old.get("status") is status:
            return []
        causes = self._validator("status", True).causes(status)
        plan = self._status_list_types
        if plan is not None:
            plan.causes(status, (None, "status"), causes, old.get("status") if old is not None else None)
        return causes
