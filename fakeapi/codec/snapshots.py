"""A debugging check that stored snapshots are never mutated.

The server shares what it stores: watchers, informer caches and the decode cache hold
the stored snapshot itself, and a write builds its new snapshot from the parts of the old
one it does not change. That is only sound while no snapshot is ever mutated after it
is stored. With ``FAKEAPI_CHECK_SNAPSHOTS=1`` in the environment each server keeps the
canonical JSON of the last snapshots of every object and, at each write of an object,
checks that its earlier snapshots still serialise to the same text (raising
:class:`SnapshotMutated` otherwise); :meth:`SnapshotGuard.check_all` checks every one.
It also checks that each stored built-in object is in the form Go encodes it (what a Go
client decodes is then the stored object itself, which the decode cache relies on).
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

from fakeapi.codec.snapshoterrors import NotGoEncoded, SnapshotMutated
from fakeapi.machinery.jsonutil import canonical

__all__ = ["HISTORY", "NotGoEncoded", "SnapshotGuard", "SnapshotMutated", "enabled"]

#: Earlier snapshots kept per object.
HISTORY = 8


def enabled() -> bool:
    """Is the check switched on (``FAKEAPI_CHECK_SNAPSHOTS`` set to a non-empty value other than 0)?"""
    return os.environ.get("FAKEAPI_CHECK_SNAPSHOTS", "") not in ("", "0")


class SnapshotGuard:
    """The canonical text of each object's last snapshots, checked again at every write of the object."""

    def __init__(self) -> None:
        self._history: dict[tuple[str, str], deque[tuple[dict[str, Any], str]]] = {}

    def stored(self, table: str, key: str, obj: dict[str, Any] | None, go_type: Any = None) -> None:
        """Check ``key``'s earlier snapshots, then remember ``obj`` (None: the object was deleted).

        ``go_type``: the kind stores objects as Go encodes them; ``obj`` must decode to itself.
        """
        hist = self._history.setdefault((table, key), deque(maxlen=HISTORY))
        _check(table, key, hist)
        if obj is None:
            return
        if go_type is not None:
            from fakeapi.codec.godecode import go_decode  # (only built-in kinds' objects, only when checking)

            text, decoded = json.dumps(obj), json.dumps(go_decode(obj, go_type))
            if text != decoded:
                raise NotGoEncoded(f"stored {table} {key} is not as Go encodes it:\n  stored:  {text}\n"
                                   f"  decoded: {decoded}")
        hist.append((obj, canonical(obj)))

    def check_all(self) -> None:
        """Check every remembered snapshot."""
        for (table, key), hist in self._history.items():
            _check(table, key, hist)


def _check(table: str, key: str, hist: deque[tuple[dict[str, Any], str]]) -> None:
    for obj, text in hist:
        now = canonical(obj)
        if now != text:
            raise SnapshotMutated(f"stored snapshot of {table} {key} changed after it was stored:\n"
                                  f"  stored: {text}\n  now:    {now}")
