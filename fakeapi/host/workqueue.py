"""A controller's work queue: client-go's rate-limited delaying queue on the virtual clock.

The rules are client-go's (``util/workqueue``):

* **dedupe**: a key waiting in the queue is queued once however often it is added;
* **dirty/processing**: a key being reconciled that is added again is not handed
  out a second time concurrently, but is queued again when its reconcile is
  :meth:`WorkQueue.done`;
* **delays**: :meth:`WorkQueue.add_after` keeps the earliest of several pending
  delays for a key, and a delayed add still fires even if the key was added
  (and reconciled) in the meantime;
* **rate limiting**: :meth:`WorkQueue.add_rate_limited` delays by the key's
  exponential back-off (:mod:`fakeapi.host.ratelimit`); :meth:`WorkQueue.forget`
  resets it.

Only the order differs: client-go hands keys out first in, first out; here the
keys that are ready are ordered by the time they became ready and then by a
seeded random draw taken when they were queued. The host picks across all its
controllers' queues with the same ordering, so a seed explores another
interleaving of keys due at the same instant, and the same seed always gives
the same one.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Hashable, Iterator
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from fakeapi.host.ratelimit import ExponentialBackoff
from fakeapi.server.clock import Clock

T = TypeVar("T", bound=Hashable)

#: Sort key of a ready item: (ready time, seeded draw, insertion counter).
Order = tuple[datetime, float, int]

_ZERO = timedelta(0)


class WorkQueue(Generic[T]):
    """Deduplicating, rate-limited, delaying work queue of one controller."""

    def __init__(self, clock: Clock, rng: random.Random, rate_limiter: ExponentialBackoff | None = None) -> None:
        self.clock = clock
        self.rng = rng
        self.rate_limiter = rate_limiter if rate_limiter is not None else ExponentialBackoff()
        self._ready: list[tuple[datetime, float, int, T]] = []
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        # Delayed adds: the earliest time per key, and a heap with lazy deletion.
        self._waiting: dict[T, datetime] = {}
        self._waiting_heap: list[tuple[datetime, int, T]] = []
        self._seq = 0

    # -- adding ---------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Queue ``item`` now (a no-op when it is already queued; deferred while it is processing)."""
        if item in self._dirty:
            return
        self._dirty.add(item)
        if item in self._processing:
            return
        self._push(item, self.clock.now())

    def _push(self, item: T, ready_at: datetime) -> None:
        self._seq += 1
        heapq.heappush(self._ready, (ready_at, self.rng.random(), self._seq, item))

    def add_after(self, item: T, delay: timedelta) -> None:
        """Queue ``item`` once ``delay`` has passed on the virtual clock (at once if not positive)."""
        if delay <= _ZERO:
            self.add(item)
            return
        ready_at = self.clock.now() + delay
        current = self._waiting.get(item)
        if current is not None and current <= ready_at:
            return
        self._waiting[item] = ready_at
        self._seq += 1
        heapq.heappush(self._waiting_heap, (ready_at, self._seq, item))

    def add_rate_limited(self, item: T) -> timedelta:
        """Queue ``item`` after its back-off (one more failure); returns the delay used."""
        delay = self.rate_limiter.when(item)
        self.add_after(item, delay)
        return delay

    def forget(self, item: T) -> None:
        """Reset the back-off of ``item``; pending delayed adds are kept."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Failures of ``item`` since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)

    # -- taking ---------------------------------------------------------------------------

    def _promote(self) -> None:
        """Move delayed adds that are due into the queue."""
        heap = self._waiting_heap
        now = self.clock.now()
        while heap and heap[0][0] <= now:
            ready_at, _, item = heapq.heappop(heap)
            if self._waiting.get(item) != ready_at:
                continue  # superseded by an earlier delay
            del self._waiting[item]
            if item in self._dirty:
                continue
            self._dirty.add(item)
            if item not in self._processing:
                self._push(item, ready_at)

    def peek(self) -> Order | None:
        """The sort key of the next ready item, or None when nothing is ready now."""
        if self._waiting_heap and self._waiting_heap[0][0] <= self.clock.now():
            self._promote()
        if not self._ready:
            return None
        head = self._ready[0]
        return head[0], head[1], head[2]

    def get(self) -> T | None:
        """Take the next ready item (it becomes *processing*), or None."""
        if self.peek() is None:
            return None
        item = heapq.heappop(self._ready)[3]
        self._dirty.discard(item)
        self._processing.add(item)
        return item

    def done(self, item: T) -> None:
        """Mark ``item`` processed; it is queued again if it was added while processing."""
        self._processing.discard(item)
        if item in self._dirty:
            self._push(item, self.clock.now())

    # -- inspecting -----------------------------------------------------------------------

    def next_wakeup(self) -> datetime | None:
        """When the earliest delayed add falls due (None when there is none)."""
        heap = self._waiting_heap
        while heap and self._waiting.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def waiting(self) -> dict[T, datetime]:
        """Delayed adds not yet due: key -> time it will be queued."""
        return dict(self._waiting)

    def ready(self) -> list[T]:
        """Keys queued now, in the order they will be handed out."""
        return [entry[3] for entry in sorted(self._ready)]

    @property
    def processing(self) -> frozenset[T]:
        """Keys being reconciled."""
        return frozenset(self._processing)

    def __len__(self) -> int:
        """Keys queued (ready), as client-go's ``Len``."""
        return len(self._ready)

    def __iter__(self) -> Iterator[T]:
        return iter(self.ready())
