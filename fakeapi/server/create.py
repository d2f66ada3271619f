"""POST: the create pipeline.

decode (the strategy's defaults) -> server-owned metadata -> the strategy's PrepareForCreate ->
generation, name and uid -> the strategy's BeginCreate -> admit -> the name taken? -> encode ->
managedFields -> the strategy's hook before commit -> commit (store, watch event, notify).
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import errors, fieldmanager
from fakeapi.registry.kinds import Kind
from fakeapi.server.clock import format_time, parse_time
from fakeapi.server.decoding import check_go_decodes
from fakeapi.server.pipeline import Outcome, Pipeline, Write, mapping
from fakeapi.server.store import Table

MAX_GENERATE_ATTEMPTS = 8


class CreateVerb(Pipeline):
    """``create`` and the steps an apply of a missing object shares with it."""

    def create(
        self,
        obj: dict[str, Any],
        *,
        namespace: str | None = None,
        actor: str = "user",
        field_validation: str = "Warn",
        dry_run: bool = False,
        keep_creation_timestamp: bool = False,
        shared: bool = False,
        go_encoded: bool = False,
    ) -> dict[str, Any]:
        """POST: store a new object and return it as stored (201).

        ``keep_creation_timestamp`` lets a fixture place an object in the past (a
        harness-only liberty; the real server always overwrites it). ``shared`` (here and on
        every verb): answer with the stored snapshot itself rather than a copy; it must not be
        mutated (for callers that decode it into their own object, as fakeapi.host.client.Client does).
        ``go_encoded``: the body is exactly what a Go client marshals for the kind's Go type
        (fakeapi.host.client.Client sends that). The server's defaults keep that form, so a built-in
        is stored without being encoded again (Go's Marshal of Unmarshal of Marshal). A body in
        another form would be stored as sent: ``FAKEAPI_CHECK_SNAPSHOTS=1`` catches that.
        """
        kind = self._kind_of(obj, go_encoded)
        meta = mapping(obj.get("metadata"))
        name = str(meta.get("name") or "")
        ns_hint = meta.get("namespace") if kind.namespaced else ""
        ns_for_trace = str(ns_hint or namespace or "") if kind.namespaced else ""
        return self._run("create", kind, ns_for_trace, name, "", actor,
                         lambda: self._create(kind, obj, namespace, field_validation, dry_run, keep_creation_timestamp,
                                              go_encoded=go_encoded, manager=actor),
                         shared=shared)

    def _create(self, kind: Kind, body: dict[str, Any], namespace: str | None, field_validation: str,
                dry_run: bool, keep_creation_timestamp: bool, *, respond: bool = True,
                go_encoded: bool = False, manager: str = "user",
                applied: fieldmanager.Managed | None = None) -> Outcome:
        # decode: the Go decoder's check, the schema's pruning, the strategy's defaults
        if not go_encoded:
            check_go_decodes(kind, body)
        obj = self._decode(kind, body, field_validation, go_meta=go_encoded, go_body=go_encoded)
        meta = obj["metadata"]
        ns, rv_text = self._new_metadata(kind, meta, namespace, keep_creation_timestamp)
        # prepare: the strategy's PrepareForCreate, generation, name and uid, the strategy's BeginCreate
        status_reset, generate = self._prepare_create(kind, obj)
        # admit
        self._admit(kind, obj, None)
        if isinstance(rv_text, str) and rv_text.isdigit() and int(rv_text) > 0 and int(rv_text) < 2**64:
            raise errors.internal("resourceVersion should not be set on objects to be created")
        table = self._table(kind)
        self._take_name(kind, table, ns, meta, generate)
        # encode (a Go client's body, defaulted, is in the form Go encodes it already: but for a status
        # the strategy reset, which Go encodes as its zero value), managedFields
        if not go_encoded or (status_reset and kind.stored_go_encoded):
            obj = self._encode(kind, obj)
        if applied is not None:
            self._set_managed(obj["metadata"], applied, None)
        else:
            self._record_managed(kind, obj, None, mapping(body.get("metadata")).get("managedFields"), manager, "")
        if dry_run:
            return Outcome(obj, 201, 0, False, obj["metadata"]["name"])
        # commit (store, watch event, notify)
        w = Write(kind, table, obj)
        kind.strategy.before_commit_create(self, obj)
        rv = self._commit(w)
        stored = w.obj or obj
        return Outcome(stored if respond else {}, 201, rv, True, obj["metadata"]["name"], stored=respond)

    def _new_metadata(self, kind: Kind, meta: dict[str, Any], namespace: str | None,
                      keep_creation_timestamp: bool) -> tuple[str, Any]:
        """The server-owned metadata of a new object: its namespace (open), creation time, no uid,
        deletion or resourceVersion of the client's. Returns the namespace and the resourceVersion sent."""
        ns = self._namespace_for(kind, meta.get("namespace"), namespace)
        if kind.namespaced:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        created = meta.pop("creationTimestamp", None)
        for f in ("uid", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(f, None)
        rv_text = meta.pop("resourceVersion", None)
        if keep_creation_timestamp and isinstance(created, str) and created:
            try:
                meta["creationTimestamp"] = format_time(parse_time(created))
            except ValueError as e:
                raise errors.bad_request(f"invalid creationTimestamp {created!r}") from e
        else:
            meta["creationTimestamp"] = self.clock.timestamp()
        if kind.namespaced:
            self._check_namespace_open(kind, ns, meta.get("name") or meta.get("generateName") or "")
        return ns, rv_text

    def _prepare_create(self, kind: Kind, obj: dict[str, Any]) -> tuple[bool, bool]:
        """The strategy's PrepareForCreate (a kind with the status subresource starts without one),
        the generation, a generated name, the uid, then the strategy's BeginCreate (what needs the
        uid: a Job's selector; a Service's allocations). Returns (status reset, name generated)."""
        for plugin in self.admission:  # (mutating admission, before the strategy: a served cluster's Pod plugins)
            plugin(kind, obj)
        strategy = kind.strategy
        meta = obj["metadata"]
        status_reset = kind.status_subresource and strategy.reset_status_on_create
        if status_reset:
            obj.pop("status", None)
        strategy.prepare_for_create(obj)
        if kind.initial_generation:
            meta["generation"] = kind.initial_generation
        else:
            meta.pop("generation", None)
        generate = not meta.get("name") and bool(meta.get("generateName"))
        if generate:
            meta["name"] = self._generate_name(str(meta["generateName"]))
        meta["uid"] = self._new_uid()
        strategy.begin_create(self, obj)
        return status_reset, generate

    def _take_name(self, kind: Kind, table: Table, ns: str, meta: dict[str, Any], generate: bool) -> None:
        """409 when the name is taken; a generated name is generated again (a few times) instead."""
        attempts = 1
        while True:
            existing = table.get(ns, meta["name"])
            if existing is None:
                return
            if not generate or attempts >= MAX_GENERATE_ATTEMPTS:
                raise errors.already_exists(kind.group, kind.plural, meta["name"], generated=generate,
                                            deleting=bool(existing.obj["metadata"].get("deletionTimestamp")))
            attempts += 1
            meta["name"] = self._generate_name(str(meta["generateName"]))

    def _check_namespace_open(self, kind: Kind, ns: str, name: str) -> None:
        entry = self.store.table("", "namespaces").get("", ns)
        if entry is None:
            raise errors.namespace_not_found(ns)
        if entry.obj["metadata"].get("deletionTimestamp") or (entry.obj.get("status") or {}).get("phase") == "Terminating":
            raise errors.namespace_terminating(kind.group, kind.plural, name, ns)
