"""Informer caches: one list+watch mirror of a kind per controller, and the cache reader on top.

An :class:`Informer` lists a kind, then watches it from the list's
resourceVersion, as client-go's reflector does; an ERROR event (410 Expired:
the resourceVersion fell out of the watch history) makes it list again and
send the differences to its handlers as events, as ``DeltaFIFO.Replace`` does.
Besides the current state it keeps, per object, the state before its last
change, so that a ``stale`` fault rule (docs/FIXTURES.md "Fault rules")
can serve an object as a lagging cache would.

A :class:`CacheReader` is what a controller's client reads through: ``get`` and
``list`` of the same shape as :class:`fakeapi.host.client.Client`'s, answered from
the controller's informers (started on first use for kinds the controller does
not watch, as controller-runtime's cache does), decoded through the Go codec
(which also copies), and raising the server's errors. Fault rules apply to
these reads too: an ``error`` or ``crash`` rule on ``get``/``list`` by the
controller fires on a cache read, and a ``stale`` rule makes it stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fakeapi.machinery import errors
from fakeapi.registry.kinds import Kind
from fakeapi.server.faults import ControllerCrash, FaultRule
from fakeapi.server.watch import Event

Obj = dict[str, Any]
Key = tuple[str, str]


class EventSink(Protocol):
    """What an informer notifies: a controller's event handler."""

    def on_create(self, obj: Obj) -> None:
        """An object appeared (initial list, watch ADDED, relist)."""

    def on_update(self, old: Obj, new: Obj) -> None:
        """An object changed (watch MODIFIED, relist)."""

    def on_delete(self, obj: Obj) -> None:
        """An object went away; ``obj`` is its last known state."""


def _object_key(obj: Obj, namespaced: bool) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace", "") if namespaced else "", meta["name"])


class Informer:
    """The cache of one kind for one controller, fed by list+watch."""

    def __init__(self, api: Any, kind: Kind, actor: str) -> None:
        self.api = api
        self.kind = kind
        #: The name the informer's list/watch calls carry in the trace.
        self.actor = actor
        self.handlers: list[EventSink] = []
        self.objects: dict[Key, Obj] = {}
        self.by_namespace: dict[str, dict[str, Obj]] = {}
        #: State before the last change (None: the last change created the object).
        self.previous: dict[Key, Obj | None] = {}
        #: When each key last changed (a counter), to find the newest change for stale lists.
        self.changed_at: dict[Key, int] = {}
        self.resource_version = ""
        self.watch: Any = None
        self.synced = False
        self.relists = 0
        self.events = 0
        self._tick = 0

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """List, fill the cache (handlers get a create per object), then watch from the list's RV.

        Raises the ApiError (or ControllerCrash) of a failed list; the informer then stays
        unsynced and :meth:`deliver` tries again.
        """
        kind = self.kind
        listing = self.api.list(kind.kind, api_version=kind.api_version, actor=self.actor)
        items: list[Obj] = listing.get("items") or []
        rv = str((listing.get("metadata") or {}).get("resourceVersion", ""))
        namespaced = kind.namespaced
        for obj in items:
            # List items are fresh copies; mark them with the list kind's apiVersion/kind as
            # client-go's decoder does for typed lists.
            obj.setdefault("apiVersion", kind.api_version)
            obj.setdefault("kind", kind.kind)
            self._store(_object_key(obj, namespaced), obj, known_before=False)
            for h in self.handlers:
                h.on_create(obj)
        self.resource_version = rv
        self.watch = self.api.watch(kind.kind, api_version=kind.api_version, resource_version=rv,
                                    allow_bookmarks=True, actor=self.actor)
        self.synced = True

    def stop(self) -> None:
        """Close the watch; the informer delivers nothing more."""
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        self.synced = False

    def pending(self) -> bool:
        """Cheap check: are events waiting on the watch (or is a start to retry)?"""
        w = self.watch
        return not self.synced or (w is not None and w.has_events)

    def deliver(self) -> int:
        """Apply every event waiting on the watch to the cache and the handlers; returns the count."""
        if not self.synced:
            try:
                self.start()
            except (errors.ApiError, ControllerCrash):
                return 0
        w = self.watch
        events = w.poll_log()  # (the log's entries as they are: most watches filter nothing)
        if events is None:
            events = [Event(0, e.type, "", e.object, None) for e in w.poll(copy=False)]
        if not events:
            return 0
        namespaced = self.kind.namespaced
        handlers = self.handlers
        # (the cache's maps, looked up once: the same dicts for the informer's whole life)
        objects, previous, changed_at, by_namespace = self.objects, self.previous, self.changed_at, self.by_namespace
        n = 0
        for ev in events:
            etype = ev.type
            obj = ev.obj
            if etype == "ADDED" or etype == "MODIFIED":
                meta = obj["metadata"]
                key = (meta.get("namespace", "") if namespaced else "", meta["name"])
                old = objects.get(key)
                if old is not None:  # (_store, inline: the commonest event)
                    previous[key] = old
                    tick = self._tick = self._tick + 1
                    changed_at[key] = tick
                    objects[key] = obj
                    by_namespace[key[0]][key[1]] = obj
                else:
                    self._store(key, obj)
                self.resource_version = meta.get("resourceVersion", self.resource_version)
                if old is None:
                    for h in handlers:
                        h.on_create(obj)
                else:
                    for h in handlers:
                        h.on_update(old, obj)
            elif etype == "DELETED":
                key = _object_key(obj, namespaced)
                old = objects.get(key)
                self._remove(key, old)
                self.resource_version = obj["metadata"].get("resourceVersion", self.resource_version)
                for h in handlers:
                    h.on_delete(obj)
            elif etype == "BOOKMARK":
                self.resource_version = obj.get("metadata", {}).get("resourceVersion", self.resource_version)
                continue
            else:  # ERROR: 410 Expired or anything else: list again, as the reflector does
                n += self.relist()
                continue
            n += 1
        self.events += n
        return n

    def relist(self) -> int:
        """List again and hand the differences to the handlers; then watch from the new RV."""
        self.relists += 1
        if self.watch is not None:
            self.watch.close()
        kind = self.kind
        namespaced = kind.namespaced
        listing = self.api.list(kind.kind, api_version=kind.api_version, actor=self.actor)
        items: list[Obj] = listing.get("items") or []
        seen: set[Key] = set()
        n = 0
        for obj in items:
            obj.setdefault("apiVersion", kind.api_version)
            obj.setdefault("kind", kind.kind)
            key = _object_key(obj, namespaced)
            seen.add(key)
            old = self.objects.get(key)
            same = old is not None and old["metadata"].get("resourceVersion") == obj["metadata"].get("resourceVersion")
            if same:
                assert old is not None
                self._index(key, obj)  # no change: keep the previous state as it was
            else:
                self._store(key, obj)
            for h in self.handlers:
                if old is None:
                    h.on_create(obj)
                else:
                    h.on_update(old, obj)  # client-go's Replace sends an update even when unchanged
            n += 1
        for key in sorted(set(self.objects) - seen):
            gone = self.objects[key]
            self._remove(key, gone)
            for h in self.handlers:
                h.on_delete(gone)
            n += 1
        self.resource_version = str((listing.get("metadata") or {}).get("resourceVersion", ""))
        self.watch = self.api.watch(kind.kind, api_version=kind.api_version, resource_version=self.resource_version,
                                    allow_bookmarks=True, actor=self.actor)
        return n

    # -- storage --------------------------------------------------------------------------

    def _index(self, key: Key, obj: Obj) -> None:
        self.objects[key] = obj
        ns = self.by_namespace.get(key[0])
        if ns is None:
            ns = self.by_namespace[key[0]] = {}
        ns[key[1]] = obj

    def _store(self, key: Key, obj: Obj, *, known_before: bool = True) -> None:
        """Set the current state of ``key``; remember the state it replaces."""
        if known_before:
            self.previous[key] = self.objects.get(key)
            self._tick += 1
            self.changed_at[key] = self._tick
        self._index(key, obj)

    def _remove(self, key: Key, old: Obj | None) -> None:
        if old is None:
            return
        del self.objects[key]
        ns = self.by_namespace.get(key[0])
        if ns is not None:
            ns.pop(key[1], None)
            if not ns:
                del self.by_namespace[key[0]]
        self.previous[key] = old
        self._tick += 1
        self.changed_at[key] = self._tick

    # -- reads (raw, shared snapshots) ----------------------------------------------------

    def get_raw(self, namespace: str, name: str) -> Obj | None:
        """The cached object (a shared snapshot: never mutate it), or None."""
        return self.objects.get((namespace, name))

    def list_raw(self, namespace: str | None) -> list[Obj]:
        """Cached objects in a namespace (None = all), ordered by namespace then name."""
        if namespace is None:
            return [self.objects[k] for k in sorted(self.objects)]
        ns = self.by_namespace.get(namespace)
        if not ns:
            return []
        return [ns[n] for n in sorted(ns)]

    def stale_get_raw(self, namespace: str, name: str) -> tuple[Obj | None, bool]:
        """The object as it was before its last change; (state, whether an earlier state was known)."""
        key = (namespace, name)
        if key in self.previous:
            return self.previous[key], True
        return self.objects.get(key), False

    def stale_list_raw(self, namespace: str | None) -> tuple[list[Obj], Key | None]:
        """The list with its most recently changed object set back to before that change."""
        newest: Key | None = None
        newest_tick = -1
        for key, tick in self.changed_at.items():
            if (namespace is None or key[0] == namespace) and tick > newest_tick:
                newest, newest_tick = key, tick
        if newest is None:
            return self.list_raw(namespace), None
        state = dict(self.objects)
        if namespace is not None:
            state = {k: v for k, v in state.items() if k[0] == namespace}
        before = self.previous.get(newest)
        if before is None:
            state.pop(newest, None)
        else:
            state[newest] = before
        return [state[k] for k in sorted(state)], newest


LabelsArg = str | dict[str, str] | None
FieldsArg = str | dict[str, str] | None


def _label_matcher(labels: LabelsArg) -> Callable[[dict[str, str]], bool] | None:
    if labels is None or labels == "" or labels == {}:
        return None
    from fakeapi.machinery.selectors import parse_label_selector, selector_from_map

    sel = parse_label_selector(labels) if isinstance(labels, str) else selector_from_map(labels)
    return sel.matches


def _field_matcher(fields: FieldsArg) -> Callable[[Obj], bool] | None:
    if fields is None or fields == "" or fields == {}:
        return None
    from fakeapi.machinery.selectors import field_value, parse_field_selector

    text = fields if isinstance(fields, str) else ",".join(f"{k}={v}" for k, v in fields.items())
    sel = parse_field_selector(text)

    def match(obj: Obj) -> bool:
        return bool(sel.matches(lambda path: field_value(obj, path)))

    return match


class CacheReader:
    """A controller's cached reads: ``get``/``list`` over its informers, through the Go codec."""

    def __init__(self, api: Any, actor: str, informer_for: Callable[[Kind], Informer], *,
                 unsafe_disable_deep_copy: bool = False) -> None:
        self.api = api
        #: Hand out the shared decoded objects, not copies (controller-runtime's
        #: ``cache.Options.UnsafeDisableDeepCopy``): the reader must never mutate them.
        self.unsafe_disable_deep_copy = unsafe_disable_deep_copy
        #: The controller name: fault rules match cache reads by it.
        self.actor = actor
        self._informer_for = informer_for
        #: Stale reads served so far (for tests and reports).
        self.stale_reads = 0

    def _decode(self, kind: Kind, obj: Obj) -> Obj:
        # Cached objects are the server's stored snapshots: the server's decode cache decodes
        # each one once (often already done by the client that wrote it) and hands out copies.
        out: Obj = self.api.decoded.decode(kind, obj, copy=not self.unsafe_disable_deep_copy)
        return out

    def _fault(self, verb: str, kind: Kind, namespace: str, name: str) -> FaultRule | None:
        faults = self.api.faults
        if not faults:
            return None
        rule: FaultRule | None = faults.for_call(verb, kind.kind, namespace, name, "", self.actor)
        if rule is None:
            return None
        target = f"{kind.kind} {namespace}/{name}" if namespace else f"{kind.kind} {name}".rstrip()
        if rule.crash == "before":
            self._note(f"crash before cached {verb} {target}")
            raise ControllerCrash(self.actor, "before", f"{verb} {kind.kind} {name}".rstrip())
        if rule.crash is None:
            err = rule.make_error(kind.group, kind.plural, name)
            self._note(f"injected {err.code} {err.reason} on cached {verb} {target}")
            raise err
        return rule  # crash after the read

    def _crash_after(self, rule: FaultRule | None, verb: str, kind: Kind, name: str) -> None:
        if rule is not None:
            self._note(f"crash after cached {verb} {kind.kind} {name}".rstrip())
            raise ControllerCrash(self.actor, "after", f"{verb} {kind.kind} {name}".rstrip())

    def _note(self, text: str) -> None:
        self.api.trace.note(self.api.clock.now(), self.actor, text)

    def _stale(self, verb: str, kind: Kind, namespace: str, name: str) -> bool:
        faults = self.api.faults
        if not faults:
            return False
        return faults.stale_read(verb, kind.kind, namespace, name, self.actor) is not None

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None) -> Obj:
        """The cached object, decoded as a Go client sees it; 404 NotFound like the server."""
        return self.get_for(self.api.kinds.require(kind, api_version), name, namespace)

    def get_for(self, k: Kind, name: str, namespace: str | None = None) -> Obj:
        """:meth:`get` of a resolved kind (what :class:`~fakeapi.host.client.Client` calls)."""
        ns = (namespace or "") if k.namespaced else ""
        if not self.api.faults.rules:  # nothing injected: no fault, crash or stale read to look for
            obj = self._informer_for(k).get_raw(ns, name)
            if obj is None:
                raise errors.not_found(k.group, k.plural, name)
            out: Obj = self.api.decoded.decode(k, obj, copy=not self.unsafe_disable_deep_copy)
            return out
        rule = self._fault("get", k, ns, name)
        inf = self._informer_for(k)
        obj = inf.get_raw(ns, name)
        if self._stale("get", k, ns, name):
            self.stale_reads += 1
            stale, known = inf.stale_get_raw(ns, name)
            shown = stale["metadata"].get("resourceVersion") if stale is not None else "absent"
            now = obj["metadata"].get("resourceVersion") if obj is not None else "absent"
            how = f"rv {shown} instead of {now}" if known else "no earlier state known, served as is"
            self._note(f"stale read: get {k.kind} {ns + '/' if ns else ''}{name} ({how})")
            obj = stale
        self._crash_after(rule, "get", k, name)
        if obj is None:
            raise errors.not_found(k.group, k.plural, name)
        return self._decode(k, obj)

    def find_for(self, k: Kind, name: str, namespace: str | None = None) -> Obj | None:
        """:meth:`get_for`, answering None where it raises NotFound (``client.IgnoreNotFound``).

        With nothing injected a missing object is None at once, without the NotFound error
        being made and caught; with fault rules it is :meth:`get_for` and its errors.
        """
        if not self.api.faults.rules:
            obj = self._informer_for(k).get_raw((namespace or "") if k.namespaced else "", name)
            if obj is None:
                return None
            out: Obj = self.api.decoded.decode(k, obj, copy=not self.unsafe_disable_deep_copy)
            return out
        try:
            return self.get_for(k, name, namespace)
        except errors.ApiError as e:
            if errors.is_not_found(e):
                return None
            raise

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: LabelsArg = None, fields: FieldsArg = None) -> list[Obj]:
        """Cached objects (namespace None = all), filtered by label/field selectors, decoded."""
        k: Kind = self.api.kinds.require(kind, api_version)
        ns = (namespace or None) if k.namespaced else None
        rule = self._fault("list", k, ns or "", "")
        inf = self._informer_for(k)
        if self._stale("list", k, ns or "", ""):
            self.stale_reads += 1
            items, key = inf.stale_list_raw(ns)
            what = f"{key[0] + '/' if key and key[0] else ''}{key[1]}" if key else "nothing changed"
            self._note(f"stale read: list {k.kind}{' in ' + ns if ns else ''} (one change behind: {what})")
        else:
            items = inf.list_raw(ns)
        self._crash_after(rule, "list", k, "")
        lm = _label_matcher(labels)
        fm = _field_matcher(fields)
        decode = self.api.decoded.decode  # (_decode, looked up once per list rather than per item)
        copy = not self.unsafe_disable_deep_copy
        out = []
        for obj in items:
            if lm is not None and not lm(obj["metadata"].get("labels") or {}):
                continue
            if fm is not None and not fm(obj):
                continue
            out.append(decode(k, obj, copy=copy))
        return out
