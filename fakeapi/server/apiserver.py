"""The in-memory API server: :class:`APIServer`, the verbs and their semantics.

:class:`APIServer` behaves like kube-apiserver wherever a controller can observe it (see
docs/APISERVER.md): server-owned metadata, one global resourceVersion counter, no-op writes,
generation, the status subresource, finalizers and deletion, propagation policies, namespaces,
selectors, watch, the three patch types, CRD schemas and ``metav1.Status`` errors. Every request
either succeeds or raises :class:`~fakeapi.machinery.errors.ApiError` and leaves the stored state,
the counter and the watch logs untouched.

The verbs live in one module each (:mod:`~fakeapi.server.create`, :mod:`~fakeapi.server.read`,
:mod:`~fakeapi.server.update`, :mod:`~fakeapi.server.patch`, :mod:`~fakeapi.server.delete`,
:mod:`~fakeapi.server.subresources`) over the shared steps of :mod:`~fakeapi.server.pipeline`;
what differs per kind is the kind's strategy's (:mod:`fakeapi.registry.strategy`). This module
puts them together.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from fakeapi.codec.snapshotswitch import enabled as _snapshot_check_enabled
from fakeapi.machinery import errors, fieldmanager
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.machinery.typedfields import ApplyMemo, Memo
from fakeapi.registry.apiextensions.strategy import CustomResourceDefinitionStrategy
from fakeapi.registry.builtin import builtin_kinds
from fakeapi.registry.kinds import Kind, KindRegistry
from fakeapi.server import hooks, txn  # (txn: request atomicity, issue 24)
from fakeapi.server.clock import Clock
from fakeapi.server.delete import DeleteVerb
from fakeapi.server.faults import FaultSet
from fakeapi.server.patch import PatchVerb
from fakeapi.server.pipeline import Objects, Outcome, Write, mapping
from fakeapi.server.read import ReadVerbs
from fakeapi.server.store import Entry, Store
from fakeapi.server.subresources import Subresources
from fakeapi.server.trace import Trace
from fakeapi.server.watch import EventLog

if TYPE_CHECKING:
    from fakeapi.codec import godecode, snapshots
    from fakeapi.codec.godecode import DecodeCache
    from fakeapi.codec.snapshots import SnapshotGuard
    from fakeapi.registry.apiextensions import crd as crds
    from fakeapi.registry.apiextensions import crdsnapshot
    from fakeapi.registry.apiextensions.crdsnapshot import CRDSnapshot, CRDTemplate
else:  # (imported on first use: a server that never writes a CRD never compiles it; issue 22)
    crds = lazy_module(__name__, "fakeapi.registry.apiextensions.crd", "crds")
    godecode = lazy_module(__name__, "fakeapi.codec.godecode")  # (the first decode: see APIServer.decoded)
    snapshots = lazy_module(__name__, "fakeapi.codec.snapshots")  # (with FAKEAPI_CHECK_SNAPSHOTS=1, or a CRD)
    crdsnapshot = lazy_module(__name__, "fakeapi.registry.apiextensions.crdsnapshot")

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class StoredTemplate(NamedTuple):
    """What a create stored, for later servers to store again (a default Namespace; as a CRD's ``CRDTemplate``)."""

    obj: dict[str, Any]
    warnings: tuple[str, ...]
    #: The create's one managedFields entry (``fieldmanager.ManagerEntry``), or None (managedFields off).
    managed: Any = None


#: The default Namespaces' templates (:func:`_committed_namespace_templates`), loaded once per process, by
#: managedFields setting (see :meth:`APIServer._create_default_namespaces`; the objects are stored snapshots:
#: never mutated).
_NAMESPACE_TEMPLATES: dict[bool, tuple[StoredTemplate, ...]] = {}
#: The managedFields settings whose templates were checked to be as Go encodes them.
_NAMESPACE_TEMPLATES_CHECKED: set[bool] = set()

#: What the creates of :data:`DEFAULT_NAMESPACES` store, by managedFields setting: written by
#: :mod:`fakeapi.server.namespacetemplates` (``python -m fakeapi.server.namespacetemplates``), which
#: makes the four creates on a server; tests/test_default_namespaces.py fails when they differ.
NAMESPACE_TEMPLATES_FILE = os.path.join(os.path.dirname(__file__), "default_namespaces.json")


def _committed_namespace_templates(managed_fields: bool) -> tuple[StoredTemplate, ...]:
    """The default Namespaces' templates as committed: each stored object, the create's warnings and,
    with managedFields kept, the create's one managedFields entry, decoded."""
    with open(NAMESPACE_TEMPLATES_FILE, "rb") as f:
        data = orjson.loads(f.read())
    out = []
    for item in data["managedFields" if managed_fields else "noManagedFields"]:
        obj = item["object"]
        managed = None
        if managed_fields:
            decoded = fieldmanager.decode(obj["metadata"]["managedFields"])
            assert decoded is not None and len(decoded) == 1, "a default Namespace has one managedFields entry"
            managed = next(iter(decoded.values()))
        out.append(StoredTemplate(obj, tuple(item["warnings"]), managed))
    return tuple(out)


#: The built-in kinds as :func:`~fakeapi.registry.builtin.builtin_kinds` makes them, made once per process
#: (never registered, never read: their lazy schemas stay pending), for :func:`_fresh_builtin_kinds` to copy.
_BUILTIN_KIND_TEMPLATES: list[Kind] = []


def _fresh_builtin_kinds() -> list[Kind]:
    """Fresh Kind records for every built-in kind, equal to :func:`~fakeapi.registry.builtin.builtin_kinds`'.

    Each is a copy of a per-process template's attributes (issue 22: a server's 32 dataclass constructions
    and their ``__post_init__`` were a third of ``APIServer()``): what the constructor made, ``api_version``
    already computed (a string of fields that never change), the lazy schema, compiled schema and Go type
    still pending, and ``extra`` a copy of its own (the one mutable member), as each server always had.
    tests/test_builtin_kind_templates.py compares them with ``builtin_kinds()``.
    """
    templates = _BUILTIN_KIND_TEMPLATES
    if not templates:
        made = builtin_kinds()
        for k in made:
            _ = k.api_version  # (the cached property, stored in the template's attributes)
        templates.extend(made)
    new = object.__new__
    out: list[Kind] = []
    for t in templates:
        k = new(Kind)
        attrs = k.__dict__
        attrs.update(t.__dict__)
        attrs["extra"] = fast_copy(t.extra)
        out.append(k)
    return out


class APIServer(PatchVerb, DeleteVerb, ReadVerbs, Subresources):
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
        # (request atomicity: a request keeps the kinds and tables only when it is about to change them)
        self.kinds.on_change = self.store.on_change = self._registry_changing
        self.seed = seed
        self._rng: random.Random = txn.JournaledRandom(seed)  # (issue 24: restored when a request fails)
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
        #: What applies compute from a configuration's top-level fields, by content (typedfields.ApplyMemo).
        self._apply_memo = ApplyMemo()
        #: Checks that stored snapshots are never mutated (``FAKEAPI_CHECK_SNAPSHOTS=1``), else None.
        self.snapshot_guard: SnapshotGuard | None = snapshots.SnapshotGuard() if _snapshot_check_enabled() else None
        #: Whether :attr:`decoded` checks what it hands out (the snapshot guard is on now; made on first use).
        self._decode_check = self.snapshot_guard is not None
        self._decoded: DecodeCache | None = None  # (see decoded)
        #: Whether a CRD installed from a template may share a sealed spec (see install_crd).
        self._sealed_crds = False
        self._crd_watched = False  # (a watch of CRDs was opened: see install_crd)
        for k in _fresh_builtin_kinds():
            self.kinds.register(k)
        #: Mutating admission plugins a served cluster adds (``fakeapi.registry.core.admission``): each is
        #: called with the kind and the decoded, defaulted body of every create, before the create strategy.
        self.admission: list[Callable[[Kind, dict[str, Any]], None]] = []
        #: The garbage collector and namespace controller (fakeapi.controllers), or None.
        self.gc: hooks.Collector | None = hooks.garbage_collector(self) if garbage_collector else None
        if default_namespaces:
            self._create_default_namespaces()

    # --- the default Namespaces, from a per-process template (issue 22, h23corpus) -------------

    def _create_default_namespaces(self) -> None:
        """Create :data:`DEFAULT_NAMESPACES` as ``system``, as :meth:`create` does, at a fraction of its cost.

        Each server stores what those four creates store (the committed templates of
        :func:`_committed_namespace_templates`) through the create's request frame (trace, events,
        garbage collector), as :meth:`install_crd` stores a CRD: their own uid from their own generator,
        their own times and resourceVersions, in the same order. No Namespace is decoded, defaulted,
        validated or walked for its managedFields (issue 22: they were most of the first ``APIServer()``).
        tests/test_default_namespaces.py checks the templates against the creates and builds servers
        both ways to compare them.
        """
        kind = self.kinds.require("Namespace", "v1")
        mf = self.managed_fields
        templates = _NAMESPACE_TEMPLATES.get(mf)
        if templates is None:
            templates = _NAMESPACE_TEMPLATES.setdefault(mf, _committed_namespace_templates(mf))
        if self.snapshot_guard is not None and mf not in _NAMESPACE_TEMPLATES_CHECKED:
            for tmpl in templates:  # (the copies skip the Go form's check of a create: check the templates once)
                snapshots.SnapshotGuard().stored(kind.plural, tmpl.obj["metadata"]["name"], tmpl.obj, kind.go_type)
            _NAMESPACE_TEMPLATES_CHECKED.add(mf)
        for tmpl in templates:
            self._run("create", kind, "", tmpl.obj["metadata"]["name"], "", "system",
                      partial(self._create_from_template, kind, tmpl, "system"))

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

    def register_crd(self, manifest: dict[str, Any], *, actor: str = "user") -> Kind:
        """Create (or update) a CustomResourceDefinition and return its storage-version Kind."""
        kind = self._kind_of(manifest)
        if not isinstance(kind.strategy, CustomResourceDefinitionStrategy):
            raise errors.bad_request(f"register_crd needs a CustomResourceDefinition, not a {kind.kind}")
        name = str(mapping(manifest.get("metadata")).get("name") or "")
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
            return self.kinds.require(spec["names"]["kind"], f"{spec['group']}/{crds.storage_version(spec)}")

    def install_crd(self, snapshot: CRDSnapshot, *, actor: str = "user") -> Kind:
        """:meth:`register_crd` for a manifest many servers of the process register (a bundle's CRDs).

        The first install in the process registers the manifest on a scratch server and keeps what
        it stored as the snapshot's template; later installs store a copy around the template's
        spec, with this server's uid, times and resourceVersion (:mod:`fakeapi.registry.apiextensions.crdsnapshot`).
        The request, the stored object and what follows are those of :meth:`register_crd`.

        The template's spec is sealed (:func:`fakeapi.codec.snapshots.seal`: the snapshot guard's checks
        do not serialise it again) until some server hands out a CRD object that shares it; then it is
        unsealed for good. What reaches a stored CRD object: a request on the CRD kind other than a create
        (an answer, a watch, a write's old object; a create stores or refuses a new object), :meth:`objects`
        and ``stored`` of the CRD kind — each unseals this server's stored CRDs first (``_expose_crds``),
        and once a watch of CRDs was opened every install unseals what it stored;
        the store, its event logs and the guard, which never change what they hold; the garbage collector
        and in-process listeners told of its create, which read only its kind and metadata (the server's own,
        never the template's); the harness's state reader, which copies a CRD. The kinds it serves are built
        from the spec, but hold no part of it: their schemas are compiled from a copy of it
        (:func:`fakeapi.registry.apiextensions.crd.compiled_schema`).
        """
        kind = self.kinds.require("CustomResourceDefinition", "apiextensions.k8s.io/v1")
        with self._lock:
            tmpl = snapshot.template(self.managed_fields)
            if tmpl is None:
                tmpl = self._crd_template(kind, snapshot)
            if tmpl is None or self._table(kind).get("", snapshot.name) is not None:
                return self.register_crd(fast_copy(snapshot.manifest), actor=actor)  # (an update, or an error)
            template = tmpl
            self._sealed_crds = True  # (before the create: a fault may end it once the object is stored)
            try:
                self._run("create", kind, "", snapshot.name, "", actor, lambda: self._create_from_template(kind, template))
            finally:
                if self._crd_watched:  # (a watch opened before gets this object from the event log)
                    self._expose_crds(kind)
            spec = template.obj["spec"]
            return self.kinds.require(spec["names"]["kind"], f"{spec['group']}/{crds.storage_version(spec)}")

    def _crd_template(self, kind: Kind, snapshot: CRDSnapshot) -> CRDTemplate | None:
        """Register the snapshot's manifest on a fresh scratch server (this one's managedFields setting)
        and keep what it stored, checked to be as Go encodes it; None when the manifest is refused."""
        scratch = APIServer(clock=Clock(self.clock.now()), garbage_collector=False, default_namespaces=False,
                            managed_fields=self.managed_fields)
        try:
            scratch.register_crd(fast_copy(snapshot.manifest))
        except ApiError:
            return None  # (this server's register_crd gives the error, as a request of its own)
        entry = scratch._table(kind).get("", snapshot.name)
        if entry is None:
            return None
        snapshots.SnapshotGuard().stored(kind.plural, entry.key, entry.obj, kind.go_type)  # (installs skip the check)
        snapshots.seal(entry.obj["spec"])  # (only this discarded server stored it yet, and handed it to no one)
        managed = fieldmanager.decode(entry.obj["metadata"].get("managedFields")) or {}
        only = next(iter(managed.values())) if len(managed) == 1 else None
        if only is not None and only.key != ("user", fieldmanager.UPDATE, kind.api_version, ""):
            only = None  # (not the create's own entry: each install records its own, as register_crd does)
        return snapshot.keep(self.managed_fields, crdsnapshot.CRDTemplate(entry.obj, tuple(scratch.last_warnings), only))

    def _create_from_template(self, kind: Kind, tmpl: CRDTemplate | StoredTemplate, manager: str = "user") -> Outcome:
        """The create :meth:`_create` makes of a CRD manifest (or a default Namespace, by ``manager``),
        from what it stored once before."""
        src = tmpl.obj
        # (the same keys in the same places: those _create sets anew go where it puts them)
        meta = {k: v for k, v in src["metadata"].items() if k != "managedFields" and k != "resourceVersion"}
        meta["creationTimestamp"] = self.clock.timestamp()
        meta["uid"] = self._new_uid()
        obj = {**src, "metadata": meta}
        self._warn(list(tmpl.warnings))
        if isinstance(tmpl.managed, fieldmanager.ManagerEntry):
            # (the create owns the same fields of the same object as the template's: its entry at this
            # server's time, without walking the CRD's schemas again; issue 22)
            entry = tmpl.managed.with_fields(tmpl.managed.fields, time=self.clock.timestamp())
            self._set_managed(meta, {entry.key: entry}, None)
        else:
            self._record_managed(kind, obj, None, None, manager, "")
        w = Write(kind, self._table(kind), obj, go_checked=True)
        kind.strategy.before_commit_create(self, obj)
        rv = self._commit(w)
        return Outcome({}, 201, rv, True, meta["name"])

    @property
    def decoded(self) -> DecodeCache:  # type: ignore[override]
        """Decoded (Go client) forms of stored snapshots, shared by clients and informer caches.

        Made on first use: a server no client reads never imports the Go decoder (issue 22). Made
        under the server's lock, so that two threads reading it first share one cache. (A property
        over an attribute set in ``__init__``, not a ``cached_property``: an attribute added to the
        instance after ``__init__`` changes its dict's layout, and every attribute read of the server
        then misses CPython's specialised lookup: about 6 M instructions per ARC lifecycle.)"""
        cache = self._decoded
        if cache is None:
            with self._lock:
                cache = self._decoded
                if cache is None:
                    cache = self._decoded = godecode.DecodeCache(check=self._decode_check)
        return cache

    def check_snapshots(self) -> None:
        """With ``FAKEAPI_CHECK_SNAPSHOTS=1``: check that no stored snapshot, and no decoded form
        handed out without a copy, was mutated (raises SnapshotMutated); else nothing."""
        if self.snapshot_guard is not None:
            self.snapshot_guard.check_all()
            self.decoded.check_all()

    def objects(self, kind: Kind, namespace: str | None = None) -> Objects:
        """Stored snapshots of a kind (shared: do not mutate), for in-process actors like the GC."""
        if self._sealed_crds and kind.plural == "customresourcedefinitions":
            self._expose_crds(kind)
        return [e.obj for e in self._table(kind).candidates(namespace)]

    def entry_by_uid(self, uid: str) -> Entry | None:
        """The stored entry with that uid, if any."""
        return self.store.lookup_uid(uid)
