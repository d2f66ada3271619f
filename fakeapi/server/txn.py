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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind, KindRegistry
    from fakeapi.server.store import Entry, Store, Table
    from fakeapi.server.watch import EventLog

#: A held notification: (event type, kind, object, old object).
Note = tuple[str, "Kind", dict[str, Any], "dict[str, Any] | None"]

#: How to undo one commit: the arguments of :func:`_undo_commit`.
UndoStep = tuple[Any, ...]

#: Words a :class:`JournaledRandom` may draw past its checkpoint before an outermost request takes a new one.
CHECKPOINT_WORDS = 16384


class JournaledRandom(random.Random):
    """``random.Random`` (the same sequence) whose position can be marked and rewound cheaply.

    Copying the Mersenne Twister's state (``getstate``: a tuple of 625 ints) costs twice a small
    request's JSON round trip, and most requests draw nothing (only creates draw uids and names). So
    a save point keeps a mark instead: how many 32-bit words the generator has drawn (``getrandbits(k)``
    draws ``ceil(k / 32)``, ``random()`` two) and ``gauss_next``. Rewinding to a mark puts back the
    state kept at a checkpoint and draws the words since then again: the generator is where it was,
    its state equal to the one it had (rare: only a request that fails after a draw rewinds).
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """As ``random.Random.seed``; the generator's checkpoint is taken anew."""
        super().seed(a, version)
        self.drawn = 0
        self._checkpoint = (random.Random.getstate(self), 0)

    def setstate(self, state: Any) -> None:
        """As ``random.Random.setstate``; the generator's checkpoint is taken anew."""
        super().setstate(state)
        self._checkpoint = (random.Random.getstate(self), self.drawn)

    def getrandbits(self, k: int) -> int:
        """As ``random.Random.getrandbits`` (its words counted)."""
        bits = super().getrandbits(k)
        if k > 0:
            self.drawn += (k - 1) // 32 + 1
        return bits

    def random(self) -> float:
        """As ``random.Random.random`` (its two words counted)."""
        x = super().random()
        self.drawn += 2
        return x

    def mark(self, checkpoint: bool = False) -> tuple[int, Any]:
        """Where the generator is, to :meth:`rewind` to. ``checkpoint``: no earlier mark is in use (an
        outermost request begins): a new checkpoint is taken when the old one is far behind."""
        if checkpoint and self.drawn - self._checkpoint[1] > CHECKPOINT_WORDS:
            self._checkpoint = (random.Random.getstate(self), self.drawn)
        return self.drawn, self.gauss_next

    def rewind(self, mark: tuple[int, Any]) -> None:
        """Put the generator back where it was at ``mark`` (a no-op when it has drawn nothing since)."""
        drawn, gauss_next = mark
        if drawn != self.drawn:
            state, at = self._checkpoint
            random.Random.setstate(self, state)
            if drawn > at:
                super().getrandbits(32 * (drawn - at))  # (the words drawn between the checkpoint and the mark)
            self.drawn = drawn
        self.gauss_next = gauss_next


@dataclass(slots=True)
class Journal:
    """The undo log of the outermost request in progress (see the module docstring)."""

    #: The undo steps of the commits made so far (the arguments of :func:`_undo_commit`), oldest first.
    undo: list[UndoStep]
    notes: list[Note]


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
    generator's position is marked (:class:`JournaledRandom`) where it can be, else its state kept.
    """
    if type(rng) is JournaledRandom:  # (JournaledRandom.mark, inline: every write; issue 22)
        drawn = rng.drawn
        if journal is None and drawn - rng._checkpoint[1] > CHECKPOINT_WORDS:
            rng._checkpoint = (random.Random.getstate(rng), drawn)
        state: Any = (drawn, rng.gauss_next)
    else:
        state = rng.getstate()
    if journal is None:  # (the outermost request: a new journal, nothing in it yet)
        return Savepoint(Journal([], []), True, rv, resource_version, state, 0, 0, None, parent)
    return Savepoint(journal, False, rv, resource_version, state, len(journal.undo), len(journal.notes), None, parent)


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


def record_commit(sp: Savepoint, store: Store, table: Table, key: str, prior: Entry | None, log: EventLog,
                  forget: Callable[[str, str, str, str], None], namespace: str, name: str) -> None:
    """A commit is about to store (or remove) the entry at ``key`` (``prior``: what is there, None: nothing)
    and append an event to ``log``: one undo step puts back the log (its events too when the append will
    trim), then the entry, then drops the object's decoded form (``forget(group, plural, namespace, name)``).

    The step is kept as its arguments (a tuple, :func:`_undo_commit` runs it): cheaper to make than a closure,
    and most steps are never run."""
    events = log.events
    n = len(events)
    # (EventLog.append trims once the excess passes history // 4 + 16: keep the events it may drop)
    kept = list(events) if n + 1 - log.history > log.history // 4 + 16 else None
    sp.journal.undo.append((store, table, key, prior, log, n, log.offset, log.trimmed_rv, kept, forget, namespace,
                            name))


def _undo_commit(store: Store, table: Table, key: str, prior: Entry | None, log: EventLog, n: int, offset: int,
                 trimmed: int, kept: list[Any] | None, forget: Callable[[str, str, str, str], None], namespace: str,
                 name: str) -> None:
    """Undo one commit (the step :func:`record_commit` kept): the log, then the entry, then the decoded form."""
    if kept is not None:
        log.events[:] = kept
    else:
        del log.events[n:]
    log.offset, log.trimmed_rv = offset, trimmed
    if prior is None:
        store.remove(table, key)
    else:
        store.put(table, prior)
    forget(table.group, table.plural, namespace, name)


def rollback(sp: Savepoint, kinds: KindRegistry, store: Store) -> None:
    """Undo everything done since ``sp``, newest first (the counter and generator are the caller's to reset)."""
    j = sp.journal
    if sp.registry is not None:
        by_gvk, tables = sp.registry
        store.tables.clear()
        store.tables.update(tables)
    while len(j.undo) > sp.undo_len:
        _undo_commit(*j.undo.pop())
    del j.notes[sp.notes_len:]
    if sp.registry is not None:
        kinds._by_gvk.clear()
        kinds._by_gvk.update(by_gvk)
        kinds._found.clear()
        kinds._by_resource.clear()


def restore_rng(sp: Savepoint, rng: random.Random) -> None:
    """Put the random generator back where the request found it."""
    if type(rng) is JournaledRandom:
        rng.rewind(sp.rng_state)
    else:
        rng.setstate(sp.rng_state)

