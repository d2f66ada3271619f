"""managedFields: who owns which fields, kept on every write, and server-side apply.

A port of k8s.io/apimachinery's ``managedfields`` field manager over the typed
operations of :mod:`fakeapi.machinery.typedfields` (those of apply in :mod:`fakeapi.machinery.typedapply`,
imported when a server first applies):

- :func:`record_update`: a create, update or patch (operation ``Update``) takes
  the fields it added or changed from every other manager, and the fields it
  removed leave every manager (``Updater.Update``); the writer's entry gets the
  time only when it changed something (``managedFieldsUpdater``).
- :func:`apply`: an apply merges the configuration into the live object, drops
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
from typing import TYPE_CHECKING, Any

from fakeapi.machinery import errors
from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.machinery.typedfields import ApplyMemo, Memo, TypeNode, changes, root_type

if TYPE_CHECKING:
    from fakeapi.machinery import typedapply
else:  # (imported on first use: a server that never applies never compiles it; issue 22)
    typedapply = lazy_module(__name__, "fakeapi.machinery.typedapply")

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
                            covered=self.covered if fields is self.fields else None)

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
    meta = s.get("f:metadata")
    if ("f:apiVersion" in s or "f:kind" in s or (meta is not None and (not meta or fp.MEMBER in meta))
            or any(k in s for k in ignored)):
        s = fp.difference(s, STRIPPED)
        if ignored:
            s = fp.recursive_difference(s, ignored)
    return s



def record_update(managed: Managed, old: Any, new: Any, t: TypeNode, *, manager: str, api_version: str,
                  subresource: str, now: str, memo: Memo | None = None) -> Managed:
    """The entries after a non-apply write of ``new`` over ``old`` (``old`` a zero object on create).

    ``t``: the object's root type skipping the fields no manager owns, and those the subresource
    resets (:func:`compare_skip`). ``memo``: the server's memo of :func:`~fakeapi.machinery.typedfields.changes`.
    """
    changed, removed = changes(old, new, t, memo)  # (``t`` skips what no manager owns: see compare_skip)
    meta = changed.get("f:metadata")
    if meta is not None and (not meta or fp.MEMBER in meta):  # (metadata added whole: itself never owned)
        changed = {**changed, "f:metadata": {k: v for k, v in meta.items() if k != fp.MEMBER}}
        if not changed["f:metadata"]:
            del changed["f:metadata"]
    if not changed and not removed:
        return managed
    my_key = (manager, UPDATE, api_version, subresource)  # (ManagerEntry.key of the writer's entry)
    prev = managed.get(my_key)
    if not removed and prev is not None and len(managed) <= MAX_UPDATE_MANAGERS and prev.owns(changed):
        # The usual write (a controller setting its own fields again): it removed nothing and changed
        # only fields its entry already owns. If no other entry owns any of them, the full computation
        # below gives every entry its very set back (the difference takes nothing from the others, the
        # writer's union adds nothing): only the writer's time can change, so no entry is rebuilt.
        for key, e in managed.items():
            if not e.fields or (key != my_key and fp.difference(e.fields, changed) is not e.fields):
                break  # (an empty entry, dropped below; or another owner loses fields)
        else:
            return managed if prev.time == now else {**managed, my_key: prev.with_fields(prev.fields, now)}
    out: Managed = {}
    for key, e in managed.items():
        # (the writer's own entry keeps what it changed: (prev - removed - changed) + changed)
        s = e.fields if key == my_key else fp.difference(e.fields, changed)
        if removed:
            s = fp.difference(s, removed)
        if s:
            out[key] = e if s is e.fields else e.with_fields(s)
    if changed:
        kept = out.get(my_key)
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


class ApplyConflict(Exception):
    """An apply would change fields other managers own: ``(manager entry, path)`` pairs."""

    def __init__(self, conflicts: list[tuple[ManagerEntry, tuple[str, ...]]]) -> None:
        self.conflicts = conflicts
        super().__init__(conflict_message(conflicts))


def conflict_message(conflicts: list[tuple[ManagerEntry, tuple[str, ...]]]) -> str:
    """``getConflictMessage`` of conflict.go."""
    if len(conflicts) == 1:
        e, p = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {e.describe()}: {fp.path_string(p)}"
    by: dict[str, list[tuple[str, ...]]] = {}
    who: dict[str, ManagerEntry] = {}
    for e, p in conflicts:
        ident = _identifier(e)
        by.setdefault(ident, []).append(p)
        who[ident] = e
    lines: list[str] = []
    for ident in sorted(by):
        lines.append(f"conflicts with {who[ident].describe()}:")
        lines.extend(f"- {fp.path_string(p)}" for p in by[ident])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def _identifier(e: ManagerEntry) -> str:
    """The JSON manager identifier Go sorts conflicts by."""
    ident: dict[str, Any] = {"manager": e.manager, "operation": e.operation}
    if e.operation == UPDATE:
        ident["apiVersion"] = e.api_version
    if e.subresource:
        ident["subresource"] = e.subresource
    return json.dumps(ident, separators=(",", ":"))


def conflict_error(err: ApplyConflict) -> errors.ApiError:
    """409 Conflict with a ``FieldManagerConflict`` cause per field (``NewApplyConflict``)."""
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {e.describe()}",
               "field": fp.path_string(p)} for e, p in err.conflicts]
    return errors.ApiError(errors.status_body(409, "Conflict", str(err), {"causes": causes}))


@dataclass(slots=True)
class Applied:
    """An apply's outcome: the merged object, the entries, and whether the object changed."""

    obj: dict[str, Any]
    managed: Managed
    changed: bool


def apply(managed: Managed, live: dict[str, Any], config: dict[str, Any], t: TypeNode, *, manager: str,
          api_version: str, subresource: str, status_subresource: bool, force: bool, now: str,
          closed: bool = False, eager_prune: bool = False, memo: ApplyMemo | None = None) -> Applied:
    """Merge an applied configuration into ``live`` as ``manager`` (raises ApplyConflict, TypedError).

    ``closed``: undeclared fields are errors (built-in kinds, whose Go types have no room for them).
    ``eager_prune``: prune as ``Updater.prune`` always does, even when the manager applies every field
    it applied last time (then prune removes nothing, so it is skipped: the reference computation's switch).
    ``memo``: the server's :class:`~fakeapi.machinery.typedfields.ApplyMemo`.
    """
    ignored = _ignored(subresource, status_subresource)
    config_set = _strip(typedapply.to_field_set(config, t, closed=closed, memo=memo), ignored)  # (in Go's order, kept by _strip)
    merged = typedapply.merge(live, config, t, checked=True, memo=memo)  # (config walked by to_field_set just above)
    me = ManagerEntry(manager, APPLY, api_version, config_set, None, subresource)
    last = managed.get(me.key)
    managers: Managed = {k: e for k, e in managed.items() if k != me.key}
    managers[me.key] = me if last is None else ManagerEntry(manager, APPLY, api_version, config_set, last.time, subresource)
    if last is not None and last.fields and (eager_prune or (last.fields != config_set  # (the usual re-apply)
                                                             and fp.difference(last.fields, config_set))):
        # (a re-apply of the same fields or more prunes nothing: what prune first removes lies under
        # paths of the last applied set, which the new one holds, with every item and named field
        # above them (ToFieldSet, EnsureNamedFieldsAreMembers): all of it is owned, so all comes back)
        merged = _prune(merged, managers, last.fields, t)
    changed, removed = changes(live, merged, t)
    changed, removed = _strip(changed, ignored), _strip(removed, ignored)
    conflicts: list[tuple[ManagerEntry, tuple[str, ...]]] = []
    out: Managed = {}
    for key, e in managers.items():
        if key == me.key:
            out[key] = e
            continue
        c = fp.intersection(e.fields, changed)
        s = e.fields
        if c:
            conflicts.extend((e, p) for p in fp.paths(fp.leaves(c)))
            s = fp.difference(s, c)
        s = fp.difference(s, removed)
        if s:
            out[key] = e if s is e.fields else e.with_fields(s)
    if conflicts and not force:
        raise ApplyConflict(sorted(conflicts, key=lambda ep: (_identifier(ep[0]), ep[1])))
    differs = merged != live
    if differs:
        out[me.key] = out[me.key].with_fields(out[me.key].fields, now)
    if not out[me.key].fields:
        del out[me.key]
    return Applied(merged, out, differs)


def _prune(merged: dict[str, Any], managers: Managed, last: FieldSet, t: TypeNode) -> dict[str, Any]:
    """``Updater.prune``: what the applier owned before and no longer applies, unless someone owns it."""
    def named(s: FieldSet, v: Any) -> FieldSet:
        return typedapply.named_fields_as_members(s, v, t)

    pruned = typedapply.remove_items(merged, named(last, merged), t)
    owned: FieldSet = fp.EMPTY
    for e in managers.values():
        owned = fp.union(owned, e.fields)
    merged_set = named(typedapply.to_field_set(merged, t), merged)
    pruned_set = named(typedapply.to_field_set(pruned, t), pruned)
    pruned = typedapply.remove_items(merged, fp.difference(merged_set, fp.union(pruned_set, named(owned, merged))), t)
    pruned_set = named(typedapply.to_field_set(pruned, t), pruned)
    result: dict[str, Any] = typedapply.remove_items(merged, fp.intersection(fp.difference(merged_set, pruned_set),
                                                                   named(last, merged)), t)
    return result
