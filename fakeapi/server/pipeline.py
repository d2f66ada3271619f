"""The steps every verb shares, as one pipeline: decode, admit, encode, commit, notify.

:class:`Pipeline` is the base of :class:`~fakeapi.server.apiserver.APIServer`; each verb's own
module (:mod:`~fakeapi.server.create`, :mod:`~fakeapi.server.update`, ...) strings these steps
together, asking the kind's strategy (:mod:`fakeapi.registry.strategy`) wherever kinds differ:

- :meth:`Pipeline._run`: a request's frame (the lock, fault rules, the trace, errors as ``metav1.Status``);
- :meth:`Pipeline._decode`: a body as the server's decoder leaves it (numbers, metadata types,
  pruning, unknown fields, the strategy's defaults);
- :meth:`Pipeline._admit`: validation (ObjectMeta, the schema, the strategy's rules) and warnings;
- :meth:`Pipeline._encode`: a built-in as its Go struct re-encodes it;
- :meth:`Pipeline._record_managed` (and the other managedFields steps): the field manager;
- :meth:`Pipeline._commit`: the next resourceVersion, the store, the watch log, :meth:`Pipeline._notify`.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from fakeapi.codec.gomodel import GoDecodeError, go_roundtrip, go_roundtrip_owned
from fakeapi.codec.snapshoterrors import SnapshotMutated
from fakeapi.machinery import bodycheck, errors, fieldmanager  # (bodycheck: issue 24)
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonutil import copy_normalized, copy_object, fast_copy, json_copy, normalize_numbers
from fakeapi.machinery.jsonutil import go_json_type as _json_type
from fakeapi.machinery.metavalidation import (
    dedup_owner_references,
    validate_object_meta,
    validate_object_meta_update,
)
from fakeapi.machinery.typedfields import Memo
from fakeapi.registry.core.serviceindex import AllocationIndex
from fakeapi.registry.kinds import Kind, KindRegistry
from fakeapi.schema.structural import metadata_could_prune
from fakeapi.server import hooks, txn  # (txn: request atomicity, issue 24)
from fakeapi.server.clock import Clock
from fakeapi.server.decoding import check_go_body, check_go_json, check_go_meta, check_meta_types
from fakeapi.server.faults import ControllerCrash, FaultSet
from fakeapi.server.store import FIELD_NAME, FIELD_NAMESPACE, Entry, Store, Table
from fakeapi.server.store import same_meta as _store_same_meta
from fakeapi.server.trace import Trace
from fakeapi.server.watch import ADDED, DELETED, MODIFIED, Event, EventLog

if TYPE_CHECKING:  # (only types: the server imports the Go decoder, the snapshot check on first use; issue 22)
    from fakeapi.codec.godecode import DecodeCache
    from fakeapi.codec.snapshots import SnapshotGuard

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_ALPHABET_LEN = len(GENERATE_ALPHABET)
_ALPHABET_BITS = _ALPHABET_LEN.bit_length()
#: How ``Random.choice`` draws an index from a generator whose ``getrandbits`` is its own (``Pipeline._generate_name``).
_RANDBELOW = random.Random._randbelow_with_getrandbits  # type: ignore[attr-defined]

#: Annotations used inside APIServer, whose ``list`` method shadows the builtin there.
Objects = list[dict[str, Any]]
#: Verbs that write nothing: they run without an undo journal (fakeapi.server.txn).
_READ_VERBS = frozenset({"get", "list", "watch"})
KeyedObjects = list[tuple[str, dict[str, Any]]]


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a dict, else an empty one (for peeking into undecoded bodies)."""
    return value if isinstance(value, dict) else {}


@dataclass(slots=True)
class Outcome:
    """What a request answers. ``stored``: ``obj`` is (or shares parts with) a stored snapshot,
    so the caller gets a copy of it (or, asking for ``shared``, the snapshot itself)."""

    obj: dict[str, Any]
    code: int = 200
    rv: int = 0
    wrote: bool = False
    name: str = ""
    stored: bool = False


@dataclass(slots=True)
class Write:
    """A change the request will make if it gets that far."""

    kind: Kind
    table: Table
    obj: dict[str, Any] | None = None
    old: Entry | None = None
    delete: bool = False
    extra: tuple[Callable[[], None], ...] = ()
    #: The object is known to be as Go encodes it (a CRD installed from a checked template).
    go_checked: bool = False

class Pipeline:
    """The shared steps of the verbs, and the server state they work on (set by ``APIServer.__init__``).

    It is also what a kind's strategy sees of the server (:class:`fakeapi.registry.strategy.StrategyContext`).
    """

    clock: Clock
    trace: Trace
    faults: FaultSet
    kinds: KindRegistry
    store: Store
    seed: int
    _rng: random.Random
    _rv: int
    resource_version: int
    _logs: dict[tuple[str, str], EventLog]
    watch_history: int
    _lock: threading.RLock
    _cond: threading.Condition
    _local: threading.local
    _listeners: list[Callable[[str, Kind, dict[str, Any], dict[str, Any] | None], None]]
    managed_fields: bool
    _zeros: dict[str, dict[str, Any]]
    _pending_managed: tuple[Any, fieldmanager.Managed] | None
    _changes_memo: Memo
    snapshot_guard: SnapshotGuard | None
    #: This server stores CRDs installed from a template whose spec may be sealed (``APIServer.install_crd``).
    _sealed_crds: bool
    #: A watch of CRDs was opened here: it may be handed any CRD stored from then on.
    _crd_watched: bool
    decoded: DecodeCache
    gc: hooks.Collector | None
    #: The save point of the request in progress (fakeapi.server.txn), None between requests.
    _tx: txn.Savepoint | None = None
    admission: list[Callable[[Kind, dict[str, Any]], None]]

    # ------------------------------------------------------------------ the request frame

    def _run(
        self,
        verb: str,
        kind: Kind,
        namespace: str,
        name: str,
        subresource: str,
        actor: str,
        fn: Callable[[], Outcome],
        patch_type: str = "",
        shared: bool = False,
    ) -> dict[str, Any]:
        if kind.plural == "customresourcedefinitions" and verb != "create":
            self._crd_request(kind, verb)  # (before any request but a create can reach a stored CRD)
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
                # --- request atomicity (fakeapi.server.txn): a request that fails changes nothing ---
                if verb in _READ_VERBS:
                    out = fn()
                else:
                    outer = self._tx
                    sp = self._tx = txn.begin(  # (the kinds and tables: kept on change, see _registry_changing)
                        outer.journal if outer is not None else None, self._rv, self.resource_version, self._rng,
                        outer)
                    try:
                        out = fn()
                        if sp.outermost and sp.journal.notes:  # (a write that stored nothing has none)
                            self._flush_notes(sp)
                    except BaseException:
                        self._undo(sp)
                        raise
                    finally:
                        self._tx = outer
                # --- end request atomicity ---
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
            rv = out.rv  # (_record, inline: every request)
            self.trace.record_call(self.clock._now, actor, verb, kind.kind, namespace or "", out.name or name,
                                   subresource, patch_type, out.code, "", str(rv) if rv else "", out.wrote)
            self._local.code = out.code
            if rule is not None and rule.crash == "after":
                raise ControllerCrash(actor, "after", f"{verb} {kind.kind} {out.name or name}")
            obj = out.obj
            if out.stored:
                if not shared:
                    return self._read(kind, obj)
                # (_view, inline: most answers; issue 22)
                return obj if obj.get("apiVersion") == kind.api_version else {**obj, "apiVersion": kind.api_version}
            return obj

    def _crd_request(self, kind: Kind, verb: str) -> None:
        """A request on the CRD kind other than a create is about to run: it may hand out any stored CRD,
        and a watch any CRD stored from now on (``APIServer.install_crd``)."""
        if verb == "watch":
            self._crd_watched = True
        if self._sealed_crds:
            self._expose_crds(kind)

    def _expose_crds(self, kind: Kind) -> None:
        """Unseal the members of every stored CRD (:func:`fakeapi.codec.snapshots.unseal`): one may be handed out."""
        from fakeapi.codec.snapshots import unseal

        with self._lock:
            for e in self._table(kind).candidates(None):
                unseal(e.obj)
            self._sealed_crds = False

    def _registry_changing(self) -> None:
        """The kinds or the tables are about to change (a CRD's write): the request in progress keeps
        them as they were, to put back if it fails (:func:`fakeapi.server.txn.save_registry`)."""
        if self._tx is not None:
            txn.save_registry(self._tx, self.kinds, self.store)

    def _undo(self, sp: txn.Savepoint) -> None:
        """Roll back what the request of save point ``sp`` did (store, counter, watch logs, generator)."""
        txn.rollback(sp, self.kinds, self.store)
        self._rv = sp.rv
        self.resource_version = sp.resource_version
        txn.restore_rng(sp, self._rng)
        self._pending_managed = None

    def _flush_notes(self, sp: txn.Savepoint) -> None:
        """Deliver the notifications the request held back (those of nested writes they cause included)."""
        notes = sp.journal.notes
        gc = self.gc
        listeners = self._listeners
        cond = self._cond
        for etype, kind, obj, old in notes:  # (a list iterator: it reaches the notes appended meanwhile too)
            # (_deliver, inline: every write)
            if gc is not None:
                gc.on_event(etype, kind, obj, old)
            for fn in listeners:
                fn(etype, kind, obj, old)
            if cond._waiters:  # type: ignore[attr-defined]  # (threads blocked in a watch: most runs have none)
                cond.notify_all()
        notes.clear()

    def _record(self, verb: str, kind: Kind, namespace: str, name: str, subresource: str, actor: str,
                patch_type: str, code: int, reason: str, rv: int, wrote: bool) -> None:
        self.trace.record_call(self.clock._now, actor, verb, kind.kind, namespace or "", name, subresource, patch_type,
                               code, reason, str(rv) if rv else "", wrote)

    def _kind_of(self, obj: Any, go_encoded: bool = False) -> Kind:
        """The kind of a request body, once the body check passed (``go_encoded``: a Go client's body,
        JSON values alone: :func:`bodycheck.check_object` does not read it back to make sure)."""
        if not isinstance(obj, dict):
            raise errors.bad_request("Object 'Kind' is missing in the request body")
        if go_encoded and self.snapshot_guard is not None:
            check_go_json("body", obj)
        bodycheck.check_object(obj, json_only=go_encoded)  # (issue 24: only JSON values, within bounds, first)
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

    def resolve_kind(self, kind: str, api_version: str | None = None) -> Kind:
        """The served Kind for a name/plural/``group/version/Kind``; 404 when unknown."""
        if not isinstance(kind, str) or not (api_version is None or isinstance(api_version, str)):
            raise errors.resource_not_found()
        return self.kinds.require(kind, api_version)


    # ------------------------------------------------- what strategies may ask (the StrategyContext)

    @property
    def rng(self) -> random.Random:
        """The seeded random source of generated names and allocated IPs and ports."""
        return self._rng

    def timestamp(self) -> str:
        """The virtual clock's now (a metav1.Time string)."""
        return self.clock.timestamp()

    def stored(self, group: str, plural: str) -> Iterable[dict[str, Any]]:
        """The stored snapshots of a resource (shared: do not mutate)."""
        if self._sealed_crds and plural == "customresourcedefinitions":
            self._expose_crds(self.kinds.require("CustomResourceDefinition", "apiextensions.k8s.io/v1"))
        return (e.obj for e in self.store.table(group, plural).candidates(None))

    def service_allocations(self, except_uid: str | None) -> tuple[AllocationIndex, str | None]:
        """The stored Services' allocations, and the key of the one with ``except_uid`` (None: not stored)."""
        table = self.store.table("", "services")
        ref = self.store.by_uid.get(except_uid) if except_uid else None
        assert table.allocations is not None
        return table.allocations, (ref[2] if ref is not None and ref[:2] == ("", "services") else None)

    def redecode_stored(self, kind: Kind) -> None:
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

    def purge(self, kind: Kind | None, group: str, plural: str) -> None:
        """Delete every stored object of a resource, each with a DELETED event, and drop its table."""
        if kind is not None:
            table = self._table(kind)
            for key in list(table.keys):
                e = table.entries[key]
                self._commit(Write(kind, table, old=e, delete=True))
        self.store.drop_table(group, plural)

    # ------------------------------------------------------------------ decode

    def _decode(self, kind: Kind, obj: dict[str, Any], field_validation: str, *, copy: bool = True,
                shared: bool = False, base: dict[str, Any] | None = None, go_meta: bool = False,
                go_body: bool = False,
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
        ``FAKEAPI_CHECK_SNAPSHOTS=1`` that is checked: :func:`check_go_meta`).
        ``go_body``: the rest of the body is what a Go client marshals from the kind's Go type (a
        ``go_encoded`` create, the kubelet's status patch, with the stored object's parts): where the
        schema has a node for everything that type holds (:meth:`CompiledSchema.prunes_nothing`), the
        pipeline could change nothing, and a plain copy replaces its walk (with
        ``FAKEAPI_CHECK_SNAPSHOTS=1`` the walk runs too and must agree: :func:`check_go_body`).
        ``strict_error`` builds the error for unknown fields under ``fieldValidation=Strict``
        (400 for a body; a patch's is 422, :func:`patch_invalid`).
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
        #: The metadata keys whose values are not the stored metadata's own (None: every key may be new).
        changed: list[str] | None = None
        if stored_meta:
            meta = dict(obj["metadata"])  # its values stay shared with the stored metadata (replaced, never changed)
        elif fused:
            meta = obj.get("metadata")
            bmeta = base.get("metadata") if base is not None else None
            cp = _copy_json
            if meta is None:
                meta = {}
            elif type(meta) is dict and type(bmeta) is dict:
                # a patch that changed some metadata: the maps and lists it left as stored stay shared, and
                # the values it left as stored (typed, pruned and checked when stored) are not checked again
                src = meta
                meta, changed = {}, []
                for k, v in src.items():
                    if k == "managedFields":
                        continue
                    tv = type(v)
                    if v is bmeta.get(k, _ABSENT) and v is not None and (v or (tv is not dict and tv is not list)):
                        meta[k] = v
                    else:
                        changed.append(k)  # (and a null or an empty map or list: the decoder drops those)
                        meta[k] = v if tv in _PLAIN_SCALARS else cp(v)
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
                check_meta_types(kind, meta, bmeta if type(bmeta) is dict else None, changed)
            meta.pop("managedFields", None)
            meta.pop("selfLink", None)
            if go_meta and self.snapshot_guard is not None:
                check_go_meta(kind, meta)
        warnings: list[str]
        if fused:
            prune_meta = not stored_meta and not go_meta and (
                changed is None or metadata_could_prune(meta, bmeta, [k for k in changed if k in meta]))
            if go_body and not prune_meta and kind.compiled.prunes_nothing(obj, kind.go_type, base):
                obj, warnings = self._go_body_copy(kind, obj, meta, base)
            else:
                obj, warnings = kind.compiled.prepare_copy(obj, meta, base=base, prune_metadata=prune_meta)
        else:
            warnings = kind.compiled.prepare(obj) if kind.compiled is not None else []
        if warnings:
            if field_validation == "Strict":
                raise strict_error("strict decoding error: " + ", ".join(warnings))
            if field_validation != "Ignore":
                self._warn(warnings)
        kind.strategy.default(obj, base)
        return obj

    def _go_body_copy(self, kind: Kind, obj: dict[str, Any], meta: dict[str, Any],
                      base: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
        """The decode pipeline's copy of a Go-marshalled body the schema prunes nothing of (see :meth:`_decode`):
        ``meta`` in the metadata's place, what ``obj`` shares with ``base`` kept, the rest copied (integral
        floats made ints), no warnings."""
        cp = _copy_json
        out: dict[str, Any] = {}
        for k, v in obj.items():
            if k == "metadata":
                out[k] = meta
            elif type(v) in _PLAIN_SCALARS or (base is not None and v is base.get(k)):
                out[k] = v
            else:
                out[k] = cp(v)
        if "metadata" not in obj:
            out["metadata"] = meta
        if self.snapshot_guard is not None:
            check_go_body(kind, obj, meta, base, out)
        return out, []

    # ------------------------------------------------------------------ admit

    def _admit(self, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str = "",
               patch: bool = False, *, same_meta: bool = False, same_body: bool | None = None) -> None:
        """Validate a write: ObjectMeta (create and update rules), the schema, the kind's own rules.

        On update, what the write shares with the stored object (the same metadata, the very
        same spec or status objects: see :meth:`_update_entry`) passed these checks when it
        was stored and is not checked again; as the real server's validation ratcheting lets
        unchanged values through, nothing a client can observe changes. ``same_body``: what
        :func:`_same_body` says of ``obj`` and ``old``, when the caller knows it (None: worked out here).
        """
        meta = obj["metadata"]
        same_meta = old is not None and (same_meta or _store_same_meta(meta, old["metadata"]))
        if same_meta:
            causes: list[Cause] = []
        else:
            warnings = dedup_owner_references(meta)
            if warnings:  # (_warn, only when there is something to say: most writes have nothing)
                self._warn(warnings)
            causes, warnings = validate_object_meta(
                meta, namespaced=kind.namespaced, name_rule=kind.name_rule, custom_resource=not kind.builtin,
                old=old["metadata"] if old is not None else None)  # warns of the finalizers this write adds
            if warnings:
                self._warn(warnings)
            if old is not None:
                causes += validate_object_meta_update(obj["metadata"], old["metadata"], subresource=subresource)
        body_shared = old is not None and (_same_body(obj, old) if same_body is None else same_body)
        if kind.compiled is not None and not body_shared:
            if subresource == "status":
                causes += kind.compiled.validate_status(obj, old=old)
            else:
                causes += kind.compiled.validate(obj, old=old)
        strategy = kind.strategy
        causes = strategy.admit(causes, obj, old, subresource, body_shared)
        if causes:
            raise errors.invalid(kind.group, kind.kind, meta.get("name") or meta.get("generateName") or "", causes)
        if subresource != "status":
            warnings = strategy.warnings(obj, old)  # (WarningsOnCreate/WarningsOnUpdate: a valid write's)
            if warnings:
                self._warn(warnings)

    # ------------------------------------------------------------------ encode, commit, notify

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

    def _commit(self, w: Write) -> int:
        """Apply a prepared write: assign the next resourceVersion, store, log the event."""
        kind, table = w.kind, w.table
        sp = self._tx
        self._rv += 1
        rv = self.resource_version = self._rv
        if w.delete:
            assert w.old is not None
            gone = w.old.obj
            last = {**gone, "metadata": {**gone["metadata"], "resourceVersion": str(rv)}}
            log = self._log(kind)
            if sp is not None:  # (fakeapi.server.txn: how to undo this commit)
                txn.record_commit(sp, self.store, table, w.old.key, w.old, log, self._forget_decoded, w.old.namespace,
                                  w.old.name)
            self.store.remove(table, w.old.key)
            self.decoded.forget(kind.group, kind.plural, w.old.namespace, w.old.name)
            if self.snapshot_guard is not None:
                self.snapshot_guard.stored(kind.plural, w.old.key, None)
            log.append(Event(rv, DELETED, w.old.namespace, last, w.old.obj))
            self._notify(DELETED, kind, last, w.old.obj)
            return rv
        assert w.obj is not None
        obj = w.obj
        meta = obj["metadata"]
        meta["resourceVersion"] = str(rv)
        prior = w.old
        # (the store entry made inline: every write; issue 22)
        ns = meta.get("namespace") or ""
        name = meta["name"]
        refs = meta.get("ownerReferences")
        if prior is not None and refs is prior.obj["metadata"].get("ownerReferences"):
            owners = prior.owner_uids
        else:
            owners = tuple(r.get("uid", "") for r in refs or () if isinstance(r, dict))
        key = (f"{ns}/{name}" if ns else name) if prior is None else prior.key  # (object_key, inline)
        entry = Entry(key, ns, name, obj, rv, meta.get("uid", ""), meta.get("labels") or {}, owners)
        pending = self._pending_managed
        if pending is not None:
            self._pending_managed = None
            if meta.get("managedFields") is pending[0]:
                entry.managed = pending[1]
        elif prior is not None and prior.managed is not None and meta.get("managedFields") is prior.obj["metadata"].get(
                "managedFields"):
            entry.managed = prior.managed  # (a write that left them as they were: a binding, a deletion's start)
        found = self._logs.get((kind.group, kind.plural))  # (_log, inline: every write)
        log = found if found is not None else self._log(kind)
        events = log.events
        if sp is not None:  # (fakeapi.server.txn: how to undo this commit; txn.record_commit, inline: every write)
            n = len(events)
            history = log.history
            sp.journal.undo.append((self.store, table, key, table.entries.get(key), log, n, log.offset, log.trimmed_rv,
                                    list(events) if n + 1 - history > history // 4 + 16 else None,
                                    self._forget_decoded, ns, name))
        old = self.store.put(table, entry)
        if self.snapshot_guard is not None:
            self.snapshot_guard.stored(kind.plural, key, obj,
                                       kind.go_type if kind.stored_go_encoded and not w.go_checked else None)
        if old is not None:
            etype, was = MODIFIED, old.obj
        else:
            etype, was = ADDED, None
        # (EventLog.append, inline: every write; the Event made as the tuple its class's __new__ makes)
        events.append(_new_tuple(Event, (rv, etype, ns, obj, was)))
        if len(events) - log.history > log.history // 4 + 16:
            log.trim()
        if sp is not None:  # (_notify, inline: delivered once the request succeeds)
            sp.journal.notes.append((etype, kind, obj, was))
        else:
            self._deliver(etype, kind, obj, was)
        for fn in w.extra:
            fn()
        return rv

    def _forget_decoded(self, group: str, plural: str, namespace: str, name: str) -> None:
        """Drop the decoded form of an object (an undone commit's; the decode cache is made on first use)."""
        self.decoded.forget(group, plural, namespace, name)

    def _notify(self, etype: str, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        sp = self._tx
        if sp is not None:  # (fakeapi.server.txn: delivered once the request succeeds)
            sp.journal.notes.append((etype, kind, obj, old))
            return
        self._deliver(etype, kind, obj, old)

    def _deliver(self, etype: str, kind: Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if self.gc is not None:
            self.gc.on_event(etype, kind, obj, old)
        for fn in self._listeners:
            fn(etype, kind, obj, old)
        if self._cond._waiters:  # type: ignore[attr-defined]  # (threads blocked in a watch: most runs have none)
            self._cond.notify_all()

    # ------------------------------------------------------------------ answers

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
        """``base`` (cut to 58 characters) and 5 random characters of :data:`GENERATE_ALPHABET`."""
        rng = self._rng
        if getattr(rng._randbelow, "__func__", None) is not _RANDBELOW:  # type: ignore[attr-defined]
            return base[:58] + "".join(rng.choice(GENERATE_ALPHABET) for _ in range(5))
        # (rng.choice five times, inline: the draws of Random._randbelow_with_getrandbits)
        bits = rng.getrandbits
        out = base[:58]
        for _ in range(5):
            r = bits(_ALPHABET_BITS)
            while r >= _ALPHABET_LEN:
                r = bits(_ALPHABET_BITS)
            out += GENERATE_ALPHABET[r]
        return out

    def _matcher(self, kind: Kind, label_selector: Any, field_selector: Any) -> tuple[
            Callable[[dict[str, Any]], bool] | None, list[tuple[str, frozenset[str]]]]:
        selectors = selectors_module()
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

        return match, lsel.index_terms() + _field_index_terms(fsel, kind.namespaced)

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
            managed, base, new, fieldmanager.compare_type(kind.schema, sub, kind.status_subresource),
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


# ---------------------------------------------------------------------- helpers


@cache
def patches_module() -> ModuleType:
    """``fakeapi.machinery.patches``, imported on first use (jsonpatch is slow to import; a ready server needs none).

    A cached reference: an ``import`` statement in a request path costs microseconds per call.
    """
    from fakeapi.machinery import patches

    return patches


@cache
def selectors_module() -> ModuleType:
    """``fakeapi.machinery.selectors``, imported on first use (lists and watches; a ready server needs none)."""
    from fakeapi.machinery import selectors

    return selectors


def is_typed(kind: Kind) -> bool:
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


#: ``tuple.__new__``: makes a NamedTuple from its values without the Python frame of the class's ``__new__``.
_new_tuple = tuple.__new__


def registry_key(kind: Kind, key: str) -> str:
    prefix = f"/{kind.group}" if kind.group else ""
    return f"/registry{prefix}/{kind.plural}/{key}"


def _short(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=lambda v: f"<{type(v).__name__}>")[:200]


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


def same_status(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """:func:`_same_body` of a status write's object ``new`` (:func:`fakeapi.server.update._status_write`:
    every key but metadata and status is ``old``'s own value): only the status is compared."""
    v, w = new.get("status", _ABSENT), old.get("status", _ABSENT)
    if v is _ABSENT or w is _ABSENT:
        return v is w
    return w is v or not (type(v) is dict or type(v) is list or type(w) is not type(v) or w != v)


def _field_index_terms(fsel: Any, namespaced: bool) -> list[tuple[str, frozenset[str]]]:
    """The store index terms of a field selector's exact ``metadata.name`` / ``metadata.namespace``."""
    out = []
    name = fsel.exact("metadata.name")
    if name is not None:
        out.append((FIELD_NAME, frozenset((name,))))
    namespace = fsel.exact("metadata.namespace") if namespaced else None
    if namespace is not None:
        out.append((FIELD_NAMESPACE, frozenset((namespace,))))
    return out
