"""Server-side apply's half of the field manager: merge, prune and conflicts (``Updater.Apply``).

:func:`apply` merges an applied configuration into the live object and works out the managedFields
entries after it, over the typed walks of :mod:`fakeapi.machinery.typedapply` and the entries of
:mod:`fakeapi.machinery.fieldmanager` (see its docstring for the rules). A module of its own, with
:class:`ApplyConflict` and its 409 (:func:`conflict_error`), so that a server which never applies
never imports (nor, without a bytecode cache, compiles) it: the patch verb imports it on a server's
first apply (issue 22).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fakeapi.machinery import errors, typedapply
from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldmanager import (
    APPLY,
    Managed,
    ManagerEntry,
    _identifier,
    _ignored,
    _strip,
)
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.typedfields import ApplyMemo, TypeNode, changes


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
    my_key = (manager, APPLY, "", subresource)  # (ManagerEntry.key of an applier: no apiVersion)
    last = managed.get(my_key)
    sole = len(managed) == (0 if last is None else 1)  # (no other manager: nothing to compare, conflict or share)
    if last is not None and last.fields and (eager_prune or (last.fields != config_set  # (the usual re-apply)
                                                             and fp.difference(last.fields, config_set))):
        # (a re-apply of the same fields or more prunes nothing: what prune first removes lies under
        # paths of the last applied set, which the new one holds, with every item and named field
        # above them (ToFieldSet, EnsureNamedFieldsAreMembers): all of it is owned, so all comes back)
        owners = {k: e for k, e in managed.items() if k != my_key}
        owners[my_key] = ManagerEntry(manager, APPLY, api_version, config_set, last.time, subresource)
        merged = _prune(merged, owners, last.fields, t)
    if sole:  # (what the loop below answers for the applier's entry alone)
        differs = merged != live
        if not config_set:
            return Applied(merged, {}, differs)
        return Applied(merged, {my_key: ManagerEntry(manager, APPLY, api_version, config_set,
                                                     now if differs else None if last is None else last.time,
                                                     subresource)},
                       differs)
    me = ManagerEntry(manager, APPLY, api_version, config_set, None if last is None else last.time, subresource)
    managers: Managed = {k: e for k, e in managed.items() if k != my_key}
    managers[my_key] = me
    conflicts: list[tuple[ManagerEntry, tuple[str, ...]]] = []
    out: Managed = {}
    changed: FieldSet | None = None
    removed: FieldSet = fp.EMPTY
    for key, e in managers.items():
        if key == my_key:
            out[key] = e
            continue
        if changed is None:  # (what the merge changed, walked once: only other managers' entries need it)
            changed, removed = changes(live, merged, t)
            changed, removed = _strip(changed, ignored), _strip(removed, ignored)
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
        out[my_key] = me.with_fields(me.fields, now)
    if not me.fields:
        del out[my_key]
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
