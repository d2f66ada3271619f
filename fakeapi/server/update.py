"""PUT: the update pipeline (the main resource or its status).

decode -> preconditions (uid, resourceVersion) -> BeforeUpdate (what the client may not change,
the strategy's PrepareForUpdate, the status or everything but it kept) -> generation (the
strategy's rule) -> the strategy's BeginUpdate -> admit -> encode -> the last finalizer gone?
(delete) -> managedFields -> the strategy's hook before commit -> no-op? -> commit.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import errors, fieldmanager
from fakeapi.machinery.errors import Cause
from fakeapi.registry.kinds import Kind
from fakeapi.server.create import CreateVerb
from fakeapi.server.decoding import check_go_decodes
from fakeapi.server.pipeline import Outcome, Write, is_typed, mapping, registry_key, same_status
from fakeapi.server.store import Entry, body_differs, meta_differs
from fakeapi.server.unchanged import share_unchanged


class UpdateVerb(CreateVerb):
    """``update`` and the update steps a patch and an apply share with it (a create on update: the create verb's)."""

    def update(
        self,
        obj: dict[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        actor: str = "user",
        field_validation: str = "Warn",
        dry_run: bool = False,
        shared: bool = False,
    ) -> dict[str, Any]:
        """PUT: replace an object (or its status with ``subresource="status"``)."""
        kind = self._kind_of(obj)
        meta = mapping(obj.get("metadata"))
        name = str(meta.get("name") or "")
        ns = str(namespace or meta.get("namespace") or "") if kind.namespaced else ""
        sub = subresource or ""

        def run() -> Outcome:
            if kind.namespaced and not ns:
                raise errors.resource_not_found()
            # what the body sends back unchanged is the stored value (decoded, checked and encoded when
            # stored): shared, as a patch shares what it leaves, and skipped by the checks below
            found = self._table(kind).get(ns, name) if kind.stored_go_encoded and not sub and name else None
            body_in, unchanged = share_unchanged(obj, found.obj) if found is not None else (obj, ())
            # (the handler decodes the body first: this wins over a 404)
            check_go_decodes(kind, {k: v for k, v in obj.items() if k not in unchanged} if unchanged else obj)
            if not name:
                raise errors.bad_request("name is required")
            if kind.namespaced:
                self._namespace_for(kind, meta.get("namespace"), ns)  # checkName: body against URL (400)
            e = self._table(kind).get(ns, name)
            if sub and (sub != "status" or not kind.status_subresource):
                raise errors.not_found(kind.group, kind.plural, name)
            if e is None:
                if sub or not kind.strategy.allow_create_on_update:
                    raise errors.not_found(kind.group, kind.plural, name)
                return self._create_on_update(kind, obj, ns, field_validation, dry_run, actor)
            if unchanged and e is found:
                body = self._decode(kind, body_in, field_validation, shared=True, base=e.obj)
            else:
                body = self._decode(kind, obj, field_validation)
            bmeta = body["metadata"]
            bmeta.setdefault("name", name)
            if kind.namespaced:
                bmeta["namespace"] = self._namespace_for(kind, bmeta.get("namespace"), ns)
            else:
                bmeta.pop("namespace", None)
            uid = bmeta.get("uid")
            if uid and uid != e.uid:
                raise errors.conflict(
                    kind.group, kind.plural, name,
                    f"StorageError: invalid object, Code: 4, Key: {registry_key(kind, e.key)}, ResourceVersion: 0, "
                    f"AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in object meta: {e.uid}")
            return self._update_entry(kind, e, body, sub, dry_run, patch=False, manager=actor,
                                      body_managed=meta.get("managedFields"))

        return self._run("update", kind, ns, name, sub, actor, run, shared=shared)

    def _create_on_update(self, kind: Kind, obj: dict[str, Any], ns: str, field_validation: str,
                          dry_run: bool, actor: str) -> Outcome:
        """A PUT to a missing object of a kind whose strategy allows create on update: the create
        pipeline (``rest.BeforeCreate``: a new uid, creationTimestamp, generation, the strategy's
        PrepareForCreate and BeginCreate), answered 201. The body's resourceVersion is dropped, as
        the store's ``PrepareObjectForStorage`` does, rather than refused as a POST's would be."""
        body = {**obj, "metadata": {k: v for k, v in mapping(obj.get("metadata")).items() if k != "resourceVersion"}}
        return self._create(kind, body, ns, field_validation, dry_run, False, manager=actor)

    def _check_rv_precondition(self, kind: Kind, e: Entry, meta: dict[str, Any]) -> None:
        rv = meta.get("resourceVersion")
        if rv in (None, ""):
            if not kind.strategy.allow_unconditional_update:
                raise errors.ApiError(errors.status_body(
                    422, "Invalid",
                    f'{kind.qualified_resource} "{e.name}" is invalid: metadata.resourceVersion: Invalid value: 0: '
                    "must be specified for an update",
                    {"name": e.name, "group": kind.group, "kind": kind.plural, "causes": [{
                        "reason": errors.FIELD_VALUE_INVALID,
                        "message": "Invalid value: 0: must be specified for an update",
                        "field": "metadata.resourceVersion"}]} if kind.group else {
                        "name": e.name, "kind": kind.plural, "causes": [{
                            "reason": errors.FIELD_VALUE_INVALID,
                            "message": "Invalid value: 0: must be specified for an update",
                            "field": "metadata.resourceVersion"}]}))
            return
        if not isinstance(rv, str) or not rv.isdigit():
            raise errors.internal(f'invalid resource version "{rv}"' if isinstance(rv, str) else
                                  "resourceVersion must be a string")
        if int(rv) != e.rv:
            raise errors.conflict(kind.group, kind.plural, e.name)

    def _update_entry(self, kind: Kind, e: Entry, body: dict[str, Any], sub: str, dry_run: bool,
                      *, patch: bool, manager: str = "user", body_managed: Any = None,
                      applied: fieldmanager.Managed | None = None) -> Outcome:
        old = e.obj
        ometa = old["metadata"]
        strategy = kind.strategy
        typed = is_typed(kind)  # (asked once: three steps below want it)
        self._check_rv_precondition(kind, e, body["metadata"])
        # prepare: a status write changes the status alone; a write of the main resource gets BeforeUpdate
        # (the strategy's PrepareForUpdate and generation rule), then the strategy's BeginUpdate
        if sub == "status":
            new = _status_write(old, body)
        else:
            new = self._before_update(kind, e, body, patch, typed)
        if new["metadata"].get("creationTimestamp") is None:
            new["metadata"].pop("creationTimestamp", None)
        if sub != "status":
            strategy.begin_update(self, new, old)
        # admit (a status write keeps the stored metadata, resourceVersion aside: nothing there to check)
        self._admit(kind, new, old, sub, patch, same_meta=sub == "status",
                    same_body=same_status(new, old) if sub == "status" else None)
        # encode
        new = self._encode(kind, new, base=old)
        if sub != "status" and (kind.stored_go_encoded or typed):
            _share_unchanged(new, old)
        table = self._table(kind)
        # delete-on-update: the last finalizer removed from a deleting object
        nmeta = new["metadata"]
        if (sub != "status" and ometa.get("deletionTimestamp") and not nmeta.get("finalizers")
                and not ometa.get("deletionGracePeriodSeconds")):
            echo = {**new, "metadata": {**nmeta, "resourceVersion": ometa.get("resourceVersion", "")}}
            if dry_run:
                return Outcome(echo, 200, 0, False, e.name, stored=True)
            rv = self._commit(Write(kind, table, old=e, delete=True))
            strategy.after_delete(self, e.obj)
            return Outcome(echo, 200, rv, True, e.name, stored=True)
        # managedFields
        nmeta.pop("resourceVersion", None)
        if applied is not None:
            self._set_managed(nmeta, applied, ometa.get("managedFields"))
        else:
            self._record_managed(kind, new, e, body_managed if sub == "" else None, manager, sub)
        if sub != "status":
            strategy.before_commit_update(self, new, old, dry_run=True)  # (what it would record: the no-op check)
        # no-op, dry run, or commit (store, watch event, notify)
        if not body_differs(new, e, typed=typed) and not meta_differs(new, e):
            return Outcome(old, 200, 0, False, e.name, stored=True)
        if dry_run:
            new["metadata"]["resourceVersion"] = ometa.get("resourceVersion", "")
            return Outcome(new, 200, 0, False, e.name, stored=True)
        if sub != "status":
            strategy.before_commit_update(self, new, old, dry_run=False)
        w = Write(kind, table, new, old=e)
        rv = self._commit(w)
        return Outcome(new, 200, rv, True, e.name, stored=True)

    def _before_update(self, kind: Kind, e: Entry, new: dict[str, Any], patch: bool,
                       typed: bool | None = None) -> dict[str, Any]:
        """BeforeUpdate of the main resource: what the client may not change restored from the stored
        object (uid, creation and deletion, generation, the status of a kind with the subresource),
        the strategy's PrepareForUpdate, then the generation: bumped by any change outside metadata
        and status (custom resources) or by the strategy's rule. ``typed``: :func:`is_typed` of the kind
        (None: asked here)."""
        old = e.obj
        ometa = old["metadata"]
        meta = new["metadata"]
        strategy = kind.strategy
        if not meta.get("uid"):
            meta["uid"] = ometa["uid"]
        elif meta["uid"] != ometa["uid"] and patch:
            raise errors.invalid(kind.group, kind.kind, e.name, [Cause(
                errors.FIELD_VALUE_INVALID, f'Invalid value: "{meta["uid"]}": field is immutable', "metadata.uid")])
        meta["creationTimestamp"] = ometa.get("creationTimestamp")
        if ometa.get("deletionTimestamp"):
            meta["deletionTimestamp"] = ometa["deletionTimestamp"]
        if ometa.get("deletionGracePeriodSeconds") is not None and meta.get("deletionGracePeriodSeconds") is None:
            meta["deletionGracePeriodSeconds"] = ometa["deletionGracePeriodSeconds"]
        if "generation" in ometa:
            meta["generation"] = ometa["generation"]
        else:
            meta.pop("generation", None)
        if kind.status_subresource:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        strategy.prepare_for_update(new, old)
        if strategy.generation_from_body:
            if body_differs(new, e, typed=is_typed(kind) if typed is None else typed):
                meta["generation"] = int(ometa.get("generation") or 0) + 1
        elif kind.initial_generation and strategy.spec_changed(new, old):
            meta["generation"] = int(ometa.get("generation") or 0) + 1
        return new


def _status_write(old: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """A status write: everything but the status stays as stored, shared with the old snapshot (never mutated)."""
    ometa = old["metadata"]
    new = {**old, "metadata": dict(ometa)}
    if "status" in body:
        new["status"] = body["status"]
    else:
        new.pop("status", None)
    new["metadata"]["resourceVersion"] = body["metadata"].get("resourceVersion", ometa.get("resourceVersion"))
    return new


def _share_unchanged(new: dict[str, Any], old: dict[str, Any]) -> None:
    """What the write left as it was is shared with the stored object (typed: ``==`` is exact), so the
    checks after it and the field manager see it unchanged at once."""
    for key, value in new.items():
        was = old.get(key)
        if was is not value and key != "metadata" and type(was) is type(value) and was == value:
            new[key] = was
