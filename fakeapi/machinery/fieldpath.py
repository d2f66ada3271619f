"""Field sets in their ``FieldsV1`` form: the set algebra of structured-merge-diff's ``fieldpath``.

A managedFields entry's ``fieldsV1`` is a tree of path elements (``f:<field>``,
``k:<key JSON>``, ``v:<value JSON>``, ``i:<index>``). A child whose value is ``{}``
is a member of the set; a child that also has children is a member when it
holds ``"."``; a child without ``"."`` that has children only leads to members.
The functions here take and return such trees directly (the root's dict, never a
member itself), so a stored entry needs no parsing. Sets are values: no function
changes its arguments, and results may share subtrees with them.
"""

from __future__ import annotations

import json
from typing import Any

FieldSet = dict[str, Any]

MEMBER = "."
#: The empty set, and the node of a member without children (a leaf): one object, shared by every
#: set that holds it, as sets are values (never changed once made).
EMPTY: FieldSet = {}


def _split(node: FieldSet) -> tuple[bool, FieldSet]:
    """(is the node a member, its children)."""
    if not node:
        return True, EMPTY
    if MEMBER in node:
        return True, {k: v for k, v in node.items() if k != MEMBER}
    return False, node


def _join(member: bool, kids: FieldSet) -> FieldSet | None:
    """The node for (member, children); None when it is neither a member nor leads to one."""
    if not kids:
        return EMPTY if member else None
    if member:
        return {MEMBER: EMPTY, **kids}
    return kids


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    """Every path in ``a`` or ``b``."""
    if not b:
        return a
    if not a:
        return b
    out: FieldSet | None = None  # (a copy of ``a``, made at the first change: else ``a`` itself)
    grew = False
    for k, vb in b.items():
        va = a.get(k)
        if va is None:
            if out is None:
                out = dict(a)
            out[k] = vb
            grew = True
        elif va is not vb:
            n = _union_node(va, vb)
            if n is not va:
                if out is None:
                    out = dict(a)
                out[k] = n
    if out is None:
        return a
    if grew:  # keep Go's element order (sets built here stay canonical)
        out = {k: out[k] for k in in_order(out)}
    return out


def _union_node(va: FieldSet, vb: FieldSet) -> FieldSet:
    """The union of two nodes (``{}`` a member without children): ``va`` itself when it holds all of ``vb``.

    Nodes are united in their own form: ``"."`` is an element like any other, only ``{}`` needs care.
    """
    if not vb:  # (b: a member only)
        return va if not va or MEMBER in va else {MEMBER: EMPTY, **va}
    if not va:  # (a: a member only)
        return vb if MEMBER in vb else {MEMBER: EMPTY, **vb}
    return union(va, vb)


def covers(a: FieldSet, b: FieldSet) -> bool:
    """Whether ``a`` holds every path of ``b``: exactly when :func:`union` gives ``a`` itself back,
    decided without building anything (a write's changed paths against its writer's set)."""
    while len(b) == 1:  # (the usual ``b``, one path: followed down without a call per level)
        ((k, vb),) = b.items()
        va = a.get(k)
        if va is None:
            return False
        if va is vb:
            return True
        if not vb:
            return not va or MEMBER in va
        if not va:
            return False
        a, b = va, vb
    for k, vb in b.items():
        va = a.get(k)
        if va is None:
            return False
        if va is vb:
            continue
        if not vb:  # (b: k a member only)
            if va and MEMBER not in va:
                return False
        elif not va or not covers(va, vb):  # (a member only in ``a``: b's children are not in it)
            return False
    return True


def difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths of ``a`` not in ``b`` (a member of ``b`` removes only itself, not what lies under it)."""
    if not a or not b:
        return a
    out: FieldSet | None = None  # (a copy of ``a``, made at the first change: else ``a`` itself)
    for k, vb in b.items():  # (``b``, what a write changed, is the small one)
        va = a.get(k)
        if va is None:
            continue  # (the usual case for a manager a write did not touch: no copy)
        if not vb:  # (b: k a member only)
            if not va:
                n: FieldSet | None = None
            elif MEMBER in va:
                n = {e: v for e, v in va.items() if e != MEMBER} or None
            else:
                continue
        elif not va:  # (a: k a member only)
            if MEMBER not in vb:
                continue
            n = None
        else:  # (both nodes: ``"."`` removed as any element is)
            n = difference(va, vb)
            if n is va:
                continue
            if not n:
                n = None
            elif len(n) == 1 and MEMBER in n:
                n = EMPTY
        if out is None:
            out = dict(a)
        if n is None:
            del out[k]
        else:
            out[k] = n
    return a if out is None else out


def intersection(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths in both ``a`` and ``b``."""
    if not a or not b:
        return EMPTY
    out: FieldSet = {}
    for k, va in a.items():
        vb = b.get(k)
        if vb is None:
            continue
        ma, ka = _split(va)
        mb, kb = _split(vb)
        n = _join(ma and mb, intersection(ka, kb))
        if n is not None:
            out[k] = n
    return out


def recursive_difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths of ``a`` that are neither in ``b`` nor under a member of ``b``."""
    if not a or not b:
        return a
    out: FieldSet = {}
    for k, va in a.items():
        vb = b.get(k)
        if vb is None:
            out[k] = va
            continue
        mb, kb = _split(vb)
        if mb:
            continue
        ma, ka = _split(va)
        n = _join(ma, recursive_difference(ka, kb))
        if n is not None:
            out[k] = n
    return out


def leaves(a: FieldSet) -> FieldSet:
    """The members that have no members under them (``Set.Leaves``)."""
    out: FieldSet = {}
    for k, v in a.items():
        _, kids = _split(v)
        out[k] = leaves(kids) if kids else {}
    return out


def paths(a: FieldSet) -> list[tuple[str, ...]]:
    """The members of ``a`` as element tuples, in Go's order."""
    out: list[tuple[str, ...]] = []

    def walk(node: FieldSet, prefix: tuple[str, ...]) -> None:
        for k in sorted(node, key=_element_order):
            member, kids = _split(node[k])
            p = (*prefix, k)
            if member:
                out.append(p)
            walk(kids, p)

    walk(a, ())
    return out


def path_string(elements: tuple[str, ...]) -> str:
    """A path as ``fieldpath.Path.String`` prints it: ``.spec.containers[name="app"].image``."""
    parts: list[str] = []
    for e in elements:
        tag, text = e[0], e[2:]
        if tag == "f":
            parts.append("." + text)
        elif tag == "k":
            key = json.loads(text)
            parts.append("[" + ",".join(f"{n}={_json(key[n])}" for n in key) + "]")
        elif tag == "v":
            parts.append("[=" + text + "]")
        else:
            parts.append("[" + text + "]")
    return "".join(parts)


def canonical(a: FieldSet) -> FieldSet:
    """``a`` with its elements in the order Go serializes them (``.`` first, then sorted)."""
    if not a:
        return a
    return {k: canonical(a[k]) for k in in_order(a)}


def canonical_level(a: FieldSet) -> FieldSet:
    """``a`` with its own elements in Go's order (its children taken as they are)."""
    if len(a) < 2:
        return a
    return {k: a[k] for k in in_order(a)}


def field_element(name: str) -> str:
    """The element naming a struct field or map key."""
    return "f:" + name


def key_element(fields: dict[str, Any]) -> str:
    """The element of an associative list item with these key fields (sorted by name, as Go sorts them)."""
    if len(fields) == 1:
        (n, v), = fields.items()
        if type(v) is str and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
            # (the common case, without the encoder)
            return f'k:{{"{n}":"{v}"}}'
    parts: list[str] = []
    for n in sorted(fields):  # (several keys of plain strings and ints, a port's: without the encoder too)
        v = fields[n]
        if type(v) is int:
            parts.append(f'"{n}":{v}')
        elif type(v) is str and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
            parts.append(f'"{n}":"{v}"')
        else:
            return "k:" + _json({n: fields[n] for n in sorted(fields)})
    return "k:{" + ",".join(parts) + "}"


def value_element(value: Any) -> str:
    """The element of a set list item."""
    if type(value) is str and value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'v:"{value}"'  # (the common case, without the encoder)
    return "v:" + _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


_TAG_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


_ORDER: dict[str, tuple[Any, ...]] = {MEMBER: (-1,)}


def in_order(elements: Any) -> list[str]:
    """The path elements in Go's order: ``.`` first, then fields by name, keys, values, indexes.

    Fields alone (the common case) sort as their strings do: ``.`` sorts before ``f:``. Sorted so, they
    are fields alone exactly when the last starts with ``f`` and the first (or the one after ``.``) does
    too (or is ``.``): anything else sorts before or after them all.
    """
    out = sorted(elements)
    if not out:
        return out
    first = out[1] if len(out) > 1 and out[0] == MEMBER else out[0]
    last = out[-1]
    if (first[0] == "f" or first == MEMBER) and (last[0] == "f" or last == MEMBER):
        return out
    return sorted(elements, key=_element_order)  # (the input: ties keep its order, as before)


#: How many elements :data:`_ORDER` keeps before it starts again (keys and values name objects:
#: owner uids, finalizers; a long test session meets ever new ones).
_ORDER_SIZE = 65536


def _element_order(e: str) -> tuple[Any, ...]:
    hit = _ORDER.get(e)
    if hit is None:
        if len(_ORDER) >= _ORDER_SIZE:
            _ORDER.clear()
            _ORDER[MEMBER] = (-1,)
        hit = _ORDER[e] = _order_of(e)
    return hit


def _order_of(e: str) -> tuple[Any, ...]:
    tag = e[0]
    if tag == "f":
        return (0, e[2:])
    if tag == "i":
        return (3, int(e[2:]) if e[2:].isdigit() else 0)
    try:
        value = json.loads(e[2:])
    except ValueError:
        return (_TAG_RANK.get(tag, 4), (9, e))
    if tag == "k" and isinstance(value, dict):
        return (1, tuple((n, _value_order(value[n])) for n in sorted(value)))
    return (_TAG_RANK.get(tag, 4), _value_order(value))


def _value_order(v: Any) -> tuple[Any, ...]:
    """A total order over JSON values of mixed types (numbers, strings, booleans, others)."""
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, (int, float)):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    return (3, _json(v))
