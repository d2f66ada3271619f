"""Declaring a controller, in the shape of controller-runtime's builder.

``host.controller("name").for_(kind).owns(kind).watches(kind, map_fn)
.with_event_filter(pred).complete(reconcile_fn)`` declares what a controller
watches and how events become requests. This module holds the declaration
(:class:`ControllerSpec`), the request and result types, and the three event
handlers of controller-runtime's ``pkg/handler``: enqueue the object itself
(``for_``), enqueue its controlling owner (``owns``), or enqueue what a map
function returns (``watches``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from fakeapi.host.predicates import Predicate, as_tuple

if TYPE_CHECKING:
    from fakeapi.host.workqueue import WorkQueue

Obj = dict[str, Any]


class Request(NamedTuple):
    """What a reconcile is asked to look at: ``reconcile.Request`` (namespace "" for cluster-scoped).

    Immutable and ordered by namespace, then name. A named tuple: the work queue hashes and
    compares requests at every add, and a tuple does that without a Python call.
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    """``reconcile.Result``: ``requeue`` is a rate-limited retry; ``requeue_after`` a delay on the clock.

    As in controller-runtime, a positive ``requeue_after`` wins over ``requeue`` and resets the
    key's back-off first.
    """

    requeue: bool = False
    requeue_after: timedelta | None = None


#: ``tuple.__new__``: ``_new_tuple(Request, (namespace, name))`` is ``Request(namespace, name)`` made without
#: the named tuple's ``__new__``, a Python function (a call saved per event an owned or watched kind sends).
_new_tuple = tuple.__new__

#: ``reconcile_fn(ctx, req) -> Result | None``; raising is returning an error. ``ctx`` is a
#: :class:`fakeapi.host.host.Context` (named ``Any`` here: the host imports this module, not the reverse).
ReconcileFn = Callable[[Any, Request], "Result | None"]
#: What registering a declaration gives back (the host's running controller).
C = TypeVar("C")
#: ``map_fn(obj) -> requests`` for :meth:`ControllerBuilder.watches`; obj is read-only.
MapFn = Callable[[Obj], Iterable[Request]]


@dataclass
class WatchSpec:
    """One watched kind and how its events map to requests."""

    kind: str
    api_version: str | None
    #: "for", "owns" or "watches".
    mode: str
    predicates: tuple[Predicate, ...] = ()
    map_fn: MapFn | None = None


@dataclass
class ControllerSpec:
    """Everything :meth:`ControllerBuilder.complete` collected."""

    name: str
    watches: list[WatchSpec] = field(default_factory=list)
    event_filters: tuple[Predicate, ...] = ()
    reconcile: ReconcileFn | None = None
    #: The controller's clients and cache hand out shared, read-only objects (see ``with_options``).
    unsafe_disable_deep_copy: bool = False
    #: The kinds its client reads from the server, not from a cache (see ``with_options``).
    disable_cache_for: tuple[str, ...] = ()

    @property
    def primary(self) -> WatchSpec:
        """The ``for_`` watch."""
        for w in self.watches:
            if w.mode == "for":
                return w
        raise ValueError(f"controller {self.name!r}: must provide an object for reconciliation (for_)")


class ControllerBuilder(Generic[C]):
    """Fluent declaration of one controller; :meth:`complete` registers and starts it.

    ``register`` is the host's: it takes the finished declaration and returns the started controller.
    """

    def __init__(self, register: Callable[[ControllerSpec], C], name: str) -> None:
        self._register = register
        self._spec = ControllerSpec(name=name)

    def for_(self, kind: str, api_version: str | None = None,
             predicates: Predicate | Iterable[Predicate] = ()) -> ControllerBuilder[C]:
        """The kind this controller reconciles; its events enqueue the object's own key."""
        if any(w.mode == "for" for w in self._spec.watches):
            raise ValueError(f"controller {self._spec.name!r}: for_ may only be called once")
        self._spec.watches.append(WatchSpec(kind, api_version, "for", as_tuple(predicates)))
        return self

    def owns(self, kind: str, api_version: str | None = None,
             predicates: Predicate | Iterable[Predicate] = ()) -> ControllerBuilder[C]:
        """A kind this controller creates; its events enqueue the controlling owner of the primary kind."""
        self._spec.watches.append(WatchSpec(kind, api_version, "owns", as_tuple(predicates)))
        return self

    def watches(self, kind: str, map_fn: MapFn, api_version: str | None = None,
                predicates: Predicate | Iterable[Predicate] = ()) -> ControllerBuilder[C]:
        """Another kind whose events enqueue what ``map_fn(obj)`` returns (old and new object on update)."""
        self._spec.watches.append(WatchSpec(kind, api_version, "watches", as_tuple(predicates), map_fn))
        return self

    def with_event_filter(self, pred: Predicate) -> ControllerBuilder[C]:
        """A predicate applied to the events of every watched kind."""
        self._spec.event_filters = (*self._spec.event_filters, *as_tuple(pred))
        return self

    def with_options(self, *, unsafe_disable_deep_copy: bool | None = None,
                     disable_cache_for: Iterable[str] | None = None) -> ControllerBuilder[C]:
        """Options of this controller's clients.

        ``unsafe_disable_deep_copy`` (controller-runtime's ``cache.Options.UnsafeDisableDeepCopy``):
        every object the controller reads, from its cache or the API reader, and every write's
        answer is the decoded form shared with other readers instead of a copy of its own. It
        saves a deep copy per read; the reconcile function must never mutate what it is given
        (copy first, as ``obj.DeepCopy()`` before a change). ``FAKEAPI_CHECK_SNAPSHOTS=1``
        (on in this project's tests) makes a mutation fail loudly.

        ``disable_cache_for`` (controller-runtime's ``client.Options.Cache.DisableFor``): kind names
        whose reads through the controller's client (get, list) go to the server, as requests in the
        trace, instead of to an informer: never stale, and no informer lists or watches the kind for
        those reads (a kind the controller also watches keeps its informer for the watch). Every
        name must be a kind the server knows when the controller starts.
        """
        if unsafe_disable_deep_copy is not None:
            self._spec.unsafe_disable_deep_copy = unsafe_disable_deep_copy
        if disable_cache_for is not None:
            if isinstance(disable_cache_for, str):
                raise TypeError("disable_cache_for: a list of kind names, not one string")
            self._spec.disable_cache_for = tuple(disable_cache_for)
        return self

    def complete(self, reconcile_fn: ReconcileFn) -> C:
        """Register the controller with its reconcile function; it starts at once (lists its kinds)."""
        self._spec.reconcile = reconcile_fn
        _ = self._spec.primary  # validates
        return self._register(self._spec)


# ------------------------------------------------------------------------------------------
# Event handlers (controller-runtime pkg/handler), bound to one queue of one controller start.


class _Handler(ABC):
    __slots__ = ("predicates", "queue")

    def __init__(self, queue: WorkQueue[Request], predicates: tuple[Predicate, ...]) -> None:
        self.queue = queue
        self.predicates = predicates

    @abstractmethod
    def requests(self, obj: Obj) -> Iterable[Request]:
        """The requests an event on ``obj`` maps to."""

    def _enqueue(self, obj: Obj) -> None:
        add = self.queue.add
        for req in self.requests(obj):
            add(req)

    def on_create(self, obj: Obj) -> None:
        """Filter a create event, then enqueue."""
        for p in self.predicates:
            if not p.on_create(obj):
                return
        self._enqueue(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        """Filter an update event, then enqueue (the new object)."""
        for p in self.predicates:
            if type(p) is Predicate:  # (its on_update, inline: every update event of every watch)
                u = p.update
                if u is not None and not u(old, new):
                    return
            elif not p.on_update(old, new):
                return
        self._enqueue(new)

    def on_delete(self, obj: Obj) -> None:
        """Filter a delete event, then enqueue."""
        for p in self.predicates:
            if not p.on_delete(obj):
                return
        self._enqueue(obj)

    def on_generic(self, obj: Obj) -> None:
        """Filter a generic event, then enqueue."""
        for p in self.predicates:
            if not p.on_generic(obj):
                return
        self._enqueue(obj)


class EnqueueForObject(_Handler):
    """``handler.EnqueueRequestForObject``: the object's own namespace/name."""

    __slots__ = ("namespaced",)

    def __init__(self, queue: WorkQueue[Request], predicates: tuple[Predicate, ...], namespaced: bool) -> None:
        super().__init__(queue, predicates)
        self.namespaced = namespaced

    def requests(self, obj: Obj) -> Iterable[Request]:
        """One request: the object itself."""
        meta = obj["metadata"]
        return (Request(meta.get("namespace", "") if self.namespaced else "", meta["name"]),)

    def _enqueue(self, obj: Obj) -> None:
        meta = obj["metadata"]
        self.queue.add(_new_tuple(Request, (meta.get("namespace", "") if self.namespaced else "", meta["name"])))


_NO_META: dict[str, Any] = {}


class EnqueueForOwner(_Handler):
    """``handler.EnqueueRequestForOwner(..., OnlyControllerOwner())``: the controlling owner of one kind.

    The owner reference matches on API group and kind (not version), as controller-runtime does.
    """

    __slots__ = ("owner_group", "owner_kind", "owner_namespaced")

    def __init__(self, queue: WorkQueue[Request], predicates: tuple[Predicate, ...],
                 owner_group: str, owner_kind: str, owner_namespaced: bool) -> None:
        super().__init__(queue, predicates)
        self.owner_group = owner_group
        self.owner_kind = owner_kind
        self.owner_namespaced = owner_namespaced

    def requests(self, obj: Obj) -> Iterable[Request]:
        """The owner named by the object's controller reference, if it is of the primary kind."""
        req = self._owner_request(obj)
        return () if req is None else (req,)

    def _owner_request(self, obj: Obj) -> Request | None:
        """The request of the object's controlling owner when it is of the primary kind, else None."""
        meta = obj["metadata"]
        for ref in meta.get("ownerReferences") or ():
            if not ref.get("controller"):
                continue
            api_version = ref.get("apiVersion") or ""
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            if group == self.owner_group and ref.get("kind") == self.owner_kind:
                return _new_tuple(Request, (meta.get("namespace", "") if self.owner_namespaced else "",
                                            ref.get("name") or ""))
            return None  # at most one controller reference
        return None

    def _enqueue(self, obj: Obj) -> None:
        # (no tuple per event, as requests() makes: every event of an owned kind)
        req = self._owner_request(obj)
        if req is not None:
            self.queue.add(req)

    def on_update(self, old: Obj, new: Obj) -> None:
        """Filter, then enqueue the owners of both the old and the new object."""
        for p in self.predicates:
            if type(p) is Predicate:  # (its on_update, inline: every update event of every watch)
                u = p.update
                if u is not None and not u(old, new):
                    return
            elif not p.on_update(old, new):
                return
        mo, mn = old.get("metadata") or _NO_META, new.get("metadata") or _NO_META
        if mo.get("ownerReferences") is not mn.get("ownerReferences") or mo.get("namespace") != mn.get("namespace"):
            self._enqueue(old)  # (the same references: the same owner, enqueued once)
        self._enqueue(new)


class EnqueueFromMap(_Handler):
    """``handler.EnqueueRequestsFromMapFunc``: whatever the map function returns."""

    __slots__ = ("map_fn",)

    def __init__(self, queue: WorkQueue[Request], predicates: tuple[Predicate, ...], map_fn: MapFn) -> None:
        super().__init__(queue, predicates)
        self.map_fn = map_fn

    def requests(self, obj: Obj) -> Iterable[Request]:
        """The map function's requests for the object."""
        return self.map_fn(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        """Filter, then enqueue the requests of both the old and the new object."""
        for p in self.predicates:
            if type(p) is Predicate:  # (its on_update, inline: every update event of every watch)
                u = p.update
                if u is not None and not u(old, new):
                    return
            elif not p.on_update(old, new):
                return
        self._enqueue(old)
        self._enqueue(new)
