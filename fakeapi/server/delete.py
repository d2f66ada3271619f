"""DELETE: the delete pipeline, one object or a collection.

options -> the strategy's delete check -> preconditions -> finalizers (the propagation policy, the
strategy's default) -> grace (the strategy's) -> at once (commit, then the strategy's AfterDelete)
or marked deleting (timestamp, generation, the strategy's prepare) -> commit.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fakeapi.machinery import errors
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.metavalidation import not_supported
from fakeapi.registry.kinds import Kind
from fakeapi.registry.verbs import serves_deletecollection  # (issue 24)
from fakeapi.server.clock import format_time, parse_time
from fakeapi.server.pipeline import Outcome, Pipeline, Write, is_typed
from fakeapi.server.store import Entry, body_differs, meta_differs

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
GC_FINALIZERS = (ORPHAN, FOREGROUND)
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


class DeleteVerb(Pipeline):
    """``delete`` and ``delete_collection``."""

    def delete(
        self,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        grace_period_seconds: int | None = None,
        orphan_dependents: bool | None = None,
        actor: str = "user",
        dry_run: bool = False,
        shared: bool = False,
    ) -> dict[str, Any]:
        """DELETE: remove the object, or mark it deleting while finalizers remain.

        Returns the Success Status (or, for Pods and ServiceAccounts, the object), or the
        object with its deletionTimestamp when it stays.
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            self._check_delete_options(propagation_policy, orphan_dependents, grace_period_seconds)
            e = self._table(k).get(ns, name)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            k.strategy.check_delete(name)
            return self._delete_entry(k, e, propagation_policy, preconditions, grace_period_seconds,
                                      orphan_dependents, dry_run)

        return self._run("delete", k, ns, name, "", actor, run, shared=shared)

    def _check_delete_options(self, policy: str | None, orphan: bool | None, grace: int | None) -> None:
        causes: list[Cause] = []
        if policy is not None and policy not in PROPAGATION_POLICIES:
            causes.append(not_supported("propagationPolicy", policy, [*PROPAGATION_POLICIES, "nil"]))
        if policy is not None and orphan is not None:
            causes.append(Cause(errors.FIELD_VALUE_INVALID,
                                f'Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both '
                                "set", "propagationPolicy"))
        if grace is not None and not isinstance(grace, int):
            causes.append(Cause(errors.FIELD_VALUE_INVALID, f"Invalid value: {grace!r}: must be an integer",
                                "gracePeriodSeconds"))
        if causes:
            raise errors.options_invalid("DeleteOptions", causes)

    def _delete_entry(self, k: Kind, e: Entry, policy: str | None, preconditions: dict[str, Any] | None,
                      grace: int | None, orphan: bool | None, dry_run: bool) -> Outcome:
        strategy = k.strategy
        _check_preconditions(k, e, preconditions or {})
        if orphan is not None and policy is None:
            policy = "Orphan" if orphan else "Background"
        old = e.obj
        new = {**old, "metadata": dict(old["metadata"])}  # the rest is shared with the stored snapshot
        meta = new["metadata"]
        # finalizers: the propagation policy's, or the object's own, or the strategy's default
        fins = self._delete_finalizers(k, meta.get("finalizers") or [], policy)
        # grace: the strategy's (a bound Pod waits for the kubelet; -1: a controller finishes it)
        graceful = strategy.graceful_delete_seconds(old, grace)
        table = self._table(k)
        if not fins and graceful == 0:  # gone at once: commit, then the strategy's AfterDelete
            if dry_run:
                return Outcome(self._delete_response(k, e, old), 200, 0, False, e.name, stored=k.return_deleted_object)
            rv = self._commit(Write(k, table, old=e, delete=True))
            strategy.after_delete(self, e.obj)
            last = {**old, "metadata": {**old["metadata"], "resourceVersion": str(rv)}}
            return Outcome(self._delete_response(k, e, last), 200, rv, True, e.name,
                           stored=k.return_deleted_object)
        # marked deleting: finalizers, deletion timestamp and grace, generation, the strategy's prepare
        if fins:
            meta["finalizers"] = fins
        else:
            meta.pop("finalizers", None)
        first = not meta.get("deletionTimestamp")
        now = self.clock.now()
        if graceful > 0:
            until = now + timedelta(seconds=graceful)
            cur = meta.get("deletionGracePeriodSeconds")
            if first or cur is None or graceful < int(cur):
                meta["deletionTimestamp"] = format_time(until)
                meta["deletionGracePeriodSeconds"] = graceful
        else:
            ts = meta.get("deletionTimestamp")
            if not ts or parse_time(ts) > now:
                meta["deletionTimestamp"] = self.clock.timestamp()
            meta["deletionGracePeriodSeconds"] = 0
        if first and (strategy.generation_from_body or int(meta.get("generation") or 0) > 0):
            meta["generation"] = int(meta.get("generation") or 0) + 1
        strategy.prepare_for_delete(new)
        meta.pop("resourceVersion", None)
        # no-op, dry run, or commit
        if not body_differs(new, e, typed=is_typed(k)) and not meta_differs(new, e):
            return Outcome(old, 200, 0, False, e.name, stored=True)
        if dry_run:
            return Outcome(new, 200, 0, False, e.name, stored=True)
        rv = self._commit(Write(k, table, new, old=e))
        return Outcome(new, 200, rv, True, e.name, stored=True)

    def _delete_finalizers(self, k: Kind, current: list[str], policy: str | None) -> list[str]:
        """The finalizers a delete leaves: the garbage collector's one for the policy (``orphan``,
        ``foregroundDeletion``); with no policy the one the object has, else the strategy's default
        (with the strategy's warnings)."""
        fins = list(current)
        had_gc = [f for f in fins if f in GC_FINALIZERS]
        fins = [f for f in fins if f not in GC_FINALIZERS]
        if policy == "Orphan":
            fins.append(ORPHAN)
        elif policy == "Foreground":
            fins.append(FOREGROUND)
        elif policy is None:
            self._warn(k.strategy.delete_warnings())
            if had_gc:
                fins.extend(had_gc[:1])  # a finalizer the object has overrides the kind's default
            elif k.strategy.orphans_by_default:
                fins.append(ORPHAN)
        return fins

    def _delete_response(self, k: Kind, e: Entry, obj: dict[str, Any]) -> dict[str, Any]:
        """The deleted object itself (Pods, ServiceAccounts: it shares the stored snapshot), or a Success Status."""
        if k.return_deleted_object:
            return obj
        details: dict[str, Any] = {"name": e.name}
        if k.group:
            details["group"] = k.group
        details["kind"] = k.plural
        details["uid"] = e.uid
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def delete_collection(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        actor: str = "user",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """DELETE on the collection: delete every matching object (finalizers honoured)."""
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            if not serves_deletecollection(k):  # (issue 24: the namespace storage has no DeleteCollection)
                raise ApiError(errors.status_body(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))
            self._check_delete_options(propagation_policy, None, grace_period_seconds)
            match, terms = self._matcher(k, label_selector, field_selector)
            table = self._table(k)
            victims = [e for e in table.candidates(ns or None, terms) if match is None or match(e.obj)]
            items = [self._read(k, e.obj) for e in victims]
            last_rv = 0
            for e in victims:
                cur = table.get(e.namespace, e.name)
                if cur is None:
                    continue
                out = self._delete_entry(k, cur, propagation_policy, None, grace_period_seconds, None, dry_run)
                last_rv = out.rv or last_rv
            return Outcome({"apiVersion": k.api_version, "kind": k.list_kind,
                             "metadata": {"resourceVersion": str(self._rv)}, "items": items},
                            200, last_rv, bool(last_rv))

        return self._run("deletecollection", k, ns, "", "", actor, run)


def _check_preconditions(k: Kind, e: Entry, pre: dict[str, Any]) -> None:
    """409 when the delete's uid or resourceVersion precondition does not hold."""
    if pre.get("uid") and pre["uid"] != e.uid:
        raise errors.conflict(
            k.group, k.kind, e.name,
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record ({e.uid}). "
            "The object might have been deleted and then recreated")
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != str(e.rv):
        raise errors.conflict(
            k.group, k.kind, e.name,
            f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match the "
            f"ResourceVersion in record ({e.rv}). The object might have been modified")
