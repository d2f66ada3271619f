"""Schema-typed walks: structured-merge-diff's ``typed`` package, the half every write needs.

The managedFields of every write need an object read through its schema:

- :func:`type_of` / :func:`root_type`: how each schema node is walked (:class:`TypeNode`);
- :func:`changes`: the paths a write added or modified, and those it removed (``Compare``),
  with a server's :class:`Memo` of them.

What only server-side apply needs (``ToFieldSet``, ``Merge``, the whole ``Compare``,
``RemoveItems``) is in :mod:`fakeapi.machinery.typedapply`, imported when a server first applies.

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
    #: A map type's :func:`_added_plan` by the map's keys.
    _adds: dict[tuple[str, ...], tuple[tuple[str, str, TypeNode], ...]] = field(default_factory=dict)
    #: A root type's :func:`_plan` by the object's top-level keys.
    _plans: dict[tuple[str, ...], tuple[tuple[str, str, TypeNode, tuple[int, str]], ...]] = field(
        default_factory=dict)

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
    if t.list_kind == "set" and type(items) is list:  # (finalizers: :func:`_keyed_items` without its generator)
        out: dict[str, Any] = {}
        for item in items:
            if not (type(item) is str and item.isascii() and item.isprintable() and '"' not in item
                    and "\\" not in item):
                break  # (not a plain string: fp.value_element's other case)
            pe = f'v:"{item}"'  # (fp.value_element's common case)
            if pe in out:
                break  # (a duplicate: reported below)
            out[pe] = item
        else:
            return out
    return dict(_keyed_items(t, items, path, errors))


def _sub(path: Path, pe: str) -> Path:
    return (path, pe)


class ApplyMemo:
    """A server's memo of what applies compute from a configuration's top-level fields but metadata:
    their field sets by content (:func:`~fakeapi.machinery.typedapply.to_field_set`), and their merges
    by content and the live value they were merged into (:func:`~fakeapi.machinery.typedapply.merge`;
    a hit needs that very object: stored values are never changed, and the memo keeps them alive; only
    merges that are the live value itself are kept, as they hold nothing of a caller's). At most ``size`` of each, the oldest dropped first.
    A configuration applied again, unchanged but for its metadata, is then neither walked nor merged.
    """

    __slots__ = ("merges", "sets", "size")

    def __init__(self, size: int = 256) -> None:
        self.sets: dict[tuple[int, bool, str, bytes | tuple[Any, ...]], FieldSet] = {}  # (metadata's: by shape)
        self.merges: dict[tuple[int, str, bytes], tuple[Any, Any]] = {}
        self.size = size

    def put(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        """Record ``value`` for ``key`` in one of the memo's tables, dropping the oldest entry when full."""
        if len(table) >= self.size:
            del table[next(iter(table))]
        table[key] = value


# --- Compare --------------------------------------------------------------------------


def changes(old: Any, new: Any, t: TypeNode, memo: Memo | None = None) -> tuple[FieldSet, FieldSet]:
    """``(Added + Modified, Removed)`` of :func:`compare`: all a field manager needs, in one walk.

    ``memo``: the changes under each top-level map or list, by the content of its two sides
    (metadata's without the fields no manager owns), so that objects made from one template (the pods of a ReplicaSet, the runners of a
    set), which are created alike and go through the same status changes, share them rather than
    walk them again (see :class:`Memo`).
    """
    errors: list[tuple[str, str]] = []
    if memo is None or type(old) is not dict or type(new) is not dict:
        return _compare(old, new, t, (), errors)
    changed: FieldSet = {}
    removed: FieldSet = {}
    skip = t.skip
    tries_of = memo.tries
    entries = memo.entries
    name: bytes | None = None  # (_mask_name's, found at the first lookup)
    masked = False
    keys = tuple(new)
    plan = t._plans.get(keys)
    if plan is None:
        plan = _plan(t, keys)
    for key, pe, ct, field_key in plan:  # (the keys not skipped, in the object's order)
        r_val = new[key]
        l_val = old.get(key, MISSING)
        if l_val is r_val or (type(l_val) is type(r_val) and l_val == r_val):
            continue
        mkey: tuple[int, str, bytes, bytes] | None = None
        if (type(r_val) is dict or type(r_val) is list) and (not ct.skip or l_val is MISSING) and (
                (tries := tries_of.get(field_key)) is None or tries[0] < memo.probe
                or tries[1] * 8 >= tries[0]):  # (Memo.worth_trying, inline)
            # (metadata only when it is added whole, by what it holds but the server's fields, which name
            # the object (see _owned_content): an update's is compared faster than its two sides are encoded)
            try:  # (_content, inline)
                after = orjson.dumps(r_val) if not ct.skip else _owned_content(r_val, ct.skip)
                before = b"" if l_val is MISSING else orjson.dumps(l_val)
            except (orjson.JSONEncodeError, TypeError):
                after = None
            if after is not None:
                if name is None:  # (_mask_name, inline: its answer remembered by the name)
                    meta = new.get("metadata")
                    text = meta.get("name") if type(meta) is dict else None
                    if type(text) is str:
                        name = _MASKS.get(text)
                        if name is None:
                            name = _mask_text(text)
                    else:
                        name = b""
                if name and name in after:  # (the object's own name, in a secret's reference: see _mask_name)
                    after = after.replace(name, _MASK)
                    before = before.replace(name, _MASK)
                    masked = True
                else:
                    masked = False
                mkey = (id(t), key, before, after)
        if mkey is None:  # (no lookup: walked straight into the result)
            if l_val is MISSING:
                changed[pe] = _subtree(r_val, ct)
            elif ct.shape == MAP and not ct.leaf and type(l_val) is dict and l_val and type(r_val) is dict:
                c0, r0 = _compare_map(l_val, r_val, ct, ((), pe), errors)  # (metadata: _child_changes' last case)
                if c0:
                    changed[pe] = c0
                if r0:
                    removed[pe] = r0
            else:
                _child_changes(pe, l_val, r_val, ct, (), errors, changed, removed)
            continue
        # (Memo.get, inline: ``tries`` is this field's, fetched above)
        hit = entries.pop(mkey, None)
        if tries is None:
            tries = tries_of[field_key] = [0, 0]
        tries[0] += 1
        if hit is not None:
            tries[1] += 1
            entries[mkey] = hit
        else:
            c: FieldSet = {}
            r: FieldSet = {}
            if l_val is MISSING:
                c[pe] = _subtree(r_val, ct)
            else:
                _child_changes(pe, l_val, r_val, ct, (), errors, c, r)
            hit = (c.get(pe), r.get(pe))
            if not masked or _unnamed(hit, name):
                memo.put(mkey, hit)
        if hit[0] is not None:
            changed[pe] = hit[0]
        if hit[1] is not None:
            removed[pe] = hit[1]
    if not old.keys() <= new.keys():  # (a test at C speed: a write rarely drops a top-level field)
        for key, l_val in old.items():
            if key not in new and key not in skip:
                pe, ct = t.field(key)
                removed[pe] = _subtree(l_val, ct)
        if len(removed) > 1:
            removed = _sorted(removed)
    # (both filled in the plan's order, the elements' own: sorted already, but for a dropped field's)
    return changed, removed


#: How many key tuples a root type keeps plans for (:attr:`TypeNode._plans`).
_PLANS_SIZE = 64


def _plan(t: TypeNode, keys: tuple[str, ...]) -> tuple[tuple[str, str, TypeNode, tuple[int, str]], ...]:
    """What :func:`changes` visits of an object with these top-level keys, remembered in ``t._plans``:
    each key not in ``t.skip`` with its element, its type and its key in :attr:`Memo.tries`, in the
    order of their elements (so of the sets made from them: Go's order of fields)."""
    plan = tuple(sorted(((k, *t.field(k), (id(t), k)) for k in keys if k not in t.skip), key=lambda p: p[1]))
    if len(t._plans) >= _PLANS_SIZE:
        t._plans.clear()
    t._plans[keys] = plan
    return plan


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


#: What :func:`changes` puts for the object's name in a memo key: a byte orjson never writes (it escapes
#: control characters), so a masked key is never an unmasked one.
_MASK = b"\x00"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")
_NAME_LETTERS = frozenset("abcdfghijklmnopqrstuvwxyz")  # (not "e": a name with none could sit in a number)


def _mask_name(obj: dict[str, Any]) -> bytes:
    """The object's name as the memo masks it in its keys, or ``b""`` when it is not one to mask.

    Objects made from one template often hold their own name (a pod's reference to its runner's secret,
    named as the pod): masked, they share their changes (issue 22). A name of DNS characters with a dash
    and a letter other than e lies in the JSON only inside strings, never across a quote, a number or a
    literal; so two values whose JSON is equal once each one's name is masked are the same but for those
    strings, and the walks compare and key their strings alike. Their sets are the same unless a key or a
    list item's key holds the name: a result holding it is never memoized under a masked key.
    """
    meta = obj.get("metadata")
    name = meta.get("name") if type(meta) is dict else None
    return _mask_text(name) if type(name) is str else b""


#: :func:`_mask_text`'s answers by name (at most :data:`_MASKS_SIZE`, then started again).
_MASKS: dict[str, bytes] = {}
_MASKS_SIZE = 4096


def _mask_text(name: str) -> bytes:
    """:func:`_mask_name` of an object named ``name`` (remembered in :data:`_MASKS`)."""
    if (len(name) < 4 or "-" not in name or not name.isascii()
            or not _NAME_CHARS.issuperset(name) or _NAME_LETTERS.isdisjoint(name)):
        out = b""
    else:
        out = name.encode()
    if len(_MASKS) >= _MASKS_SIZE:
        _MASKS.clear()
    _MASKS[name] = out
    return out


def _unnamed(hit: MemoValue, name: bytes | None) -> bool:
    """Whether changes found under a masked key hold no element naming the object (so are any object's)."""
    content = _content(hit)
    return content is not None and name is not None and name not in content


def _content(value: Any) -> bytes | None:
    """The JSON of a value (the memo's key), or None for what orjson cannot carry."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return None


def _owned_content(value: Any, skip: frozenset[str]) -> bytes | None:
    """:func:`_content` of a map whose type passes over the keys in ``skip`` (ObjectMeta: its name, uid,
    resourceVersion...), without them: the changes under it never depend on them.

    A map of skipped keys alone answers ``b"{.}"`` (no JSON), not ``b"{}"``: the walks tell an empty map
    from one that is not (an empty map and a null differ as values; a map with a key, from a null, only
    by what is under it). Two maps with one answer then compare alike: skipped keys are never walked.
    """
    if type(value) is dict and not value.keys().isdisjoint(skip):
        # (the owned keys found at C speed; in the set's order, which may not be the map's: the JSON
        # is a key only, and two equal encodings are still two equal maps)
        value = {k: value[k] for k in value.keys() - skip}
        if not value:
            return b"{.}"
    return _content(value)


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
    if t.shape == MAP:
        return _compare_map(lv if type(lv) is dict else {}, rv if type(rv) is dict else {}, t, path, errors)
    changed: FieldSet = {}
    removed: FieldSet = {}
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
    leaf = it.leaf
    for pe, b in ri.items():
        if pe not in li:
            changed[pe] = fp.EMPTY if leaf else _subtree(b, it)  # (_subtree's first case inline)
    return fp.canonical_level(changed), fp.canonical_level(removed)


def _compare_map(lm: dict[str, Any], rm: dict[str, Any], t: TypeNode, path: Path,
                 errors: list[tuple[str, str]]) -> tuple[FieldSet, FieldSet]:
    """:func:`_compare_node` of a map node (``lm``, ``rm``: its two sides, ``{}`` for a null)."""
    changed: FieldSet = {}
    if not lm:  # (every key added: a create's; the keys walked in their elements' order, no sort)
        keys = tuple(rm)
        plan = t._adds.get(keys)
        if plan is None:
            plan = _added_plan(t, keys)
        for key, pe, ct in plan:
            changed[pe] = fp.EMPTY if ct.leaf else _subtree(rm[key], ct)  # (_subtree's first case inline)
        return changed, fp.EMPTY
    removed: FieldSet = {}
    skip = t.skip
    fields = t._fields
    if skip:  # (ObjectMeta: most of its keys are the server's; the others are found at C speed)
        for key in lm.keys() - skip:  # (in any order: the result is sorted below)
            l_val = lm[key]
            r_val = rm.get(key, MISSING)
            if l_val is r_val or (type(l_val) is type(r_val) and l_val == r_val):
                continue
            _key_changes(key, l_val, r_val, t, fields, path, errors, changed, removed)
        added = not rm.keys() <= lm.keys()  # (some key added: a test at C speed, the loop only then)
    else:
        gone = 0  # (keys of ``lm`` not in ``rm``: never equal to their value, so counted only here)
        for key, l_val in lm.items():  # (unchanged children cost no call)
            r_val = rm.get(key, MISSING)
            if l_val is r_val or (type(l_val) is type(r_val) and l_val == r_val):
                continue
            if r_val is MISSING:
                gone += 1
            _key_changes(key, l_val, r_val, t, fields, path, errors, changed, removed)
        # (``rm`` holds len(lm) - gone keys of ``lm``: any more are added, found without comparing key sets)
        added = len(rm) > len(lm) - gone
    if added:
        for key, r_val in rm.items():
            if key not in lm and key not in skip:
                pe, ct = fields.get(key) or t.field(key)
                changed[pe] = fp.EMPTY if ct.leaf else _subtree(r_val, ct)  # (_subtree's first case inline)
    # (field elements sort as their names: Go's order, kept by every set operation)
    return (_sorted(changed) if len(changed) > 1 else changed,
            _sorted(removed) if len(removed) > 1 else removed)


def _key_changes(key: str, l_val: Any, r_val: Any, t: TypeNode, fields: dict[str, tuple[str, TypeNode]], path: Path,
                 errors: list[tuple[str, str]], changed: FieldSet, removed: FieldSet) -> None:
    """What differs under map key ``key`` (its two values differ; ``r_val`` may be MISSING), into ``changed``
    and ``removed``: :func:`_child_changes`, with its first and last cases inline."""
    pe, ct = fields.get(key) or t.field(key)
    if ct.leaf and r_val is not MISSING:
        changed[pe] = fp.EMPTY  # (a different value: _child_changes' first case, without its call)
        return
    if ct.shape == MAP and type(l_val) is dict and l_val and type(r_val) is dict:
        c, r = _compare_map(l_val, r_val, ct, (path, pe), errors)  # (_child_changes' last case)
        if c:
            changed[pe] = c
        if r:
            removed[pe] = r
        return
    _child_changes(pe, l_val, r_val, ct, path, errors, changed, removed)


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


def _subtree(v: Any, t: TypeNode) -> FieldSet:
    """The node of a value added or removed whole: it and all it holds are members."""
    if t.leaf:
        return fp.EMPTY
    tv = type(v)
    if tv is dict:
        if not v or t.shape == LIST:
            return fp.EMPTY
        flat = t._flat
        keys = tuple(v)
        if flat is not None:
            known = flat.get(keys)
            if known is not None:
                return known
        out: FieldSet = {fp.MEMBER: fp.EMPTY}
        plan = t._adds.get(keys)
        if plan is None:
            plan = _added_plan(t, keys)
        for key, pe, ct in plan:  # (the keys not skipped, in their elements' order)
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


#: How many key tuples a map type keeps (:attr:`TypeNode._flat`, :attr:`TypeNode._adds`).
_FLAT_SIZE = 64


def _added_plan(t: TypeNode, keys: tuple[str, ...]) -> tuple[tuple[str, str, TypeNode], ...]:
    """The keys of a map of type ``t`` with these keys that a walk of it added whole visits, remembered in
    ``t._adds``: each key not in ``t.skip``, with its element and type, sorted by element (Go's order)."""
    plan = tuple(sorted(((k, *t.field(k)) for k in keys if k not in t.skip), key=lambda p: p[1]))
    if len(t._adds) >= _FLAT_SIZE:
        t._adds.clear()
    t._adds[keys] = plan
    return plan
