"""Checks of fixture values the JSON Schema cannot make: real dates and bounded regular expressions.

The schema checks a clock value's shape (``2026-02-30T00:00:00Z`` has it) and a
``$regex`` marker's type; these functions check that the date exists and that
the pattern compiles within bounds, so that a bad value is a collection error
at its line rather than a crash of the run:

* :func:`time_problem`: the time must be a real date and time, in the years
  1970 to 9999 (Unix time; Go formats years below 1000 in a way Python's
  ``strftime`` does not, and year 1 is Go's zero time, which kube-apiserver
  serialises as null);
* :func:`regex_problem`: at most :data:`MAX_REGEX_LENGTH` characters, no
  repetition count over :data:`MAX_REPEAT` (``a{99999999999}`` overflows
  Python's compiler, ``a{999999999}`` takes its memory), and it must compile.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

#: The longest ``$regex`` pattern accepted.
MAX_REGEX_LENGTH = 1000
#: The largest ``{m}`` / ``{m,n}`` repetition count in a ``$regex`` pattern (RE2, Go's engine, stops at 1000).
MAX_REPEAT = 1000
#: The years a fixture's clock may be set in.
MIN_YEAR, MAX_YEAR = 1970, 9999

_REPEAT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


def parse_fixture_time(text: str) -> datetime:
    """An RFC 3339 time as fixtures write it (``T`` or space, ``Z`` or an offset), in UTC; ValueError if not real."""
    s = text.strip()
    if s[-1:] in ("Z", "z"):
        s = s[:-1] + "+00:00"
    s = s[:10] + "T" + s[11:] if len(s) > 10 and s[10] in " t" else s
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        raise ValueError("no time zone (end it with Z or an offset)")
    return dt.astimezone(UTC)


def time_problem(text: str) -> str | None:
    """Why ``text`` is not a usable fixture time, or None."""
    try:
        dt = parse_fixture_time(text)
    except (ValueError, OverflowError, IndexError) as e:
        return f"`{text}` is not a real date and time: {e}"
    if not MIN_YEAR <= dt.year <= MAX_YEAR:
        return f"`{text}` is out of range: a fixture time is in the years {MIN_YEAR} to {MAX_YEAR}"
    return None


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not an acceptable ``$regex``, or None (it compiles within the bounds)."""
    if len(pattern) > MAX_REGEX_LENGTH:
        return f"regular expression longer than {MAX_REGEX_LENGTH} characters"
    for m in _REPEAT.finditer(pattern):
        for n in m.groups():
            if n and int(n) > MAX_REPEAT:
                return f"bad regular expression: repetition count {n} is over {MAX_REPEAT}"
    try:
        re.compile(pattern)
    except re.error as e:
        return f"bad regular expression: {e}"
    except (OverflowError, RecursionError, ValueError, MemoryError) as e:
        return f"bad regular expression: {e}"
    return None
