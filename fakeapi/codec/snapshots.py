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
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

import orjson

from fakeapi.codec.snapshoterrors import NotGoEncoded, SnapshotMutated
from fakeapi.machinery.jsonutil import canonical

__all__ = ["HISTORY", "NotGoEncoded", "SnapshotGuard", "SnapshotMutated", "enabled", "fingerprint"]

#: Earlier snapshots kept per object.
HISTORY = 8


def enabled() -> bool:
    """Is the check switched on (``FAKEAPI_CHECK_SNAPSHOTS`` set to a non-empty value other than 0)?"""
    return os.environ.get("FAKEAPI_CHECK_SNAPSHOTS", "") not in ("", "0")


def fingerprint(obj: Any) -> bytes:
    """The serialised form of a JSON value, key order included: any change to the value changes it.

    orjson (about ten times the speed of sorted ``json.dumps``) where it can carry the value; the
    canonical text otherwise (integers beyond 64 bits).
    """
    try:
        return orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError):
        return b"\0" + canonical(obj).encode(errors="surrogatepass")


class SnapshotGuard:
    """A fingerprint of each object's last snapshots, each compared once with the snapshot again."""

    def __init__(self) -> None:
        self._history: dict[tuple[str, str], deque[tuple[dict[str, Any], bytes]]] = {}

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
        fp = fingerprint(obj)  # (taken once: the Go form's check below compares with it too)
        if go_type is not None:
            from fakeapi.codec.godecode import go_decode  # (only built-in kinds' objects, only when checking)

            decoded = go_decode(obj, go_type)
            if fp != fingerprint(decoded):
                raise NotGoEncoded(f"stored {table} {key} is not as Go encodes it:\n  stored:  {json.dumps(obj)}\n"
                                   f"  decoded: {json.dumps(decoded)}")
        if len(hist) >= HISTORY:
            _check(table, key, hist.popleft())
        hist.append((obj, fp))

    def check_all(self) -> None:
        """Check every remembered snapshot."""
        for (table, key), hist in self._history.items():
            for snap in hist:
                _check(table, key, snap)


def _check(table: str, key: str, snap: tuple[dict[str, Any], bytes]) -> None:
    obj, was = snap
    now = fingerprint(obj)
    if now != was:
        raise SnapshotMutated(f"stored snapshot of {table} {key} changed after it was stored:\n"
                              f"  stored: {was.decode(errors='replace')}\n  now:    {now.decode(errors='replace')}")
