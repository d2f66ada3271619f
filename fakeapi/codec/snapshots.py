"""A debugging check that stored snapshots are never mutated.

The server shares what it stores: watchers, informer caches and the decode cache hold
the stored snapshot itself, and a write builds its new snapshot from the parts of the old
one it does not change. That is only sound while no snapshot is ever mutated after it
is stored. With ``FAKEAPI_CHECK_SNAPSHOTS=1`` in the environment each server keeps a
fingerprint (its serialised form) of the last snapshots of every object, taken when the
snapshot is stored, and compares each snapshot with it once: when a later write pushes it
out of the object's history, or at :meth:`SnapshotGuard.check_all` (the harness calls it at
the end of each case) for those still remembered. A mismatch raises :class:`SnapshotMutated`.
It also checks that each stored built-in object is in the form Go encodes it (what a Go
client decodes is then the stored object itself, which the decode cache relies on).

A fingerprint is kept per top-level member (``metadata``, ``spec``, ``status``...), with the
keys in order. A write shares the members it does not change with the object's previous
snapshot, and a bundle's CRDs share their (large) ``spec`` with one template across all the
servers of a process; so a member object already fingerprinted when an earlier snapshot
stored it is not serialised again when a later one does (:data:`_KNOWN`). That loses no
mutation: the part belonged to a stored snapshot from its first fingerprint on, so any change
since then is a mutation, and it shows when the later snapshot is checked against that first
fingerprint. Checks always serialise afresh, each member object once per check of the whole
history (issue 22: a case's CRDs were serialised twice per case, three quarters of the guard's cost).

A member can also be *sealed* (:func:`seal`): a bundle's CRD template's ``spec``, which no code outside
the server's own store can reach until a server hands out a CRD object that shares it. A check takes a
sealed member's fingerprint from its seal rather than serialising it again (in a fixture corpus the four
ARC CRDs' specs were nine tenths of what every case's end check serialised, issue 22), and the server
unseals (:func:`unseal`) the members of its stored CRD objects before it hands any of them out
(:meth:`fakeapi.server.apiserver.APIServer.install_crd` says when): from then on, for the rest of the
process, they are serialised at each check like any other member. So a sealed member is one nobody
could have mutated since it was sealed, and its seal's fingerprint is what serialising it would give.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import orjson

from fakeapi.codec.snapshoterrors import NotGoEncoded, SnapshotMutated
from fakeapi.codec.snapshotswitch import enabled
from fakeapi.machinery.jsonutil import canonical

__all__ = ["HISTORY", "NotGoEncoded", "SnapshotGuard", "SnapshotMutated", "enabled", "fingerprint", "is_sealed", "seal",
           "unseal"]

#: Earlier snapshots kept per object.
HISTORY = 8


def fingerprint(obj: Any) -> bytes:
    """The serialised form of a JSON value, key order included: any change to the value changes it.

    orjson (about ten times the speed of sorted ``json.dumps``) where it can carry the value; the
    canonical text otherwise (integers beyond 64 bits).
    """
    try:
        return orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError):
        return b"\0" + canonical(obj).encode(errors="surrogatepass")


#: One fingerprint of a snapshot: its keys in order, each with its member's fingerprint.
Print = tuple[tuple[str, bytes], ...]

#: Member objects (non-empty dicts and lists) of stored snapshots, by id, with their fingerprint when
#: first stored (the object is held, so its id is not reused). Cleared when it reaches _KNOWN_MAX.
_KNOWN: dict[int, tuple[Any, bytes]] = {}
_KNOWN_MAX = 4096

#: Sealed member objects by id, with their fingerprint when sealed (the object is held: its id stays its own).
_SEALED: dict[int, tuple[Any, bytes]] = {}


def seal(member: Any) -> None:
    """Seal ``member``, a part of stored snapshots that no code outside the stores holding them can reach
    (a CRD template's spec) until :func:`unseal`: checks take its fingerprint from now on without
    serialising it. The caller guarantees it: nothing was handed a reference to it yet."""
    if (type(member) is dict or type(member) is list) and member:
        _SEALED[id(member)] = (member, fingerprint(member))


def unseal(obj: dict[str, Any]) -> None:
    """Unseal the members of ``obj`` (a stored snapshot about to be handed out): each check serialises them again."""
    sealed = _SEALED
    if sealed:
        for v in obj.values():
            hit = sealed.get(id(v))
            if hit is not None and hit[0] is v:
                del sealed[id(v)]


def is_sealed(member: Any) -> bool:
    """Whether ``member`` is sealed (see :func:`seal`)."""
    hit = _SEALED.get(id(member))
    return hit is not None and hit[0] is member


def _print_of(obj: dict[str, Any], *, known: bool) -> Print:
    """The fingerprint of a snapshot; with ``known``, member objects fingerprinted before are not serialised again."""
    if not known:
        return tuple([(k, fingerprint(v)) for k, v in obj.items()])
    out: list[tuple[str, bytes]] = []
    memo = _KNOWN
    for k, v in obj.items():
        if (type(v) is dict or type(v) is list) and v:
            hit = memo.get(id(v))
            if hit is not None and hit[0] is v:
                out.append((k, hit[1]))
                continue
            hit = _SEALED.get(id(v))
            fp = hit[1] if hit is not None and hit[0] is v else fingerprint(v)
            if len(memo) >= _KNOWN_MAX:
                memo.clear()
            memo[id(v)] = (v, fp)
            out.append((k, fp))
        else:
            out.append((k, fingerprint(v)))
    return tuple(out)


def _text(p: Print) -> str:
    """The serialised snapshot a fingerprint stands for (for messages)."""
    return "{" + ",".join(f"{json.dumps(k)}:{fp.decode(errors='replace')}" for k, fp in p) + "}"


class SnapshotGuard:
    """A fingerprint of each object's last snapshots, each compared once with the snapshot again."""

    def __init__(self) -> None:
        self._history: dict[tuple[str, str], deque[tuple[dict[str, Any], Print]]] = {}

    def stored(self, table: str, key: str, obj: dict[str, Any] | None, go_type: Any = None) -> None:
        """Remember ``obj``, the new snapshot of ``key`` (None: the object was deleted), checking the
        snapshot this pushes out of the history.

        ``go_type``: the kind stores objects as Go encodes them; ``obj`` must decode to itself.
        """
        if obj is None:
            return
        hist = self._history.get((table, key))
        if hist is None:
            hist = self._history[(table, key)] = deque()
        fp = _print_of(obj, known=True)  # (taken once: the Go form's check below compares with it too)
        if go_type is not None:
            from fakeapi.codec.godecode import go_decode  # (only built-in kinds' objects, only when checking)

            decoded = go_decode(obj, go_type)
            if type(decoded) is not dict or fp != _print_of(decoded, known=False):
                now = _print_of(obj, known=False)
                if now != fp:  # (a part shared with an earlier snapshot changed since that one stored it)
                    raise SnapshotMutated(f"a part {table} {key} shares with an earlier stored snapshot changed "
                                          f"after that one was stored:\n  stored: {_text(fp)}\n  now:    {_text(now)}")
                raise NotGoEncoded(f"stored {table} {key} is not as Go encodes it:\n  stored:  {json.dumps(obj)}\n"
                                   f"  decoded: {json.dumps(decoded)}")
        if len(hist) >= HISTORY:
            _check(table, key, hist.popleft())
        hist.append((obj, fp))

    def check_all(self) -> None:
        """Check every remembered snapshot (each member object serialised once, however many share it;
        a sealed one not at all: its seal's fingerprint is what serialising it would give)."""
        fresh: dict[int, bytes] = {}
        sealed = _SEALED
        for (table, key), hist in self._history.items():
            for obj, was in hist:
                if len(obj) != len(was):
                    _check(table, key, (obj, was))
                    continue
                for (k, v), (wk, wfp) in zip(obj.items(), was):
                    if type(v) is dict or type(v) is list:
                        now = fresh.get(id(v))
                        if now is None:
                            hit = sealed.get(id(v))
                            now = fresh[id(v)] = hit[1] if hit is not None and hit[0] is v else fingerprint(v)
                    else:
                        now = fingerprint(v)
                    if k != wk or now != wfp:
                        _check(table, key, (obj, was))


def _check(table: str, key: str, snap: tuple[dict[str, Any], Print]) -> None:
    obj, was = snap
    now = _print_of(obj, known=False)
    if now != was:
        raise SnapshotMutated(f"stored snapshot of {table} {key} changed after it was stored:\n"
                              f"  stored: {_text(was)}\n  now:    {_text(now)}")
