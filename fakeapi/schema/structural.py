"""The CRD request pipeline on a structural schema (reference §6.1), in place on a JSON object.

Ports of ``apiextensions-apiserver/pkg/apiserver/schema``: ``pruning.PruneWithOptions``
(:func:`prune`), ``defaulting.PruneNonNullableNullsWithoutDefaults``
(:func:`drop_nulls`) and ``defaulting.Default`` (:func:`apply_defaults`).

Schemas are inline structural OpenAPI v3 dicts (a CRD's ``openAPIV3Schema``):
``properties``, ``additionalProperties``, ``items``, ``nullable``, ``default``,
``x-kubernetes-preserve-unknown-fields``, ``x-kubernetes-embedded-resource``.
The functions only walk the data present, never the whole schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakeapi.machinery import openapi
from fakeapi.machinery.jsonutil import copy_normalized, fast_copy

Schema = dict[str, Any]

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _object_meta_schema() -> Schema:
    """The structural schema ObjectMeta is pruned with (known fields only, recursively)."""
    global _OBJECT_META
    if _OBJECT_META is None:
        _OBJECT_META = inline_builtin(openapi.OBJECT_META)
    return _OBJECT_META


_OBJECT_META: Schema | None = None


# --- pruning --------------------------------------------------------------------------------


def prune(obj: dict[str, Any], schema: Schema | None) -> list[str]:
    """Delete the fields ``schema`` does not know, in place; return their paths.

    The root keeps ``apiVersion``, ``kind`` and ``metadata`` (metadata pruned to
    the ObjectMeta fields), as do ``x-kubernetes-embedded-resource`` nodes.
    ``x-kubernetes-preserve-unknown-fields`` keeps unknown keys while known
    properties are still pruned by their own schemas. Paths are written like
    the apiserver's warnings: ``spec.unknown``, ``spec.items[0].x``.
    """
    pruned: list[str] = []
    s = schema or {}
    if s.get(_PRESERVE):
        _skip_prune(obj, s, "", pruned, True)
    else:
        _prune_object(obj, s, "", pruned, True)
    return pruned


def _prune_meta(meta: Any, path: str, pruned: list[str], base: Any = None) -> None:
    """Prune ``metadata`` by ObjectMeta's schema; maps and lists that *are* ``base``'s (stored
    metadata, pruned when it was stored and never mutated) are not walked again, and metadata
    with nothing that could be pruned (:func:`metadata_could_prune`) is not walked at all."""
    if type(meta) is dict and metadata_could_prune(meta, base if type(base) is dict else None):
        _walk_meta(meta, path, pruned, base)


def _prune_meta_at(meta: Any, chain: Chain, pruned: list[str], base: Any = None) -> None:
    """:func:`_prune_meta` at the path of a (parent, key) chain, whose text is only made when needed."""
    if type(meta) is dict and metadata_could_prune(meta, base if type(base) is dict else None):
        _walk_meta(meta, chain_text(chain), pruned, base)


def _walk_meta(meta: dict[str, Any], path: str, pruned: list[str], base: Any) -> None:
    if type(base) is not dict:
        _prune(meta, _object_meta_schema(), path, pruned)
        return
    props = _object_meta_schema()["properties"]
    drop: list[str] | None = None
    for k, v in meta.items():
        sub = props.get(k)
        if sub is None:
            if drop is None:
                drop = []
            drop.append(k)
            pruned.append(f"{path}.{k}" if path else k)
            continue
        tv = type(v)
        if (tv is dict or tv is list) and v is not base.get(k):
            _prune(v, sub, f"{path}.{k}" if path else k, pruned)
    if drop:
        for k in drop:
            del meta[k]


def metadata_could_prune(meta: dict[str, Any], base: dict[str, Any] | None, keys: list[str] | None = None) -> bool:
    """Could pruning ``meta`` change anything? False settles it without a walk: every key is an
    ObjectMeta field, and every map or list (not ``base``'s, pruned when stored) has a shape its
    schema cannot prune (:func:`_meta_shapes`). ``keys``: the only keys of ``meta`` that may not hold
    ``base``'s own values (the others are stored fields, pruned when stored)."""
    shapes = _meta_shapes()
    for k, v in meta.items() if keys is None else ((k, meta[k]) for k in keys):
        shape = shapes.get(k, _UNKNOWN)
        if shape is _UNKNOWN:
            return True
        tv = type(v)
        if tv is not dict and tv is not list:
            continue
        if base is not None and v is base.get(k):
            continue
        if tv is dict:
            if shape is not _SCALAR_MAP or not _NOT_CONTAINERS.issuperset(map(type, v.values())):
                return True
        elif shape is _SCALAR_LIST:
            if not _NOT_CONTAINERS.issuperset(map(type, v)):
                return True
        elif type(shape) is frozenset:  # a list of structs without nested maps or lists
            for item in v:
                if type(item) is list:
                    return True
                if type(item) is dict:
                    for ik, iv in item.items():
                        if ik not in shape or type(iv) is dict or type(iv) is list:
                            return True
        else:
            return True
    return False


_UNKNOWN: Any = object()
_SCALAR_MAP: Any = object()
_SCALAR_LIST: Any = object()
_OTHER: Any = object()


def _meta_shapes() -> dict[str, Any]:
    """Each ObjectMeta field's shape, from the schema metadata is pruned with: a map of scalars, a
    list of scalars, a list of structs whose fields are scalars (their names), or anything else."""
    global _META_SHAPES
    if _META_SHAPES is None:
        def plain(node: Any) -> bool:
            return type(node) is dict and not ({"properties", "items", "additionalProperties", _PRESERVE} & node.keys())

        shapes: dict[str, Any] = {}
        for name, sub in _object_meta_schema()["properties"].items():
            ap, items = sub.get("additionalProperties"), sub.get("items")
            if plain(ap) and "properties" not in sub:
                shapes[name] = _SCALAR_MAP
            elif plain(items):
                shapes[name] = _SCALAR_LIST
            elif type(items) is dict and not items.get(_PRESERVE) and "additionalProperties" not in items and all(
                    plain(p) for p in (items.get("properties") or {}).values()):
                shapes[name] = frozenset(items.get("properties") or {})
            else:
                shapes[name] = _OTHER
        _META_SHAPES = shapes
    return _META_SHAPES


_META_SHAPES: dict[str, Any] | None = None
#: The JSON types that hold nothing to prune (checked over a whole map or list in C: ``issuperset(map(type, ...))``).
_NOT_CONTAINERS = frozenset({str, int, float, bool, type(None)})


def _prune_object(x: dict[str, Any], s: Schema, path: str, pruned: list[str], embedded: bool) -> None:
    """Prune a map ``x`` against object schema ``s`` (which is not preserve-unknown)."""
    props = s.get("properties")
    ap = s.get("additionalProperties")
    drop: list[str] | None = None
    for k, v in x.items():
        if embedded and k in _META_FIELDS:
            if k == "metadata":
                _prune_meta(v, f"{path}.metadata" if path else "metadata", pruned)
            continue
        sub = props.get(k) if props is not None else None
        if sub is None:
            if ap is None or ap is False:
                if drop is None:
                    drop = []
                drop.append(k)
                pruned.append(f"{path}.{k}" if path else k)
                continue
            sub = ap if type(ap) is dict else None
        tv = type(v)
        if tv is dict or tv is list:
            _prune(v, sub, f"{path}.{k}" if path else k, pruned)
    if drop:
        for k in drop:
            del x[k]


def _prune(x: Any, s: Schema | None, path: str, pruned: list[str]) -> None:
    tx = type(x)
    if s is not None and s.get(_PRESERVE):
        _skip_prune(x, s, path, pruned, bool(s.get(_EMBEDDED)))
        return
    if tx is dict:
        if s is None:
            for k in list(x):
                del x[k]
                pruned.append(f"{path}.{k}")
            return
        _prune_object(x, s, path, pruned, bool(s.get(_EMBEDDED)))
    elif tx is list:
        it = s.get("items") if s is not None else None
        for i, v in enumerate(x):
            tv = type(v)
            if tv is dict or tv is list:
                _prune(v, it, f"{path}[{i}]", pruned)


def _skip_prune(x: Any, s: Schema, path: str, pruned: list[str], embedded: bool) -> None:
    tx = type(x)
    if tx is dict:
        props = s.get("properties")
        ap = s.get("additionalProperties")
        for k, v in x.items():
            if embedded and k in _META_FIELDS:
                if k == "metadata":
                    _prune_meta(v, f"{path}.metadata" if path else "metadata", pruned)
                continue
            sub = props.get(k) if props is not None else None
            if sub is None:
                if type(ap) is not dict:
                    continue
                sub = ap
            tv = type(v)
            if tv is dict or tv is list:
                _prune(v, sub, f"{path}.{k}" if path else k, pruned)
    elif tx is list:
        it = s.get("items")
        if it is None:
            return
        for i, v in enumerate(x):
            tv = type(v)
            if tv is dict or tv is list:
                _skip_prune(v, it, f"{path}[{i}]", pruned, bool(it.get(_EMBEDDED)))


# --- nulls ----------------------------------------------------------------------------------


def drop_nulls(obj: Any, schema: Schema | None) -> None:
    """Drop ``null`` map entries whose schema is neither nullable nor defaulted, in place.

    Array elements are kept (they then fail validation), as the apiserver does.
    """
    if schema is None:
        return
    tx = type(obj)
    if tx is dict:
        props = schema.get("properties")
        ap = schema.get("additionalProperties")
        drop: list[str] | None = None
        for k, v in obj.items():
            sub = props.get(k) if props is not None else None
            if sub is None:
                if type(ap) is not dict:
                    continue
                sub = ap
            if v is None:
                if not sub.get("nullable") and "default" not in sub:
                    if drop is None:
                        drop = []
                    drop.append(k)
            elif type(v) is dict or type(v) is list:
                drop_nulls(v, sub)
        if drop:
            for k in drop:
                del obj[k]
    elif tx is list:
        it = schema.get("items")
        if it is not None:
            for v in obj:
                if type(v) is dict or type(v) is list:
                    drop_nulls(v, it)


# --- defaults -------------------------------------------------------------------------------


def apply_defaults(obj: Any, schema: Schema | None) -> None:
    """Apply schema defaults top-down, in place (``defaulting.Default``).

    A key is defaulted when absent or a non-nullable ``null``; the default is
    deep-copied; defaults only materialize inside objects that exist (or were
    themselves just defaulted).
    """
    if schema is None:
        return
    tx = type(obj)
    if tx is dict:
        props = schema.get("properties")
        if props is not None:
            for k, dsub in _defaulted_props(schema):
                if k not in obj or (obj[k] is None and not dsub.get("nullable")):
                    obj[k] = fast_copy(dsub["default"])
        ap = schema.get("additionalProperties")
        for k, v in obj.items():
            sub = props.get(k) if props is not None else None
            if sub is None:
                if type(ap) is not dict:
                    continue
                sub = ap
                if v is None and not sub.get("nullable") and "default" in sub:
                    v = obj[k] = fast_copy(sub["default"])
            if type(v) is dict or type(v) is list:
                apply_defaults(v, sub)
    elif tx is list:
        it = schema.get("items")
        if it is None:
            return
        has_default = "default" in it and not it.get("nullable")
        for i, v in enumerate(obj):
            if v is None and has_default:
                v = obj[i] = fast_copy(it["default"])
            if type(v) is dict or type(v) is list:
                apply_defaults(v, it)


_DEFAULTED: dict[int, tuple[Schema, list[tuple[str, Schema]]]] = {}


def _defaulted_props(schema: Schema) -> list[tuple[str, Schema]]:
    """The properties of an object schema that carry a default (cached per schema node)."""
    hit = _DEFAULTED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    props = schema.get("properties") or {}
    out = [(k, sub) for k, sub in props.items() if type(sub) is dict and "default" in sub]
    _DEFAULTED[id(schema)] = (schema, out)
    return out


def has_defaults(schema: Schema | None) -> bool:
    """True when any node of a structural schema has a ``default`` (lets callers skip defaulting)."""
    if not isinstance(schema, dict):
        return False
    if "default" in schema:
        return True
    for key in ("properties",):
        sub = schema.get(key)
        if isinstance(sub, dict) and any(has_defaults(v) for v in sub.values()):
            return True
    return has_defaults(schema.get("items")) or has_defaults(schema.get("additionalProperties"))


# --- built-in schemas in structural form ------------------------------------------------------


_INLINE: dict[str, Schema] = {}


def inline_builtin(name: str) -> Schema:
    """A built-in definition as a structural-like tree, for :func:`prune` / :func:`drop_nulls`.

    Unlike :func:`openapi.structural_from_definition` this does not copy: each
    definition becomes one shared node (recursive types stay finite), and only
    what pruning needs is kept (``properties``, ``additionalProperties``,
    ``items``, preserve-unknown for free-form nodes); every node is ``nullable``
    (a Go decoder takes null anywhere), so :func:`run_pipeline` only prunes.
    """
    hit = _INLINE.get(name)
    if hit is not None:
        return hit
    out: Schema = {}
    _INLINE[name] = out
    out.update(_inline_node(openapi.definitions()[name]))
    return out


def inline_builtin_root(root: Schema) -> Schema:
    """A built-in kind's root schema (from :func:`openapi.builtin_schema`) in inline form."""
    return _inline_node(root)


def _inline_node(node: Schema) -> Schema:
    ref = node.get("$ref")
    if type(ref) is str:
        return inline_builtin(openapi.ref_name(ref))
    # A Go decoder accepts null anywhere (it leaves the zero value): every node is nullable.
    out: Schema = {"nullable": True}
    t = node.get("type")
    types = [t] if isinstance(t, str) else list(t or [])
    props = node.get("properties")
    if props:
        out["properties"] = {k: _inline_node(v) for k, v in props.items()}
    ap = node.get("additionalProperties")
    if isinstance(ap, dict):
        out["additionalProperties"] = _inline_node(ap)
    it = node.get("items")
    if isinstance(it, dict):
        out["items"] = _inline_node(it)
    if not props and not isinstance(ap, dict) and not isinstance(it, dict):
        non_null = [x for x in types if x != "null"]
        if not non_null or non_null == ["object"]:
            # free-form JSON, RawExtension, FieldsV1: Go keeps the raw content
            out[_PRESERVE] = True
    return out


# --- the whole pipeline in one pass, on a compiled schema ---------------------------------------


class _Node:
    """A structural schema node with what the pipeline needs, precomputed."""

    __slots__ = ("ap", "default", "defaulted", "embedded", "has_default", "items", "nullable", "preserve", "props")

    def __init__(self, items: _Node | None = None) -> None:
        self.props: dict[str, _Node] | None = None
        self.ap: _Node | None = None
        self.items: _Node = self if items is None else items  # (only Go's nil schema _NIL is its own items)
        self.preserve = False
        self.embedded = False
        self.nullable = False
        self.has_default = False
        self.default: Any = None
        self.defaulted: list[tuple[str, _Node]] = []


_NIL = _Node()  # Go's nil schema: prunes every key below it, never drops nulls or defaults
_NIL.nullable = True

_NODES: dict[int, tuple[Schema, _Node]] = {}


def _compile(schema: Schema) -> _Node:
    hit = _NODES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    n = _Node(_NIL)
    _NODES[id(schema)] = (schema, n)
    n.preserve = bool(schema.get(_PRESERVE))
    n.embedded = bool(schema.get(_EMBEDDED))
    n.nullable = bool(schema.get("nullable"))
    if "default" in schema:
        n.has_default = True
        n.default = schema["default"]
    props = schema.get("properties")
    if isinstance(props, dict):
        n.props = {k: _compile(v) for k, v in props.items() if isinstance(v, dict)}
        n.defaulted = [(k, sub) for k, sub in n.props.items() if sub.has_default]
    ap = schema.get("additionalProperties")
    if isinstance(ap, dict):
        n.ap = _compile(ap)
    elif ap is True:
        n.ap = _NIL
    it = schema.get("items")
    if isinstance(it, dict):
        n.items = _compile(it)
    return n


def run_pipeline(obj: dict[str, Any], schema: Schema) -> list[str]:
    """:func:`prune`, then :func:`drop_nulls`, then :func:`apply_defaults`, in one walk; the pruned paths.

    Same result as the three calls in sequence, at about a third of the cost.
    The schema is compiled once (cached by identity: do not mutate it afterwards).
    """
    n = _compile(schema)
    pruned: list[str] = []
    _run(obj, n, None, pruned, n.preserve, True)
    return pruned


# Paths are built lazily from (parent, key) chains: only pruned fields need their text.
Chain = tuple[Any, str | int] | None


def chain_text(chain: Chain) -> str:
    """``spec.items[0].x`` from a (parent, key) chain."""
    parts: list[str | int] = []
    while chain is not None:
        chain, key = chain
        parts.append(key)
    out = ""
    for key in reversed(parts):
        if type(key) is int:
            out += f"[{key}]"
        else:
            out = f"{out}.{key}" if out else str(key)
    return out


def _run(x: dict[str, Any], n: _Node, path: Chain, pruned: list[str], preserve: bool, embedded: bool) -> None:
    props = n.props
    ap = n.ap
    drop: list[str] | None = None
    for k, v in x.items():
        sub = props.get(k) if props is not None else None
        if embedded and k in _META_FIELDS:
            if v is None:
                if sub is not None and not sub.nullable and not sub.has_default:
                    if drop is None:
                        drop = []
                    drop.append(k)
            elif k == "metadata" and type(v) is dict:
                _prune_meta_at(v, (path, "metadata"), pruned)
            continue
        if sub is None:
            if ap is None:
                if not preserve:
                    if drop is None:
                        drop = []
                    drop.append(k)
                    pruned.append(chain_text((path, k)))
                continue
            sub = ap
        if v is None:
            if not sub.nullable and not sub.has_default:
                if drop is None:
                    drop = []
                drop.append(k)
            continue
        tv = type(v)
        if tv is dict:
            _run(v, sub, (path, k), pruned, sub.preserve, sub.embedded)
        elif tv is list:
            _run_list(v, sub, (path, k), pruned, sub.preserve)
    if drop:
        for k in drop:
            del x[k]
    if n.defaulted or (ap is not None and ap.has_default and not ap.nullable):
        _fill_defaults(x, n)


def _fill_defaults(x: dict[str, Any], n: _Node) -> None:
    """The defaulting step of :func:`_run` on a map whose own keys are pruned already."""
    for k, dsub in n.defaulted:
        cur = x.get(k, _MISSING)
        if cur is _MISSING or (cur is None and not dsub.nullable):
            x[k] = v = fast_copy(dsub.default)
            _defaults_node(v, dsub)
    ap = n.ap
    if ap is not None and ap.has_default and not ap.nullable:
        props = n.props
        for k, v in x.items():
            if v is None and (props is None or k not in props):
                x[k] = nv = fast_copy(ap.default)
                _defaults_node(nv, ap)


_MISSING = object()


def _run_list(xs: list[Any], n: _Node, path: Chain, pruned: list[str], skip: bool) -> None:
    it = n.items
    fill = it.has_default and not it.nullable
    for i, v in enumerate(xs):
        tv = type(v)
        if tv is dict:
            _run(v, it, (path, i), pruned, skip or it.preserve, it.embedded)
        elif tv is list:
            _run_list(v, it, (path, i), pruned, skip or it.preserve)
        elif v is None and fill:
            xs[i] = nv = fast_copy(it.default)
            _defaults_node(nv, it)


# --- the pipeline on a copy -----------------------------------------------------------------------
#
# The server copies a request body before running the pipeline on it. These walks do both
# at once: they build the pruned, null-dropped, defaulted copy (integral floats turned into
# ints when the copy does that) without a separate copying pass. The result, and the pruned
# paths with their order, are those of the copy followed by :func:`run_pipeline`.

_PLAIN = frozenset({str, int, bool, type(None)})
Copier = Callable[[Any], Any]


def run_pipeline_copy(obj: dict[str, Any], schema: Schema, metadata: Any, *, normalize: bool = True,
                      base: dict[str, Any] | None = None, prune_metadata: bool = True) -> tuple[dict[str, Any], list[str]]:
    """:func:`run_pipeline` on a copy of ``obj``: (the copy, the pruned paths); ``obj`` is untouched.

    The copy is :func:`~fakeapi.machinery.jsonutil.copy_normalized` (integral floats made ints), or a plain
    :func:`~fakeapi.machinery.jsonutil.fast_copy` with ``normalize=False``. ``metadata`` is the copy of
    ``obj["metadata"]`` the caller has made (and checked) already: it takes that key's place,
    or is appended when ``obj`` has no ``metadata``, and is pruned in place as
    :func:`run_pipeline` prunes it.

    ``base``: an object that went through this pipeline (with this schema) already and is never
    mutated, such as the stored object a patch was applied to. A map or list of ``obj`` that *is*
    ``base``'s value at the same path is taken as it is, neither walked nor copied: the pipeline
    would leave it unchanged. The copy then shares those parts with ``base``. ``prune_metadata=False``:
    ``metadata`` is a copy of metadata that went through the pipeline already (it is not pruned again).
    """
    n = _compile(schema)
    pruned: list[str] = []
    out = _run_copy(obj, n, None, pruned, n.preserve, True, copy_normalized if normalize else fast_copy, metadata,
                    base, prune_metadata)
    return out, pruned


def _run_copy(x: dict[str, Any], n: _Node, path: Chain, pruned: list[str], preserve: bool, embedded: bool,
              cp: Copier, metadata: Any = _MISSING, base: dict[str, Any] | None = None,
              prune_metadata: bool = True) -> dict[str, Any]:
    """:func:`_run` on a copy of ``x`` made with ``cp`` (returned); ``metadata`` replaces ``x["metadata"]``.

    Values that are ``base``'s at the same key are kept as they are (see :func:`run_pipeline_copy`).
    """
    props = n.props
    out: dict[str, Any] = {}
    for k, v in x.items():
        sub = props.get(k) if props is not None else None
        tv = type(v)
        if sub is not None and (tv is str or tv is int or tv is bool) and (metadata is _MISSING or k != "metadata"):
            out[k] = v  # a known field's string, int or bool: kept as it is (the commonest case)
            continue
        if embedded and k in _META_FIELDS:
            if k == "metadata" and metadata is not _MISSING:
                v = metadata
            if v is None:
                if sub is not None and not sub.nullable and not sub.has_default:
                    continue
                out[k] = None
            elif k == "metadata" and type(v) is dict:
                if v is not metadata:
                    v = cp(v)
                    _prune_meta_at(v, (path, "metadata"), pruned)
                elif prune_metadata:
                    _prune_meta_at(v, (path, "metadata"), pruned,
                                base.get("metadata") if base is not None else None)
                out[k] = v
            else:
                out[k] = v if v is metadata or type(v) in _PLAIN else cp(v)
            continue
        if base is not None and (tv is dict or tv is list):
            b = base.get(k)
            if b is v:
                out[k] = v  # processed already, never mutated: shared
                continue
        else:
            b = None
        if sub is None:
            if n.ap is None:
                if not preserve:
                    pruned.append(chain_text((path, k)))
                else:
                    out[k] = v if type(v) in _PLAIN else cp(v)
                continue
            sub = n.ap
        if v is None:
            if sub.nullable or sub.has_default:
                out[k] = None
        elif tv is dict:
            out[k] = _run_copy(v, sub, (path, k), pruned, sub.preserve, sub.embedded, cp, _MISSING,
                               b if type(b) is dict else None)
        elif tv is list:
            out[k] = _run_list_copy(v, sub, (path, k), pruned, sub.preserve, cp, b if type(b) is list else None)
        elif tv in _PLAIN:
            out[k] = v
        else:
            out[k] = cp(v)
    if metadata is not _MISSING and "metadata" not in x:
        out["metadata"] = metadata
        if type(metadata) is dict:
            _prune_meta_at(metadata, (path, "metadata"), pruned)
    if n.defaulted or (n.ap is not None and n.ap.has_default and not n.ap.nullable):
        _fill_defaults(out, n)
    return out


def _run_list_copy(xs: list[Any], n: _Node, path: Chain, pruned: list[str], skip: bool, cp: Copier,
                   base: list[Any] | None = None) -> list[Any]:
    """:func:`_run_list` on a copy of ``xs`` made with ``cp`` (returned); items that are ``base``'s at the same index are kept."""
    it = n.items
    fill = it.has_default and not it.nullable
    out: list[Any] = []
    nb = len(base) if base is not None else 0
    for i, v in enumerate(xs):
        tv = type(v)
        b = base[i] if i < nb else None  # type: ignore[index]
        if b is v and (tv is dict or tv is list):
            out.append(v)  # processed already, never mutated: shared
        elif tv is dict:
            out.append(_run_copy(v, it, (path, i), pruned, skip or it.preserve, it.embedded, cp, _MISSING,
                                 b if type(b) is dict else None))
        elif tv is list:
            out.append(_run_list_copy(v, it, (path, i), pruned, skip or it.preserve, cp,
                                      b if type(b) is list else None))
        elif v is None and fill:
            nv = fast_copy(it.default)
            _defaults_node(nv, it)
            out.append(nv)
        elif tv in _PLAIN:
            out.append(v)
        else:
            out.append(cp(v))
    return out


def _defaults_node(x: Any, n: _Node) -> None:
    """``defaulting.Default`` on a compiled node (used inside freshly defaulted values)."""
    tx = type(x)
    if tx is dict:
        for k, dsub in n.defaulted:
            cur = x.get(k, _MISSING)
            if cur is _MISSING or (cur is None and not dsub.nullable):
                x[k] = fast_copy(dsub.default)
        props = n.props
        ap = n.ap
        for k, v in x.items():
            sub = props.get(k) if props is not None else None
            if sub is None:
                if ap is None:
                    continue
                sub = ap
                if v is None and sub.has_default and not sub.nullable:
                    v = x[k] = fast_copy(sub.default)
            if type(v) is dict or type(v) is list:
                _defaults_node(v, sub)
    elif tx is list:
        it = n.items
        fill = it.has_default and not it.nullable
        for i, v in enumerate(x):
            if v is None and fill:
                v = x[i] = fast_copy(it.default)
            if type(v) is dict or type(v) is list:
                _defaults_node(v, it)


# --- what the pipeline leaves of a Go-marshalled body ---------------------------------------------
#
# A body a Go client marshals holds only its Go type's fields. Where the schema has a node for each of
# them, at every depth, and no node drops a null or fills a default (a built-in kind's schema and Go
# type come from one source), the pipeline prunes, drops and defaults nothing of such a body: its copy
# is a plain copy. A few places the Go model keeps as free-form JSON while the schema types them (an
# ObjectMeta's managedFields inside a Pod's ephemeral volume template) could still be pruned: the
# plan made once per schema and type lists them, and a body that has something there is walked.

#: The Go kinds (fakeapi.codec.gomodel.KINDS) whose JSON is a scalar (or null): never pruned.
_GO_SCALARS = frozenset({"string", "int", "float", "bool", "time", "quantity", "intorstring"})


class _Residual:
    """What a body must be like at one place for the plain copy to equal the walk (see :func:`go_body_plan`):
    ``fields`` (a struct's: key -> residual, or None: the key must be absent), ``items`` (every element
    of a list), ``values`` (every value of a map), ``empty`` (no map or list with content: free-form)."""

    __slots__ = ("empty", "fields", "items", "values")

    def __init__(self, *, fields: dict[str, _Residual | None] | None = None, items: _Residual | None = None,
                 values: _Residual | None = None, empty: bool = False) -> None:
        self.fields = fields
        self.items = items
        self.values = values
        self.empty = empty


#: The plan of a free-form value the schema types: no content (a scalar, null or an empty map or list).
_EMPTY = _Residual(empty=True)
#: go_body_plan answers, by (id of the schema, id of the Go type), with both kept (their ids stay theirs).
_GO_PLANS: dict[tuple[int, int], tuple[Schema, Any, Any]] = {}
#: A plan: True (nothing to check), a _Residual, or None (the pipeline may change such bodies: walk them).
GoBodyPlan = Any


def go_body_plan(schema: Schema, go_type: Any) -> GoBodyPlan:
    """When does :func:`run_pipeline` leave as it is an object a Go client marshals from ``go_type`` (a
    :class:`fakeapi.codec.gomodel.GoType`), its ``metadata`` aside? True: always; a residual: when
    :func:`go_body_fits` says so; None: the schema may prune, drop or default what the type holds.
    Worked out once per schema and type."""
    hit = _GO_PLANS.get((id(schema), id(go_type)))
    if hit is not None and hit[0] is schema and hit[1] is go_type:
        return hit[2]
    root = _compile(schema)
    plan: GoBodyPlan = None
    if getattr(go_type, "kind", None) == "struct" and _plain_node(root) and all(
            root.props is None or root.props.get(k) is None or _plain_node(root.props[k]) for k in _META_FIELDS):
        fields = {name: f for name, f in go_type.fields.items() if name not in _META_FIELDS}
        plan = _struct_plan(fields, root, root.preserve, {}, set())
    _GO_PLANS[(id(schema), id(go_type))] = (schema, go_type, plan)
    return plan


def go_body_fits(obj: dict[str, Any], plan: GoBodyPlan, base: dict[str, Any] | None = None) -> bool:
    """Is a Go-marshalled ``obj`` one the pipeline leaves as it is, by :func:`go_body_plan`'s ``plan``?
    (``base``: an object the pipeline made, whose values ``obj`` shares are not looked at.)"""
    if plan is True:
        return True
    if plan is None:
        return False
    if base is None:
        return _fits(obj, plan)
    fields = plan.fields
    assert fields is not None
    for k, sub in fields.items():
        if k in obj:
            v = obj[k]
            if sub is None or (v is not base.get(k) and v is not None and not _fits(v, sub)):
                return False
    return True


def _fits(v: Any, r: _Residual) -> bool:
    if r.empty:
        return not v or (type(v) is not dict and type(v) is not list)
    if r.fields is not None:
        if type(v) is not dict:
            return False
        for k, sub in r.fields.items():
            if k in v:
                x = v[k]
                if sub is None or (x is not None and not _fits(x, sub)):
                    return False
        return True
    inner = r.items if r.items is not None else r.values
    assert inner is not None
    if type(v) is list and r.items is not None:
        return all(x is None or _fits(x, inner) for x in v)
    if type(v) is dict and r.values is not None:
        return all(x is None or _fits(x, inner) for x in v.values())
    return False


def _plain_node(n: _Node) -> bool:
    """Does a node keep nulls and fill no default (every node of a built-in's inline schema)?"""
    return n.nullable and not n.has_default and not n.defaulted


def _field_node(n: _Node, name: str) -> _Node | None:
    """The node a map's key ``name`` is walked with (None: none, the key is pruned unless preserved)."""
    sub = n.props.get(name) if n.props is not None else None
    return sub if sub is not None else n.ap


def _struct_plan(fields: dict[str, Any], n: _Node, preserve: bool, memo: dict[tuple[int, int, bool], GoBodyPlan],
                 stack: set[tuple[int, int, bool]]) -> GoBodyPlan:
    out: dict[str, _Residual | None] = {}
    for name, f in fields.items():
        sub = _field_node(n, name)
        if sub is None:
            if not preserve:
                out[name] = None  # (pruned wherever it is: it must be absent)
            continue
        r = _go_plan(f.type, sub, sub.preserve, memo, stack)
        if r is None:
            return None
        if r is not True:
            out[name] = r
    return _Residual(fields=out) if out else True


def _go_plan(t: Any, n: _Node, preserve: bool, memo: dict[tuple[int, int, bool], GoBodyPlan],
             stack: set[tuple[int, int, bool]]) -> GoBodyPlan:
    """The plan of a value of Go type ``t`` walked with node ``n`` (``preserve``: unknown keys kept there)."""
    if not _plain_node(n) or n.embedded:
        return None
    key = (id(t), id(n), preserve)
    if key in memo:
        return memo[key]
    if key in stack:
        return None  # (a recursive type: not worked out, walked)
    stack.add(key)
    k = t.kind
    plan: GoBodyPlan
    if k in _GO_SCALARS:
        plan = True
    elif k == "struct":
        plan = _struct_plan(t.fields, n, preserve, memo, stack)
    elif k == "slice" and t.elem is not None:
        r = _go_plan(t.elem, n.items, preserve or n.items.preserve, memo, stack)
        plan = r if r is None or r is True else _Residual(items=r)
    elif k == "map" and t.elem is not None and not n.props:
        if n.ap is None:
            plan = True if preserve else _EMPTY
        else:
            r = _go_plan(t.elem, n.ap, n.ap.preserve, memo, stack)
            plan = r if r is None or r is True else _Residual(values=r)
    elif k == "any":
        plan = True if preserve else _EMPTY  # (free-form JSON: kept as it is only where unknown keys are)
    else:  # (a union of JSONSchemaProps, a map the schema gives properties, a kind this does not know)
        plan = None
    stack.discard(key)
    memo[key] = plan
    return plan
