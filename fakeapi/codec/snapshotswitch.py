"""Whether the snapshot check is on: ``FAKEAPI_CHECK_SNAPSHOTS`` (see :mod:`fakeapi.codec.snapshots`).

Apart from the check itself, so that a server asks at its start without importing (nor, without a
bytecode cache, compiling) the check, which it needs only when the check is on (issue 22).
"""

from __future__ import annotations

import os


def enabled() -> bool:
    """Is the check switched on (``FAKEAPI_CHECK_SNAPSHOTS`` set to a non-empty value other than 0)?"""
    return os.environ.get("FAKEAPI_CHECK_SNAPSHOTS", "") not in ("", "0")
