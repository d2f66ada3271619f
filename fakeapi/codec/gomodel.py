"""The Go type model: what a Go client holds after decoding JSON into a typed struct.

A Go controller never sees JSON: it sees structs. Decoding drops unknown
fields and turns ``null``/absent into zero values; encoding applies
``omitempty`` (drops ``false``/``0``/``""``/nil pointers/empty slices and maps,
never struct values), re-emits non-omitempty zeros, writes ``metav1.Time`` at
second precision (``null`` when zero) and quantities in canonical form.
:func:`go_roundtrip` reproduces that, driven by a :class:`GoType` per kind:
built from the upstream Go structs for built-in kinds (:func:`builtin_go_type`,
:class:`GoTypeBuilder` over :mod:`fakeapi.codec.gostructs`), and from a CRD schema
plus overrides for custom kinds whose Go structs fakeapi does not have
(:func:`go_type_from_structural`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from fakeapi.codec import gostructs
from fakeapi.machinery import openapi
from fakeapi.machinery.jsonutil import fast_copy

KINDS = frozenset(
    {"struct", "slice", "map", "string", "int", "float", "bool", "time", "quantity", "intorstring", "any", "union"}
)
_VALUE_KINDS = frozenset({"struct", "time", "quantity", "intorstring"})  # Go structs: never omitempty-dropped


class GoDecodeError(ValueError):
    """A JSON value a Go struct cannot hold (``json: cannot unmarshal …``)."""


class GoType:
    """A Go type: ``kind`` is one of :data:`KINDS`; structs have ``fields``, slices/maps ``elem``.

    ``name`` is the Go type's name where it is known: a built-in struct's (``PodSpec``, with its
    package in ``pkg``: ``v1``) or a scalar's width or form (``int32``; ``[]byte`` for a string
    holding base64). It names the type in decode errors (:func:`go_type_string`); ``micro``
    marks ``metav1.MicroTime`` (microsecond precision) for kind ``time``.
    """

    __slots__ = ("_absent", "_dec", "_inert", "_ip_plan", "_kept", "_plan", "_scalars", "_zero", "elem", "elem_pointer",
                 "fields", "kind", "micro", "name", "pkg")

    def __init__(
        self,
        kind: str,
        fields: dict[str, GoField] | None = None,
        elem: GoType | None = None,
        *,
        name: str = "",
        micro: bool = False,
        pkg: str = "",
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown Go kind {kind!r}")
        self.kind = kind
        self.fields: dict[str, GoField] = fields if fields is not None else {}
        self.elem = elem
        self.name = name
        self.micro = micro
        self.pkg = pkg
        #: A slice's or map's elements are Go pointers (``map[string]*T``): null stays null.
        self.elem_pointer = False
        self._plan: dict[str, Callable[[Any], Any]] | None = None
        #: The string, int and bool fields that are not pointers (set with ``_plan``): name -> (their
        #: JSON type, omitempty). A value of that exact type is its own encoding (omitted when it is
        #: the zero value and the field is omitempty), handled inline by ``_conv_struct``.
        self._scalars: dict[str, tuple[type, bool]] = {}
        self._ip_plan: dict[str, tuple[Any, ...]] | None = None
        #: The fields whose value, when true and of exactly this JSON type (str, int or bool), is its own
        #: encoding (set with ``_plan`` and ``_ip_plan``): taken as it is by ``_conv_struct`` and
        #: ``_conv_struct_inplace`` at the cost of one lookup.
        self._kept: dict[str, type] = {}
        self._absent: list[tuple[str, Callable[[], Any]]] | None = None
        self._zero: Any = None
        #: The decode check's table of a struct's fields (built by ``fakeapi.codec.gounmarshal`` on first use).
        self._dec: dict[str, tuple[Any, ...]] | None = None
        #: Whether ``fakeapi.codec.godecode``'s restoring walk can change nothing in a value of this type
        #: (worked out there on first use; None until then).
        self._inert: bool | None = None

    def __repr__(self) -> str:
        if self.kind == "struct":
            return f"GoType(struct {self.name or '?'} {len(self.fields)} fields)"
        if self.kind in ("slice", "map"):
            return f"GoType({self.kind} of {self.elem!r})"
        return f"GoType({self.kind})"

    def field(self, name: str) -> GoField | None:
        """The field with JSON name ``name`` (structs), or None."""
        return self.fields.get(name)


@dataclass(frozen=True)
class GoField:
    """One struct field: JSON name, ``omitempty``, pointer or value, its type.

    ``omitzero`` (Go 1.24) drops a zero struct value, as ``metadata.creationTimestamp`` is tagged.
    """

    name: str
    omitempty: bool
    pointer: bool
    type: GoType
    omitzero: bool = False


# Shared scalar types.
STRING = GoType("string")
BYTES = GoType("string", name="[]byte")  # base64 text in JSON
INT = GoType("int")
INT32 = GoType("int", name="int32")
FLOAT = GoType("float")
BOOL = GoType("bool")
TIME = GoType("time")
MICRO_TIME = GoType("time", micro=True)
QUANTITY = GoType("quantity")
INT_OR_STRING = GoType("intorstring")
ANY = GoType("any")
#: ``metav1.FieldsV1``: raw JSON bytes in Go. Read-only here: shared, never copied, by every conversion.
RAW_FIELDS = GoType("any", name="FieldsV1")
#: ``ObjectMeta.managedFields``: written only by the server's field manager, so already in the form Go
#: encodes it. Read-only, shared rather than converted or copied (a Go client keeps it as it came).
RAW_MANAGED = GoType("any", name="[]v1.ManagedFieldsEntry")


def struct(name: str, fields: list[GoField]) -> GoType:
    """Build a struct type from fields (a helper for hand-written models and tests)."""
    return GoType("struct", {f.name: f for f in fields}, name=name)


def slice_of(elem: GoType) -> GoType:
    """``[]elem``."""
    return GoType("slice", elem=elem)


def map_of(elem: GoType) -> GoType:
    """``map[string]elem``."""
    return GoType("map", elem=elem)


_TYPE_STRINGS = {"float": "float64", "bool": "bool", "any": "interface {}", "quantity": "resource.Quantity",
                 "intorstring": "intstr.IntOrString"}


def go_type_string(t: GoType) -> str:
    """The type as Go's ``reflect.Type.String`` writes it in decode errors.

    ``v1.PodSpec``, ``[]v1.Container``, ``map[string]string``, ``int32``, ``[]uint8``. Named
    string types (``v1.RestartPolicy``) are modelled by their underlying type: they read as
    ``string`` (Go names the named type).
    """
    k = t.kind
    if k == "struct":
        return f"{t.pkg}.{t.name}" if t.pkg else t.name
    if k == "slice":
        return "[]" + go_type_string(t.elem) if t.elem is not None else "[]interface {}"
    if k == "map":
        return "map[string]" + go_type_string(t.elem) if t.elem is not None else "map[string]interface {}"
    if k == "string":
        return "[]uint8" if t.name == "[]byte" else "string"
    if k == "int":
        return t.name or "int64"
    if k == "time":
        return "v1.MicroTime" if t.micro else "v1.Time"
    return _TYPE_STRINGS[k]


# --- built-in kinds: from the upstream Go structs -----------------------------------------------

_META = "k8s.io/apimachinery/pkg/apis/meta/v1."
_APIEXT = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1."

#: ``apiextensions/v1.JSON``: raw JSON bytes (``default``, ``enum``, ``example``), marshalled as they came.
RAW_JSON = GoType("any", name="JSON")
#: ``runtime.RawExtension``: raw JSON bytes of an embedded object.
RAW_EXTENSION = GoType("any", name="RawExtension")

#: The Go types that marshal themselves (their ``MarshalJSON``), and the model of each.
CUSTOM_JSON: dict[str, GoType] = {
    _META + "Time": TIME,
    _META + "MicroTime": MICRO_TIME,
    _META + "FieldsV1": RAW_FIELDS,
    "k8s.io/apimachinery/pkg/api/resource.Quantity": QUANTITY,
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": INT_OR_STRING,
    "k8s.io/apimachinery/pkg/runtime.RawExtension": RAW_EXTENSION,
    _APIEXT + "JSON": RAW_JSON,
}
#: The JSONSchemaProps unions (``marshal.go``): a schema or an array / a bool / a string list.
UNION_TYPES = frozenset({"JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"})
for _u in UNION_TYPES:
    CUSTOM_JSON[_APIEXT + _u] = GoType("union", name=_u)  # (elem set when first built: JSONSchemaProps)

#: ``ObjectMeta.managedFields`` is modelled as :data:`RAW_MANAGED` (written by the server's field
#: manager in Go's encoding, shared rather than re-encoded): the one field not built from its Go type.
RAW_FIELD_OVERRIDES: dict[tuple[str, str], GoType] = {(_META + "ObjectMeta", "managedFields"): RAW_MANAGED}

_INT_TYPES: dict[str, GoType] = {"int64": INT, "int32": INT32}


class GoTypeBuilder:
    """Builds :class:`GoType` models from the Go struct data (:class:`fakeapi.codec.gostructs.GoStructs`).

    Every fact comes from the data: a field is a pointer when its Go type is, ``omitempty`` and
    ``omitzero`` when its tag says so; struct values, slices, maps, named scalars and the types
    of :data:`CUSTOM_JSON` follow their Go types. Built types are cached (recursive types are
    built once, JSONSchemaProps included).
    """

    def __init__(self, structs: gostructs.GoStructs) -> None:
        self.structs = structs
        self._cache: dict[str, GoType] = {}

    def named(self, qualified: str) -> GoType:
        """The model of a named Go type (``k8s.io/api/core/v1.PodSpec``)."""
        hit = self._cache.get(qualified)
        if hit is not None:
            return hit
        custom = CUSTOM_JSON.get(qualified)
        if custom is not None:
            if custom.kind == "union" and custom.elem is None:
                custom.elem = self.named(_APIEXT + "JSONSchemaProps")
            self._cache[qualified] = custom
            return custom
        rec = self.structs.record(qualified)
        if self.structs.custom_json(qualified):
            raise gostructs.GoStructsError(f"{qualified} marshals itself and has no model in CUSTOM_JSON")
        kind = rec.get("kind")
        if kind in ("named", "alias"):
            t = self.expr(rec["underlying"])
            self._cache[qualified] = t
            return t
        if kind != "struct":
            raise gostructs.GoStructsError(f"{qualified} ({kind}) cannot be modelled")
        path, _, short = qualified.rpartition(".")
        t = GoType("struct", name=short, pkg=path.rpartition("/")[2])
        self._cache[qualified] = t  # before the fields: recursive types
        for jf in self.structs.json_fields(qualified):
            override = RAW_FIELD_OVERRIDES.get((qualified, jf.name))
            pointer = jf.type.startswith("*")
            ft = override if override is not None else self.expr(jf.type[1:] if pointer else jf.type)
            t.fields[jf.name] = GoField(jf.name, jf.omitempty, pointer, ft, jf.omitzero)
        return t

    def expr(self, texpr: str) -> GoType:
        """The model of a Go type expression (``[]string``, ``map[string][]uint8``, ``*int32``...)."""
        if texpr.startswith("*"):
            raise gostructs.GoStructsError(f"a pointer to a pointer ({texpr}) is not modelled")
        if texpr == "[]uint8":
            return BYTES
        if texpr.startswith("["):
            return self._container(slice_of, texpr[texpr.index("]") + 1:])
        if texpr.startswith("map["):
            depth = 0
            for j in range(3, len(texpr)):
                if texpr[j] == "[":
                    depth += 1
                elif texpr[j] == "]":
                    depth -= 1
                    if depth == 0:
                        return self._container(map_of, texpr[j + 1:])
            raise gostructs.GoStructsError(f"malformed map type {texpr}")
        if texpr == "string":
            return STRING
        if texpr == "bool":
            return BOOL
        if texpr in gostructs.INT_TYPES:
            t = _INT_TYPES.get(texpr)
            if t is None:
                t = _INT_TYPES[texpr] = GoType("int", name=texpr)
            return t
        if texpr in gostructs.FLOAT_TYPES:
            return FLOAT
        if texpr in ("interface{}", "any"):
            return ANY
        if "." not in texpr:
            raise gostructs.GoStructsError(f"Go type {texpr} cannot be modelled")
        return self.named(texpr)

    def _container(self, make: Callable[[GoType], GoType], elem: str) -> GoType:
        pointer = elem.startswith("*")
        t = make(self.expr(elem[1:] if pointer else elem))
        t.elem_pointer = pointer
        return t


@lru_cache(maxsize=1)
def _k8s_builder() -> GoTypeBuilder:
    return GoTypeBuilder(gostructs.k8s())


def go_type(qualified: str) -> GoType:
    """The model of a k8s.io Go type by its qualified name (``k8s.io/api/core/v1.PodSpec``)."""
    return _k8s_builder().named(qualified)


def builtin_go_type(definition_or_kind: str, api_version: str | None = None) -> GoType:
    """The Go type of a built-in definition (``io.k8s.api.core.v1.PodTemplateSpec``) or kind (``Pod``).

    Built from the upstream Go structs (``fakeapi/codec/gostructs_k8s.json``, see
    :mod:`fakeapi.codec.gostructs`); the OpenAPI definition name only names the Go type. A kind
    without ``api_version`` prefers ``v1`` of the core group.
    """
    defs = openapi.definitions()
    name = definition_or_kind
    if name not in defs:
        found = openapi.definition_name(name, api_version or "v1")
        if found is None and api_version is None:
            found = _find_kind(name)
        if found is None:
            raise KeyError(f"no built-in definition for {definition_or_kind!r}")
        name = found
    go = gostructs.go_name(name)
    if go is None:
        raise KeyError(f"no Go type for the definition {name!r}")
    try:
        return go_type(go)
    except gostructs.GoStructsError as e:
        raise KeyError(f"no Go type for the definition {name!r}: {e}") from e


@lru_cache(maxsize=128)
def _find_kind(kind: str) -> str | None:
    for name, node in openapi.definitions().items():
        for g in node.get("x-kubernetes-group-version-kind") or ():
            if g.get("kind") == kind and not re.search(r"(alpha|beta)", str(g.get("version"))):
                return name
    return None


# --- custom kinds from a structural schema -----------------------------------------------------

Override = str | GoType | GoField | tuple[GoType, str]


def go_type_from_structural(schema: dict[str, Any], *, overrides: dict[str, Override] | None = None) -> GoType:
    """The Go type of a custom kind whose Go structs are hand-written, from its CRD schema.

    Every field is omitempty; objects are pointers except the top-level
    metadata/spec/status (value structs; metadata is ``metav1.ObjectMeta``);
    ``x-kubernetes-preserve-unknown-fields`` nodes are ``any``; int-or-string
    and date-time fields are pointers to IntOrString / Quantity (when the
    quantity pattern is set) / ``metav1.Time``. ``overrides`` maps dotted paths
    (``spec.minRunners``, ``spec.items[].name``) to ``"ptr"``, ``"struct"``
    (a value, never omitted when a struct), ``"no-omit"``, ``"omit"``, several
    joined by commas, a :class:`GoType` (the field's type, e.g. an embedded
    ``builtin_go_type("io.k8s.api.core.v1.PodTemplateSpec")``), a tuple
    ``(GoType, "struct")``, or a full :class:`GoField`.
    """
    ov = dict(overrides or {})
    root = _structural_type(schema, "", ov)
    if root.kind != "struct":
        root = GoType("struct", name="root")
    fields = dict(root.fields)
    for p in ("apiVersion", "kind"):
        if p not in fields:
            fields[p] = GoField(p, True, False, STRING)
    fields["metadata"] = GoField("metadata", True, False, builtin_go_type(openapi.OBJECT_META))
    for p in ("spec", "status"):
        f = fields.get(p)
        if f is not None and p not in ov and f.type.kind == "struct":
            fields[p] = GoField(p, True, False, f.type)
    for p, f in fields.items():
        if p in ov:
            fields[p] = _apply_override(f, ov[p])
    root.fields = fields
    root.name = root.name or "root"
    return root


def model_from_schema(schema: dict[str, Any], *, overrides: dict[str, Override] | None = None) -> GoType:
    """Alias of :func:`go_type_from_structural` (the name the design notes used)."""
    return go_type_from_structural(schema, overrides=overrides)


def _apply_override(f: GoField, o: Override) -> GoField:
    if isinstance(o, GoField):
        return o
    if isinstance(o, GoType):
        pointer = f.pointer or (o.kind == "struct" and f.type.kind != "struct")
        return GoField(f.name, f.omitempty, pointer, o)
    if isinstance(o, tuple):
        return _apply_override(_apply_override(f, o[0]), o[1])
    omitempty, pointer = f.omitempty, f.pointer
    for flag in (x.strip() for x in o.split(",")):
        if flag == "ptr":
            pointer = True
        elif flag in ("struct", "value"):
            pointer = False
        elif flag == "no-omit":
            omitempty = False
        elif flag == "omit":
            omitempty = True
        elif flag:
            raise ValueError(f"unknown Go type override {flag!r}")
    return GoField(f.name, omitempty, pointer, f.type, f.omitzero)


def _structural_type(node: dict[str, Any], path: str, ov: dict[str, Override]) -> GoType:
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-embedded-resource"):
        return ANY
    if node.get("x-kubernetes-int-or-string"):
        return QUANTITY if node.get("pattern") == openapi.QUANTITY_PATTERN else INT_OR_STRING
    t = node.get("type")
    if t == "string":
        return TIME if node.get("format") == "date-time" else STRING
    if t == "integer":
        return INT
    if t == "number":
        return FLOAT
    if t == "boolean":
        return BOOL
    if t == "array":
        it = node.get("items")
        elem_path = path + "[]"
        elem = _override_type(ov.get(elem_path)) or (_structural_type(it, elem_path, ov) if isinstance(it, dict) else ANY)
        return slice_of(elem)
    if t == "object" or "properties" in node:
        props = node.get("properties")
        ap = node.get("additionalProperties")
        if not props:
            if isinstance(ap, dict):
                elem_path = path + "{}"
                return map_of(_override_type(ov.get(elem_path)) or _structural_type(ap, elem_path, ov))
            return ANY
        st = GoType("struct", name=path or "root")
        for p, sub in props.items():
            sub_path = f"{path}.{p}" if path else p
            ft = _structural_type(sub, sub_path, ov)
            pointer = ft.kind in _VALUE_KINDS
            f = GoField(p, True, pointer, ft)
            if path and sub_path in ov:
                f = _apply_override(f, ov[sub_path])
            st.fields[p] = f
        return st
    return ANY


def _override_type(o: Override | None) -> GoType | None:
    if isinstance(o, GoType):
        return o
    if isinstance(o, tuple):
        return o[0]
    if isinstance(o, GoField):
        return o.type
    return None


# --- times ----------------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d\d):(\d\d))$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO_SECONDS = int((datetime(1, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds())


@lru_cache(maxsize=4096)
def parse_time(text: str) -> tuple[int, int]:
    """An RFC 3339 time as (UTC epoch seconds, nanoseconds); ValueError when malformed."""
    m = _RFC3339.match(text)
    if m is None:
        raise ValueError(f"parsing time {text!r} as RFC3339")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    nanos = int(frac.ljust(9, "0")) if frac else 0
    dt = datetime(y, mo, d, h, mi, s, tzinfo=UTC)
    secs = int((dt - _EPOCH).total_seconds())
    if m.group(9):
        off = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        secs -= off if m.group(9) == "+" else -off
    return secs, nanos


def _format_secs(secs: int) -> str:
    return (_EPOCH + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=4096)
def go_time(text: str, micro: bool = False) -> str | None:
    """What ``metav1.Time`` (or ``MicroTime``) marshals after unmarshalling ``text``: UTC, second
    (micro) precision; None for the zero time."""
    secs, nanos = parse_time(text)
    if secs == _ZERO_SECONDS and nanos == 0:
        return None
    if micro:
        base = (_EPOCH + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{base}.{nanos // 1000:06d}Z"
    return _format_secs(secs)


# --- the round trip -----------------------------------------------------------------------------

_OMIT = object()
#: What a field encoder of :func:`field_plan` returns for a value ``omitempty`` leaves out.
OMIT = _OMIT
_JSON_TYPE = {str: "string", int: "number", float: "number", bool: "bool", list: "array", dict: "object"}


def _bad(v: Any, want: str) -> GoDecodeError:
    return GoDecodeError(f"json: cannot unmarshal {_JSON_TYPE.get(type(v), 'value')} into Go value of type {want}")


def _conv_string(v: Any) -> Any:
    if type(v) is not str:
        raise _bad(v, "string")
    return v


def _conv_bytes(v: Any) -> Any:
    """A ``[]byte`` value: base64 text as Go re-encodes it once decoded (``\\r``/``\\n`` dropped, canonical)."""
    if type(v) is not str:
        raise _bad(v, "[]uint8")
    if "\n" in v or "\r" in v:
        import base64
        import binascii

        try:
            return base64.b64encode(base64.b64decode(v.replace("\r", "").replace("\n", ""), validate=True)).decode()
        except (binascii.Error, ValueError) as e:
            raise GoDecodeError(f"illegal base64 data: {e}") from e
    return v


def _bytes_encoder(omit: bool) -> Callable[[Any], Any]:
    """The encoder of a ``[]byte`` field or element (null: omitted with omitempty, else null)."""
    if omit:
        return lambda v: _OMIT if v is None or v == "" else _conv_bytes(v)
    return lambda v: None if v is None else _conv_bytes(v)


def _conv_int(v: Any) -> Any:
    tv = type(v)
    if tv is int:
        return v
    if tv is float and v.is_integer():
        return int(v)
    raise _bad(v, "int64")


def _conv_float(v: Any) -> Any:
    tv = type(v)
    if tv is int:
        return v
    if tv is float:
        return int(v) if v.is_integer() and abs(v) < 2**63 else v
    raise _bad(v, "float64")


def _conv_bool(v: Any) -> Any:
    if type(v) is not bool:
        raise _bad(v, "bool")
    return v


def _conv_quantity(v: Any) -> Any:
    if type(v) is bool or type(v) not in (str, int, float):
        raise _bad(v, "resource.Quantity")
    # (imported on first use: a server's start meets no quantity; issue 22)
    from fakeapi.machinery.quantity import canonical_quantity

    try:
        return canonical_quantity(v)
    except ValueError as e:
        raise GoDecodeError(str(e)) from e


def _conv_intorstring(v: Any) -> Any:
    tv = type(v)
    if tv is int or tv is str:
        return v
    if tv is float and v.is_integer():
        return int(v)
    raise _bad(v, "intstr.IntOrString")


_ZERO_SCALAR: dict[str, Any] = {"string": "", "int": 0, "float": 0, "bool": False}
#: Are all these types ``str`` (true for none)? Called on ``map(type, values)``: a check made in C.
_only_strings = frozenset({str}).issuperset
#: The JSON type each scalar kind takes as it is (the converter returns such a value unchanged).
_EXACT_TYPE: dict[str, type] = {"string": str, "int": int, "bool": bool}
_SCALAR_CONV: dict[str, Callable[[Any], Any]] = {
    "string": _conv_string,
    "int": _conv_int,
    "float": _conv_float,
    "bool": _conv_bool,
}


def _compile(t: GoType) -> dict[str, Callable[[Any], Any]]:
    """The field encoders of a struct type (each returns the marshalled value or ``_OMIT``)."""
    plan: dict[str, Callable[[Any], Any]] = {}
    t._plan = plan  # set first: recursive types
    _compile_absent(t)
    _compile_kept(t)
    for name, f in t.fields.items():
        plan[name] = _field_encoder(f)
    t._scalars = {n: (_EXACT_TYPE[f.type.kind], f.omitempty) for n, f in t.fields.items()
                  if f.type.kind in _EXACT_TYPE and not f.pointer and f.type.name != "[]byte"}
    return plan


def field_plan(t: GoType) -> tuple[dict[str, Callable[[Any], Any]], list[tuple[str, Callable[[], Any]]]]:
    """A struct type's field encoders (each returns the marshalled value or :data:`OMIT`) and what
    its absent fields marshal as, in field order: the parts :func:`go_roundtrip` is made of."""
    plan = t._plan
    if plan is None:
        plan = _compile(t)
    return plan, _compile_absent(t)


def _compile_kept(t: GoType) -> None:
    """A struct type's table of fields a true value of the exact JSON type encodes as itself (``_kept``):
    its strings, ints and bools, pointers to them too (every ``[]byte`` aside: base64 is re-encoded)."""
    t._kept = {name: _EXACT_TYPE[f.type.kind] for name, f in t.fields.items()
               if f.type.kind in _EXACT_TYPE and f.type.name != "[]byte"}


def _compile_absent(t: GoType) -> list[tuple[str, Callable[[], Any]]]:
    """What a struct type's absent fields marshal as, in field order (omitted ones left out)."""
    if t._absent is None:
        absent: list[tuple[str, Callable[[], Any]]] = []
        for name, f in t.fields.items():
            zf = _absent_value(f)
            if zf is not None:
                absent.append((name, zf))
        t._absent = absent
    return t._absent


# The in-place plan of a struct type: field name -> (code, ...). The commonest fields are
# converted inline by ``_conv_struct_inplace`` (no call per field); the rest call an encoder.
_IP_STRING_OMITEMPTY = 0  # (code,): a ``string`` with omitempty
_IP_STRUCT_VALUE = 1  # (code, type, nothing absent): a struct value (not omitzero): null is the zero struct
_IP_STRUCT_POINTER = 2  # (code, type, nothing absent): a pointer to a struct with omitempty: null is omitted
_IP_CONTAINER_OMITEMPTY = 3  # (code, encoder, list|dict, "slice"|"map", of plain strings): a slice or map with omitempty
_IP_CALL = 4  # (code, encoder): anything else, through its in-place field encoder
_IP_KEEP = 6  # (code, omitempty): a free-form value (``any``): kept as it is (null omitted with omitempty)
_IP_TIME = 7  # (code, micro, omitzero): a ``metav1.Time`` value (not a pointer): kept when Go writes it so
_IP_EXACT = 5  # (code, JSON type, omitempty, encoder): a string, int or bool, or a pointer to one (never omitempty)


def _compile_inplace(t: GoType) -> dict[str, tuple[Any, ...]]:
    """The in-place plan of a struct type (see ``_IP_*``)."""
    plan: dict[str, tuple[Any, ...]] = {}
    t._ip_plan = plan  # set first: recursive types
    _compile_absent(t)
    _compile_kept(t)
    for name, f in t.fields.items():
        ft = f.type
        k = ft.kind
        entry: tuple[Any, ...]
        if f.pointer:
            if k == "struct" and f.omitempty:
                entry = (_IP_STRUCT_POINTER, ft)
            elif k in _EXACT_TYPE and ft.name != "[]byte":  # (a non-nil pointer's value is kept, zero or not)
                entry = (_IP_EXACT, _EXACT_TYPE[k], False, _field_encoder(f, True))
            else:
                entry = (_IP_CALL, _field_encoder(f, True))
        elif k == "string" and f.omitempty and ft.name != "[]byte":
            entry = (_IP_STRING_OMITEMPTY,)
        elif k in _EXACT_TYPE and ft.name != "[]byte":
            entry = (_IP_EXACT, _EXACT_TYPE[k], f.omitempty, _field_encoder(f, True))
        elif k == "struct" and not f.omitzero:
            entry = (_IP_STRUCT_VALUE, ft)
        elif k == "any" and ft.name != "[]byte":  # (free-form: an owned value is kept as it is)
            entry = (_IP_KEEP, f.omitempty)
        elif k == "time":
            entry = (_IP_TIME, ft.micro, f.omitzero)
        elif k in ("slice", "map") and f.omitempty:
            strings = ft.elem is STRING and not ft.elem_pointer  # (a []string or map[string]string)
            entry = (_IP_CONTAINER_OMITEMPTY, _container_encoder(ft, True), list if k == "slice" else dict, k, strings)
        else:
            entry = (_IP_CALL, _field_encoder(f, True))
        code = entry[0]
        if code in (_IP_STRUCT_VALUE, _IP_STRUCT_POINTER):
            entry = (code, ft, not _compile_absent(ft))  # (an empty object of a struct with no absent values: kept)
        plan[name] = entry
    return plan


def _zero_struct(t: GoType) -> Any:
    if t._zero is None:
        t._zero = _conv_struct({}, t)
    return fast_copy(t._zero)


def _absent_value(f: GoField) -> Callable[[], Any] | None:
    """What an absent field marshals as, or None when it is omitted."""
    k = f.type.kind
    if f.pointer:
        return None if f.omitempty else (lambda: None)
    if f.omitzero:
        return None
    if k == "struct":
        st = f.type
        return lambda: _zero_struct(st)
    if k == "time":
        return lambda: None
    if k == "quantity":
        return lambda: "0"
    if k == "intorstring":
        return lambda: 0
    if k == "union":
        uz = _UNION_ZERO[f.type.name]
        return lambda: uz
    if f.omitempty:
        return None
    z = _ZERO_SCALAR.get(k)
    return lambda: z


def _keep(v: Any) -> Any:
    """The in-place encoder of a free-form value: an owned value is kept as it is."""
    return v


def _elem_encoder(t: GoType, inplace: bool = False) -> Callable[[Any], Any]:
    """Encoder for a slice element or map value (a Go value; null decodes to the zero value)."""
    k = t.kind
    if t.name == "[]byte":
        return _bytes_encoder(False)
    if k == "struct":
        conv_struct = _conv_struct_inplace if inplace else _conv_struct

        def enc_struct(v: Any) -> Any:
            if v is None:
                return _zero_struct(t)
            if type(v) is not dict:
                raise _bad(v, t.name or "struct")
            return conv_struct(v, t)

        return enc_struct
    conv = _SCALAR_CONV.get(k)
    if conv is not None:
        zero = _ZERO_SCALAR[k]
        exact = _EXACT_TYPE.get(k)
        if exact is not None:  # a value of the exact type is its own encoding: no call
            return lambda v: v if type(v) is exact else (zero if v is None else conv(v))
        return lambda v: zero if v is None else conv(v)
    if k == "time":
        micro = t.micro
        return lambda v: None if v is None else _conv_time(v, micro)
    if k == "quantity":
        return lambda v: "0" if v is None else _conv_quantity(v)
    if k == "intorstring":
        return lambda v: 0 if v is None else _conv_intorstring(v)
    if k in ("slice", "map"):
        enc = _container_encoder(t, inplace)
        return lambda v: None if v is None else enc(v)
    if k == "union":
        return _union_encoder(t, inplace)
    return _keep if inplace else fast_copy


#: What each JSONSchemaProps union marshals as when it is the zero value (marshal.go).
_UNION_ZERO: dict[str, Any] = {"JSONSchemaPropsOrArray": None, "JSONSchemaPropsOrBool": False,
                               "JSONSchemaPropsOrStringArray": None}


def _union_encoder(t: GoType, inplace: bool = False) -> Callable[[Any], Any]:
    """Encoder of a JSONSchemaProps union (apiextensions/v1 marshal.go), JSON null included.

    ``JSONSchemaPropsOrArray``: an object is a schema, an array a list of schemas (an empty
    one marshals as null), anything else an error. ``JSONSchemaPropsOrBool``: an object is a
    schema, true/false a bool, anything else (null too) an error. ``JSONSchemaPropsOrStringArray``:
    an object is a schema, an array a string list (empty: null), anything else null.
    """
    props = t.elem
    assert props is not None, "a union's schema type is set when it is built"
    conv_struct = _conv_struct_inplace if inplace else _conv_struct
    which = t.name

    def schema(v: dict[str, Any]) -> Any:
        return conv_struct(v, props)

    if which == "JSONSchemaPropsOrArray":

        def enc_or_array(v: Any) -> Any:
            tv = type(v)
            if tv is dict:
                return schema(v)
            if tv is list:
                out = []
                for x in v:
                    if x is None:
                        out.append(_zero_struct(props))
                    elif type(x) is dict:
                        out.append(schema(x))
                    else:
                        raise _bad(x, "v1.JSONSchemaProps")
                return out or None
            raise GoDecodeError("input must be a JSON object or array")

        return enc_or_array
    if which == "JSONSchemaPropsOrBool":

        def enc_or_bool(v: Any) -> Any:
            if type(v) is dict:
                return schema(v)
            if type(v) is bool:
                return v
            raise GoDecodeError("boolean or JSON schema expected")

        return enc_or_bool
    if which == "JSONSchemaPropsOrStringArray":

        def enc_or_strings(v: Any) -> Any:
            tv = type(v)
            if tv is dict:
                return schema(v)
            if tv is list:
                for x in v:
                    if x is not None and type(x) is not str:
                        raise _bad(x, "string")
                return [("" if x is None else x) for x in v] or None
            return None

        return enc_or_strings
    raise ValueError(f"unknown Go union {which!r}")


def _conv_time(v: Any, micro: bool) -> Any:
    if type(v) is not str:
        raise _bad(v, "metav1.Time")
    try:
        return go_time(v, micro)
    except ValueError as e:
        raise GoDecodeError(str(e)) from e


def _container_encoder(t: GoType, inplace: bool = False) -> Callable[[Any], Any]:
    assert t.elem is not None or t.kind not in ("slice", "map")
    elem = t.elem or ANY
    cell: list[Callable[[Any], Any]] = []

    def get() -> Callable[[Any], Any]:
        if not cell:
            e = _elem_encoder(elem, inplace)
            if t.elem_pointer:
                inner = e
                e = lambda v: None if v is None else inner(v)  # noqa: E731 (a nil pointer element)
            cell.append(e)
        return cell[0]

    simple = elem.kind == "string" and elem.name != "[]byte"
    if inplace:
        return _inplace_container_encoder(t.kind, simple, get,
                                          elem if elem.kind == "struct" and not t.elem_pointer else None)
    if t.kind == "slice":

        def enc_slice(v: Any) -> Any:
            if type(v) is not list:
                raise _bad(v, "slice")
            if simple and _only_strings(map(type, v)):
                return list(v)
            e = get()
            return [e(x) for x in v]

        return enc_slice

    def enc_map(v: Any) -> Any:
        if type(v) is not dict:
            raise _bad(v, "map")
        if simple and _only_strings(map(type, v.values())):
            return dict(v)
        e = get()
        return {k: e(x) for k, x in v.items()}

    return enc_map


def _inplace_container_encoder(kind: str, simple: bool, get: Callable[[], Callable[[Any], Any]],
                               struct_elem: GoType | None) -> Callable[[Any], Any]:
    """A slice or map encoder that converts an owned value in place (and returns it).

    ``struct_elem``: the element type when it is a struct (its elements are converted inline).
    """
    if kind == "slice" and struct_elem is not None:
        st = struct_elem

        def enc_struct_slice_inplace(v: Any) -> Any:
            if type(v) is not list:
                raise _bad(v, "slice")
            for i, x in enumerate(v):
                if type(x) is dict:
                    _conv_struct_inplace(x, st)
                elif x is None:
                    v[i] = _zero_struct(st)
                else:
                    raise _bad(x, st.name or "struct")
            return v

        return enc_struct_slice_inplace
    if kind == "slice":

        def enc_slice_inplace(v: Any) -> Any:
            if type(v) is not list:
                raise _bad(v, "slice")
            if simple and _only_strings(map(type, v)):
                return v
            e = get()
            for i, x in enumerate(v):
                r = e(x)
                if r is not x:
                    v[i] = r
            return v

        return enc_slice_inplace

    def enc_map_inplace(v: Any) -> Any:
        if type(v) is not dict:
            raise _bad(v, "map")
        if simple and _only_strings(map(type, v.values())):
            return v
        e = get()
        for k, x in v.items():
            r = e(x)
            if r is not x:
                v[k] = r  # an existing key: the dict keeps its size and order
        return v

    return enc_map_inplace


def _field_encoder(f: GoField, inplace: bool = False) -> Callable[[Any], Any]:
    """Encoder for a present field value: returns the marshalled value or ``_OMIT``.

    ``inplace``: the value is owned by the caller and converted in place where it can be.
    """
    t = f.type
    k = t.kind
    omit = f.omitempty
    if t.name == "[]byte":
        return _bytes_encoder(omit)
    conv_struct = _conv_struct_inplace if inplace else _conv_struct
    if f.pointer:
        nil: Any = _OMIT if omit else None
        if k == "struct":

            def enc_ptr_struct(v: Any) -> Any:
                if v is None:
                    return nil
                if type(v) is not dict:
                    raise _bad(v, t.name or "struct")
                return conv_struct(v, t)

            return enc_ptr_struct
        if k in ("slice", "map"):
            cenc = _container_encoder(t, inplace)
            return lambda v: nil if v is None else cenc(v)
        inner = _elem_encoder(t, inplace)
        exact = _EXACT_TYPE.get(k)
        if exact is not None:  # a pointer to a value of the exact type: its own encoding, no call
            return lambda v: v if type(v) is exact else (nil if v is None else inner(v))
        return lambda v: nil if v is None else inner(v)
    if k == "struct":

        def enc_value_struct(v: Any) -> Any:
            if v is None:
                return _OMIT if f.omitzero else _zero_struct(t)
            if type(v) is not dict:
                raise _bad(v, t.name or "struct")
            return conv_struct(v, t)

        return enc_value_struct
    if k in ("slice", "map"):
        cenc = _container_encoder(t, inplace)
        if omit:

            def enc_omit_container(v: Any) -> Any:
                if v is None or not v:
                    if v is not None and type(v) is not (list if k == "slice" else dict):
                        raise _bad(v, k)
                    return _OMIT
                return cenc(v)

            return enc_omit_container
        return lambda v: None if v is None else cenc(v)
    conv = _SCALAR_CONV.get(k)
    if conv is not None:
        zero = _ZERO_SCALAR[k]
        exact = _EXACT_TYPE.get(k)
        if omit:
            if exact is not None:

                def enc_omit_exact(v: Any) -> Any:
                    if type(v) is exact:  # its own encoding: no call
                        return v if v else _OMIT
                    if v is None:
                        return _OMIT
                    r = conv(v)
                    return r if r else _OMIT

                return enc_omit_exact

            def enc_omit_scalar(v: Any) -> Any:
                if v is None:
                    return _OMIT
                r = conv(v)
                return r if r else _OMIT

            return enc_omit_scalar
        if exact is not None:
            return lambda v: v if type(v) is exact else (zero if v is None else conv(v))
        return lambda v: zero if v is None else conv(v)
    if k == "time":
        micro = t.micro
        if f.omitzero:

            def enc_omitzero_time(v: Any) -> Any:
                r = None if v is None else _conv_time(v, micro)
                return _OMIT if r is None else r

            return enc_omitzero_time
        return lambda v: None if v is None else _conv_time(v, micro)
    if k == "quantity":
        return lambda v: "0" if v is None else _conv_quantity(v)
    if k == "intorstring":
        return lambda v: 0 if v is None else _conv_intorstring(v)
    if k == "union":
        return _union_encoder(t, inplace)
    # any
    copy = _keep if inplace or t is RAW_FIELDS or t is RAW_MANAGED else fast_copy
    if omit:
        return lambda v: _OMIT if v is None else copy(v)
    return copy


def _conv_struct(v: dict[str, Any], t: GoType) -> dict[str, Any]:
    plan = t._plan
    if plan is None:
        plan = _compile(t)
    kept = t._kept
    out: dict[str, Any] = {}
    for k, x in v.items():
        if type(x) is kept.get(k) and x:  # the commonest fields, inline (see GoType._kept)
            out[k] = x
            continue
        enc = plan.get(k)
        if enc is None:
            continue
        r = enc(x)
        if r is not _OMIT:
            out[k] = r
    for name, zf in t._absent or ():
        if name not in v:
            out[name] = zf()
    return out


def _conv_struct_inplace(v: dict[str, Any], t: GoType, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`_conv_struct` on an owned dict: same keys in the same order, no new dict.

    Unknown and omitted keys are deleted (the others keep their places), converted values
    replace the old ones where they are, and absent fields are appended, as ``_conv_struct``
    builds them. Fields that have a value when absent are never omitted when present, so
    checking them after the deletions is the same as checking the input. The checks and
    errors are those of the field encoders, in the same order. A map or list value that
    *is* ``base``'s value of the same key (an encoded object, never mutated) is kept as it is.
    """
    plan = t._ip_plan
    if plan is None:
        plan = _compile_inplace(t)
    kept = t._kept
    drop: list[str] | None = None
    for k, x in v.items():
        if type(x) is kept.get(k) and x:
            continue  # (the commonest fields: a true string, int or bool as Go encodes it)
        p = plan.get(k)
        r: Any
        if p is None:
            r = _OMIT  # not a field of the Go type: dropped
        else:
            code = p[0]
            if code == _IP_CONTAINER_OMITEMPTY:
                if x and p[4] and type(x) is p[2] and _only_strings(map(type, x.values() if p[2] is dict else x)):
                    continue  # strings: their own encoding (the check made in C)
                if x is None:
                    r = _OMIT
                elif base is not None and (type(x) is dict or type(x) is list) and base.get(k) is x:
                    continue  # encoded already (and not ours to convert in place)
                elif not x:
                    if type(x) is not p[2]:
                        raise _bad(x, p[3])
                    r = _OMIT
                else:
                    p[1](x)  # converts in place (or raises)
                    continue
            elif code in (_IP_STRUCT_VALUE, _IP_STRUCT_POINTER):
                if type(x) is dict:
                    if not x and p[2]:
                        continue  # {}: no field to convert, none absent to add
                    b = base.get(k) if base is not None else None
                    if b is x:
                        continue  # encoded already (and not ours to convert in place)
                    _conv_struct_inplace(x, p[1], b if type(b) is dict else None)
                    continue
                if type(x) is list and base is not None and base.get(k) is x:
                    continue  # (as every shared value: kept as it is)
                if x is not None:
                    raise _bad(x, p[1].name or "struct")
                r = _zero_struct(p[1]) if code == _IP_STRUCT_VALUE else _OMIT
            elif code == _IP_STRING_OMITEMPTY:
                if type(x) is str:
                    if x:
                        continue
                    r = _OMIT
                elif x is None:
                    r = _OMIT
                else:
                    raise _bad(x, "string")
            elif code == _IP_EXACT:
                if type(x) is p[1]:  # its own encoding: kept, or omitted when zero (omitempty)
                    if x or not p[2]:
                        continue
                    r = _OMIT
                else:
                    r = p[3](x)
                    if r is x:
                        continue
            elif code == _IP_TIME:
                if x is None:
                    if not p[2]:
                        continue  # (null: the zero time, written null)
                    r = _OMIT
                else:
                    if type(x) is not str:
                        raise _bad(x, "metav1.Time")
                    try:
                        r = go_time(x, p[1])  # (_conv_time, inline: remembered, so most often one C call)
                    except ValueError as e:
                        raise GoDecodeError(str(e)) from e
                    if r == x:
                        continue  # a time as Go writes it
                    if r is None and p[2]:
                        r = _OMIT  # (the zero time, omitzero)
            elif code == _IP_KEEP:
                if x is not None or not p[1]:
                    continue
                r = _OMIT
            elif base is not None and (type(x) is dict or type(x) is list) and base.get(k) is x:
                continue  # encoded already (and not ours to convert in place)
            else:
                r = p[1](x)
                if r is x:
                    continue
        if r is _OMIT:
            if drop is None:
                drop = [k]
            else:
                drop.append(k)
        else:
            v[k] = r  # an existing key: the dict keeps its size and order
    if drop is not None:
        for k in drop:
            del v[k]
    for name, zf in t._absent or ():
        if name not in v:
            v[name] = zf()
    return v


def go_roundtrip(obj: Any, t: GoType | None) -> Any:
    """What a Go client holds (and would send) after unmarshalling ``obj`` into type ``t``.

    Unknown fields dropped, omitempty applied, non-omitempty zeros emitted, value
    structs always present, times at second precision UTC, quantities canonical.
    Returns a new object (the input is not mutated); ``t=None`` is a plain deep
    copy. Raises :class:`GoDecodeError` (a ValueError) for values of the wrong JSON
    type, as ``json.Unmarshal`` fails.
    """
    if t is None:
        return fast_copy(obj)
    if t.kind == "struct":
        if obj is None:
            return None
        if type(obj) is not dict:
            raise _bad(obj, t.name or "struct")
        return _conv_struct(obj, t)
    return _elem_encoder(t)(obj)


def go_roundtrip_owned(obj: Any, t: GoType | None, base: dict[str, Any] | None = None) -> Any:
    """:func:`go_roundtrip` of an object the caller owns outright, converted in place.

    The result equals (keys in the same order) what :func:`go_roundtrip` returns, but it is
    ``obj`` itself, mutated, with its unchanged parts kept rather than copied: use it only
    on a value nothing else refers to (the server's decoded request bodies). ``obj`` is
    left half-converted when a :class:`GoDecodeError` is raised. ``base``: an encoded
    object ``obj`` shares top-level values with (the stored object a write replaces); those
    values are kept as they are, neither converted nor mutated.
    """
    if t is None:
        return obj
    if t.kind == "struct":
        if obj is None:
            return None
        if type(obj) is not dict:
            raise _bad(obj, t.name or "struct")
        return _conv_struct_inplace(obj, t, base)
    return _elem_encoder(t, True)(obj)
