"""How the pytest plugin sets Python's garbage collector while a session collects and runs fixture cases.

Collecting fixture files only adds objects that live for the whole session (cases, their source
maps, robustness plans): each full collection then walks a heap that only grows, and the end of
collection collects in full anyway. So while fixture files are collected, full collections wait
(:func:`collecting`: the third threshold raised to :data:`COLLECTING_FULL`, so the young
generations are still collected as usual). Once collected, what is alive is frozen out of the
generations (the plugin's :func:`gc.freeze`), and while the cases run the young generations are
collected less often (:data:`RUNNING`): each case makes a server of some ten thousand objects that
lives until the case ends, and with the default thresholds each of them was walked again by several
collections of the young generations while it lived (issue 22: together about a twentieth of a worker's
CPU). The end of the session gives back the thresholds the session started with (:func:`restore`).

Only the collector's timing changes: what is garbage is collected all the same, a little later.
A collector switched off (:func:`gc.disable`, or a first threshold of 0) is left alone.
"""

from __future__ import annotations

import gc

import pytest

#: The third threshold while fixture files are collected (Python's default: 10).
COLLECTING_FULL = 1000
#: The thresholds while fixture cases run (Python's default: 700, 10, 10); a larger one set before is kept.
RUNNING = (5000, 20, 10)

_SAVED = pytest.StashKey[tuple[int, int, int]]()


def _adjustable(session: pytest.Session) -> bool:
    return gc.isenabled() and gc.get_threshold()[0] > 0 and _SAVED not in session.stash


def collecting(session: pytest.Session) -> None:
    """A fixture file is being collected: hold full collections back until collection ends (once per session)."""
    if not _adjustable(session):
        return
    saved = gc.get_threshold()
    session.stash[_SAVED] = saved
    gc.set_threshold(saved[0], saved[1], max(saved[2], COLLECTING_FULL))


def running(session: pytest.Session) -> None:
    """Fixture cases are about to run (after the plugin's freeze): collect the young generations less often."""
    saved = session.stash.get(_SAVED, None)
    if saved is None:
        if not _adjustable(session):
            return
        saved = session.stash[_SAVED] = gc.get_threshold()
    gc.set_threshold(*(max(s, r) for s, r in zip(saved, RUNNING)))


def restore(session: pytest.Session) -> None:
    """Give back the thresholds the session started with (when this module changed them)."""
    saved = session.stash.get(_SAVED, None)
    if saved is not None:
        del session.stash[_SAVED]
        gc.set_threshold(*saved)
