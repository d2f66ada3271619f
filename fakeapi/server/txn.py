"""Request atomicity: an undo journal that makes a rejected request change nothing.

kube-apiserver commits a request in one etcd transaction: a request that fails
(any status of 400 and above, a 500 included) leaves the objects, the
resourceVersion counter and every watch as they were. fakeapi writes its store
as a request goes (a deletecollection deletes one object after another, a
write that fails late may already have stored its object), so each request
runs inside a :class:`Journal`:

* at its start the journal keeps the resourceVersion counter and the state of
  the random generator (uids, generated names, allocated IPs and ports);
* every commit records how to undo itself (the table entry it replaced or
  removed, the length of the event log it appended to);
* the notifications of a write (garbage collector, listeners, blocked watches)
  are held until the request succeeds, so nothing outside the server sees a
  write that is then undone;
* it keeps the kinds registry and the table set (shallow copies: a CRD's
  write changes them), copied only when a request is about to change them
  (:func:`save_registry`, called by the registry and the store before a change):
  most requests change neither.

:func:`rollback` undoes everything the request did, newest first. Nested
requests (a write made while another one runs, on the same thread) are save
points of the same journal: a nested failure undoes only its own part.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind, KindRegistry
    from fakeapi.server.store import Entry, Store, Table
    from fakeapi.server.watch import EventLog

#: A held notification: (event type, kind, object, old object).
Note = tuple[str, "Kind", dict[str, Any], "dict[str, Any] | None"]

#: A save point's generator state when it is captured at the first draw (most requests draw nothing).
LAZY = None


@dataclass(frozen=True, slots=True)
class _Position:
    """A nested save point's generator state: the position of a :class:`JournaledRandom` (armed)."""

    at: int


class JournaledRandom(random.Random):
    """``random.Random`` (the same sequence) that can go back to where it was at the first draw since :meth:`arm`.

    Copying the Mersenne Twister's state (``getstate``: 625 integers) costs more than a small
    request, and every create draws (uids, generated names, allocated IPs). So the generator's
    32-bit words are drawn ahead, a block at a time, and handed out in order: each draw method
    builds its value from them as ``random.Random`` builds it from the generator's words
    (``getrandbits``: least significant word first; ``random``: 27 and 26 bits of two words), so
    the sequence is the same. Going back is moving the position in the block: while armed,
    words already handed out are kept. :meth:`getstate` is the generator's state as of the
    words handed out (the block's start replayed), so a state compares as it would without
    the block.
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.armed = False
        #: The position of the first draw since :meth:`arm` (None: none yet, or not armed).
        self.saved: Any = None

    def seed(self, a: Any = None, version: int = 2) -> None:
        """As ``random.Random.seed`` (the words drawn ahead dropped)."""
        super().seed(a, version)
        self._reset()

    def _reset(self) -> None:
        #: The words drawn ahead of their use, and where the next one is.
        self._words: list[int] = []
        self._pos = 0
        #: The generator's state ``_dropped`` words before ``_words[0]`` (None: made at the next block).
        self._base: Any = None
        self._dropped = 0

    def arm(self) -> None:
        """Start watching: the position of the next draw is kept in :attr:`saved`."""
        self.armed = True
        self.saved = None

    def disarm(self) -> None:
        """Stop watching (the outermost request ended)."""
        self.armed = False
        self.saved = None

    def position(self) -> int:
        """Where the next word comes from (a position :meth:`rewind` can go back to while armed)."""
        return self._pos

    def rewind(self, position: int) -> None:
        """Go back to ``position`` (taken while armed): the words from there on are handed out again."""
        self._pos = position

    def _refill(self, need: int = 1) -> None:
        """Draw blocks until ``need`` words are ahead; the words handed out are dropped first, unless a
        request that drew is under way (it may go back to them)."""
        if self.saved is None and self._pos:
            if self._pos == len(self._words):  # (every word handed out: the next block starts afresh)
                self._words, self._base, self._dropped = [], None, 0
            else:
                self._dropped += self._pos
                del self._words[:self._pos]
            self._pos = 0
        if self._base is None:
            self._base = super().getstate()
        draw = super().getrandbits
        while len(self._words) - self._pos < need:
            self._words.extend([draw(32) for _ in range(_BLOCK)])

    def getrandbits(self, k: int) -> int:
        """As ``random.Random.getrandbits``: ``k`` bits, from ``ceil(k / 32)`` words."""
        if self.armed and self.saved is None:
            self.saved = self._pos
        if k <= 32:
            if k < 0:
                raise ValueError("number of bits must be non-negative")
            if k == 0:
                return 0
            if self._pos == len(self._words):
                self._refill()
            w = self._words[self._pos]
            self._pos += 1
            return w >> (32 - k)
        n = (k - 1) // 32 + 1
        if self._pos + n > len(self._words):
            self._refill(n)
        words = self._words[self._pos:self._pos + n]
        self._pos += n
        out = 0
        for i, w in enumerate(words):
            if k < 32:
                w >>= 32 - k  # (the last word's least significant bits dropped)
            out |= w << (32 * i)
            k -= 32
        return out

    def random(self) -> float:
        """As ``random.Random.random``: 53 bits from two words."""
        if self.armed and self.saved is None:
            self.saved = self._pos
        if self._pos + 2 > len(self._words):
            self._refill(2)
        a = self._words[self._pos] >> 5
        b = self._words[self._pos + 1] >> 6
        self._pos += 2
        return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)

    def getstate(self) -> Any:
        """As ``random.Random.getstate``: the state after the words handed out (not those drawn ahead)."""
        if self._base is None or self._pos == len(self._words):
            return super().getstate()
        replay = random.Random()
        replay.setstate(self._base)
        for _ in range(self._dropped):
            replay.getrandbits(32)
        if self._dropped:  # (replayed once: the base moves to the block's start)
            self._base, self._dropped = replay.getstate(), 0
        for _ in range(self._pos):
            replay.getrandbits(32)
        state = replay.getstate()
        return (state[0], state[1], getattr(self, "gauss_next", None))  # (gauss's cached value, as getstate gives it)

    def setstate(self, state: Any) -> None:
        """As ``random.Random.setstate`` (the words drawn ahead dropped)."""
        super().setstate(state)
        self._reset()


#: Words a :class:`JournaledRandom` draws at a time (one state copy per block).
_BLOCK = 256


@dataclass(slots=True)
class Journal:
    """The undo log of the outermost request in progress (see the module docstring)."""

    undo: list[Callable[[], None]] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


@dataclass(slots=True)
class Savepoint:
    """Where one request (outermost or nested) started in its journal."""

    journal: Journal
    outermost: bool
    rv: int
    resource_version: int
    rng_state: Any
    undo_len: int
    notes_len: int
    #: (registry kinds, store tables) as the request found them, or None: neither changed since it began
    #: (kept by :func:`save_registry` before the first change).
    registry: tuple[dict[Any, Any], dict[Any, Any]] | None = None
    #: The save point of the request this one is nested in (None: the outermost).
    parent: Savepoint | None = None


def begin(journal: Journal | None, rv: int, resource_version: int, rng: random.Random,
          parent: Savepoint | None = None) -> Savepoint:
    """Open a save point: a new journal when none is active (``journal`` None), else a nested one
    (``parent``: the save point of the request it is nested in).

    The kinds and tables are kept when a change to them is near (:func:`save_registry`). The
    generator's state is kept lazily (:class:`JournaledRandom`) where it can be.
    """
    outermost = journal is None
    j = Journal() if journal is None else journal
    state: Any
    if isinstance(rng, JournaledRandom) and (outermost or rng.saved is None):
        if outermost:
            rng.arm()
        state = LAZY  # (no draw yet in this journal: the position kept at the first one is this one's)
    elif isinstance(rng, JournaledRandom) and rng.armed:
        state = _Position(rng.position())
    else:
        state = rng.getstate()
    return Savepoint(j, outermost, rv, resource_version, state, len(j.undo), len(j.notes), None, parent)


def save_registry(sp: Savepoint | None, kinds: KindRegistry, store: Store) -> None:
    """The kinds or the tables are about to change: keep them as they are for ``sp`` and the save points
    it is nested in that have not kept them yet (none of those saw a change since it began, so this
    state is the one each found)."""
    saved = None
    while sp is not None and sp.registry is None:
        if saved is None:
            saved = (dict(kinds._by_gvk), dict(store.tables))
        sp.registry = saved  # (never changed: shared by the save points)
        sp = sp.parent


def record_put(sp: Savepoint, store: Store, table: Table, key: str, prior: Entry | None,
               forget: Callable[[], None]) -> None:
    """A commit stored (or removed) the entry at ``key``; ``prior`` is what was there (None: nothing)."""
    if prior is None:
        def undo() -> None:
            store.remove(table, key)
            forget()
    else:
        def undo() -> None:
            store.put(table, prior)
            forget()
    sp.journal.undo.append(undo)


def record_append(sp: Savepoint, log: EventLog) -> None:
    """A commit is about to append an event to ``log``: remember its state (and its events when it will trim)."""
    n, offset, trimmed = len(log.events), log.offset, log.trimmed_rv
    # (EventLog.append trims once the excess passes history // 4 + 16: keep the events it may drop)
    trims = n + 1 - log.history > log.history // 4 + 16
    kept = list(log.events) if trims else None

    def undo() -> None:
        if kept is not None:
            log.events[:] = kept
        else:
            del log.events[n:]
        log.offset, log.trimmed_rv = offset, trimmed

    sp.journal.undo.append(undo)


def rollback(sp: Savepoint, kinds: KindRegistry, store: Store) -> None:
    """Undo everything done since ``sp``, newest first (the counter and generator are the caller's to reset)."""
    j = sp.journal
    if sp.registry is not None:
        by_gvk, tables = sp.registry
        store.tables.clear()
        store.tables.update(tables)
    while len(j.undo) > sp.undo_len:
        j.undo.pop()()
    del j.notes[sp.notes_len:]
    if sp.registry is not None:
        kinds._by_gvk.clear()
        kinds._by_gvk.update(by_gvk)
        kinds._found.clear()
        kinds._by_resource.clear()


def restore_rng(sp: Savepoint, rng: random.Random) -> None:
    """Put the random generator back where the request found it."""
    if isinstance(sp.rng_state, _Position) and isinstance(rng, JournaledRandom):
        rng.rewind(sp.rng_state.at)
    elif sp.rng_state is not LAZY:
        rng.setstate(sp.rng_state)
    elif isinstance(rng, JournaledRandom) and rng.saved is not None:
        rng.rewind(rng.saved)
        rng.saved = None


def end(sp: Savepoint, rng: random.Random) -> None:
    """The request of ``sp`` is over (succeeded, or rolled back): the outermost one stops the watch."""
    if sp.outermost and isinstance(rng, JournaledRandom):
        rng.disarm()
