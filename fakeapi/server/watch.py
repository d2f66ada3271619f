"""Watch: the event log of each resource and the streams that read it.

Every real write appends one event (ADDED, MODIFIED or DELETED) to the log of
its resource, in resourceVersion order. A :class:`Watch` is a cursor into
that log with a filter (namespace, label and field selectors): an update
that makes an object start matching is delivered as ADDED and one that makes
it stop matching as DELETED (old content, new resourceVersion), as the
watch cache does. The log keeps a bounded history for new watches that
resume from a resourceVersion (older ones get 410 Expired), but never drops
an event an open watch has not read yet: a slow consumer loses nothing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from fakeapi.machinery.jsonutil import copy_object

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Event(NamedTuple):
    """One entry of a resource's event log (shared, never mutated: a tuple, cheaper to make than a frozen dataclass)."""

    rv: int
    type: str
    namespace: str
    obj: dict[str, Any]
    #: The previous stored state (None for ADDED).
    old: dict[str, Any] | None


@dataclass(slots=True)
class WatchEvent:
    """What a watch delivers: ``{"type": ..., "object": ...}``."""

    type: str
    object: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The wire form of the event."""
        return {"type": self.type, "object": self.object}


class EventLog:
    """The events of one resource, with bounded history and open-watch protection."""

    def __init__(self, history: int) -> None:
        self.events: list[Event] = []
        self.offset = 0  # absolute index of events[0]
        self.trimmed_rv = 0  # rv of the newest event dropped from history
        self.history = history
        self.watches: weakref.WeakSet[Watch] = weakref.WeakSet()

    @property
    def end(self) -> int:
        """Absolute index just past the newest event."""
        return self.offset + len(self.events)

    def append(self, event: Event) -> None:
        """Add an event and trim history beyond the bound (never past an open watch)."""
        self.events.append(event)
        if len(self.events) - self.history > self.history // 4 + 16:
            self.trim()

    def trim(self) -> None:
        """Drop the events beyond the bound (never past an open watch): :meth:`append` does it once
        the excess passes ``history // 4 + 16`` (so does the server's commit, which appends inline)."""
        excess = len(self.events) - self.history
        if excess > 0:
            limit = self.offset + excess
            for w in self.watches:
                if not w.closed and w.pos < limit:
                    limit = w.pos
            drop = limit - self.offset
            if drop > 0:
                self.trimmed_rv = self.events[drop - 1].rv
                del self.events[:drop]
                self.offset += drop

    def position_after(self, rv: int) -> int:
        """Absolute index of the first event with resourceVersion > rv."""
        lo, hi = 0, len(self.events)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.events[mid].rv <= rv:
                lo = mid + 1
            else:
                hi = mid
        return self.offset + lo


Matcher = Callable[[dict[str, Any]], bool]


class Watch:
    """A stream of watch events for one resource, read with :meth:`poll` or :meth:`wait`."""

    def __init__(
        self,
        log: EventLog,
        *,
        pos: int,
        namespace: str | None,
        matcher: Matcher | None,
        initial: list[WatchEvent] | None = None,
        error: dict[str, Any] | None = None,
        condition: threading.Condition | None = None,
        bookmark: Callable[[], dict[str, Any]] | None = None,
        after_rv: int = 0,
    ) -> None:
        self.log = log
        #: Events at or below this resourceVersion are skipped (a watch started ahead of the server).
        self.after_rv = after_rv
        self.pos = pos
        self.namespace = namespace or None
        self.matcher = matcher
        self.closed = False
        self._pending: list[WatchEvent] = list(initial or [])
        self._condition = condition
        self._bookmark = bookmark
        if error is not None:
            self._pending = [WatchEvent(ERROR, error)]
            self.pos = log.end
        log.watches.add(self)

    def close(self) -> None:
        """Stop the stream; no more events are delivered."""
        self.closed = True

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def has_events(self) -> bool:
        """Cheap check: is anything (possibly filtered out) waiting?"""
        log = self.log
        return bool(self._pending) or self.pos < log.offset + len(log.events)  # (log.end, inline: a hot path)

    def poll(self, *, copy: bool = True) -> list[WatchEvent]:
        """Every event available now, without blocking.

        With ``copy=False`` the objects are shared snapshots that must not be mutated.
        """
        if self.closed:
            return []
        out = self._pending
        self._pending = []
        if out and out[0].type == ERROR:
            self.closed = True
            return out
        log = self.log
        start = self.pos - log.offset
        events = log.events
        if start < len(events):
            ns = self.namespace
            match = self.matcher
            after = self.after_rv
            for ev in events[start:] if start else events:
                if (ns is not None and ev.namespace != ns) or ev.rv <= after:
                    continue
                if match is None:
                    out.append(WatchEvent(ev.type, ev.obj))
                    continue
                now = ev.type != DELETED and match(ev.obj)
                before = ev.old is not None and match(ev.old)
                if ev.type == DELETED:
                    if before:
                        out.append(WatchEvent(DELETED, ev.obj))
                elif now and before:
                    out.append(WatchEvent(MODIFIED, ev.obj))
                elif now:
                    out.append(WatchEvent(ADDED, ev.obj))
                elif before and ev.old is not None:
                    gone = copy_object(ev.old)
                    gone["metadata"]["resourceVersion"] = str(ev.rv)
                    out.append(WatchEvent(DELETED, gone))
            self.pos = log.end
        if copy and out:
            out = [WatchEvent(e.type, copy_object(e.object)) for e in out]
        return out

    def poll_log(self) -> list[Event] | None:
        """What :meth:`poll` with ``copy=False`` would deliver, as the log's own entries (shared, never
        mutated: their ``type`` and ``obj`` are the events'), when this watch filters nothing and holds
        nothing back (no selector, no namespace, no initial or error events); else None (call :meth:`poll`).

        An informer's watch, read after every step: no event object is made per change.
        """
        if self.matcher is not None or self.namespace is not None or self._pending or self.closed:
            return None
        log = self.log
        events = log.events
        start = self.pos - log.offset
        if start >= len(events):
            return []
        out = events[start:]
        self.pos = log.offset + len(events)
        after = self.after_rv
        if after and out[0].rv <= after:  # (in resourceVersion order: only a watch started ahead skips any)
            out = [ev for ev in out if ev.rv > after]
        return out

    def wait(self, timeout: float) -> list[WatchEvent]:
        """Block up to ``timeout`` seconds for events (used by the HTTP server's threads)."""
        cond = self._condition
        if cond is None:
            return self.poll()
        with cond:
            if not self.has_events and not self.closed:
                cond.wait(timeout)
            return self.poll()

    def bookmark(self) -> WatchEvent | None:
        """A BOOKMARK event at the current resourceVersion (when the server supports it)."""
        if self._bookmark is None:
            return None
        return WatchEvent(BOOKMARK, self._bookmark())
