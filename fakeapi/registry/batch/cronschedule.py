"""Whether a CronJob schedule parses, and robfig/cron's error when it does not.

kube-apiserver validates ``spec.schedule`` with ``cron.ParseStandard`` (github.com/robfig/cron/v3):
five fields (minute, hour, day of month, month, day of week) or a descriptor (``@daily``,
``@every 1h``). This is a port of that parser's checks and messages, not of the schedule it builds.
"""

from __future__ import annotations

import re

#: (min, max, names) of the five standard fields.
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                              "nov", "dec"))}),
    (0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}),
)
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_DURATION_RE = re.compile(r"^[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$")


def schedule_error(spec: str) -> str | None:
    """``cron.ParseStandard(spec)``'s error message, or None when the schedule parses."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        zone, _, spec = spec.partition(" ")
        name = zone.partition("=")[2]
        if not known_zone(name):
            return f"provided bad location {name}: unknown time zone {name}"
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return None
        if spec.startswith("@every "):
            duration = spec[len("@every "):]
            if not _DURATION_RE.match(duration):
                return f'failed to parse duration {spec}: time: invalid duration "{duration}"'
            return None
        return f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, bounds in zip(fields, _BOUNDS, strict=True):
        for expr in text.split(","):
            problem = _range_error(expr, bounds)
            if problem:
                return problem
    return None


def known_zone(name: str) -> bool:
    """Go's ``time.LoadLocation``: an IANA zone name (or ``Local``/``UTC``)."""
    if name in ("Local", "UTC", ""):
        return True
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        return False
    return True


def _range_error(expr: str, bounds: tuple[int, int, dict[str, int]]) -> str | None:
    """``getRange``: ``*``, ``?``, ``N``, ``N-M``, each with an optional ``/step``."""
    lo, hi, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start_or_error = _int_or_name(low_and_high[0], names)
        if isinstance(start_or_error, str):
            return start_or_error
        start = end = start_or_error
        if len(low_and_high) == 2:
            end_or_error = _int_or_name(low_and_high[1], names)
            if isinstance(end_or_error, str):
                return end_or_error
            end = end_or_error
        elif len(low_and_high) > 2:
            return f"too many hyphens: {expr}"
    step = 1
    if len(range_and_step) == 2:
        step_or_error = _must_parse_int(range_and_step[1])
        if isinstance(step_or_error, str):
            return step_or_error
        step = step_or_error
        if single:
            end = hi  # "N/step" means "N-max/step"
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    if start < lo:
        return f"beginning of range ({start}) below minimum ({lo}): {expr}"
    if end > hi:
        return f"end of range ({end}) above maximum ({hi}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return None


def _int_or_name(expr: str, names: dict[str, int]) -> int | str:
    """``parseIntOrName``: a month's or weekday's name (any case), else a non-negative integer."""
    named = names.get(expr.lower())
    if named is not None:
        return named
    return _must_parse_int(expr)


def _must_parse_int(expr: str) -> int | str:
    """``mustParseInt``: ``strconv.Atoi`` and a sign check (the error message when it fails)."""
    body = expr[1:] if expr[:1] in "+-" else expr
    if not body or not (body.isascii() and body.isdigit()):
        return f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        return f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": value out of range'
    if num < 0:
        return f"negative number ({num}) not allowed: {expr}"
    return num
