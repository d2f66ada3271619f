"""Schema-typed field sets, comparison, merge and removal: structured-merge-diff's ``typed`` package.

Server-side apply and the managedFields of every write need four operations on
an object read through its schema:

- :func:`to_field_set`: the paths an applied configuration sets (``ToFieldSet``);
- :func:`compare`: the paths a write added, modified and removed (``Compare``);
- :func:`merge`: an applied configuration merged into the live object (``Merge``);
- :func:`remove_items`: an object without the paths of a set (``RemoveItems``).

How a node is walked comes from its schema, as ``schemaconv`` reads OpenAPI:
``x-kubernetes-list-type`` (``atomic``, ``set``, ``map`` with
``x-kubernetes-list-map-keys``), or else a list with patch strategy ``merge`` is
keyed by its patch merge key (a set without one), and any other list is atomic;
``x-kubernetes-map-type: atomic`` maps are one value; a node without a type
(``x-kubernetes-preserve-unknown-fields``) is deduced from its value (maps
granular, lists atomic). ``metadata`` is always read as ObjectMeta. Values are
JSON (dicts, lists, scalars); ``MISSING`` marks an absent field, unlike ``None``
(an explicit null).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.openapi import OBJECT_META, Schema, go_default_markers, resolve, types_of

MISSING: Any = object()

SCALAR, MAP, LIST, DEDUCED = 0, 1, 2, 3
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean"})
#: structured-merge-diff's scalar kinds (``schema.Scalar``) of the OpenAPI types.
_SCALAR_KINDS = {"string": "string", "integer": "numeric", "number": "numeric", "boolean": "boolean"}


class TypedError(Exception):
    """A value the schema cannot walk: an associative list with a duplicate or keyless item.

    ``errors`` are ``(path, message)`` pairs, in the order met.
    """

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__(render_typed_errors(errors))


def render_typed_errors(errors: list[tuple[str, str]]) -> str:
    """``ValidationErrors.Error()``: one error inline, several as an indented list."""
    if len(errors) == 1:
        path, msg = errors[0]
        return f"{path}: {msg}" if path else msg
    return "errors:\n" + "\n".join(f"  {p}: {m}" if p else f"  {m}" for p, m in errors)


@dataclass(slots=True)
class TypeNode:
    """How one schema node is walked."""

    shape: int
    atomic: bool = False
    props: dict[str, Any] = field(default_factory=dict)
    elem: Any = None  # map values or list items: a schema node, or None (deduced)
    list_kind: str = "atomic"  # atomic | set | map
    keys: tuple[str, ...] = ()
    key_defaults: dict[str, Any] = field(default_factory=dict)
    #: ``x-kubernetes-preserve-unknown-fields``: undeclared keys are data, not errors.
    open: bool = False
    #: A scalar's kind: string, numeric, boolean, or untyped (int-or-string and the like).
    scalar: str = "untyped"
    #: Keys a comparison passes over: the ObjectMeta fields no manager ever owns.
    skip: frozenset[str] = frozenset()
    #: A single value to its owners (a scalar, an atomic map or list): set by ``__post_init__``.
    leaf: bool = False
    _kids: dict[str, tuple[TypeNode, bool]] = field(default_factory=dict)
    _fields: dict[str, tuple[str, TypeNode]] = field(default_factory=dict)
    _item: TypeNode | None = None
    #: A map type's whole-value sets by key tuple, while every key met has a leaf type (then the
    #: set depends on the keys alone: labels, an env var with a value); None once one has not.
    _flat: dict[tuple[str, ...], FieldSet] | None = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.leaf = self.shape == SCALAR or self.atomic or (self.shape == LIST and self.list_kind == "atomic")

    def child(self, key: str) -> tuple[TypeNode, bool]:
        """The type of a map key's value, and whether the key is a declared field."""
        hit = self._kids.get(key)
        if hit is None:
            sub = self.props.get(key)
            hit = (type_of(sub), True) if sub is not None else (type_of(self.elem), False)
            self._kids[key] = hit
        return hit

    def field(self, key: str) -> tuple[str, TypeNode]:
        """``(f:<key>, the type of its value)``, or ``("", …)`` for a key in ``skip`` (cached)."""
        hit = self._fields.get(key)
        if hit is None:
            hit = self._fields[key] = _SKIPPED if key in self.skip else (fp.field_element(key), self.child(key)[0])
        return hit

    def item(self) -> TypeNode:
        """The type of a list's items."""
        it = self._item
        if it is None:
            it = self._item = type_of(self.elem)
        return it


_DEDUCED = TypeNode(DEDUCED)
_SKIPPED: tuple[str, TypeNode] = ("", _DEDUCED)  # (TypeNode.field of a skipped key)
_TYPES: dict[int, tuple[Any, TypeNode]] = {}
_META_REF: Schema = {"$ref": "#/$defs/" + OBJECT_META}


def type_of(node: Schema | None) -> TypeNode:
    """The walk type of a schema node (cached; None reads as deduced)."""
    if node is None:
        return _DEDUCED
    hit = _TYPES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    t = _classify(node)
    _TYPES[id(node)] = (node, t)
    return t


_ROOTS: dict[tuple[int, frozenset[str]], tuple[Any, TypeNode]] = {}


def root_type(schema: Schema | None, skip: frozenset[str] = frozenset()) -> TypeNode:
    """The walk type of a whole object: its schema with ``metadata`` read as ObjectMeta.

    ``skip``: top-level fields a comparison passes over (the ones no manager owns).
    """
    key = (id(schema), skip)
    hit = _ROOTS.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    base = _classify(schema) if schema is not None else TypeNode(MAP)
    t = TypeNode(MAP, atomic=False, props={**base.props, "metadata": _META_REF}, elem=base.elem, skip=skip)
    _ROOTS[key] = (schema, t)
    return t


#: ObjectMeta fields never owned (``stripMetaManager``): a comparison need not look at them.
SERVER_META = frozenset({"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
                         "managedFields", "resourceVersion"})


def _classify(node: Schema) -> TypeNode:
    n = resolve(node)
    if n.get("x-kubernetes-group-version-kind") is None and n is resolve(_META_REF):
        t = _classify_node(n)
        t.skip = SERVER_META
        return t
    return _classify_node(n)


def _classify_node(n: Schema) -> TypeNode:
    if n.get("x-kubernetes-int-or-string"):
        return TypeNode(SCALAR)
    types = types_of(n)
    t = types[0] if types else ""
    if t == "array":
        lt = n.get("x-kubernetes-list-type")
        items = n.get("items")
        elem = items if isinstance(items, dict) else None
        if lt == "map":
            keys = tuple(n.get("x-kubernetes-list-map-keys") or ())
            return TypeNode(LIST, elem=elem, list_kind="map", keys=keys, key_defaults=_key_defaults(elem, keys))
        if lt in ("set", "atomic"):
            return TypeNode(LIST, elem=elem, list_kind=lt)
        if "merge" in str(n.get("x-kubernetes-patch-strategy", "")).split(","):
            pmk = n.get("x-kubernetes-patch-merge-key")
            if pmk:
                return TypeNode(LIST, elem=elem, list_kind="map", keys=(pmk,),
                                key_defaults=_key_defaults(elem, (pmk,)))
            return TypeNode(LIST, elem=elem, list_kind="set")
        return TypeNode(LIST, elem=elem, list_kind="atomic")
    if t in _SCALAR_TYPES:
        return TypeNode(SCALAR, scalar=_SCALAR_KINDS[t])
    props = n.get("properties")
    ap = n.get("additionalProperties")
    if t == "object" or props is not None or isinstance(ap, dict):
        if not props and not isinstance(ap, dict):
            if n.get("x-kubernetes-map-type") == "atomic":
                return TypeNode(MAP, atomic=True)
            return TypeNode(MAP)  # free-form: every key deduced
        return TypeNode(MAP, atomic=n.get("x-kubernetes-map-type") == "atomic", props=dict(props or {}),
                        elem=ap if isinstance(ap, dict) else None,
                        open=bool(n.get("x-kubernetes-preserve-unknown-fields")))
    return _DEDUCED


def _key_defaults(elem: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(elem, dict):
        return {}
    props = resolve(elem).get("properties") or {}
    marks = go_default_markers(elem)
    out: dict[str, Any] = {}
    for k in keys:
        sub = props.get(k)
        if isinstance(sub, dict) and "default" in resolve(sub):
            out[k] = resolve(sub)["default"]
        elif k in marks:
            out[k] = marks[k]
    return out


_DEDUCED_MAP = TypeNode(MAP)
_DEDUCED_LIST = TypeNode(LIST, list_kind="atomic")
_DEDUCED_SCALAR = TypeNode(SCALAR)


def _deduce(t: TypeNode, v: Any) -> TypeNode:
    if t.shape != DEDUCED:
        return t
    if type(v) is dict:
        return _DEDUCED_MAP
    if type(v) is list:
        return _DEDUCED_LIST
    return _DEDUCED_SCALAR


Path = tuple[Any, ...]  # (parent path, element), () at the root: rendered only for an error


def _render(path: Path) -> str:
    parts: list[str] = []
    while path:
        path, pe = path
        parts.append(pe)
    return fp.path_string(tuple(reversed(parts)))


def _item_element(t: TypeNode, item: Any, index: int, path: Path, errors: list[tuple[str, str]]) -> str | None:
    if t.list_kind == "set":
        return fp.value_element(item)
    if t.list_kind == "map":
        if type(item) is not dict:
            errors.append((_render(path), f"element {index}: associative list with keys may not have non-map elements"))
            return None
        key: dict[str, Any] = {}
        for k in t.keys:
            if k in item and item[k] is not None:
                key[k] = item[k]
            elif k in t.key_defaults:
                key[k] = t.key_defaults[k]
            else:
                errors.append((_render(path), f'element {index}: associative list with keys has an element that omits key '
                                     f'field "{k}" (and doesn\'t have default value)'))
                return None
        return fp.key_element(key)
    return f"i:{index}"


def _keyed_items(t: TypeNode, items: Any, path: Path, errors: list[tuple[str, str]]) -> Iterator[tuple[str, Any]]:
    """The items of a set or map list with their path elements, in order; an item without a
    usable key, or repeating one, is reported and left out (as structured-merge-diff's walks do)."""
    if type(items) is not list:
        return
    seen: set[str] = set()
    for i, item in enumerate(items):
        pe = _item_element(t, item, i, path, errors)
        if pe is None:
            continue
        if pe in seen:
            errors.append((_render(path), f"duplicate entries for key {fp.path_string((pe,))}"))
            continue
        seen.add(pe)
        yield pe, item


def _index(t: TypeNode, items: Any, path: Path, errors: list[tuple[str, str]]) -> dict[str, Any]:
    """The items of a set or map list by path element (duplicates reported)."""
    return dict(_keyed_items(t, items, path, errors))


def _sub(path: Path, pe: str) -> Path:
    return (path, pe)


# --- ToFieldSet -----------------------------------------------------------------------


def to_field_set(obj: Any, t: TypeNode, *, closed: bool = False, memo: ApplyMemo | None = None) -> FieldSet:
    """The paths a value sets (``TypedValue.ToFieldSet``), in Go's order; raises TypedError on an invalid list.

    ``closed``: a key a struct does not declare is an error (``field not declared in schema``), as
    for the Go types of built-in kinds; otherwise it is read as deduced (custom resources are pruned).
    ``memo``: the sets of top-level fields but metadata, by content (a configuration applied again).
    """
    errors: list[tuple[str, str]] = []
    if memo is None or type(obj) is not dict or t.shape != MAP or t.leaf:
        out = _to_set(obj, t, (), errors, closed)
    else:
        out = {}
        for key, val in obj.items():
            mkey: tuple[int, bool, str, bytes] | None = None
            if key != "metadata" and (type(val) is dict or type(val) is list):
                content = _content(val)
                if content is not None:
                    mkey = (id(t), closed, key, content)
                    hit = memo.sets.get(mkey)
                    if hit is not None:
                        if hit is not _NO_NODE:
                            out["f:" + key] = hit
                        continue
            before = len(errors)
            node = _to_set_field(key, val, t, (), errors, closed)
            if node is not None:
                out["f:" + key] = node
            if mkey is not None and len(errors) == before:
                memo.put(memo.sets, mkey, _NO_NODE if node is None else node)
        if len(out) > 1:
            out = _sorted(out)
    if errors:
        raise TypedError(errors)
    return out


#: A memo's record of a field with no node in the set.
_NO_NODE: FieldSet = {"": {}}


_STR_OR_NULL = frozenset({str, type(None)})


def _to_set(v: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]], closed: bool = False) -> FieldSet:
    t = _deduce(t, v)
    if t.leaf:
        if closed and v is not None:
            problem = scalar_problem(t.scalar, v) if t.shape == SCALAR else shape_problem(t.shape, v)
            if problem:
                errors.append((_render(path), problem))
        return fp.EMPTY
    out: FieldSet = {}
    if t.shape == MAP:
        if type(v) is not dict:
            if closed and v is not None:
                errors.append((_render(path), shape_problem(MAP, v)))
            return fp.EMPTY
        if not t.props and t.elem is not None:  # (a map of one value type: labels, annotations, data)
            et = t.item()  # (the type of every key's value: none is declared)
            if et.shape == SCALAR and (not closed or (et.scalar == "string" and _STR_OR_NULL.issuperset(
                    map(type, v.values())))):
                return {"f:" + key: fp.EMPTY for key in sorted(v)}  # (each a member, no error)
        for key, val in v.items():
            node = _to_set_field(key, val, t, path, errors, closed)
            if node is not None:
                out["f:" + key] = node
        return _sorted(out) if len(out) > 1 else out  # (Go's order, as every set made here)
    if closed and v is not None and type(v) is not list:
        errors.append((_render(path), shape_problem(LIST, v)))
        return fp.EMPTY
    it = t.item()
    for pe, item in _keyed_items(t, v, path, errors):  # (each item walked before the next is keyed)
        out[pe] = fp._join(True, _to_set(item, it, _sub(path, pe), errors, closed))
    return fp.canonical_level(out)


def _to_set_field(key: str, val: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]],
                  closed: bool) -> FieldSet | None:
    """The node of one key of a map (None: the key adds nothing to the set)."""
    ct, declared = t.child(key)
    pe = "f:" + key
    if closed and not declared and t.props and t.elem is None and not t.open:
        errors.append((_render(_sub(path, pe)), "field not declared in schema"))
        return None
    if ct.leaf:  # (what _to_set answers for a scalar or an atomic value, without the call: a member)
        if closed and val is not None and not (ct.scalar == "string" and type(val) is str):
            problem = scalar_problem(ct.scalar, val) if ct.shape == SCALAR else shape_problem(ct.shape, val)
            if problem:
                errors.append((_render((path, pe)), problem))
        return fp.EMPTY
    kids = _to_set(val, ct, (path, pe), errors, closed)
    member = (not declared or val is None or (type(val) is dict and not val) or _deduce(ct, val).leaf)
    return fp._join(member, kids)


class ApplyMemo:
    """A server's memo of what applies compute from a configuration's top-level fields but metadata:
    their field sets by content (:func:`to_field_set`), and their merges by content and the live
    value they were merged into (:func:`merge`; a hit needs that very object: stored values are never
    changed, and the memo keeps them alive; only merges that are the live value itself are kept, as
    they hold nothing of a caller's). At most ``size`` of each, the oldest dropped first.
    A configuration applied again, unchanged but for its metadata, is then neither walked nor merged.
    """

    __slots__ = ("merges", "sets", "size")

    def __init__(self, size: int = 256) -> None:
        self.sets: dict[tuple[int, bool, str, bytes], FieldSet] = {}
        self.merges: dict[tuple[int, str, bytes], tuple[Any, Any]] = {}
        self.size = size

    def put(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        """Record ``value`` for ``key`` in one of the memo's tables, dropping the oldest entry when full."""
        if len(table) >= self.size:
            del table[next(iter(table))]
        table[key] = value


# --- Compare --------------------------------------------------------------------------


@dataclass(slots=True)
class Comparison:
    """The paths a write added, modified and removed."""

    added: FieldSet = field(default_factory=dict)
    modified: FieldSet = field(default_factory=dict)
    removed: FieldSet = field(default_factory=dict)

    def changed(self) -> FieldSet:
        """Modified or added paths (``Modified.Union(Added)``)."""
        return fp.union(self.modified, self.added)


def compare(old: Any, new: Any, t: TypeNode) -> Comparison:
    """What changed from ``old`` to ``new`` (``TypedValue.Compare``); MISSING for an absent side.

    Keys in ``t.skip`` (and, through ObjectMeta's type, the server-set metadata) are passed over.
    """
    changed, removed = changes(old, new, t)
    added, modified = _split_changed(changed, old, t)
    return Comparison(added, modified, removed)


def changes(old: Any, new: Any, t: TypeNode, memo: Memo | None = None) -> tuple[FieldSet, FieldSet]:
    """``(Added + Modified, Removed)`` of :func:`compare`: all a field manager needs, in one walk.

    ``memo``: the changes under each top-level map or list but metadata, by the content of its
    two sides, so that objects made from one template (the pods of a ReplicaSet, the runners of a
    set), which are created alike and go through the same status changes, share them rather than
    walk them again (see :class:`Memo`).
    """
    errors: list[tuple[str, str]] = []
    if memo is None or type(old) is not dict or type(new) is not dict:
        return _compare(old, new, t, (), errors)
    changed: FieldSet = {}
    removed: FieldSet = {}
    skip = t.skip
    for key, r_val in new.items():
        l_val = old.get(key, MISSING)
        if key in skip or l_val is r_val or (type(l_val) is type(r_val) and l_val == r_val):
            continue
        pe, ct = t.field(key)
        mkey: tuple[int, str, bytes, bytes] | None = None
        if (key != "metadata"  # (which names the object, its owners: rarely the same twice)
                and (type(r_val) is dict or type(r_val) is list) and memo.worth_trying(t, key)):
            after = _content(r_val)
            before = b"" if l_val is MISSING else _content(l_val)
            if after is not None and before is not None:
                mkey = (id(t), key, before, after)
        hit = memo.get(mkey) if mkey is not None else None
        if hit is None:
            c: FieldSet = {}
            r: FieldSet = {}
            if l_val is MISSING:
                c[pe] = _subtree(r_val, ct)
            else:
                _child_changes(pe, l_val, r_val, ct, (), errors, c, r)
            hit = (c.get(pe), r.get(pe))
            if mkey is not None:
                memo.put(mkey, hit)
        if hit[0] is not None:
            changed[pe] = hit[0]
        if hit[1] is not None:
            removed[pe] = hit[1]
    for key, l_val in old.items():
        if key not in new and key not in skip:
            pe, ct = t.field(key)
            removed[pe] = _subtree(l_val, ct)
    return (_sorted(changed) if len(changed) > 1 else changed), (_sorted(removed) if len(removed) > 1 else removed)


MemoKey = tuple[int, str, bytes, bytes]
MemoValue = tuple[FieldSet | None, FieldSet | None]


class Memo:
    """The changes :func:`changes` found under top-level fields, by (root type, field, the JSON of
    its value before (``b""`` when absent) and after): at most ``size``, the least recently used
    dropped first.

    A field whose contents rarely repeat (a runner's status, with its own id; a Secret's data)
    is not worth the JSON of its two sides: after ``probe`` lookups with fewer than one hit in
    eight, it is walked without a lookup.
    """

    __slots__ = ("entries", "probe", "size", "tries")

    def __init__(self, size: int = 512, probe: int = 16) -> None:
        self.entries: dict[MemoKey, MemoValue] = {}
        #: (root type, field) -> [lookups, hits]
        self.tries: dict[tuple[int, str], list[int]] = {}
        self.size = size
        self.probe = probe

    def worth_trying(self, t: TypeNode, key: str) -> bool:
        """Whether a lookup for ``key`` under ``t`` has paid off often enough to make another."""
        tries = self.tries.get((id(t), key))
        return tries is None or tries[0] < self.probe or tries[1] * 8 >= tries[0]

    def get(self, mkey: MemoKey) -> MemoValue | None:
        """The changes recorded for ``mkey`` (now the most recently used), or None."""
        hit = self.entries.pop(mkey, None)
        field_key = (mkey[0], mkey[1])
        tries = self.tries.get(field_key)
        if tries is None:
            tries = self.tries[field_key] = [0, 0]
        tries[0] += 1
        if hit is not None:
            tries[1] += 1
            self.entries[mkey] = hit
        return hit

    def put(self, mkey: MemoKey, value: MemoValue) -> None:
        """Record the changes for ``mkey``, dropping the least recently used entry when full."""
        if len(self.entries) >= self.size:
            del self.entries[next(iter(self.entries))]
        self.entries[mkey] = value

    def __len__(self) -> int:
        return len(self.entries)


def scalar_problem(kind: str, v: Any) -> str:
    """``validateScalar``: why ``v`` is not a scalar of ``kind`` (``""`` when it is), in Go's words."""
    if kind == "numeric":
        if type(v) in (int, float):
            return ""
        return f"expected numeric (int or float), got {_go_type_name(v)}"
    if kind == "string":
        return "" if type(v) is str else f"expected string, got &value.valueUnstructured{{Value:{_go_sharp(v)}}}"
    if kind == "boolean":
        return "" if type(v) is bool else f"expected boolean, got &{{{_go_plain(v)}}}"
    if type(v) in (str, int, float, bool):
        return ""
    return f"expected any scalar, got &{{{_go_plain(v)}}}"


def shape_problem(shape: int, v: Any) -> str:
    """``mapValue``/``listValue`` (structured-merge-diff typed/helpers.go): why ``v`` is not a map
    (``shape`` MAP) or a list (LIST), ``""`` when it is; null is either. In Go's words: the value
    printed with ``%v`` (a pointer to its unstructured wrapper, ``&{[a b]}``)."""
    if v is None or (shape == MAP and type(v) is dict) or (shape == LIST and type(v) is list):
        return ""
    return f"expected {'map' if shape == MAP else 'list'}, got &{{{_go_plain(v)}}}"


def _go_type_name(v: Any) -> str:
    """``%T`` of an unstructured value."""
    return {str: "string", bool: "bool", int: "int64", float: "float64", dict: "map[string]interface {}",
            list: "[]interface {}"}.get(type(v), "interface {}")


def _go_sharp(v: Any) -> str:
    """``%#v`` of an unstructured value (scalars exactly; maps and lists by their Go type)."""
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is str:
        return orjson.dumps(v).decode()
    if type(v) in (int, float):
        return repr(v)
    return _go_type_name(v) + "{…}"


def _go_plain(v: Any) -> str:
    """``%v`` of an unstructured value."""
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is dict:
        return "map[" + " ".join(f"{k}:{_go_plain(x)}" for k, x in sorted(v.items())) + "]"
    if type(v) is list:
        return "[" + " ".join(_go_plain(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    return str(v)


def _content(value: Any) -> bytes | None:
    """The JSON of a value (the memo's key), or None for what orjson cannot carry."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return None


_NOTHING: tuple[FieldSet, FieldSet] = (fp.EMPTY, fp.EMPTY)


def _compare(lv: Any, rv: Any, t: TypeNode, path: Path,
             errors: list[tuple[str, str]]) -> tuple[FieldSet, FieldSet]:
    """(changed, removed) strictly under this node (neither side MISSING, the two not equal)."""
    t = _deduce(t, rv)
    if _leaf_here(t, lv, rv):
        return _NOTHING  # the node itself: judged by the caller
    return _compare_node(lv, rv, t, path, errors)


def _compare_node(lv: Any, rv: Any, t: TypeNode, path: Path,
                  errors: list[tuple[str, str]]) -> tuple[FieldSet, FieldSet]:
    """:func:`_compare` of a node its caller found granular, its type deduced."""
    changed: FieldSet = {}
    removed: FieldSet = {}
    if t.shape == MAP:
        lm = lv if type(lv) is dict else {}
        rm = rv if type(rv) is dict else {}
        skip = t.skip
        for key, l_val in lm.items():  # (unchanged children cost no call)
            r_val = rm.get(key, MISSING)
            if l_val is r_val or key in skip or (type(l_val) is type(r_val) and l_val == r_val):
                continue
            pe, ct = t.field(key)
            _child_changes(pe, l_val, r_val, ct, path, errors, changed, removed)
        for key, r_val in rm.items():
            if key not in lm and key not in skip:
                pe, ct = t.field(key)
                changed[pe] = _subtree(r_val, ct)
        # (field elements sort as their names: Go's order, kept by every set operation)
        return (_sorted(changed) if len(changed) > 1 else changed,
                _sorted(removed) if len(removed) > 1 else removed)
    it = t.item()
    if type(lv) is list and type(rv) is list and len(lv) == len(rv):
        # the common case, items in the same places: only the differing pairs are keyed
        for i, (a, b) in enumerate(zip(lv, rv)):
            if a is b or (type(a) is type(b) and a == b):
                continue
            pa = _item_element(t, a, i, path, errors)
            if pa is None or pa != _item_element(t, b, i, path, errors):
                break
            _child_changes(pa, a, b, it, path, errors, changed, removed)
        else:
            return fp.canonical_level(changed), fp.canonical_level(removed)
        changed, removed = {}, {}
    li = _index(t, lv, path, errors)
    ri = _index(t, rv, path, errors)
    for pe, a in li.items():
        b = ri.get(pe, MISSING)
        if a is b or (type(a) is type(b) and a == b):
            continue
        _child_changes(pe, a, b, it, path, errors, changed, removed)
    for pe, b in ri.items():
        if pe not in li:
            changed[pe] = _subtree(b, it)
    return fp.canonical_level(changed), fp.canonical_level(removed)


def _sorted(s: FieldSet) -> FieldSet:
    return {k: s[k] for k in sorted(s)}


def _leaf_here(t: TypeNode, lv: Any, rv: Any) -> bool:
    if t.leaf:
        return True
    if t.shape == MAP:
        return not (type(lv) is dict and lv) and not (type(rv) is dict and rv)
    return not (type(lv) is list and lv) and not (type(rv) is list and rv)


def _child_changes(pe: str, lv: Any, rv: Any, ct: TypeNode, path: Path, errors: list[tuple[str, str]],
                   changed: FieldSet, removed: FieldSet) -> None:
    """Record a differing child (``lv`` present; ``rv`` MISSING when it was removed)."""
    if rv is MISSING:  # everything under a removed node is removed too
        removed[pe] = _subtree(lv, ct)
        return
    dt = ct if ct.shape != DEDUCED else _deduce(ct, rv)
    if dt.leaf or (not (type(lv) is dict and lv) and not (type(rv) is dict and rv) if dt.shape == MAP
                   else not (type(lv) is list and lv) and not (type(rv) is list and rv)):  # (_leaf_here)
        changed[pe] = fp.EMPTY  # (a different value: checked by the caller)
        return
    c, r = _compare_node(lv, rv, dt, (path, pe), errors)
    if c:
        changed[pe] = c
    if r:
        removed[pe] = r


def _split_changed(changed: FieldSet, old: Any, t: TypeNode) -> tuple[FieldSet, FieldSet]:
    """``changed`` cut into (added, modified): a path ``old`` does not hold was added, with all under it."""
    added: FieldSet = {}
    modified: FieldSet = {}
    t = _deduce(t, old)
    for pe, node in changed.items():
        if pe == fp.MEMBER:
            continue
        if t.shape == MAP:
            child = old.get(pe[2:], MISSING) if type(old) is dict else MISSING
            ct = t.child(pe[2:])[0]
        else:
            child = _index(t, old, (), []).get(pe, MISSING) if type(old) is list else MISSING
            ct = t.item()
        if child is MISSING:
            added[pe] = node
            continue
        member, kids = fp._split(node)
        a, m = _split_changed(kids, child, ct) if kids else (fp.EMPTY, fp.EMPTY)
        if a:
            added[pe] = a
        joined = fp._join(member, m)
        if joined is not None:
            modified[pe] = joined
    return added, modified


def _subtree(v: Any, t: TypeNode) -> FieldSet:
    """The node of a value added or removed whole: it and all it holds are members."""
    if t.leaf:
        return fp.EMPTY
    tv = type(v)
    if tv is dict:
        if not v or t.shape == LIST:
            return fp.EMPTY
        flat = t._flat
        keys: tuple[str, ...] = ()
        if flat is not None:
            keys = tuple(v)
            known = flat.get(keys)
            if known is not None:
                return known
        out: FieldSet = {fp.MEMBER: fp.EMPTY}
        fields = t._fields
        for key in sorted(v):
            hit = fields.get(key)
            if hit is None:
                hit = t.field(key)
            pe, ct = hit
            if not pe:
                continue  # (a skipped key: no identity test, mypyc boxes tuples afresh)
            if ct.leaf:
                out[pe] = fp.EMPTY  # (a scalar or an atomic value)
                continue
            flat = t._flat = None
            val = v[key]
            if not val or (type(val) is not dict and type(val) is not list):
                out[pe] = fp.EMPTY  # (an empty map or list, a null, a scalar)
            else:
                out[pe] = _subtree(val, ct)
        node = out if len(out) > 1 else fp.EMPTY
        if flat is not None and len(flat) < _FLAT_SIZE:
            flat[keys] = node
        return node
    if tv is list and v and t.shape != MAP:
        if t.shape == DEDUCED:
            return fp.EMPTY  # (a deduced list is atomic)
        out = {fp.MEMBER: fp.EMPTY}
        it = t.item()
        for i, item in enumerate(v):
            ipe = _item_element(t, item, i, (), [])
            if ipe is not None:
                out[ipe] = fp.EMPTY if it.leaf else _subtree(item, it)
        return fp.canonical_level(out) if len(out) > 2 else out
    return fp.EMPTY


#: How many key tuples a map type keeps (:attr:`TypeNode._flat`).
_FLAT_SIZE = 64


def _union_keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [*a, *(k for k in b if k not in a)]


# --- Merge ----------------------------------------------------------------------------


def merge(live: Any, config: Any, t: TypeNode, *, checked: bool = False, memo: ApplyMemo | None = None) -> Any:
    """``config`` merged into ``live`` (``TypedValue.Merge``): config's leaves win, maps and keyed
    lists merge item by item, shared list items keep the config's order.

    The result shares with ``live`` every subtree the configuration leaves as it is (the very same
    objects, the whole of ``live`` when nothing changes), and may share the configuration's values:
    neither is to be changed in place. ``checked``: :func:`to_field_set` walked ``config`` without
    error (no keyed list of it has a duplicate or keyless item), so a subtree with the same JSON on
    both sides merges to the live one without a walk (nothing in it to report either).
    ``memo`` (with ``checked``): the merges of top-level fields but metadata (see :class:`ApplyMemo`).
    """
    errors: list[tuple[str, str]] = []
    if memo is not None and checked and type(live) is dict and type(config) is dict and t.shape == MAP and not t.leaf:
        out = _merge_root(live, config, t, errors, memo)
    else:
        out = (_merge_checked if checked else _merge)(live, config, t, (), errors)
    if errors:
        raise TypedError(errors)
    return out


def _merge_root(lv: dict[str, Any], rv: dict[str, Any], t: TypeNode, errors: list[tuple[str, str]],
                memo: ApplyMemo) -> Any:
    """:func:`_merge_checked` of two objects, each top-level field's merge looked up in ``memo`` first."""
    if lv == rv and same_json(lv, rv):
        return lv
    out: dict[str, Any] = {}
    same = True
    for key in _union_keys(lv, rv):
        lk = lv.get(key, MISSING)
        rk = rv.get(key, MISSING)
        mkey: tuple[int, str, bytes] | None = None
        if (key != "metadata" and rk is not MISSING and (type(rk) is dict or type(rk) is list)
                and (type(lk) is dict or type(lk) is list)):
            content = _content(rk)
            if content is not None:
                mkey = (id(t), key, content)
        hit = memo.merges.get(mkey) if mkey is not None else None
        if hit is not None and hit[0] is lk:
            v = hit[1]
        else:
            before = len(errors)
            ct, _ = t.child(key)
            v = _merge_checked(lk, rk, ct, _sub((), "f:" + key), errors)
            if mkey is not None and v is lk and len(errors) == before:  # (only what holds no value of the
                memo.put(memo.merges, mkey, (lk, v))  # configuration's: its caller may change it later)
        if v is not lk:
            same = False
        if v is not MISSING:
            out[key] = v
    return lv if same else out


def _merge(lv: Any, rv: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]]) -> Any:
    if rv is MISSING:
        return lv
    if lv is MISSING:
        lv_t = None
    else:
        lv_t = type(lv)
    t = _deduce(t, rv)
    if rv is None and not t.leaf and lv_t in (dict, list) and lv:
        return lv  # (a null over a granular map or list: the config has no items, the live ones stay)
    if lv_t is not None and t.shape != SCALAR and lv_t is not type(rv):
        return rv  # a deduced value changed shape, or a null: the config's wins
    if _leaf_here(t, lv, rv):
        # (the config's value; the live one when it is the same JSON, so that the subtree stays shared)
        return lv if lv_t is type(rv) and lv == rv and same_json(lv, rv) else rv
    return _merge_node(lv, rv, t, path, errors, _merge)


def _merge_checked(lv: Any, rv: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]]) -> Any:
    """:func:`_merge` of a configuration :func:`to_field_set` checked: equal subtrees are not walked."""
    if rv is MISSING:
        return lv
    if lv is MISSING:
        lv_t = None
    else:
        lv_t = type(lv)
        if lv_t is type(rv) and lv == rv and ((lv_t is not dict and lv_t is not list) or same_json(lv, rv)):
            return lv  # (what a walk would build: the same JSON as ``lv``, and no error in it)
    if t.shape == DEDUCED:
        t = _deduce(t, rv)
    if t.leaf:
        return rv  # (not the same JSON as ``lv``: checked above)
    if rv is None and lv_t in (dict, list) and lv:
        return lv
    if lv_t is not None and lv_t is not type(rv):
        return rv
    if _leaf_here(t, lv, rv):
        return rv
    return _merge_node(lv, rv, t, path, errors, _merge_checked)


def _merge_node(lv: Any, rv: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]], step: Any) -> Any:
    """A granular map or list merged, children by ``step``; ``lv`` itself when every child is its own."""
    if t.shape == MAP:
        lm = lv if type(lv) is dict else {}
        out: dict[str, Any] = {}
        same = type(lv) is dict
        for key, lk in lm.items():  # (the live keys first, then the config's others: _union_keys' order)
            rk = rv.get(key, MISSING)
            if rk is MISSING:
                out[key] = lk  # (what ``step`` answers, without the call)
                continue
            v = step(lk, rk, t.child(key)[0], (path, "f:" + key), errors)
            if v is not lk:
                same = False
            if v is not MISSING:
                out[key] = v
        for key, rk in rv.items():
            if key not in lm:
                same = False
                v = step(MISSING, rk, t.child(key)[0], (path, "f:" + key), errors)
                if v is not MISSING:
                    out[key] = v
        return lv if same else out
    lhs = lv if type(lv) is list else []
    items = _merge_list(lhs, rv, t, path, errors, step)
    if lhs is lv and len(items) == len(lhs) and all(a is b for a, b in zip(items, lhs)):
        return lv
    return items


def same_json(a: Any, b: Any) -> bool:
    """Do two values Python finds equal (``a == b``) have the same JSON? ``1 == 1.0 == True``, and
    dicts are equal whatever their keys' order, but their JSON differs."""
    ta = type(a)
    if ta is not dict and ta is not list:
        return ta is type(b)
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except (orjson.JSONEncodeError, TypeError):  # (what orjson cannot carry: an int past 64 bits)
        return _same_json_walk(a, b)


def _same_json_walk(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is dict:
        return all(ka == kb and _same_json_walk(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items()))
    if ta is list:
        return all(_same_json_walk(x, y) for x, y in zip(a, b))
    return True


def _merge_list(lhs: list[Any], rhs: list[Any], t: TypeNode, path: Path, errors: list[tuple[str, str]],
                step: Any = _merge) -> list[Any]:
    """``visitListItems`` of merge.go: live-only items stay where they were, shared items follow the config."""
    it = t.item()
    r_order, r_items = _ordered(t, rhs, path, errors)
    l_order, l_items = _ordered(t, lhs, path, errors)
    shared = [pe for pe in r_order if pe in l_items]
    si = 0
    next_shared = shared[0] if shared else None
    out: list[Any] = []
    li = ri = 0
    while li < len(l_order) or ri < len(r_order):
        if li < len(l_order) and ri < len(r_order):
            pe = l_order[li]
            if pe == r_order[ri]:
                out.append(step(l_items[pe], r_items[pe], it, _sub(path, pe), errors))
                li += 1
                ri += 1
                si += 1
                next_shared = shared[si] if si < len(shared) else None
                continue
            if pe in r_items and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, but not the one due now
                continue
        if li < len(l_order):
            pe = l_order[li]
            if pe not in r_items:
                out.append(l_items[pe])
                li += 1
                continue
        if ri < len(r_order):
            pe = r_order[ri]
            out.append(step(l_items.get(pe, MISSING), r_items[pe], it, _sub(path, pe), errors))
            ri += 1
            if next_shared is not None and next_shared == pe:
                si += 1
                next_shared = shared[si] if si < len(shared) else None
        else:
            li += 1  # (a shared item already merged)
    return out


def _ordered(t: TypeNode, items: list[Any], path: Path, errors: list[tuple[str, str]]) -> tuple[list[str], dict[str, Any]]:
    index = _index(t, items, path, errors)
    return list(index), index


# --- RemoveItems ----------------------------------------------------------------------


def remove_items(v: Any, toremove: FieldSet, t: TypeNode) -> Any:
    """``v`` without the members of ``toremove`` (each with all it holds): ``TypedValue.RemoveItems``."""
    if not toremove:
        return v
    t = _deduce(t, v)
    if t.leaf:
        return v
    if t.shape == MAP:
        if type(v) is not dict or not v:
            return v
        out: dict[str, Any] = {}
        for key, val in v.items():
            pe = "f:" + key
            sub = toremove.get(pe)
            if sub is None:
                out[key] = val
                continue
            member, kids = fp._split(sub)
            if member:
                continue
            ct, _ = t.child(key)
            out[key] = remove_items(val, kids, ct)
        return out
    if type(v) is not list:
        return v
    it = t.item()
    items: list[Any] = []
    for i, item in enumerate(v):
        pe = _item_element(t, item, i, (), [])
        sub = toremove.get(pe) if pe is not None else None
        if sub is None:
            items.append(item)
            continue
        member, kids = fp._split(sub)
        if member:
            continue
        items.append(remove_items(item, kids, it))
    return items


def named_fields_as_members(s: FieldSet, v: Any, t: TypeNode) -> FieldSet:
    """``Set.EnsureNamedFieldsAreMembers``: a declared struct field that leads to members is one itself."""
    if not s:
        return s
    t = _deduce(t, v)
    out: FieldSet = {}
    for pe, node in s.items():
        member, kids = fp._split(node)
        ct: TypeNode = _DEDUCED
        child_v: Any = MISSING
        declared = False
        if pe.startswith("f:") and t.shape == MAP:
            key = pe[2:]
            ct, declared = t.child(key)
            child_v = v.get(key, MISSING) if type(v) is dict else MISSING
        elif t.shape == LIST:
            ct = t.item()
        if kids:
            kids = named_fields_as_members(kids, child_v, ct)
        joined = fp._join(member or (declared and bool(kids)), kids)
        if joined is not None:
            out[pe] = joined
    return out
