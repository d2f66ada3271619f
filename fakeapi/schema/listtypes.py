"""``x-kubernetes-list-type`` set and map lists: duplicates (``listtype.ValidateListSetsAndMaps``).

Only structural (CRD) schemas declare them; :class:`fakeapi.schema.compiled.CompiledSchema` imports
this module when it first validates an object of such a schema.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.machinery.errors import FIELD_VALUE_DUPLICATE, FIELD_VALUE_INVALID, Cause, render_value
from fakeapi.schema.structural import Chain, chain_text


def _has_list_types(node: Any, memo: dict[int, bool] | None = None) -> bool:
    """Does a schema node hold a set or map list anywhere below it? (``memo``: answers by node id.)"""
    if not isinstance(node, dict):
        return False
    if memo is not None:
        hit = memo.get(id(node))
        if hit is not None:
            return hit
    result = node.get("x-kubernetes-list-type") in ("set", "map")
    if not result:
        props = node.get("properties")
        if isinstance(props, dict) and any(_has_list_types(v, memo) for v in props.values()):
            result = True
        else:
            result = _has_list_types(node.get("items"), memo) or _has_list_types(node.get("additionalProperties"), memo)
    if memo is not None:
        memo[id(node)] = result
    return result


def _hashable(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return (type(v) is bool, v)


class ListTypePlan:
    """The parts of a schema that hold ``x-kubernetes-list-type`` set/map lists (compiled once)."""

    __slots__ = ("ap", "items", "keys", "list_type", "props")

    def __init__(self) -> None:
        self.props: dict[str, ListTypePlan] = {}
        self.ap: ListTypePlan | None = None
        self.items: ListTypePlan | None = None
        self.list_type = ""
        self.keys: tuple[str, ...] = ()

    def causes(self, x: Any, path: Chain, out: list[Cause], base: Any = None) -> None:
        """Append to ``out`` the duplicates in the set and map lists of ``x`` (at ``path``); ``base`` as for
        :func:`list_type_causes`."""
        list_type_causes(x, self, path, out, base)


def compile_plan(node: Any, memo: dict[int, bool] | None = None) -> ListTypePlan | None:
    """A plan that reaches only the list-type lists of a structural schema (None: there are none)."""
    if memo is None:
        memo = {}  # the nodes are alive (and their ids stable) for the whole compilation
    if not _has_list_types(node, memo):
        return None
    n = ListTypePlan()
    lt = node.get("x-kubernetes-list-type")
    if lt in ("set", "map"):
        n.list_type = lt
        n.keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
    for k, v in (node.get("properties") or {}).items():
        sub = compile_plan(v, memo)
        if sub is not None:
            n.props[k] = sub
    n.ap = compile_plan(node.get("additionalProperties"), memo)
    n.items = compile_plan(node.get("items"), memo)
    return n


def list_type_causes(x: Any, n: ListTypePlan, path: Chain, out: list[Cause], base: Any = None) -> None:
    """``listtype.ValidateListSetsAndMaps``: duplicates in set and map lists.

    ``base``: the stored object an update replaces; values that *are* its values at the same
    path were checked when stored and are skipped (validation ratcheting).
    """
    tx = type(x)
    if tx is dict:
        props = n.props
        ap = n.ap
        db = base if type(base) is dict else None
        for k, v in x.items():
            sub = props.get(k)
            if sub is None:
                if ap is None or k in props:
                    continue
                sub = ap
            if type(v) is dict or type(v) is list:
                b = db.get(k) if db is not None else None
                if b is not v:
                    list_type_causes(v, sub, (path, k), out, b)
    elif tx is list:
        lt = n.list_type
        if lt == "set":
            if len(x) > 1:
                seen: set[Any] = set()
                for i, v in enumerate(x):
                    h = _hashable(v)
                    if h in seen:
                        out.append(Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {render_value(v)}",
                                         chain_text((path, i))))
                    seen.add(h)
        elif lt == "map" and len(x) > 1:
            keys = n.keys
            seen_keys: set[Any] = set()
            for i, v in enumerate(x):
                if v is None:
                    continue
                if type(v) is not dict:
                    out.append(Cause(FIELD_VALUE_INVALID, f"Invalid value: {render_value(v)}: must be an object for an "
                                     "array of list-type map", chain_text((path, i))))
                    return
                h = tuple(_hashable(v.get(k, _MISSING_KEY)) for k in keys)
                if h in seen_keys:
                    kv = {k: v[k] for k in keys if k in v}
                    out.append(Cause(FIELD_VALUE_DUPLICATE, f"Duplicate value: {render_value(kv)}",
                                     chain_text((path, i))))
                seen_keys.add(h)
        it = n.items
        if it is not None:
            lb = base if type(base) is list else ()
            nb = len(lb)
            for i, v in enumerate(x):
                if type(v) is dict or type(v) is list:
                    b = lb[i] if i < nb else None
                    if b is not v:
                        list_type_causes(v, it, (path, i), out, b)


_MISSING_KEY = "\x00missing"
