"""The errors of a snapshot that changed after it was stored, or was stored in another form than Go's.

Kept apart from :mod:`fakeapi.codec.snapshots` (the check that raises them at each write) so that
:mod:`fakeapi.codec.godecode`, whose decode cache raises :class:`SnapshotMutated` too, needs only
these classes: the check imports the decoder, never the reverse.
"""

from __future__ import annotations


class SnapshotMutated(AssertionError):
    """A stored snapshot changed after it was stored (a bug in fakeapi or in a caller)."""


class NotGoEncoded(SnapshotMutated):
    """A built-in object was stored in another form than Go encodes it (a bug in fakeapi)."""
