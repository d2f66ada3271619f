"""Targets: naming existing objects in operations and expectations.

A target is ``{kind, apiVersion?, namespace?, name | selector, where, pick}``
(docs/FIXTURES.md "Targets"). The harness resolves targets by
reading the store directly through :class:`StateReader`: these reads are the
harness looking, not a client calling, so they appear in no trace, count
against no fault rule and are never stale.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.harness.matcher import kind_shape, matches
from fakeapi.machinery.jsonutil import fast_copy

Obj = dict[str, Any]

#: Keys of a target (other keys of an operation's argument are ignored when resolving).
TARGET_KEYS = ("kind", "apiVersion", "namespace", "name", "selector", "where", "pick")


class TargetError(Exception):
    """A target that cannot be resolved as asked (unknown kind, none or several matches for ``pick: one``)."""


class StateReader:
    """Untraced, fault-free reads of what the server stores (for the harness, never for controllers)."""

    def __init__(self, api: Any) -> None:
        self.api = api

    def kind(self, kind: str, api_version: str | None = None) -> Any:
        """The served Kind for a name, plural or ``group/version/Kind`` (None when unknown)."""
        return self.api.kinds.find(kind, api_version)

    def require_kind(self, kind: str, api_version: str | None = None) -> Any:
        """Like :meth:`kind`, but a :class:`TargetError` when the kind is not served."""
        k = self.kind(kind, api_version)
        if k is None:
            from fakeapi.harness.names import kind_hint

            if any(x.kind == kind for x in self.api.kinds.all()):
                raise TargetError(kind_hint(self.api, kind, api_version))
            known = sorted(x.kind for x in self.api.kinds.all())
            from fakeapi.harness.suggest import did_you_mean

            raise TargetError(f"the server serves no kind `{kind}`" + (f" in {api_version}" if api_version else "")
                              + (did_you_mean(kind, known) or f" (served: {', '.join(known)})"))
        return k

    def _table(self, k: Any) -> Any:
        return self.api.store.table(k.group, k.plural)

    def _view(self, k: Any, obj: Obj, copy: bool) -> Obj:
        # (a CRD is always copied: its spec may be a sealed template's, which nothing may be handed;
        # see fakeapi.server.apiserver.APIServer.install_crd)
        out = fast_copy(obj) if copy or k.plural == "customresourcedefinitions" else dict(obj)
        out["apiVersion"] = k.api_version
        out["kind"] = k.kind
        return out

    def get(self, k: Any, namespace: str | None, name: str, *, copy: bool = True) -> Obj | None:
        """One stored object (a copy unless ``copy=False``: then never mutate it), or None."""
        e = self._table(k).get(namespace or "" if k.namespaced else "", name)
        return None if e is None else self._view(k, e.obj, copy)

    def list(self, k: Any, namespace: str | None = None, *, copy: bool = True) -> list[Obj]:
        """Stored objects of a kind (all namespaces when ``namespace`` is None), in storage-key order."""
        ns = (namespace or None) if k.namespaced else None
        return [self._view(k, e.obj, copy) for e in self._table(k).candidates(ns)]

    def creation_order(self) -> dict[tuple[str, str, str], int]:
        """Sequence number of the create call of each object, from the trace (for ``pick``)."""
        order: dict[tuple[str, str, str], int] = {}
        for c in self.api.trace.calls:
            if c.verb == "create" and c.wrote:
                order[(c.kind, c.namespace, c.name)] = c.seq
        return order


def parse_selector(selector: Any) -> Any:
    """A target's selector (a label-selector string or a ``{key: value}`` map) parsed; a malformed one is
    the 400 BadRequest the server answers a list with it."""
    from fakeapi.machinery import errors
    from fakeapi.machinery.selectors import SelectorError, parse_label_selector, selector_from_map

    try:
        return selector_from_map(selector) if isinstance(selector, dict) else parse_label_selector(str(selector))
    except SelectorError as e:
        raise errors.bad_request(str(e)) from e


def selector_matches(selector: Any, labels: dict[str, str] | None) -> bool:
    """Whether labels match a target's selector (see :func:`parse_selector`)."""
    return bool(parse_selector(selector).matches(labels or {}))


def describe(target: dict[str, Any]) -> str:
    """A short human description of a target (``EphemeralRunner ci/x`` or ``Pod in ci where {...}``)."""
    kind = str(target.get("kind", "?"))
    ns = target.get("namespace")
    if target.get("name"):
        text = f"{kind} {ns}/{target['name']}" if ns else f"{kind} {target['name']}"
    else:
        text = f"{kind} in {ns}" if ns else kind
    if target.get("selector") is not None:
        sel = target["selector"]
        text += f" with labels {sel if isinstance(sel, str) else ','.join(f'{k}={v}' for k, v in sel.items())}"
    if target.get("where") is not None:
        text += " where " + json.dumps(target["where"], separators=(",", ":"), ensure_ascii=False)
    return text


def object_id(obj: Obj) -> str:
    """``Kind ns/name`` (or ``Kind name``) of a stored object."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{obj.get('kind', '?')} {ns}/{meta.get('name')}" if ns else f"{obj.get('kind', '?')} {meta.get('name')}"


def resolve(reader: StateReader, target: dict[str, Any], *, default_pick: str | int = "one",
            copy: bool = True, captures: Any = None) -> list[Obj]:
    """The objects a target names, after ``pick``; :class:`TargetError` when ``pick: one`` is not met.

    ``captures`` (a :class:`~fakeapi.harness.captures.Captures`) serves ``$captured`` in ``where``.
    """
    k = reader.require_kind(str(target.get("kind", "")), target.get("apiVersion"))
    selector = target.get("selector")
    sel = parse_selector(selector) if selector is not None else None
    ns = target.get("namespace") if k.namespaced else None
    name = target.get("name")
    if name is not None:
        if ns is not None or not k.namespaced:
            one = reader.get(k, ns, str(name), copy=copy)
            found = [one] if one is not None else []
        else:
            found = [o for o in reader.list(k, None, copy=copy) if o["metadata"].get("name") == name]
    else:
        found = reader.list(k, ns, copy=copy)
    if sel is not None:
        found = [o for o in found if sel.matches(o["metadata"].get("labels") or {})]
    where = target.get("where")
    if where is not None:
        shape = kind_shape(k)
        if captures is not None:
            from fakeapi.harness.captures import uncaptured

            missing = uncaptured(where, captures)
            if missing:
                raise TargetError(f"where: {missing}")
        found = [o for o in found if matches(where, o, shape, captures)]
    pick = target.get("pick", default_pick)
    if pick == "all":
        return found
    if pick == "one":
        if len(found) != 1:
            names = ", ".join(object_id(o) for o in found[:10]) + (" ..." if len(found) > 10 else "")
            raise TargetError(
                f"expected exactly one {describe(target)}, found {len(found)}" + (f": {names}" if found else "")
                + ("; use pick: all, oldest, newest or an index" if len(found) > 1 else ""))
        return found
    ordered = sort_by_creation(reader, found)
    if pick == "oldest":
        return ordered[:1] if ordered else _none(target)
    if pick == "newest":
        return ordered[-1:] if ordered else _none(target)
    if isinstance(pick, int) and not isinstance(pick, bool):
        if 0 <= pick < len(ordered):
            return [ordered[pick]]
        raise TargetError(f"pick: {pick} but only {len(ordered)} {describe(target)} exist")
    raise TargetError(f"bad pick {pick!r}")


def _none(target: dict[str, Any]) -> list[Obj]:
    raise TargetError(f"no {describe(target)} exists")


def sort_by_creation(reader: StateReader, objs: list[Obj]) -> list[Obj]:
    """Objects in creation order: creationTimestamp, then the order of their create calls."""
    order = reader.creation_order()

    def key(o: Obj) -> tuple[str, int, str, str]:
        m = o.get("metadata") or {}
        return (str(m.get("creationTimestamp") or ""), order.get((o.get("kind", ""), m.get("namespace", ""),
                                                                   m.get("name", "")), 0),
                str(m.get("namespace") or ""), str(m.get("name") or ""))

    return sorted(objs, key=key)
