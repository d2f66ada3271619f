"""The virtual clock: one source of time for the server, the host and simulators.

Nothing in fakeapi sleeps or reads the wall clock. Time only moves when a test
(or the host running "for a while") advances it. :meth:`Clock.frozen` keeps
``datetime.now()`` and ``time.time()`` in user code in step with it through
freezegun.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)

_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | int | float) -> timedelta:
    """Parse a Go duration string (``500ms``, ``1h30m``, ``-5s``; a bare number is seconds)."""
    if isinstance(text, bool):
        raise ValueError(f"invalid duration {text!r}")
    if isinstance(text, (int, float)):
        return timedelta(seconds=text)
    s = text.strip()
    sign = 1
    if s and s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return timedelta(0)
    pos = 0
    total = 0.0
    for m in _DURATION_RE.finditer(s):
        if m.start() != pos:
            raise ValueError(f"invalid duration {text!r}")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ValueError(f"invalid duration {text!r}")
    return timedelta(seconds=sign * total)


def format_duration(d: timedelta) -> str:
    """Render a timedelta the way Go prints a time.Duration (``1m30s``, ``250ms``)."""
    total = d.total_seconds()
    if total == 0:
        return "0s"
    sign = "-" if total < 0 else ""
    total = abs(total)
    if total < 1:
        ms = total * 1000
        return f"{sign}{ms:g}ms"
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    out = ""
    if h:
        out += f"{int(h)}h"
    if h or m:
        out += f"{int(m)}m"
    out += f"{s:g}s"
    return sign + out


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp into an aware UTC datetime."""
    s = text.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """Serialize like ``metav1.Time``: RFC 3339, UTC, second precision, trailing ``Z``."""
    return _date_and_time(dt.astimezone(UTC)) + "Z"


def format_micro_time(dt: datetime) -> str:
    """Serialize like ``metav1.MicroTime``: microsecond precision."""
    d = dt.astimezone(UTC)
    return f"{_date_and_time(d)}.{d.microsecond:06d}Z"


def _date_and_time(d: datetime) -> str:
    """``2006-01-02T15:04:05`` of Go's RFC 3339 layout: the year in four digits, padded, as Go writes it
    (``strftime``'s ``%Y`` does not pad a year before 1000, and imports ``time`` on every call)."""
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"


class Clock:
    """A virtual clock. ``now()`` only changes through :meth:`advance` or :meth:`set`."""

    def __init__(self, start: datetime | str | None = None) -> None:
        if isinstance(start, str):
            start = parse_time(start)
        self._now = (start or DEFAULT_START).astimezone(UTC)
        self._start = self._now
        self._stamped: datetime | None = None
        self._stamp = ""
        self._freezers: list[Any] = []

    @property
    def start(self) -> datetime:
        """The time the clock started at."""
        return self._start

    def now(self) -> datetime:
        """The current virtual time (aware, UTC)."""
        return self._now

    def elapsed(self) -> timedelta:
        """Virtual time since the clock started."""
        return self._now - self._start

    def timestamp(self) -> str:
        """The current time as a ``metav1.Time`` string (second precision)."""
        now = self._now
        if now is not self._stamped:  # the text of the last time formatted (datetimes are immutable)
            self._stamped, self._stamp = now, format_time(now)
        return self._stamp

    def advance(self, by: timedelta | str | float) -> datetime:
        """Move the clock forward (never backward) and return the new time."""
        delta = by if isinstance(by, timedelta) else parse_duration(by)
        if delta < timedelta(0):
            raise ValueError("the clock cannot move backward")
        self._now += delta
        self._sync()
        return self._now

    def set(self, when: datetime) -> None:
        """Move the clock to ``when``, which must not be in its past."""
        when = when.astimezone(UTC)
        if when < self._now:
            raise ValueError("the clock cannot move backward")
        self._now = when
        self._sync()

    def _sync(self) -> None:
        for f in self._freezers:
            f.move_to(self._now)

    #: Modules freezegun must not patch: client libraries whose lazy imports build pydantic or
    #: swagger models from ``datetime`` while the scan runs.
    FREEZE_IGNORE: tuple[str, ...] = ("kubernetes", "lightkube", "pydantic", "pydantic_core", "kr8s")

    @contextmanager
    def frozen(self) -> Iterator[Clock]:
        """Freeze ``datetime.now()``/``time.time()`` at the virtual time while inside.

        User code that reads the wall clock (a controller computing an age) then sees the
        virtual time, and moves with :meth:`advance`.
        """
        import freezegun

        freezer = freezegun.freeze_time(self._now, ignore=list(self.FREEZE_IGNORE))
        try:
            factory = freezer.start()
        except BaseException:
            freezer.stop()
            raise
        self._freezers.append(factory)
        try:
            yield self
        finally:
            self._freezers.remove(factory)
            freezer.stop()
