"""The in-memory API server: the verbs and their semantics.

:class:`APIServer` behaves like kube-apiserver wherever a controller can
observe it (shared/reference/APISERVER_SEMANTICS.md): server-owned metadata,
one global resourceVersion counter, no-op writes, generation, the status
subresource, finalizers and deletion, propagation policies, namespaces,
selectors, watch, the three patch types, CRD schemas and ``metav1.Status``
errors. Every request either succeeds or raises :class:`~fakeapi.machinery.errors.ApiError`
and leaves the stored state, the counter and the watch logs untouched.
"""

from __future__ import annotations

import base64
import json
import random
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from types import ModuleType
from typing import Any

from fakeapi.codec.godecode import DecodeCache
from fakeapi.codec.gomodel import GoDecodeError, go_roundtrip, go_roundtrip_owned
from fakeapi.codec.gounmarshal import from_unstructured_error, go_sprint, unmarshal_error
from fakeapi.codec.snapshots import NotGoEncoded, SnapshotGuard, SnapshotMutated
from fakeapi.codec.snapshots import enabled as _snapshot_check_enabled
from fakeapi.machinery import errors, fieldmanager
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonutil import copy_normalized, copy_object, fast_copy, json_copy, normalize_numbers
from fakeapi.machinery.jsonutil import go_json_type as _json_type
from fakeapi.machinery.metavalidation import (
    dedup_owner_references,
    forbidden,
    go_json,
    invalid,
    not_supported,
    validate_object_meta,
    validate_object_meta_update,
)
from fakeapi.machinery.typedfields import Memo, TypedError, root_type
from fakeapi.registry.apiextensions.crd import kinds_from_crd, validate_crd
from fakeapi.registry.builtin import builtin_kinds
from fakeapi.registry.core.claims import PVC_PROTECTION
from fakeapi.registry.defaults import apply_builtin_defaults, job_selector
from fakeapi.registry.kinds import Kind, KindRegistry
from fakeapi.registry.validation import (
    builtin_warnings,
    validate_builtin,
    validate_builtin_status_update,
    validate_builtin_update,
)
from fakeapi.server import hooks
from fakeapi.server.clock import Clock, format_time, parse_time
from fakeapi.server.faults import ControllerCrash, FaultSet
from fakeapi.server.store import Entry, Store, Table, body_differs, meta_differs, object_key
from fakeapi.server.store import same_meta as _store_same_meta
from fakeapi.server.trace import Trace
from fakeapi.server.watch import (
    ADDED,
    BOOKMARK,
    DELETED,
    INITIAL_EVENTS_END,
    MODIFIED,
    Event,
    EventLog,
    Watch,
    WatchEvent,
)

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_GENERATE_ATTEMPTS = 8
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
GC_FINALIZERS = (ORPHAN, FOREGROUND)
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: Namespaces the NamespaceLifecycle admission plugin refuses to delete.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")

PATCH_TYPES = {
    "json": "json",
    "application/json-patch+json": "json",
    "merge": "merge",
    "application/merge-patch+json": "merge",
    "strategic": "strategic",
    "application/strategic-merge-patch+json": "strategic",
    "apply": "apply",
    "application/apply-patch+yaml": "apply",
}
CR_PATCH_MEDIA = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
BUILTIN_PATCH_MEDIA = [*CR_PATCH_MEDIA[:2], "application/strategic-merge-patch+json", CR_PATCH_MEDIA[2]]


#: Annotations used inside APIServer, whose ``list`` method shadows the builtin there.
_Objects = list[dict[str, Any]]
_KeyedObjects = list[tuple[str, dict[str, Any]]]


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a dict, else an empty one (for peeking into undecoded bodies)."""
    return value if isinstance(value, dict) else {}


@dataclass(slots=True)
class _Outcome:
    """What a request answers. ``stored``: ``obj`` is (or shares parts with) a stored snapshot,
    so the caller gets a copy of it (or, asking for ``shared``, the snapshot itself)."""

    obj: dict[str, Any]
    code: int = 200
    rv: int = 0
    wrote: bool = False
    name: str = ""
    stored: bool = False


@dataclass(slots=True)
class _Write:
    """A change the request will make if it gets that far."""

    kind: Kind
    table: Table
    obj: dict[str, Any] | None = None
    old: Entry | None = None
    delete: bool = False
    extra: list[Callable[[], None]] = field(default_factory=list)


class APIServer:
    """An in-memory kube-apiserver. See docs/INTERNALS.md for the method contract."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        seed: int = 0,
        garbage_collector: bool = True,
        watch_history: int = 10_000,
        default_namespaces: bool = True,
        managed_fields: bool = True,
    ) -> None:
        self.clock = clock or Clock()
        self.trace = Trace()
        self.faults = FaultSet()
        self.kinds = KindRegistry()
        self.store = Store()
        self.seed = seed
        self._rng = random.Random(seed)
        self._rv = 0
        #: The current value of the global resourceVersion counter (read it, never set it).
        self.resource_version = 0
        self._logs: dict[tuple[str, str], EventLog] = {}
        self.watch_history = watch_history
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._local = threading.local()
        self._listeners: list[Callable[[str, Kind, dict[str, Any], dict[str, Any] | None], None]] = []
        #: Keep ``metadata.managedFields`` on every write, as kube-apiserver does (the default). Off, only
        #: objects a server-side apply has touched keep them (from that apply on), as a test that never
        #: reads them may prefer: writes cost less, and an apply's conflicts cannot name earlier writers.
        self.managed_fields = managed_fields
        self._zeros: dict[str, dict[str, Any]] = {}
        #: (managedFields list, its decoded entries) set by the write being prepared, for its store entry.
        self._pending_managed: tuple[Any, fieldmanager.Managed] | None = None
        #: The changes found under top-level fields, by content (typedfields.Memo): objects of one template share them.
        self._changes_memo = Memo()
        #: Checks that stored snapshots are never mutated (``FAKEAPI_CHECK_SNAPSHOTS=1``), else None.
        self.snapshot_guard: SnapshotGuard | None = SnapshotGuard() if _snapshot_check_enabled() else None
        #: Decoded (Go client) forms of stored snapshots, shared by clients and informer caches.
        self.decoded = DecodeCache(check=self.snapshot_guard is not None)
        for k in builtin_kinds():
            self.kinds.register(k)
        #: Mutating admission plugins a served cluster adds (``fakeapi.registry.core.admission``): each is called
        #: with the kind and the decoded, defaulted body of every create, before the create strategy.
        self.admission: list[Callable[[Kind, dict[str, Any]], None]] = []
        #: The garbage collector and namespace controller (fakeapi.controllers), or None.
        self.gc: hooks.Collector | None = hooks.garbage_collector(self) if garbage_collector else None
        if default_namespaces:
            for ns in DEFAULT_NAMESPACES:
                self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, actor="system")

    # ------------------------------------------------------------------ basics

    @property
    def last_warnings(self) -> list[str]:
        """Warning headers produced by the last request made from this thread."""
        return list(getattr(self._local, "warnings", []))

    @property
    def last_code(self) -> int:
        """The HTTP status of the last successful request made from this thread (201 for an
        apply that created its object, as for a create)."""
        return int(getattr(self._local, "code", 200))

    @property
    def lock(self) -> threading.RLock:
        """The server lock (held by every request; the HTTP layer shares it)."""
        return self._lock

    def serve(self, host: str = "127.0.0.1", port: int = 0, **options: Any) -> AbstractContextManager[hooks.Served]:
        """Serve the Kubernetes REST API over HTTP: ``with api.serve() as endpoint:`` (see :func:`fakeapi.http.serve`).

        Port 0 picks a free port; ``endpoint.url`` and ``endpoint.kubeconfig_path`` point any client at it.
        """
        return hooks.http_serve()(self, host, port, **options)

    def wake_watchers(self) -> None:
        """Wake every thread blocked in ``Watch.wait`` so it re-checks its watch (HTTP shutdown)."""
        with self._cond:
            self._cond.notify_all()

    def add_listener(self, fn: Callable[[str, Kind, dict[str, Any], dict[str, Any] | None], None]) -> None:
        """Call ``fn(event_type, kind, obj, old)`` after every real write (used by simulators)."""
        self._listeners.append(fn)

    def resolve_kind(self, kind: str, api_version: str | None = None) -> Kind:
        """The served Kind for a name/plural/``group/version/Kind``; 404 when unknown."""
        if not isinstance(kind, str) or not (api_version is None or isinstance(api_version, str)):
            raise errors.resource_not_found()
        return self.kinds.require(kind, api_version)

    def register_crd(self, manifest: dict[str, Any], *, actor: str = "user") -> Kind:
        """Create (or update) a CustomResourceDefinition and return its storage-version Kind."""
        kind = self._kind_of(manifest)
        if kind.kind != "CustomResourceDefinition" or kind.group != "apiextensions.k8s.io":
            raise errors.bad_request(f"register_crd needs a CustomResourceDefinition, not a {kind.kind}")
        name = str(_mapping(manifest.get("metadata")).get("name") or "")
        with self._lock:
            cur = self._table(kind).get("", name)
            if cur is not None:
                body = dict(manifest)  # update copies the body: only the metadata written here needs its own copy
                meta = body.get("metadata")
                if isinstance(meta, dict):
                    body["metadata"] = {**meta, "resourceVersion": str(cur.rv)}
                self.update(body, actor=actor)
            else:
                self._run("create", kind, "", name, "", actor,
                          lambda: self._create(kind, manifest, None, "Warn", False, False, respond=False))
            spec = manifest["spec"]
            return self.kinds.require(spec["names"]["kind"], f"{spec['group']}/{_storage_version(spec)}")

    def _table(self, kind: Kind) -> Table:
        t = self.store.tables.get((kind.group, kind.plural))  # (Store.table without the call: every request)
        return t if t is not None else self.store.table(kind.group, kind.plural)

    def _log(self, kind: Kind) -> EventLog:
        key = (kind.group, kind.plural)
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = EventLog(self.watch_history)
        return log

    def _warn(self, texts: list[str]) -> None:
        if texts:
            self._local.warnings = [*getattr(self._local, "warnings", []), *texts]

    # --------------------------------------------------------------- plumbing

    def check_snapshots(self) -> None:
        """With ``FAKEAPI_CHECK_SNAPSHOTS=1``: check that no stored snapshot, and no decoded form
        handed out without a copy, was mutated (raises SnapshotMutated); else nothing."""
        if self.snapshot_guard is not None:
            self.snapshot_guard.check_all()
            self.decoded.check_all()

    def _run(
        self,
        verb: str,
        kind: Kind,
        namespace: str,
        name: str,
        subresource: str,
        actor: str,
        fn: Callable[[], _Outcome],
        patch_type: str = "",
        shared: bool = False,
    ) -> dict[str, Any]:
        self._local.warnings = []
        with self._lock:
            rule = self.faults.for_call(verb, kind.kind, namespace, name, subresource, actor) if self.faults.rules else None
            if rule is not None and rule.crash == "before":
                self._record(verb, kind, namespace, name, subresource, actor, patch_type, 0, "Crash", 0, False)
                raise ControllerCrash(actor, "before", f"{verb} {kind.kind} {name}")
            if rule is not None and rule.crash is None:
                err = rule.make_error(kind.group, kind.plural, name)
                self._record(verb, kind, namespace, name, subresource, actor, patch_type, err.code, err.reason, 0, False)
                raise err
            try:
                out = fn()
            except ApiError as e:
                self._record(verb, kind, namespace, name, subresource, actor, patch_type, e.code, e.reason, 0, False)
                if rule is not None and rule.crash == "after":  # the caller dies once the call returns, whatever it got
                    raise ControllerCrash(actor, "after", f"{verb} {kind.kind} {name}") from e
                raise
            except (ControllerCrash, KeyboardInterrupt, SnapshotMutated):
                raise
            except Exception as e:  # a bug or an unforeseen input: answer like the server would (500)
                err = errors.internal(f"Internal error occurred: {type(e).__name__}: {e}")
                err.__cause__ = e
                self._record(verb, kind, namespace, name, subresource, actor, patch_type, 500, "", 0, False)
                raise err from e
            self._record(verb, kind, namespace, out.name or name, subresource, actor, patch_type, out.code,
                         "", out.rv, out.wrote)
            self._local.code = out.code
            if rule is not None and rule.crash == "after":
                raise ControllerCrash(actor, "after", f"{verb} {kind.kind} {out.name or name}")
            if out.stored:
                return self._view(kind, out.obj) if shared else self._read(kind, out.obj)
            return out.obj

    def _record(self, verb: str, kind: Kind, namespace: str, name: str, subresource: str, actor: str,
                patch_type: str, code: int, reason: str, rv: int, wrote: bool) -> None:
        self.trace.record_call(self.clock._now, actor, verb, kind.kind, namespace or "", name, subresource, patch_type,
                               code, reason, str(rv) if rv else "", wrote)

    def _kind_of(self, obj: Any) -> Kind:
        if not isinstance(obj, dict):
            raise errors.bad_request("Object 'Kind' is missing in the request body")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise errors.bad_request(f"Object 'Kind' is missing in '{_short(obj)}'")
        if not isinstance(api_version, str) or not api_version:
            raise errors.bad_request(f"Object 'apiVersion' is missing in '{_short(obj)}'")
        k = self.kinds.find(kind, api_version)
        if k is None or k.kind != kind:
            raise errors.resource_not_found()
        return k

    def _namespace_for(self, kind: Kind, body_ns: Any, request_ns: str | None) -> str:
        if not kind.namespaced:
            return ""
        if body_ns is not None and not isinstance(body_ns, str):
            raise errors.bad_request("metadata.namespace must be a string")
        if request_ns and body_ns and body_ns != request_ns:
            raise errors.bad_request(
                f"the namespace of the object ({body_ns}) does not match the namespace on the request ({request_ns})")
        ns = body_ns or request_ns or ""
        if not ns:
            raise errors.resource_not_found()
        return ns

    def _decode(self, kind: Kind, obj: dict[str, Any], field_validation: str, *, copy: bool = True,
                shared: bool = False, base: dict[str, Any] | None = None, go_meta: bool = False,
                strict_error: Callable[[str], ApiError] = errors.bad_request) -> dict[str, Any]:
        """Run the decode pipeline on a request body: numbers, pruning, nulls, defaults.

        The body is copied first unless ``copy`` is False (the caller owns it outright); a
        copy is normalized (integral floats made ints). ``shared``: the body shares parts with
        stored objects (a patch's result) and is copied and normalized all the same; the parts
        it shares with ``base`` (the stored object patched) stay shared, as decoded already
        (stored objects hold no integral floats: normalizing them would change nothing).
        ``go_meta``: the metadata is what a Go client marshals from its ObjectMeta (a body sent
        ``go_encoded``): only ObjectMeta fields, each of its Go type, no nulls or empties, so the
        Go type check and the pruning walk would change nothing and are skipped (with
        ``FAKEAPI_CHECK_SNAPSHOTS=1`` that is checked: :func:`_check_go_meta`).
        ``strict_error`` builds the error for unknown fields under ``fieldValidation=Strict``
        (400 for a body; a patch's is 422, :func:`_patch_invalid`).
        """
        if field_validation not in ("Ignore", "Warn", "Strict", ""):
            raise errors.bad_request(
                f'fieldValidation: Unsupported value: "{field_validation}": supported values: "Ignore", "Strict", "Warn"')
        copied = copy or shared
        # copy and prune in one walk when the body is copied (metadata first: it is checked before pruning)
        fused = copied and kind.compiled is not None and type(obj) is dict
        # metadata the patch left as stored: typed, pruned and checked when it was stored
        stored_meta = base is not None and fused and obj.get("metadata") is base.get("metadata")
        meta: Any
        bmeta: Any = None
        if stored_meta:
            meta = dict(obj["metadata"])  # its values stay shared with the stored metadata (replaced, never changed)
        elif fused:
            meta = obj.get("metadata")
            bmeta = base.get("metadata") if base is not None else None
            cp = _copy_json
            if meta is None:
                meta = {}
            elif type(meta) is dict and type(bmeta) is dict:
                # a patch that changed some metadata: the maps and lists it left as stored stay shared
                meta = {k: v if type(v) in _PLAIN_SCALARS or v is bmeta.get(k) else cp(v)
                        for k, v in meta.items() if k != "managedFields"}
            elif type(meta) is dict and "managedFields" in meta:  # (read by the field manager, never stored)
                meta = cp({k: v for k, v in meta.items() if k != "managedFields"})
            else:
                meta = cp(meta)
        else:
            if copied:
                m = obj.get("metadata") if type(obj) is dict else None
                if type(m) is dict and "managedFields" in m:  # (read by the field manager, never stored)
                    obj = {**obj, "metadata": {k: v for k, v in m.items() if k != "managedFields"}}
                obj = _copy_json(obj)
            else:
                obj = normalize_numbers(obj)
            meta = obj.get("metadata")
            if meta is None:
                meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise errors.bad_request(
                f"json: cannot unmarshal {_json_type(meta)} into Go struct field {kind.kind}.metadata of type v1.ObjectMeta")
        if not stored_meta:
            if not go_meta:
                _check_meta_types(kind, meta, bmeta if type(bmeta) is dict else None)
            meta.pop("managedFields", None)
            meta.pop("selfLink", None)
            if go_meta and self.snapshot_guard is not None:
                _check_go_meta(kind, meta)
        warnings: list[str]
        if fused:
            obj, warnings = kind.compiled.prepare_copy(obj, meta, base=base,
                                                       prune_metadata=not stored_meta and not go_meta)
        else:
            warnings = kind.compiled.prepare(obj) if kind.compiled is not None else []
        if warnings:
            if field_validation == "Strict":
                raise strict_error("strict decoding error: " + ", ".join(warnings))
            if field_validation != "Ignore":
                self._warn(warnings)
        if kind.builtin:
            apply_builtin_defaults(kind.kind, obj, base)
        return obj

    def _validate(self, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str = "",
                  patch: bool = False, *, same_meta: bool = False) -> None:
        """Validate a write: ObjectMeta (create and update rules), the schema, the kind's own rules.

        On update, what the write shares with the stored object (the same metadata, the very
        same spec or status objects: see :meth:`_update_entry`) passed these checks when it
        was stored and is not checked again; as the real server's validation ratcheting lets
        unchanged values through, nothing a client can observe changes.
        """
        meta = obj["metadata"]
        same_meta = old is not None and (same_meta or _store_same_meta(meta, old["metadata"]))
        if same_meta:
            causes: list[Cause] = []
        else:
            self._warn(dedup_owner_references(meta))
            causes, warnings = validate_object_meta(
                meta, namespaced=kind.namespaced, name_rule=kind.name_rule, custom_resource=not kind.builtin,
                old=old["metadata"] if old is not None else None)  # warns of the finalizers this write adds
            self._warn(warnings)
            if old is not None:
                causes += validate_object_meta_update(obj["metadata"], old["metadata"], subresource=subresource)
        body_shared = old is not None and _same_body(obj, old)
        if kind.compiled is not None and not body_shared:
            if subresource == "status":
                causes += kind.compiled.validate_status(obj, old=old)
            else:
                causes += kind.compiled.validate(obj, old=old)
        if kind.kind == "CustomResourceDefinition" and kind.group == "apiextensions.k8s.io":
            causes += validate_crd(obj, old)
        elif kind.builtin and subresource != "status" and not body_shared:
            ported = validate_builtin(kind, obj)
            if old is not None:
                ported += validate_builtin_update(kind, obj, old)
            causes = _prefer_ported(causes, ported)
        elif kind.builtin and subresource == "status" and old is not None:
            causes += validate_builtin_status_update(kind, obj, old)
        if causes:
            raise errors.invalid(kind.group, kind.kind, meta.get("name") or meta.get("generateName") or "", causes)
        if kind.builtin and subresource != "status":
            self._warn(builtin_warnings(kind, obj))  # (WarningsOnCreate/WarningsOnUpdate: a valid write's)

    def _encode(self, kind: Kind, obj: dict[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
        """Built-in kinds are stored as the Go structs re-encode them; custom ones as sent.

        ``base``: the stored object ``obj`` replaces; the top-level values ``obj`` shares with it
        are encoded already and kept as they are.
        """
        if kind.stored_go_encoded:
            rv = obj["metadata"].get("resourceVersion")
            try:
                out: dict[str, Any] = go_roundtrip_owned(obj, kind.go_type, base=base)
            except GoDecodeError as e:
                raise errors.bad_request(str(e)) from e
            if rv is not None:
                out.setdefault("metadata", {})["resourceVersion"] = rv
            return out
        return obj

    def _commit(self, w: _Write) -> int:
        """Apply a prepared write: assign the next resourceVersion, store, log the event."""
        kind, table = w.kind, w.table
        self._rv += 1
        rv = self.resource_version = self._rv
        if w.delete:
            assert w.old is not None
            gone = w.old.obj
            last = {**gone, "metadata": {**gone["metadata"], "resourceVersion": str(rv)}}
            self.store.remove(table, w.old.key)
            self.decoded.forget(kind.group, kind.plural, w.old.namespace, w.old.name)
            if self.snapshot_guard is not None:
                self.snapshot_guard.stored(kind.plural, w.old.key, None)
            self._log(kind).append(Event(rv, DELETED, w.old.namespace, last, w.old.obj))
            self._notify(DELETED, kind, last, w.old.obj)
            return rv
        assert w.obj is not None
        obj = w.obj
        meta = obj["metadata"]
        meta["resourceVersion"] = str(rv)
        entry = _entry(obj, rv, w.old)
        pending = self._pending_managed
        if pending is not None:
            self._pending_managed = None
            if meta.get("managedFields") is pending[0]:
                entry.managed = pending[1]
        elif w.old is not None and w.old.managed is not None and meta.get("managedFields") is w.old.obj["metadata"].get(
                "managedFields"):
            entry.managed = w.old.managed  # (a write that left them as they were: a binding, a deletion's start)
        old = self.store.put(table, entry)
        if self.snapshot_guard is not None:
            self.snapshot_guard.stored(kind.plural, entry.key, obj, kind.go_type if kind.stored_go_encoded else None)
        etype = MODIFIED if old is not None else ADDED
        self._log(kind).append(Event(rv, etype, entry.namespace, obj, old.obj if old is not None else None))
        self._notify(etype, kind, obj, old.obj if old is not None else None)
        for fn in w.extra:
            fn()
        return rv

    def _notify(self, etype: str, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if self.gc is not None:
            self.gc.on_event(etype, kind, obj, old)
        for fn in self._listeners:
            fn(etype, kind, obj, old)
        if self._cond._waiters:  # type: ignore[attr-defined]  # (threads blocked in a watch: most runs have none)
            self._cond.notify_all()

    def _read(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        """A copy of a stored snapshot for a caller to own, as served at ``kind``'s version."""
        out: dict[str, Any] = copy_object(obj)  # (managedFields shared, read-only)
        if out.get("apiVersion") != kind.api_version:
            out["apiVersion"] = kind.api_version
        return out

    @staticmethod
    def _view(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored snapshot as served at ``kind``'s version, not copied (read-only: it is shared)."""
        if obj.get("apiVersion") == kind.api_version:
            return obj
        return {**obj, "apiVersion": kind.api_version}

    def _new_uid(self) -> str:
        return _uuid4_text(self._rng.getrandbits(128))

    def _generate_name(self, base: str) -> str:
        return base[:58] + "".join(self._rng.choice(GENERATE_ALPHABET) for _ in range(5))

    # ------------------------------------------------------------------ create

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
        kind = self._kind_of(obj)
        meta = _mapping(obj.get("metadata"))
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
                applied: fieldmanager.Managed | None = None) -> _Outcome:
        if not go_encoded:
            _check_go_decodes(kind, body)
        obj = self._decode(kind, body, field_validation, go_meta=go_encoded)
        meta = obj["metadata"]
        ns = self._namespace_for(kind, meta.get("namespace"), namespace)
        if kind.namespaced:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        # system fields the client may not set
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
        for plugin in self.admission:
            plugin(kind, obj)
        # strategy: PrepareForCreate
        # (the Pod and Node strategies keep a created object's status: kubelets register nodes with theirs)
        status_reset = kind.status_subresource and not (kind.builtin and kind.kind in ("Pod", "Node"))
        if status_reset:
            obj.pop("status", None)
        self._prepare_for_create(kind, obj)
        if kind.initial_generation:
            meta["generation"] = kind.initial_generation
        else:
            meta.pop("generation", None)
        generate = not meta.get("name") and bool(meta.get("generateName"))
        if generate:
            meta["name"] = self._generate_name(str(meta["generateName"]))
        meta["uid"] = self._new_uid()
        if kind.builtin and kind.kind == "Service":
            self._allocate_service(obj, None)
        elif kind.builtin and kind.kind == "Job" and kind.group == "batch":
            job_selector(obj)  # (generateSelector needs the uid)
        self._validate(kind, obj, None)
        if isinstance(rv_text, str) and rv_text.isdigit() and int(rv_text) > 0 and int(rv_text) < 2**64:
            raise errors.internal("resourceVersion should not be set on objects to be created")
        table = self._table(kind)
        attempts = 1
        while True:
            existing = table.get(ns, meta["name"])
            if existing is None:
                break
            if not generate or attempts >= MAX_GENERATE_ATTEMPTS:
                raise errors.already_exists(kind.group, kind.plural, meta["name"], generated=generate,
                                            deleting=bool(existing.obj["metadata"].get("deletionTimestamp")))
            attempts += 1
            meta["name"] = self._generate_name(str(meta["generateName"]))
        # (a Go client's body, defaulted, is in the form Go encodes it already: but for a status the
        # strategy reset, which Go encodes as its zero value)
        if not go_encoded or (status_reset and kind.stored_go_encoded):
            obj = self._encode(kind, obj)
        if applied is not None:
            self._set_managed(obj["metadata"], applied, None)
        else:
            self._record_managed(kind, obj, None, _mapping(body.get("metadata")).get("managedFields"), manager, "")
        if dry_run:
            return _Outcome(obj, 201, 0, False, obj["metadata"]["name"])
        w = _Write(kind, table, obj)
        self._after_create(kind, w)
        rv = self._commit(w)
        stored = w.obj or obj
        return _Outcome(stored if respond else {}, 201, rv, True, obj["metadata"]["name"], stored=respond)

    # ------------------------------------------------------------ managedFields

    def _zero_object(self, kind: Kind) -> dict[str, Any]:
        """The object a create is compared with: the Go type's zero value (``objectCreater.New``),
        or for a custom kind an object with only apiVersion and kind."""
        zero = self._zeros.get(kind.api_version + "/" + kind.kind)
        if zero is None:
            zero = {"apiVersion": kind.api_version, "kind": kind.kind}
            if kind.stored_go_encoded:
                zero = go_roundtrip(zero, kind.go_type)
            self._zeros[kind.api_version + "/" + kind.kind] = zero
        return zero

    def _record_managed(self, kind: Kind, new: dict[str, Any], e: Entry | None, body_managed: Any,
                        manager: str, sub: str) -> None:
        """Set ``new``'s managedFields after a non-apply write over entry ``e`` (None: a create).

        The body's own managedFields are the starting point when it has some that decode,
        except on a subresource; otherwise the stored ones (``FieldManager.UpdateNoErrors``).
        """
        old = e.obj if e is not None else None
        stored = old["metadata"].get("managedFields") if old is not None else None
        if not self.managed_fields and not stored and not body_managed:
            return  # (tracking off: objects no apply has touched keep none)
        managed = None
        if body_managed and body_managed is not stored and body_managed != stored:  # (the caller's: copied)
            managed = fieldmanager.decode(json_copy(body_managed))
        from_stored = not managed
        if not managed:
            managed = self._stored_managed(e)
        base = old if old is not None else self._zero_object(kind)
        after = fieldmanager.record_update(
            managed, base, new, root_type(kind.schema, fieldmanager.compare_skip(sub, kind.status_subresource)),
            manager=manager, api_version=kind.api_version, subresource=sub, now=self.clock.timestamp(),
            memo=self._changes_memo)
        if after is managed and from_stored:  # nothing owned changed hands
            if stored:
                new["metadata"]["managedFields"] = stored
                self._pending_managed = (stored, managed)
            else:
                new["metadata"].pop("managedFields", None)
            return
        self._set_managed(new["metadata"], after, stored)

    @staticmethod
    def _stored_managed(e: Entry | None) -> fieldmanager.Managed:
        """The decoded entries of a stored object's managedFields (kept on its store entry)."""
        if e is None:
            return {}
        managed: fieldmanager.Managed | None = e.managed
        if managed is None:
            managed = e.managed = fieldmanager.decode(e.obj["metadata"].get("managedFields")) or {}
        return managed

    def _set_managed(self, meta: dict[str, Any], managed: fieldmanager.Managed, stored: Any) -> None:
        entries = fieldmanager.encode(managed)
        if entries == stored:
            entries = stored  # (unchanged: shared with the stored snapshot)
        if entries:
            meta["managedFields"] = entries
            self._pending_managed = (entries, managed)  # (for the store entry: see _commit)
        else:
            meta.pop("managedFields", None)

    def _check_namespace_open(self, kind: Kind, ns: str, name: str) -> None:
        entry = self.store.table("", "namespaces").get("", ns)
        if entry is None:
            raise errors.namespace_not_found(ns)
        if entry.obj["metadata"].get("deletionTimestamp") or (entry.obj.get("status") or {}).get("phase") == "Terminating":
            raise errors.namespace_terminating(kind.group, kind.plural, name, ns)

    def _prepare_for_create(self, kind: Kind, obj: dict[str, Any]) -> None:
        if not kind.builtin:
            return
        if kind.kind == "Namespace":
            spec = obj.setdefault("spec", {})
            fins = list(spec.get("finalizers") or [])
            if "kubernetes" not in fins:
                fins.append("kubernetes")
            spec["finalizers"] = fins
            obj["status"] = {"phase": "Active"}
            labels = obj["metadata"].setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = obj["metadata"].get("name") or ""
        elif kind.kind == "CustomResourceDefinition":
            obj.pop("status", None)
        elif kind.kind == "PersistentVolumeClaim" and not kind.group:
            # PrepareForCreate resets the status (phase Pending again as the stored claim is read back);
            # the StorageObjectInUseProtection admission plugin adds the protection finalizer
            obj["status"] = {"phase": "Pending"}
            fins = obj["metadata"].setdefault("finalizers", [])
            if PVC_PROTECTION not in fins:
                fins.append(PVC_PROTECTION)

    def _allocate_service(self, svc: dict[str, Any], old: dict[str, Any] | None) -> None:
        """The Service storage's ``beginCreate``/``beginUpdate``: IP families, cluster IP, node ports (422 on failure).

        An update first keeps what the client left out of what was allocated, and drops what a
        new type has no use for (:mod:`fakeapi.registry.core.serviceallocation`).
        """
        from fakeapi.registry.core import serviceallocation as alloc

        spec = svc.get("spec")
        if not isinstance(spec, dict):
            return
        old_spec = (old.get("spec") or {}) if old is not None else None
        uid = svc["metadata"].get("uid")
        ips, ports = alloc.in_use(e.obj for e in self.store.table("", "services").candidates(None)
                                  if e.obj["metadata"].get("uid") != uid)
        if svc["metadata"].get("name") == "kubernetes" and svc["metadata"].get("namespace") == "default":
            ips.discard(alloc.KUBERNETES_SERVICE_IP)  # (reserved for kube-apiserver's own Service: this one)
        if old_spec is not None:
            alloc.patch_allocated_values(spec, old_spec)
            alloc.normalize_cluster_ips(spec, old_spec)
            alloc.drop_type_dependent_fields(spec, old_spec)
        else:
            alloc.normalize_cluster_ips(spec)
        causes = alloc.cluster_ip_mismatch(spec) or alloc.init_ip_family_fields(spec, old_spec)
        if not causes and not (old_spec is not None and old_spec.get("clusterIPs") and spec.get("clusterIPs")):
            causes = alloc.allocate_cluster_ip(spec, ips, self._rng)
        causes = causes or alloc.allocate_node_ports(spec, ports, self._rng, old_spec)
        if causes:
            raise errors.invalid("", "Service", svc["metadata"].get("name") or "", causes)

    def _after_create(self, kind: Kind, w: _Write) -> None:
        if kind.builtin and kind.kind == "CustomResourceDefinition":
            assert w.obj is not None
            self._apply_crd(w.obj, None)

    # -------------------------------------------------------------------- read

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None,
            resource_version: str | None = None, actor: str = "user", shared: bool = False) -> dict[str, Any]:
        """GET one object (404 when missing)."""
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> _Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            self._check_rv_not_too_large(resource_version)
            e = self._table(k).get(ns, name)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            return _Outcome(e.obj, stored=True)

        return self._run("get", k, ns, name, "", actor, run, shared=shared)

    def _check_rv_not_too_large(self, rv: str | None) -> None:
        if rv:
            try:
                n = int(rv)
            except ValueError as e:
                raise errors.bad_request(f'invalid resource version "{rv}"') from e
            if n > self._rv:
                raise errors.too_large_resource_version(n, self._rv)

    def _matcher(self, kind: Kind, label_selector: Any, field_selector: Any) -> tuple[
            Callable[[dict[str, Any]], bool] | None, list[tuple[str, frozenset[str]]]]:
        selectors = _selectors_module()
        field_value = selectors.field_value
        try:
            if isinstance(label_selector, dict):
                lsel = selectors.selector_from_map(label_selector)
            else:
                lsel = selectors.parse_label_selector(label_selector or "")
            fsel = selectors.parse_field_selector(field_selector or "")
        except selectors.SelectorError as e:
            raise errors.bad_request(str(e)) from e
        allowed = {"metadata.name", *kind.selectable_fields}
        if kind.namespaced:
            allowed.add("metadata.namespace")
        for f in sorted(fsel.fields()):
            if f not in allowed:
                raise errors.bad_request(f"field label not supported: {f}")
        if lsel.empty and fsel.empty:
            return None, []

        def match(obj: dict[str, Any]) -> bool:
            if not lsel.empty and not lsel.matches(obj["metadata"].get("labels") or {}):
                return False
            return fsel.empty or fsel.matches(lambda p: field_value(obj, p))

        return match, lsel.index_terms()

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        send_initial_events: bool | None = None,
        actor: str = "user",
        shared: bool = False,
    ) -> dict[str, Any]:
        """LIST objects in storage-key order; ``metadata.resourceVersion`` is the store revision.

        ``shared``: the items are the stored snapshots themselves, not copies (read-only; a
        built-in item keeps its apiVersion and kind), for callers that decode each one into
        their own object, as fakeapi.host.client.Client does.
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> _Outcome:
            self._check_list_options(resource_version, resource_version_match, continue_, send_initial_events,
                                     watch=False)
            match, terms = self._matcher(k, label_selector, field_selector)
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
                raise errors.bad_request(f"limit: invalid value {limit!r}")
            page = limit if limit and limit > 0 else 0
            start, at = "", self._rv
            if continue_:
                start, token_rv = _decode_continue(continue_)
                at = token_rv if token_rv > 0 else self._rv
            elif resource_version not in (None, "", "0") and (
                    resource_version_match == "Exact" or (page and not resource_version_match)):
                at = int(str(resource_version))
            if at == self._rv:
                source: Iterable[tuple[str, dict[str, Any]]] = (
                    (e.key, e.obj) for e in self._table(k).candidates(ns or None, terms))
            else:
                source = self._objects_at(k, ns, at, start if continue_ else None)
            items: list[dict[str, Any]] = []
            last_key = ""
            remaining = 0
            for key, obj in source:
                if start and key.encode() <= start.encode():
                    continue
                if match is not None and not match(obj):
                    continue
                if page and len(items) >= page:
                    remaining += 1
                    if match is not None:
                        break
                    continue
                items.append(obj)
                last_key = key
            meta: dict[str, Any] = {"resourceVersion": str(at)}
            if remaining:
                meta["continue"] = _encode_continue(last_key, at)
                if match is None:
                    meta["remainingItemCount"] = remaining
            out_items = [self._view(k, o) for o in items] if shared else [self._list_item(k, o) for o in items]
            return _Outcome({"apiVersion": k.api_version, "kind": k.list_kind, "metadata": meta, "items": out_items})

        return self._run("list", k, ns, "", "", actor, run)

    def _list_item(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        item = self._read(kind, obj)
        if kind.builtin:
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return item

    def _objects_at(self, kind: Kind, ns: str, rv: int, continue_key: str | None) -> _KeyedObjects:
        """The objects of a kind as they were at revision ``rv``, in key order (410 when history is gone).

        The current state is rolled back through the event log, as etcd serves an older revision.
        """
        log = self._log(kind)
        if rv < log.trimmed_rv:
            if continue_key is None:
                raise errors.expired("The resourceVersion for the provided list is too old.")
            err = errors.expired(CONTINUE_EXPIRED)
            err.status["metadata"] = {"continue": _encode_continue(continue_key, -1)}
            raise err
        state = {e.key: e.obj for e in self._table(kind).candidates(ns or None)}
        for ev in reversed(log.events[log.position_after(rv) - log.offset:]):
            if ns and ev.namespace != ns:
                continue
            key = object_key(ev.namespace, ev.obj["metadata"]["name"])
            if ev.old is None:
                state.pop(key, None)
            else:
                state[key] = ev.old
        return [(key, state[key]) for key in sorted(state, key=str.encode)]

    def _check_list_options(self, rv: str | None, match: str | None, cont: str | None,
                            send_initial_events: bool | None, *, watch: bool) -> None:
        """ListOptions validation (``internalversion/validation.ValidateListOptions``): 422 on failure."""
        causes = (_watch_option_causes(match, cont, send_initial_events) if watch
                  else _list_option_causes(rv, match, cont, send_initial_events))
        if causes:
            raise errors.options_invalid("ListOptions", causes)
        if cont and rv and rv != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        if rv and rv != "0" and not watch:
            self._check_rv_not_too_large(rv)

    # ------------------------------------------------------------------ update

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
        meta = _mapping(obj.get("metadata"))
        name = str(meta.get("name") or "")
        ns = str(namespace or meta.get("namespace") or "") if kind.namespaced else ""
        sub = subresource or ""

        def run() -> _Outcome:
            if kind.namespaced and not ns:
                raise errors.resource_not_found()
            _check_go_decodes(kind, obj)  # (the handler decodes the body first: this wins over a 404)
            if not name:
                raise errors.bad_request("name is required")
            if kind.namespaced:
                self._namespace_for(kind, meta.get("namespace"), ns)  # checkName: body against URL (400)
            e = self._table(kind).get(ns, name)
            if sub and (sub != "status" or not kind.status_subresource):
                raise errors.not_found(kind.group, kind.plural, name)
            if e is None:
                raise errors.not_found(kind.group, kind.plural, name)
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
                    f"StorageError: invalid object, Code: 4, Key: {_registry_key(kind, e.key)}, ResourceVersion: 0, "
                    f"AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in object meta: {e.uid}")
            return self._update_entry(kind, e, body, sub, dry_run, patch=False, manager=actor,
                                      body_managed=meta.get("managedFields"))

        return self._run("update", kind, ns, name, sub, actor, run, shared=shared)

    def _check_rv_precondition(self, kind: Kind, e: Entry, meta: dict[str, Any]) -> None:
        rv = meta.get("resourceVersion")
        if rv in (None, ""):
            if not kind.allow_unconditional_update:
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
                      applied: fieldmanager.Managed | None = None) -> _Outcome:
        old = e.obj
        ometa = old["metadata"]
        self._check_rv_precondition(kind, e, body["metadata"])
        if sub == "status":
            # everything but status stays as stored: shared with the old snapshot (never mutated)
            new = {**old, "metadata": dict(ometa)}
            if "status" in body:
                new["status"] = body["status"]
            else:
                new.pop("status", None)
            new["metadata"]["resourceVersion"] = body["metadata"].get("resourceVersion", ometa.get("resourceVersion"))
        else:
            new = body
            meta = new["metadata"]
            # BeforeUpdate: restore what the client may not change
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
            if meta.get("generateName") is None and ometa.get("generateName"):
                pass
            if kind.status_subresource:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if kind.builtin and kind.kind == "Namespace":  # spec may be the stored one: replaced, not changed
                new["spec"] = {**(new.get("spec") or {}), "finalizers": (old.get("spec") or {}).get("finalizers", [])}
            # generation
            if not kind.builtin:
                if body_differs(new, e, typed=_typed(kind)):
                    meta["generation"] = int(ometa.get("generation") or 0) + 1
            elif kind.initial_generation and (new.get("spec") != old.get("spec")  # typed: == is exact
                                              or (kind.extra.get("annotations_bump_generation")
                                                  and meta.get("annotations") != ometa.get("annotations"))):
                meta["generation"] = int(ometa.get("generation") or 0) + 1
        if new["metadata"].get("creationTimestamp") is None:
            new["metadata"].pop("creationTimestamp", None)
        if kind.builtin and kind.kind == "Service" and sub != "status" and new.get("spec") is not old.get("spec"):
            new["spec"] = json_copy(new.get("spec") or {})  # (it may share parts with the stored spec)
            self._allocate_service(new, old)
        # a status write keeps the stored metadata (resourceVersion aside): nothing there to check
        self._validate(kind, new, old, sub, patch, same_meta=sub == "status")
        new = self._encode(kind, new, base=old)
        if sub != "status" and (kind.stored_go_encoded or _typed(kind)):
            # what the write left as it was is shared with the stored object (typed: ``==`` is exact), so
            # the checks below and the field manager see it unchanged at once
            for key, value in new.items():
                was = old.get(key)
                if was is not value and key != "metadata" and type(was) is type(value) and was == value:
                    new[key] = was
        table = self._table(kind)
        # delete-on-update: the last finalizer removed from a deleting object
        nmeta = new["metadata"]
        if (sub != "status" and ometa.get("deletionTimestamp") and not nmeta.get("finalizers")
                and not ometa.get("deletionGracePeriodSeconds")):
            echo = {**new, "metadata": {**nmeta, "resourceVersion": ometa.get("resourceVersion", "")}}
            if dry_run:
                return _Outcome(echo, 200, 0, False, e.name, stored=True)
            rv = self._commit(_Write(kind, table, old=e, delete=True))
            self._after_delete(kind, e)
            return _Outcome(echo, 200, rv, True, e.name, stored=True)
        nmeta.pop("resourceVersion", None)
        if applied is not None:
            self._set_managed(nmeta, applied, ometa.get("managedFields"))
        else:
            self._record_managed(kind, new, e, body_managed if sub == "" else None, manager, sub)
        crd = kind.builtin and kind.kind == "CustomResourceDefinition" and sub != "status"
        if crd:
            self._apply_crd(new, old, dry_run=True)  # the status it would record, for the no-op check
        if not body_differs(new, e, typed=_typed(kind)) and not meta_differs(new, e):
            return _Outcome(old, 200, 0, False, e.name, stored=True)
        if dry_run:
            new["metadata"]["resourceVersion"] = ometa.get("resourceVersion", "")
            return _Outcome(new, 200, 0, False, e.name, stored=True)
        if crd:
            self._apply_crd(new, old)
        w = _Write(kind, table, new, old=e)
        rv = self._commit(w)
        return _Outcome(new, 200, rv, True, e.name, stored=True)

    # ------------------------------------------------------------------- patch

    def patch(
        self,
        kind: str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        api_version: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
        actor: str = "user",
        field_validation: str = "Warn",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool | None = None,
        shared: bool = False,
        go_encoded: bool = False,
    ) -> dict[str, Any]:
        """PATCH with a JSON Patch, a JSON merge patch, (built-in kinds) a strategic merge patch,
        or a server-side apply (``patch_type="apply"``, YAML or JSON, ``field_manager`` required).

        An apply of a missing object creates it (201). It merges the configuration into the
        object as ``field_manager``, drops what that manager applied before and no longer
        does, and answers 409 when it would change fields another manager owns, unless
        ``force`` (:mod:`fakeapi.machinery.fieldmanager`). Every write keeps ``metadata.managedFields``.
        ``go_encoded``: the patch was built from Go-typed values (fakeapi's own kubelet), so the
        patched object decodes and the check that it does is skipped (``FAKEAPI_CHECK_SNAPSHOTS=1``
        checks that trust: :class:`fakeapi.codec.snapshots.NotGoEncoded`).
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""
        sub = subresource or ""
        ptype = PATCH_TYPES.get(patch_type, "")

        def run() -> _Outcome:
            patches = _patches_module()
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            accepted = BUILTIN_PATCH_MEDIA if k.builtin else CR_PATCH_MEDIA
            if not ptype or (ptype == "strategic" and not k.builtin):
                raise errors.unsupported_media_type(accepted)
            if ptype == "apply":
                if not field_manager:
                    raise errors.options_invalid("PatchOptions", [Cause(
                        errors.FIELD_VALUE_REQUIRED, "Required value: is required for apply patch", "fieldManager")])
            elif force is not None:
                raise errors.options_invalid("PatchOptions", [Cause(
                    errors.FIELD_VALUE_FORBIDDEN, "Forbidden: may not be specified for non-apply patch", "force")])
            if sub and (sub != "status" or not k.status_subresource):
                raise errors.not_found(k.group, k.plural, name)
            e = self._table(k).get(ns, name)
            if ptype == "apply":
                return self._apply(k, e, ns, name, patch, sub, str(field_manager), bool(force), field_validation,
                                   dry_run)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            body = patch
            if isinstance(body, (bytes, str)):
                try:
                    body = json.loads(body)
                except ValueError as err:
                    raise errors.bad_request(f"error decoding patch: {err}") from err
            # the patch functions do not change the document they are given (a merge patch's
            # result shares its untouched parts: the decoder copies it)
            current = e.obj if e.obj.get("apiVersion") == k.api_version else self._read(k, e.obj)
            try:
                if ptype == "json":
                    result = patches.apply_json_patch(current, body)
                elif ptype == "merge":
                    result = patches.apply_merge_patch_shared(current, body)
                else:
                    if not isinstance(body, dict):
                        raise patches.PatchFormatError("unable to find api field in struct for the patch")
                    result = patches.apply_strategic_merge_patch(current, body, k.schema or {})
            except patches.PatchTooLargeError as err:
                raise ApiError(errors.status_body(413, "RequestEntityTooLarge", str(err))) from err
            except patches.PatchFormatError as err:
                raise errors.bad_request(str(err)) from err
            except patches.PatchApplyError as err:
                raise errors.generic_invalid() from err
            except patches.PatchInternalError as err:
                raise errors.internal(str(err)) from err
            if not isinstance(result, dict):
                raise errors.bad_request("the patch produced something that is not an object")
            rmeta = _mapping(result.get("metadata"))
            if rmeta.get("name", name) != name:
                raise errors.bad_request(
                    f"the name of the object ({rmeta.get('name')}) does not match the name on the URL ({name})")
            if result.get("apiVersion") != k.api_version or result.get("kind") != k.kind:
                if ptype == "json":
                    raise errors.bad_request("the API version or kind of the object changed in the patch")
                result["apiVersion"], result["kind"] = k.api_version, k.kind
            if k.stored_go_encoded and (not go_encoded or self.snapshot_guard is not None):
                try:
                    _check_patched_go_decodes(k, ptype, body, result)
                except ApiError as err:
                    if go_encoded:
                        raise NotGoEncoded(f"a go_encoded {ptype} patch of {k.kind} {name} does not decode: "
                                           f"{err.message}") from err
                    raise
            # merge patches share the untouched parts of the stored object (kept shared by the decoder);
            # a JSON Patch may share the caller's values
            decoded = self._decode(k, result, field_validation, copy=ptype == "json",
                                   shared=ptype != "json", base=current if ptype != "json" else None,
                                   strict_error=lambda message: _patch_invalid(ptype, body, result, message))
            dmeta = decoded["metadata"]
            dmeta["name"] = name
            if k.namespaced:
                dmeta["namespace"] = self._namespace_for(k, dmeta.get("namespace"), ns)
            return self._update_entry(k, e, decoded, sub, dry_run, patch=True, manager=actor,
                                      body_managed=rmeta.get("managedFields"))

        return self._run("patch", k, ns, name, sub, actor, run, patch_type=ptype or patch_type, shared=shared)

    def _apply(self, k: Kind, e: Entry | None, ns: str, name: str, patch: Any, sub: str, manager: str, force: bool,
               field_validation: str, dry_run: bool) -> _Outcome:
        """Server-side apply (``applyPatcher``): merge, own, prune, conflicts; create when missing."""
        config = patch
        if isinstance(config, (bytes, str)):
            import yaml  # (here: most servers never see an apply, and yaml costs start-up time)

            try:
                config = yaml.safe_load(config)
            except yaml.YAMLError as err:
                raise errors.bad_request(f"error decoding YAML: {err}") from err
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: the applied configuration is not an object")
        config = normalize_numbers(config)
        got = config.get("apiVersion")
        if got != k.api_version:
            raise errors.bad_request("Incorrect version specified in apply patch. Specified patch version: "
                                     f"{got if isinstance(got, str) else ''}, expected: {k.api_version}")
        cmeta = _mapping(config.get("metadata"))
        if cmeta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if cmeta.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({cmeta.get('name')}) does not match the name on the URL ({name})")
        if e is None and sub:
            raise errors.not_found(k.group, k.plural, name)
        live = self._zero_object(k) if e is None else (
            e.obj if e.obj.get("apiVersion") == k.api_version else self._read(k, e.obj))
        stored = self._stored_managed(e)
        try:
            applied = fieldmanager.apply(stored, live, config, root_type(k.schema), manager=manager,
                                         api_version=k.api_version, subresource=sub,
                                         status_subresource=k.status_subresource, force=force,
                                         now=self.clock.timestamp(), closed=k.builtin)
        except fieldmanager.ApplyConflict as err:
            raise fieldmanager.conflict_error(err) from err
        except TypedError as err:
            where = f"{ns}/{name}" if ns else f"/{name}"
            group = f"{k.group}/{k.version}" if k.group else f"/{k.version}"
            raise errors.internal(f"failed to create typed patch object ({where}; {group}, Kind={k.kind}): {err}") from err
        merged = applied.obj
        mmeta = merged.setdefault("metadata", {})
        mmeta["name"] = name
        if e is None:
            if k.namespaced:
                mmeta.setdefault("namespace", ns)
            return self._create(k, merged, ns or None, field_validation, dry_run, False, manager=manager,
                                applied=applied.managed)
        decoded = self._decode(k, merged, field_validation, copy=True)
        dmeta = decoded["metadata"]
        dmeta["name"] = name
        if k.namespaced:
            dmeta["namespace"] = self._namespace_for(k, dmeta.get("namespace"), ns)
        return self._update_entry(k, e, decoded, sub, dry_run, patch=True, manager=manager, applied=applied.managed)

    # ------------------------------------------------------------------ delete

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

        def run() -> _Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            self._check_delete_options(propagation_policy, orphan_dependents, grace_period_seconds)
            e = self._table(k).get(ns, name)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            if k.builtin and k.kind == "Namespace" and name in IMMORTAL_NAMESPACES:
                raise errors.forbidden("", "namespaces", name, "this namespace may not be deleted")
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
                      grace: int | None, orphan: bool | None, dry_run: bool) -> _Outcome:
        pre = preconditions or {}
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
        if orphan is not None and policy is None:
            policy = "Orphan" if orphan else "Background"
        old = e.obj
        new = {**old, "metadata": dict(old["metadata"])}  # the rest is shared with the stored snapshot
        meta = new["metadata"]
        fins = [f for f in (meta.get("finalizers") or [])]
        had_gc = [f for f in fins if f in GC_FINALIZERS]
        fins = [f for f in fins if f not in GC_FINALIZERS]
        if policy == "Orphan":
            fins.append(ORPHAN)
        elif policy == "Foreground":
            fins.append(FOREGROUND)
        elif policy is None:
            if k.extra.get("orphans_by_default"):  # batch/v1 Jobs: DefaultGarbageCollectionPolicy is OrphanDependents
                self._warn([JOB_DELETE_WARNING])
            if had_gc:
                fins.extend(had_gc[:1])  # a finalizer the object has overrides the kind's default
            elif k.extra.get("orphans_by_default"):
                fins.append(ORPHAN)
        table = self._table(k)
        now = self.clock.now()
        # graceful kinds (Pods): the kubelet confirms later with grace 0
        graceful = 0
        if k.builtin and k.kind == "Pod":
            graceful = self._pod_grace(old, grace)
        if k.builtin and k.kind == "Namespace" and (old.get("spec") or {}).get("finalizers"):
            graceful = -1  # the namespace controller finishes it
        if not fins and graceful == 0:
            if dry_run:
                return _Outcome(self._delete_response(k, e, old), 200, 0, False, e.name, stored=k.return_deleted_object)
            rv = self._commit(_Write(k, table, old=e, delete=True))
            self._after_delete(k, e)
            last = {**old, "metadata": {**old["metadata"], "resourceVersion": str(rv)}}
            return _Outcome(self._delete_response(k, e, last), 200, rv, True, e.name,
                            stored=k.return_deleted_object)
        if fins:
            meta["finalizers"] = fins
        else:
            meta.pop("finalizers", None)
        first = not meta.get("deletionTimestamp")
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
        if first and (not k.builtin or int(meta.get("generation") or 0) > 0):
            meta["generation"] = int(meta.get("generation") or 0) + 1
        if k.builtin and k.kind == "Namespace":
            new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
        meta.pop("resourceVersion", None)
        if not body_differs(new, e, typed=_typed(k)) and not meta_differs(new, e):
            return _Outcome(old, 200, 0, False, e.name, stored=True)
        if dry_run:
            return _Outcome(new, 200, 0, False, e.name, stored=True)
        rv = self._commit(_Write(k, table, new, old=e))
        return _Outcome(new, 200, rv, True, e.name, stored=True)

    def _pod_grace(self, pod: dict[str, Any], grace: int | None) -> int:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if grace is None:
            grace = int(spec.get("terminationGracePeriodSeconds", 30) or 0)
        return max(int(grace), 0) if grace >= 0 else 1

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

    def _after_delete(self, kind: Kind, e: Entry) -> None:
        if kind.builtin and kind.kind == "CustomResourceDefinition":
            self._remove_crd(e.obj)

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

        def run() -> _Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
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
            return _Outcome({"apiVersion": k.api_version, "kind": k.list_kind,
                             "metadata": {"resourceVersion": str(self._rv)}, "items": items},
                            200, last_rv, bool(last_rv))

        return self._run("deletecollection", k, ns, "", "", actor, run)

    # ------------------------------------------------------------------- watch

    def watch(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        resource_version: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
        send_initial_events: bool | None = None,
        resource_version_match: str | None = None,
        actor: str = "user",
    ) -> Watch:
        """WATCH: a stream of changes (see :class:`~fakeapi.server.watch.Watch`).

        No resourceVersion (or ``"0"``): ADDED for every current object first. A
        resourceVersion N: only changes after N, or an ERROR 410 when N is older than
        the retained history. ``send_initial_events``: the watch-list protocol, ending the
        initial events with a bookmark annotated ``k8s.io/initial-events-end``.
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""
        holder: dict[str, Watch] = {}

        def run() -> _Outcome:
            self._check_list_options(resource_version, resource_version_match, None, send_initial_events, watch=True)
            match, _terms = self._matcher(k, label_selector, field_selector)
            log = self._log(k)
            bookmark = (lambda: {"apiVersion": k.api_version, "kind": k.kind,
                                 "metadata": {"resourceVersion": str(self._rv)}}) if allow_bookmarks else None
            rv_text = resource_version or ""
            initial = rv_text in ("", "0") if send_initial_events is None else send_initial_events
            if rv_text not in ("", "0"):
                try:
                    rv = int(rv_text)
                except ValueError as err:
                    raise errors.bad_request(f'invalid resource version "{rv_text}"') from err
            else:
                rv = self._rv
            if rv < log.trimmed_rv and not initial:
                status = errors.expired(f"too old resource version: {rv} ({log.trimmed_rv + 1})").status
                holder["w"] = Watch(log, pos=log.end, namespace=ns, matcher=match, error=status,
                                    condition=self._cond, bookmark=bookmark)
                return _Outcome({})
            events: list[WatchEvent] = []
            pos = log.position_after(rv) if rv_text not in ("", "0") else log.end
            if initial:
                for e in self._table(k).candidates(ns or None, _terms):
                    if match is None or match(e.obj):
                        events.append(WatchEvent(ADDED, e.obj))
                pos = log.end
                if send_initial_events:
                    events.append(WatchEvent(BOOKMARK, {
                        "apiVersion": k.api_version, "kind": k.kind,
                        "metadata": {"resourceVersion": str(self._rv),
                                     "annotations": {INITIAL_EVENTS_END: "true"}}}))
            holder["w"] = Watch(log, pos=pos, namespace=ns, matcher=match, initial=events, condition=self._cond,
                                bookmark=bookmark, after_rv=rv if rv > self._rv else 0)
            return _Outcome({})

        self._run("watch", k, ns, "", "", actor, run)
        return holder["w"]

    # --------------------------------------------------------------- CRDs

    def _apply_crd(self, crd: dict[str, Any], old: dict[str, Any] | None, *, dry_run: bool = False) -> None:
        """Record a CRD's status and (unless ``dry_run``) serve, or re-serve, its kinds.

        A CRD being deleted (finalizers pending) keeps serving its kinds until it is gone.
        """
        self._set_crd_status(crd, old)
        if dry_run:
            return
        if old is not None:
            spec = old.get("spec") or {}
            for v in spec.get("versions") or []:
                self.kinds.unregister(f"{spec.get('group')}/{v.get('name')}", (spec.get("names") or {}).get("kind", ""))
        kinds = kinds_from_crd(crd)
        for kd in kinds:
            self.kinds.register(kd)
        if old is not None and kinds:
            self._redecode_stored(kinds[0])

    def _set_crd_status(self, crd: dict[str, Any], old: dict[str, Any] | None) -> None:
        """The status the apiextensions controllers give a CRD: names accepted, established, stored versions."""
        spec = crd["spec"]
        old_status = (old or {}).get("status") or {}
        stored = list(old_status.get("storedVersions") or [])
        if _storage_version(spec) not in stored:
            stored.append(_storage_version(spec))
        now = self.clock.timestamp()
        crd["status"] = {
            "acceptedNames": dict(spec["names"]),
            "conditions": old_status.get("conditions") or [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": now},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": now},
            ],
            "storedVersions": stored,
        }

    def _redecode_stored(self, kind: Kind) -> None:
        """A CRD's schema changed: serve its stored objects pruned and defaulted by the new schema.

        As on a real server the stored bytes stay as they are (no write, no event); only what
        reads return changes, and the next write of an object stores the new form.
        """
        if kind.compiled is None:
            return
        for e in self._table(kind).entries.values():
            obj = fast_copy(e.obj)
            kind.compiled.prepare(obj)
            if obj != e.obj:
                e.reserve(obj)

    def _remove_crd(self, crd: dict[str, Any]) -> None:
        """A CRD is gone: stop serving its kinds and drop their objects (each with a DELETED event)."""
        spec = crd.get("spec") or {}
        group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
        kind = self.kinds.find((spec.get("names") or {}).get("kind", ""), f"{group}/{_storage_version(spec)}")
        if kind is not None:
            table = self._table(kind)
            for key in list(table.keys):
                e = table.entries[key]
                self._commit(_Write(kind, table, old=e, delete=True))
        self.store.drop_table(group, plural)
        for v in spec.get("versions") or []:
            self.kinds.unregister(f"{group}/{v.get('name')}", (spec.get("names") or {}).get("kind", ""))

    # ------------------------------------------------------------ GC support

    def finalize_namespace(self, name: str, *, actor: str = "namespace-controller") -> dict[str, Any]:
        """The namespace ``/finalize`` subresource: drop ``spec.finalizers`` (deletes it when nothing else holds it)."""
        k = self.resolve_kind("Namespace", "v1")

        def run() -> _Outcome:
            table = self._table(k)
            e = table.get("", name)
            if e is None:
                raise errors.not_found("", "namespaces", name)
            new = fast_copy(e.obj)
            new.setdefault("spec", {}).pop("finalizers", None)
            if not new["spec"]:
                new.pop("spec")
            if not new["metadata"].get("finalizers") and new["metadata"].get("deletionTimestamp"):
                rv = self._commit(_Write(k, table, old=e, delete=True))
                return _Outcome(new, 200, rv, True, name)
            new["metadata"].pop("resourceVersion", None)
            rv = self._commit(_Write(k, table, new, old=e))
            return _Outcome(self._read(k, new), 200, rv, True, name)

        return self._run("update", k, "", name, "finalize", actor, run)

    def bind_pod(self, name: str, namespace: str, node: str, *, actor: str = "default-scheduler") -> dict[str, Any]:
        """The ``pods/binding`` subresource: assign a pod to a node, as the scheduler does.

        Sets ``spec.nodeName`` and the ``PodScheduled`` condition; 409 when the pod is
        already bound or being deleted. Bound pods are deleted gracefully (the kubelet
        confirms), unbound ones at once. As kube-apiserver's ``BindingREST`` (a storage
        update past the field manager), it leaves managedFields as they were: no manager owns
        ``spec.nodeName`` or the ``PodScheduled`` condition (kubernetes/kubernetes#127508).
        """
        k = self.resolve_kind("Pod", "v1")

        def run() -> _Outcome:
            table = self._table(k)
            e = table.get(namespace, name)
            if e is None:
                raise errors.not_found("", "pods", name)
            spec = e.obj.get("spec") or {}
            if spec.get("nodeName"):
                raise errors.conflict("", "pods", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            if e.obj["metadata"].get("deletionTimestamp"):
                raise errors.conflict("", "pods", name, f"pod {name} is being deleted, cannot be assigned to a host")
            # a new snapshot sharing what the binding leaves as it was
            status = dict(e.obj.get("status") or {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": self.clock.timestamp()})
            status["conditions"] = conds
            new = {**e.obj, "metadata": dict(e.obj["metadata"]), "spec": {**spec, "nodeName": node},
                   "status": status}
            new["metadata"].pop("resourceVersion", None)
            rv = self._commit(_Write(k, table, new, old=e))
            return _Outcome({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                            201, rv, True, name)

        return self._run("create", k, namespace, name, "binding", actor, run)

    def objects(self, kind: Kind, namespace: str | None = None) -> _Objects:
        """Stored snapshots of a kind (shared: do not mutate), for in-process actors like the GC."""
        return [e.obj for e in self._table(kind).candidates(namespace)]

    def entry_by_uid(self, uid: str) -> Entry | None:
        """The stored entry with that uid, if any."""
        return self.store.lookup_uid(uid)


# ---------------------------------------------------------------------- helpers


@cache
def _patches_module() -> ModuleType:
    """``fakeapi.machinery.patches``, imported on first use (jsonpatch is slow to import; a ready server needs none).

    A cached reference: an ``import`` statement in a request path costs microseconds per call.
    """
    from fakeapi.machinery import patches

    return patches


@cache
def _selectors_module() -> ModuleType:
    """``fakeapi.machinery.selectors``, imported on first use (lists and watches; a ready server needs none)."""
    from fakeapi.machinery import selectors

    return selectors


def _typed(kind: Kind) -> bool:
    """Does the kind's schema fix the JSON type of every field (no preserve-unknown or untyped nodes)?"""
    return bool(kind.extra.get("typed"))


#: Deep-copy a JSON value, turning integral floats into ints (one pass of copy + normalize_numbers).
_copy_json = copy_normalized
#: Values a copy keeps as they are (a float may need normalizing: it is copied).
_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _uuid4_text(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))``: the variant and version bits set, in 8-4-4-4-12 form."""
    bits = (bits & ~(0xC000 << 48)) | (0x8000 << 48)
    bits = (bits & ~(0xF000 << 64)) | (4 << 76)
    h = f"{bits:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _storage_version(spec: dict[str, Any]) -> str:
    versions = spec.get("versions") or []
    for v in versions:
        if v.get("storage"):
            return str(v.get("name"))
    return str(versions[0].get("name")) if versions else "v1"


def _entry(obj: dict[str, Any], rv: int, old: Entry | None = None) -> Entry:
    """The store entry of a snapshot; ``old``: the entry it replaces (its owner list is reused when unchanged)."""
    meta = obj["metadata"]
    ns = meta.get("namespace") or ""
    name = meta["name"]
    labels = meta.get("labels") or {}  # a stored map: never changed, so not copied
    refs = meta.get("ownerReferences")
    if old is not None and refs is old.obj["metadata"].get("ownerReferences"):
        owners = old.owner_uids
    else:
        owners = tuple(r.get("uid", "") for r in refs or () if isinstance(r, dict))
    return Entry(object_key(ns, name) if old is None else old.key, ns, name, obj, rv, meta.get("uid", ""), labels,
                 owners)


def _registry_key(kind: Kind, key: str) -> str:
    prefix = f"/{kind.group}" if kind.group else ""
    return f"/registry{prefix}/{kind.plural}/{key}"


def _short(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))[:200]




_META_STRING_MAPS = ("labels", "annotations")
_META_STRINGS = ("name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp",
                 "deletionTimestamp")


def _same_body(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Does ``new`` hold, outside metadata, exactly ``old``'s values (its containers the very same objects)?"""
    if len(new) != len(old):
        return False
    for k, v in new.items():
        if k == "metadata":
            continue
        w = old.get(k, _ABSENT)
        if w is not v and (type(v) is dict or type(v) is list or type(w) is not type(v) or w != v):
            return False
    return True


_ABSENT: Any = object()
#: The warning a Job delete without a propagation policy gets (pkg/registry/batch/job/storage).
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
                      "to remove them or set propagationPolicy=Orphan to suppress this warning")
_NO_BASE: dict[str, Any] = {}


def _check_meta_types(kind: Kind, meta: dict[str, Any], base: dict[str, Any] | None = None) -> None:
    """Reject metadata a Go decoder could not unmarshal into ObjectMeta (400); drop its nulls and empties.

    ``base``: stored metadata whose maps and lists ``meta`` may share (checked when stored).
    One pass over the keys settles the common case (every value of its Go type); anything
    else goes through :func:`_check_meta_types_in_order`, which raises the first error in
    the order the Go decoder reports them.
    """
    b = base if base is not None else _NO_BASE
    nulls = empties = False
    for k, v in meta.items():
        if v is None:
            nulls = True
            continue
        want = _META_WANT.get(k)
        if want is None:
            continue  # (a field the decoder does not check here)
        tv = type(v)
        if want is str:
            if tv is not str:
                break
        elif want is dict:  # labels, annotations: map[string]string
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not dict:
                break
            if not v:
                empties = True
            elif not _ONLY_STR.issuperset(map(type, v.values())):
                break
        elif want is list:  # finalizers: []string
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not list or not _ONLY_STR.issuperset(map(type, v)):
                break
            if not v:
                empties = True
        elif want is int:  # generation, deletionGracePeriodSeconds: int64
            if tv is not int:
                break
        else:  # ownerReferences
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not list or not all(type(r) is dict and _owner_ref_typed(r) for r in v):
                break
            if not v:
                empties = True
    else:
        if nulls:
            for f in [f for f, v in meta.items() if v is None]:
                del meta[f]
        if empties:
            for f in _META_DROPPED_EMPTY:
                if f in meta and not meta[f]:
                    del meta[f]
        return
    _check_meta_types_in_order(meta, base)


def _prefer_ported(causes: list[Cause], ported: list[Cause]) -> list[Cause]:
    """The causes of a built-in's write: its schema's and metadata's, then the ported Go validation's.

    kube-apiserver runs only the Go validation on built-ins; the schema stands in for what is not
    ported. Where both report the same field, Go's stands alone (a missing ``pathType``: not the
    schema's bare ``Required value`` but Go's ``Required value: pathType must be specified``; a
    Service port without a number: not ``Required`` but Go's zero value, out of range).
    """
    if not ported:
        return causes
    seen = {c.field for c in ported}
    return [c for c in causes if c.field not in seen] + ported


def _check_go_decodes(kind: Kind, body: dict[str, Any]) -> None:
    """A create or update body of a built-in kind must decode into its Go struct: else 400.

    The handler decodes before anything else (``transformDecodeError``), so this error wins
    over every validation error. Custom resources decode as unstructured JSON: not checked.
    """
    if not kind.stored_go_encoded:
        return
    bad = unmarshal_error(body, kind.go_type)
    if bad is not None:
        raise errors.bad_request(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {bad}')


def _check_patched_go_decodes(kind: Kind, ptype: str, patch: Any, result: dict[str, Any]) -> None:
    """A patched built-in must decode into its Go struct: else 422 ``patch: Invalid value`` (patch.go).

    JSON and merge patches decode the patched JSON (a Go map marshalled: keys sorted); a
    strategic merge patch's result goes through the unstructured converter. The stored object
    decodes, so only values the patch brings can fail: the patch is checked first (small), and
    the result only when the patch has a value of the wrong type.
    """
    t = kind.go_type
    if ptype == "strategic":
        bad = from_unstructured_error(result, t) if from_unstructured_error(patch, t) is not None else None
    elif ptype == "merge" and unmarshal_error(patch, t) is None:
        bad = None
    else:
        bad = unmarshal_error(result, t, sorted_keys=True)
    if bad is not None:
        raise _patch_invalid(ptype, patch, result, bad)


def _patch_invalid(ptype: str, patch: Any, result: dict[str, Any], message: str) -> ApiError:
    """patch.go's 422 for a patched object that does not decode: ``"" is invalid: patch: Invalid value: …``.

    The value shown is the patched object's JSON (JSON and merge patches) or the patch map as
    Go's ``%+v`` prints it (strategic merge patches). The real object's JSON also holds its
    managedFields, which this server does not keep.
    """
    value = go_sprint(patch) if ptype == "strategic" else go_json(result, sort_keys=True)
    return errors.invalid("", "", "", [invalid("patch", value, message)])


def _check_go_meta(kind: Kind, meta: dict[str, Any]) -> None:
    """Raise NotGoEncoded unless ``meta`` is as a Go client marshals ObjectMeta: what
    :meth:`APIServer._decode` trusts of a ``go_encoded`` body (checked with ``FAKEAPI_CHECK_SNAPSHOTS=1``)."""
    from fakeapi.schema.structural import metadata_could_prune

    probe = json_copy(meta)
    try:
        _check_meta_types(kind, probe)
    except ApiError as e:
        raise NotGoEncoded(f"go_encoded metadata of a {kind.kind} has a value of the wrong type: {e}") from e
    if probe != meta or metadata_could_prune(meta, None):
        raise NotGoEncoded(f"go_encoded metadata of a {kind.kind} is not as Go encodes it: {meta!r}")


#: The maps and lists of ObjectMeta a Go decoder leaves nil when empty (omitempty drops them).
_META_DROPPED_EMPTY = (*_META_STRING_MAPS, "finalizers", "ownerReferences")
#: The Go type :func:`_check_meta_types` expects of each ObjectMeta field it checks (``tuple``:
#: ownerReferences, a list of OwnerReference structs).
_META_WANT: dict[str, Any] = {
    **dict.fromkeys(_META_STRINGS, str), **dict.fromkeys(_META_STRING_MAPS, dict),
    "finalizers": list, "ownerReferences": tuple, "generation": int, "deletionGracePeriodSeconds": int,
}
#: (``_ONLY_STR.issuperset(map(type, values))``: are all the values strings? checked in C)
_ONLY_STR = frozenset({str})
_OWNER_REF_STRINGS = ("apiVersion", "kind", "name", "uid")
_OWNER_REF_BOOLS = ("controller", "blockOwnerDeletion")
_OWNER_REF_TYPES = tuple((f, str) for f in _OWNER_REF_STRINGS) + tuple((f, bool) for f in _OWNER_REF_BOOLS)


def _owner_ref_typed(ref: dict[str, Any]) -> bool:
    """Does every typed field of an ownerReference hold its Go type (or null)?"""
    for f, t in _OWNER_REF_TYPES:
        v = ref.get(f)
        if v is not None and type(v) is not t:
            return False
    return True


def _check_meta_types_in_order(meta: dict[str, Any], base: dict[str, Any] | None) -> None:
    """:func:`_check_meta_types`, field by field in the Go decoder's order (the first error is raised)."""
    def fail(field_name: str, v: Any, go_type: str) -> None:
        raise errors.bad_request(
            f"json: cannot unmarshal {_json_type(v)} into Go struct field ObjectMeta.metadata.{field_name} "
            f"of type {go_type}")

    b = base if base is not None else _NO_BASE
    for f in _META_STRINGS:
        v = meta.get(f)
        if v is not None and not isinstance(v, str):
            fail(f, v, "string")
    for f in _META_STRING_MAPS:
        v = meta.get(f)
        if v is None or v is b.get(f):
            continue
        if not isinstance(v, dict):
            fail(f, v, "map[string]string")
        for val in v.values():
            if val is not None and not isinstance(val, str):
                fail(f, val, "string")
    fins = meta.get("finalizers")
    if fins is not None and fins is not b.get("finalizers") and (
            not isinstance(fins, list) or not all(isinstance(x, str) for x in fins)):
        fail("finalizers", fins, "[]string")
    refs = meta.get("ownerReferences")
    if refs is not None and refs is not b.get("ownerReferences"):
        if not isinstance(refs, list) or not all(isinstance(x, dict) for x in refs):
            fail("ownerReferences", refs, "[]v1.OwnerReference")
        for ref in refs:
            for f in _OWNER_REF_STRINGS:
                if ref.get(f) is not None and not isinstance(ref[f], str):
                    fail(f"ownerReferences.{f}", ref[f], "string")
            for f in _OWNER_REF_BOOLS:
                if ref.get(f) is not None and not isinstance(ref[f], bool):
                    fail(f"ownerReferences.{f}", ref[f], "bool")
    grace = meta.get("deletionGracePeriodSeconds")
    if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)):
        fail("deletionGracePeriodSeconds", grace, "int64")
    gen = meta.get("generation")
    if gen is not None and (isinstance(gen, bool) or not isinstance(gen, int)):
        fail("generation", gen, "int64")
    # drop explicit nulls the Go decoder would leave at zero
    for f in [f for f, v in meta.items() if v is None]:
        del meta[f]
    for f in _META_DROPPED_EMPTY:
        if f in meta and not meta[f]:
            del meta[f]


def _list_option_causes(rv: str | None, match: str | None, cont: str | None,
                        send_initial_events: bool | None) -> list[Cause]:
    """The field errors of a LIST's options, in kube-apiserver's order."""
    causes: list[Cause] = []
    if match:
        if not rv:
            causes.append(forbidden("resourceVersionMatch",
                                     "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if cont:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and rv == "0":
            causes.append(forbidden("resourceVersionMatch",
                                     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if send_initial_events is not None:
        causes.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


def _watch_option_causes(match: str | None, cont: str | None, send_initial_events: bool | None) -> list[Cause]:
    """The field errors of a WATCH's options (the WatchList feature is enabled)."""
    causes: list[Cause] = []
    if send_initial_events is not None and match != "NotOlderThan":
        causes.append(forbidden("resourceVersionMatch",
                                 "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if match:
        if send_initial_events is None:
            causes.append(forbidden("resourceVersionMatch",
                                     "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != "NotOlderThan":
            causes.append(not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
        if cont:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    return causes


def _encode_continue(key: str, rv: int) -> str:
    """A continue token as etcd3's store makes it: the list revision and the last key served."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int]:
    """The (last key, revision) of a continue token; 400 when it is not one."""
    try:
        pad = "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(token + pad))
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown continue token version")
        return str(data["start"]), int(data["rv"])
    except (ValueError, KeyError, TypeError) as e:
        raise errors.bad_request(f"continue key is not valid: {e}") from e
