"""Server-side apply's half of the schema-typed walks: field sets, merge, comparison and removal.

The walks a server-side apply needs beyond those of every write (:mod:`fakeapi.machinery.typedfields`,
which reads schemas into :class:`~fakeapi.machinery.typedfields.TypeNode` walk types and finds what a
write changed for the field manager), each a port of structured-merge-diff's ``typed`` package:

- :func:`to_field_set`: the paths an applied configuration sets (``ToFieldSet``), with the type
  checks of a built-in kind's closed structs (:func:`scalar_problem`, :func:`shape_problem`);
- :func:`merge`: an applied configuration merged into the live object (``Merge``);
- :func:`compare`: the paths a write added, modified and removed (``Compare``);
- :func:`remove_items`: an object without the paths of a set (``RemoveItems``), and
  :func:`named_fields_as_members` (``EnsureNamedFieldsAreMembers``), which apply's prune needs.

A module of its own so that a server which never applies never imports (nor, without a bytecode
cache, compiles) it: the field manager imports it when it first applies (issue 22).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.typedfields import (
    _DEDUCED,
    DEDUCED,
    LIST,
    MAP,
    MISSING,
    SCALAR,
    ApplyMemo,
    Path,
    TypedError,
    TypeNode,
    _content,
    _deduce,
    _index,
    _item_element,
    _keyed_items,
    _leaf_here,
    _render,
    _sorted,
    _sub,
    changes,
)

# --- ToFieldSet -----------------------------------------------------------------------


def to_field_set(obj: Any, t: TypeNode, *, closed: bool = False, memo: ApplyMemo | None = None) -> FieldSet:
    """The paths a value sets (``TypedValue.ToFieldSet``), in Go's order; raises TypedError on an invalid list.

    ``closed``: a key a struct does not declare is an error (``field not declared in schema``), as
    for the Go types of built-in kinds; otherwise it is read as deduced (custom resources are pruned).
    ``memo``: the sets of top-level fields by content (a configuration applied again), metadata's by its
    shape when it holds only strings and maps of them (:func:`_flat_shape`: labels' values change).
    """
    errors: list[tuple[str, str]] = []
    if memo is None or type(obj) is not dict or t.shape != MAP or t.leaf:
        out = _to_set(obj, t, (), errors, closed)
    else:
        out = {}
        for key, val in obj.items():
            mkey: tuple[int, bool, str, bytes | tuple[Any, ...]] | None = None
            if type(val) is str:
                ct, declared = t.child(key)
                if declared and ct.leaf and ct.scalar == "string":  # (apiVersion, kind: what _to_set_field
                    out["f:" + key] = fp.EMPTY                      # answers, a member, without the call)
                    continue
            if key == "metadata":
                shape = _flat_shape(val) if type(val) is dict else None
                if shape is not None:
                    mkey = (id(t), closed, key, shape)
            elif type(val) is dict or type(val) is list:
                content = _content(val)
                if content is not None:
                    mkey = (id(t), closed, key, content)
            if mkey is not None:
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
_STR_ONLY = frozenset({str})


def _flat_shape(v: dict[str, Any]) -> tuple[Any, ...] | None:
    """The keys of a map whose values are strings or maps of strings (metadata's name, labels,
    annotations), nested as they are; None for any other map.

    All a walk of such a map reads besides its keys is the type of each value (only an error's
    message shows a value, and an error is never memoised): its set is the same for the same shape.
    """
    shape: list[Any] = []
    for key, val in v.items():
        tv = type(val)
        if tv is str:
            shape.append(key)
        elif tv is dict and _STR_ONLY.issuperset(map(type, val.values())):
            shape.append((key, tuple(val)))
        else:
            return None
    return tuple(shape)


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
    for key, lk in lv.items():  # (the live keys first, then the configuration's others)
        rk = rv.get(key, MISSING)
        if rk is MISSING or (type(lk) is type(rk) and type(rk) is not dict and type(rk) is not list and lk == rk):
            out[key] = lk  # (what _merge_checked answers, without the call: the live value)
            continue
        mkey: tuple[int, str, bytes] | None = None
        if key != "metadata" and (type(rk) is dict or type(rk) is list) and (type(lk) is dict or type(lk) is list):
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
    for key, rk in rv.items():
        if key not in lv:  # (nothing live to share, nor to look up in the memo)
            same = False
            v = _merge_checked(MISSING, rk, t.child(key)[0], _sub((), "f:" + key), errors)
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
    if (not (lv_t is dict and lv) and not (type(rv) is dict and rv) if t.shape == MAP
            else not (lv_t is list and lv) and not (type(rv) is list and rv)):  # (_leaf_here, ``t`` not a leaf)
        return rv
    return _merge_node(lv, rv, t, path, errors, _merge_checked)


def _merge_node(lv: Any, rv: Any, t: TypeNode, path: Path, errors: list[tuple[str, str]], step: Any) -> Any:
    """A granular map or list merged, children by ``step``; ``lv`` itself when every child is its own."""
    if t.shape == MAP:
        lm = lv if type(lv) is dict else {}
        out: dict[str, Any] = {}
        same = type(lv) is dict
        checked = step is _merge_checked
        v: Any  # (any JSON value: a compiled build checks a variable's type on each assignment)
        for key, lk in lm.items():  # (the live keys first, then the config's others)
            rk = rv.get(key, MISSING)
            if rk is MISSING:
                out[key] = lk  # (what ``step`` answers, without the call)
                continue
            tk = type(lk)
            if checked and tk is type(rk) and lk == rk and ((tk is not dict and tk is not list) or same_json(lk, rk)):
                out[key] = lk  # (what _merge_checked answers, without the call)
                continue
            ct = t.child(key)[0]
            if checked and ct.leaf:
                if rk is not lk:  # (_merge_checked of a leaf that differs: the configuration's value)
                    same = False
                out[key] = rk
                continue
            if checked and tk is dict and type(rk) is dict and ct.shape == MAP and not ct.props and ct.item().leaf:
                v = _merge_leaf_map(lk, rk)  # (labels, annotations: what _merge_checked answers, in one loop)
            else:
                v = step(lk, rk, ct, (path, "f:" + key), errors)
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


def _merge_leaf_map(lm: dict[str, Any], rm: dict[str, Any]) -> dict[str, Any]:
    """:func:`_merge_checked` of two maps of a type whose every value is a leaf (no declared field):
    the configuration's values win but where they are the live ones' JSON; ``lm`` itself then."""
    out = dict(lm)  # (the live keys first, then the configuration's others)
    same = True
    for key, rk in rm.items():
        lk = lm.get(key, MISSING)
        if lk is MISSING:
            out[key] = rk
            same = False
            continue
        tk = type(lk)
        if tk is type(rk) and lk == rk and ((tk is not dict and tk is not list) or same_json(lk, rk)):
            continue
        out[key] = rk
        if rk is not lk:
            same = False
    return lm if same else out


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
