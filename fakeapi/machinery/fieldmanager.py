"""managedFields: who owns which fields, kept on every write, and server-side apply.

A port of k8s.io/apimachinery's ``managedfields`` field manager over the typed
operations of :mod:`fakeapi.machinery.typedfields` (apply's own in :mod:`fakeapi.machinery.serverapply`,
over :mod:`fakeapi.machinery.typedapply`, both imported when a server first applies):

- :func:`record_update`: a create, update or patch (operation ``Update``) takes
  the fields it added or changed from every other manager, and the fields it
  removed leave every manager (``Updater.Update``); the writer's entry gets the
  time only when it changed something (``managedFieldsUpdater``).
- :func:`~fakeapi.machinery.serverapply.apply`: an apply merges the configuration into the live object, drops
  the fields the same manager applied last time and no longer does (unless
  another manager owns them), and answers 409 with the conflicting fields when
  it would change a value another manager owns, unless forced (``Updater.Apply``,
  ``prune``, ``NewConflictError``).

Entries are keyed like ``BuildManagerIdentifier``: manager, operation, subresource,
and (for ``Update`` only) the apiVersion. The server-set metadata fields are never
owned (``stripMetaManager``), nor the fields a subresource resets (``status`` for
the main resource of a kind with a status subresource, ``spec`` for ``/status``).
Entries are encoded sorted as ``sortEncodedManagedFields`` sorts them; past ten
``Update`` managers the oldest merge into ``ancient-changes`` (``capUpdateManagers``).
Not ported: the upgrade of client-side-apply annotations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.typedfields import Memo, TypeNode, changes, root_type

APPLY, UPDATE = "Apply", "Update"

#: Paths never owned: ``stripMetaManager``'s list (``metadata`` itself as a member only).
STRIPPED: FieldSet = {
    "f:apiVersion": {}, "f:kind": {},
    "f:metadata": {".": {}, **{"f:" + f: {} for f in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
        "managedFields", "resourceVersion")}},
}
_MAIN_RESET: FieldSet = {"f:status": {}}
_STATUS_RESET: FieldSet = {"f:spec": {}}


@dataclass(slots=True)
class ManagerEntry:
    """One managedFields entry, its ``fieldsV1`` being the owned set (a value: never changed once made)."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: str | None = None
    subresource: str = ""
    #: The entry as read from a stored object, reused while ``fields`` is unchanged.
    raw: dict[str, Any] | None = field(default=None, compare=False)
    #: The last changed paths of a write found all in ``fields`` (fp.covers), kept with the set: the
    #: next write of the same fields is answered by one comparison at C speed.
    covered: FieldSet | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """``BuildManagerIdentifier``: appliers are one manager whatever the apiVersion."""
        return (self.manager, self.operation, self.api_version if self.operation == UPDATE else "", self.subresource)

    def with_fields(self, fields: FieldSet, time: str | None = None) -> ManagerEntry:
        """This entry owning ``fields`` instead (at ``time``, when given)."""
        return ManagerEntry(self.manager, self.operation, self.api_version, fields,
                            self.time if time is None else time, self.subresource,
                            None, self.covered if fields is self.fields else None)  # (positional: no keywords)

    def owns(self, changed: FieldSet) -> bool:
        """Whether ``fields`` holds every path of ``changed`` (:func:`fieldpath.covers`, remembered)."""
        if self.covered is not None and self.covered == changed:
            return True
        if fp.covers(self.fields, changed):
            self.covered = changed  # (sets are values: never changed once made)
            return True
        return False

    def describe(self) -> str:
        """``printManager`` of conflict.go (the identifier has no time)."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def encode(self) -> dict[str, Any]:
        """The entry as a ManagedFieldsEntry (Go field order, omitempty)."""
        if self.raw is not None:
            return self.raw
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self.fields
        if self.subresource:
            out["subresource"] = self.subresource
        self.raw = out  # (stored as it is: never mutated)
        return out


Managed = dict[tuple[str, str, str, str], ManagerEntry]


def decode(entries: Any) -> Managed | None:
    """The entries of a ``metadata.managedFields`` list; None when they cannot be read
    (``DecodeManagedFields`` failing: the live object's are used instead)."""
    if not isinstance(entries, list):
        return None
    out: Managed = {}
    for e in entries:
        if not isinstance(e, dict):
            return None
        op = e.get("operation", "")
        fields = e.get("fieldsV1", {})
        if e.get("fieldsType", "FieldsV1") not in ("FieldsV1", "") or not isinstance(fields, dict):
            return None
        if op not in (APPLY, UPDATE) and (op or fields):
            return None
        entry = ManagerEntry(str(e.get("manager", "")), op or UPDATE, str(e.get("apiVersion", "")), fields,
                             e.get("time") if isinstance(e.get("time"), str) else None, str(e.get("subresource", "")),
                             e if op and e.get("fieldsType") == "FieldsV1" else None)
        out[entry.key] = entry
    return out


def encode(managed: Managed) -> list[dict[str, Any]]:
    """The entries sorted as ``sortEncodedManagedFields``: operation, time, manager, apiVersion, subresource."""
    if len(managed) == 1:
        (only,) = managed.values()
        return [only.encode()] if only.fields else []
    if len(managed) == 2:  # (the usual two, a controller's and a status writer's: no key function called)
        a, b = managed.values()
        if (b.operation, b.time or "", b.manager, b.api_version, b.subresource) < (
                a.operation, a.time or "", a.manager, a.api_version, a.subresource):
            a, b = b, a  # (only when strictly before: a stable sort's order)
        # (ManagerEntry.encode's first case inline; no comprehension: its frame costs more than the two)
        ra = a.raw if a.raw is not None else a.encode()
        rb = b.raw if b.raw is not None else b.encode()
        if a.fields and b.fields:
            return [ra, rb]
        return [ra] if a.fields else [rb] if b.fields else []
    entries = sorted(managed.values(), key=_sort_key)
    return [e.encode() for e in entries if e.fields]


def _sort_key(e: ManagerEntry) -> tuple[str, str, str, str, str]:
    return (e.operation, e.time or "", e.manager, e.api_version, e.subresource)


def _ignored(subresource: str, status_subresource: bool) -> FieldSet:
    if subresource == "status":
        return _STATUS_RESET
    return _MAIN_RESET if status_subresource else fp.EMPTY


_UNOWNED_ROOT = frozenset({"apiVersion", "kind"})


# (a status write keeps the stored metadata, as the status strategies do: nothing there to compare)
_SKIP_STATUS_WRITE = _UNOWNED_ROOT | {"spec", "metadata"}
_SKIP_MAIN_WRITE = _UNOWNED_ROOT | {"status"}


def compare_skip(subresource: str, status_subresource: bool) -> frozenset[str]:
    """The top-level fields a write's comparison passes over: never owned, or reset by the subresource."""
    if subresource == "status":
        return _SKIP_STATUS_WRITE
    return _SKIP_MAIN_WRITE if status_subresource else _UNOWNED_ROOT


_COMPARE_TYPES: dict[tuple[int, str, bool], tuple[Any, TypeNode]] = {}


def compare_type(schema: Any, subresource: str, status_subresource: bool) -> TypeNode:
    """The root type :func:`record_update` compares a write of ``subresource`` with: the schema's,
    skipping :func:`compare_skip`'s fields (cached by schema, as :func:`root_type` is)."""
    key = (id(schema), subresource, status_subresource)
    hit = _COMPARE_TYPES.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    t = root_type(schema, compare_skip(subresource, status_subresource))
    _COMPARE_TYPES[key] = (schema, t)
    return t


def _strip(s: FieldSet, ignored: FieldSet) -> FieldSet:
    """An applied set without what no manager owns (``fp.difference(s, STRIPPED)``) and the fields the
    subresource resets (``fp.recursive_difference(s, ignored)``), in one pass (apply's)."""
    meta = s.get("f:metadata")
    if not ("f:apiVersion" in s or "f:kind" in s or (meta is not None and (not meta or fp.MEMBER in meta))
            or not s.keys().isdisjoint(ignored)):
        return s
    if ignored is not fp.EMPTY and ignored is not _MAIN_RESET and ignored is not _STATUS_RESET:
        return fp.recursive_difference(fp.difference(s, STRIPPED), ignored)
    out: FieldSet = {}
    for k, v in s.items():
        if k in ignored:
            continue  # (a reset field is a member only: it goes with all under it)
        if k in _STRIPPED_ROOT:
            if not v:
                continue
            if fp.MEMBER in v:
                v = {e: x for e, x in v.items() if e != fp.MEMBER}
                if not v:
                    continue
        elif k == "f:metadata":
            if not v:
                continue  # (STRIPPED's metadata node is a member)
            hit = _STRIPPED_METAS.get(id(v))
            if hit is not None and hit[0] is v:
                v = hit[1]
            else:
                n = _without_members(v, _STRIPPED_META)
                if len(_STRIPPED_METAS) >= 256:
                    del _STRIPPED_METAS[next(iter(_STRIPPED_METAS))]
                _STRIPPED_METAS[id(v)] = (v, n)  # (kept alive with its id: a set is never changed)
                v = n
            if not v:
                continue
        out[k] = v
    return out


#: The metadata nodes :func:`_strip` met, by identity, and each stripped: an apply memo shares one node
#: between the configurations of one shape (see :func:`fakeapi.machinery.typedapply.to_field_set`).
_STRIPPED_METAS: dict[int, tuple[FieldSet, FieldSet]] = {}


_STRIPPED_ROOT = frozenset(k for k in STRIPPED if k != "f:metadata")
_STRIPPED_META = frozenset(STRIPPED["f:metadata"])


def _without_members(a: FieldSet, members: frozenset[str]) -> FieldSet:
    """``fp.difference(a, {m: {} for m in members})``: each of these elements no longer a member
    (gone when nothing lies under it); ``a`` itself when none is."""
    out: FieldSet | None = None
    for k in a.keys() & members:
        va = a[k]
        if not va:
            n: FieldSet | None = None
        elif fp.MEMBER in va:
            n = {e: v for e, v in va.items() if e != fp.MEMBER} or None
        else:
            continue
        if out is None:
            out = dict(a)
        if n is None:
            del out[k]
        else:
            out[k] = n
    return a if out is None else out



#: The metadata nodes of creates :func:`record_update` met, by identity, each without its member.
_ADDED_METAS: dict[int, tuple[FieldSet, FieldSet]] = {}


def record_update(managed: Managed, old: Any, new: Any, t: TypeNode, *, manager: str, api_version: str,
                  subresource: str, now: str, memo: Memo | None = None) -> Managed:
    """The entries after a non-apply write of ``new`` over ``old`` (``old`` a zero object on create).

    ``t``: the object's root type skipping the fields no manager owns, and those the subresource
    resets (:func:`compare_skip`). ``memo``: the server's memo of :func:`~fakeapi.machinery.typedfields.changes`.
    """
    changed, removed = changes(old, new, t, memo)  # (``t`` skips what no manager owns: see compare_skip)
    meta = changed.get("f:metadata")
    if meta is not None and (not meta or fp.MEMBER in meta):  # (metadata added whole: itself never owned)
        hit = _ADDED_METAS.get(id(meta))
        if hit is not None and hit[0] is meta:
            stripped = hit[1]
        else:  # (a memo's answer is one node shared by the creates of one template: stripped once)
            stripped = {k: v for k, v in meta.items() if k != fp.MEMBER}
            if len(_ADDED_METAS) >= 256:
                del _ADDED_METAS[next(iter(_ADDED_METAS))]
            _ADDED_METAS[id(meta)] = (meta, stripped)  # (kept alive with its id: a set is never changed)
        changed = {**changed, "f:metadata": stripped} if stripped else {
            k: v for k, v in changed.items() if k != "f:metadata"}
    if not changed and not removed:
        return managed
    my_key = (manager, UPDATE, api_version, subresource)  # (ManagerEntry.key of the writer's entry)
    prev = managed.get(my_key)
    if not removed and prev is not None and len(managed) <= MAX_UPDATE_MANAGERS and (
            prev.covered == changed or prev.owns(changed)):  # (the remembered answer first, without a call)
        # The usual write (a controller setting its own fields again): it removed nothing and changed
        # only fields its entry already owns. If no other entry owns any of them, the full computation
        # below gives every entry its very set back (the difference takes nothing from the others, the
        # writer's union adds nothing): only the writer's time can change, so no entry is rebuilt.
        for e in managed.values():
            # (an entry sharing no top-level field with the changes keeps its set: no difference called)
            if not e.fields or (e is not prev and not changed.keys().isdisjoint(e.fields)
                                and fp.difference(e.fields, changed) is not e.fields):
                break  # (an empty entry, dropped below; or another owner loses fields)
        else:
            return managed if prev.time == now else {**managed, my_key: prev.with_fields(prev.fields, now)}
    out: Managed = {}
    kept: ManagerEntry | None = None  # (the writer's entry in ``out``)
    changed_keys = changed.keys()
    for key, e in managed.items():
        # (the writer's own entry keeps what it changed: (prev - removed - changed) + changed)
        s = e.fields
        if e is not prev and not changed_keys.isdisjoint(s):  # (else the difference is ``s`` itself)
            s = fp.difference(s, changed)  # (``e is prev``: the entry under ``my_key``, found by identity)
        if removed and not removed.keys().isdisjoint(s):
            s = fp.difference(s, removed)
        if s:
            n = out[key] = e if s is e.fields else e.with_fields(s)
            if e is prev:
                kept = n
    if changed:
        mine = fp.union(kept.fields if kept is not None else fp.EMPTY, changed)
        if not (kept is prev and prev is not None and mine is prev.fields and prev.time == now):
            base = prev or ManagerEntry(manager, UPDATE, api_version, fp.EMPTY, None, subresource)
            out[my_key] = base.with_fields(mine, now)
    return out if len(out) <= MAX_UPDATE_MANAGERS else _cap_update_managers(out)


#: ``DefaultMaxUpdateManagers``: past this many ``Update`` entries, the oldest are merged.
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


def _cap_update_managers(managed: Managed) -> Managed:
    """``capUpdateManagers``: merge the oldest ``Update`` entries, per apiVersion, into an
    ``ancient-changes`` entry until at most :data:`MAX_UPDATE_MANAGERS` are left."""
    updaters = [k for k, e in managed.items() if e.operation == UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managed
    updaters.sort(key=lambda k: (managed[k].time or "", _identifier(managed[k])))
    out = dict(managed)
    first_of_version: dict[str, tuple[str, str, str, str]] = {}
    length = len(updaters)
    for key in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        e = out[key]
        first = first_of_version.get(e.api_version)
        if first is None:
            first_of_version[e.api_version] = key
            continue
        bucket = ManagerEntry(ANCIENT_CHANGES, UPDATE, e.api_version, fp.EMPTY)
        if bucket.key not in out:
            out[bucket.key] = bucket.with_fields(out.pop(first).fields)
        out[bucket.key] = out[bucket.key].with_fields(fp.union(e.fields, out[bucket.key].fields), e.time)
        del out[key]
        length -= 1
    return out


def _identifier(e: ManagerEntry) -> str:
    """The JSON manager identifier Go sorts conflicts by."""
    ident: dict[str, Any] = {"manager": e.manager, "operation": e.operation}
    if e.operation == UPDATE:
        ident["apiVersion"] = e.api_version
    if e.subresource:
        ident["subresource"] = e.subresource
    return json.dumps(ident, separators=(",", ":"))
