"""Captured values: ``{$capture: NAME}`` remembers a value, ``{$captured: NAME}`` compares with it.

A case often has to say "this is the same object as before" or "this one was
re-created": the pod a controller made has a server-generated uid, a runner a
generated name. ``{$capture: pod_uid}`` in an expectation requires the value
at that path to be present and remembers it under ``pod_uid`` for the rest of
the case (later steps included); ``{$captured: pod_uid}`` anywhere a marker
may stand (expectations, a target's ``where``) equals the remembered value,
and ``{$not: {$captured: pod_uid}}`` says it changed.

The loader checks statically that every ``$captured`` name is captured
earlier in the case and that ``$capture`` stands only where one value is
being checked (an ``object`` expectation or the ``match`` of an ``each``),
never inside ``$not``/``$contains`` or a ``where``. At run time a ``$captured``
whose ``$capture`` did not match is a failure that says so.

This module is pure: no server, no I/O.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from typing import Any

#: A capture name: a letter or ``_``, then letters, digits, ``_``, ``-`` or ``.``.
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
_NAME = re.compile(NAME_PATTERN)


class Captures:
    """The values remembered by ``$capture`` during one run of one case.

    A trial view (:meth:`trial`) reads the same values but keeps its own
    writes, for the tentative matches the matcher makes (``$not``, choosing a
    list item) whose captures must not count.
    """

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = values if values is not None else {}
        #: Names whose ``$capture`` ran but found no value (for a clear ``$captured`` failure).
        self.missed: set[str] = set()

    def trial(self) -> Captures:
        """A view that reads these values and forgets its own writes."""
        out = Captures(dict(self.values))
        out.missed = set(self.missed)
        return out

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def get(self, name: str) -> Any:
        """The value captured under ``name`` (KeyError when none)."""
        return self.values[name]

    def remember(self, name: str, value: Any) -> None:
        """Capture ``value`` (a copy) under ``name``, replacing an earlier one."""
        self.values[name] = copy.deepcopy(value)
        self.missed.discard(name)


def capture_marker(marker: str, name: Any, actual: Any, equal: Callable[[Any, Any], bool],
                   captures: Captures | None) -> str:
    """Apply ``$capture``/``$captured`` to ``actual`` (None when absent); the failure message, or ``""``.

    ``equal(expected, actual)`` is the matcher's semantic equality at that node.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        return f"`{marker}` takes a name (letters, digits, _, - and .), got {name!r}"
    if captures is None:
        return f"`{marker}: {name}` needs a case run to remember values in"
    if marker == "$capture":
        if actual is None:
            captures.missed.add(name)
            return f"expected a value to capture as `{name}`, found none"
        captures.remember(name, actual)
        return ""
    if name not in captures:
        if name in captures.missed:
            return f"`{name}` holds no value: the `$capture: {name}` before this found nothing to capture"
        return f"`{name}` was never captured (add `{{$capture: {name}}}` to an earlier expectation)"
    want = captures.get(name)
    if actual is None:
        return f"expected the value captured as `{name}` ({_short(want)}), found none"
    if not equal(want, actual):
        return f"expected the value captured as `{name}` ({_short(want)})"
    return ""


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def iter_markers(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """Every ``$capture``/``$captured`` marker in a value, in document order: ``(path, marker, name)``."""
    if isinstance(value, list):
        for i, v in enumerate(value):
            yield from iter_markers(v, (*path, i))
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in ("$capture", "$captured"):
                yield (*path, k), k, v
            else:
                yield from iter_markers(v, (*path, k))


def contains_capture(value: Any) -> bool:
    """True when ``value`` has a ``$capture`` marker anywhere."""
    return any(m == "$capture" for _, m, _ in iter_markers(value))


def uncaptured(value: Any, captures: Captures | None) -> str:
    """The failure message for the first ``$captured`` name in ``value`` that holds no value, or ``""``.

    ``$not`` calls this first: a comparison with nothing must fail loudly, not
    count as "different".
    """
    for _, marker, name in iter_markers(value):
        if marker != "$captured" or not isinstance(name, str):
            continue
        if captures is None or name not in captures:
            return capture_marker("$captured", name, None, lambda a, b: False, captures)
    return ""


Problems = list[tuple[tuple[str | int, ...], bool, str]]


def _name_hint(name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean `{close[0]}`?)"
    return " (captured before this: " + ", ".join(f"`{k}`" for k in known) + ")" if known else ""


def case_capture_problems(data: dict[str, Any]) -> Problems:
    """Static checks of a case's captures: well-formed names, ``$capture`` only where one value is checked,
    every ``$captured`` name captured earlier in the case (in the order the case runs)."""
    out: Problems = []
    defined: list[str] = []

    def visit(value: Any, base: tuple[str | int, ...], capture_ok: bool) -> None:
        for sub, marker, name in iter_markers(value):
            path = (*base, *sub)
            if not isinstance(name, str) or not _NAME.match(name):
                out.append((path, False, f"`{marker}` takes a name (a letter or _, then letters, digits, _, - "
                                         f"or .), got `{name!r}`"))
                continue
            if marker == "$capture":
                if not capture_ok:
                    out.append((path, True, "`$capture` stands only in an `object` expectation or the `match` of "
                                            "an `each` (where one value is checked), not here"))
                elif any(p in ("$not", "$contains") for p in sub):
                    out.append((path, True, f"`$capture` cannot stand inside `{next(p for p in sub if p in ('$not', '$contains'))}`"
                                            " (nothing single is matched there to capture)"))
                elif name not in defined:
                    defined.append(name)
            elif name not in defined:
                out.append((path, False, f"`$captured: {name}` uses a name no earlier `$capture` defines"
                                         + _name_hint(name, defined)))

    def expectation(a: Any, base: tuple[str | int, ...]) -> None:
        if not isinstance(a, dict):
            return
        for key, arg in a.items():
            if not isinstance(arg, dict):
                continue
            sub = (*base, key)
            if key == "object":
                visit(arg, sub, True)
            elif key in ("absent", "count", "each"):
                if "where" in arg:
                    visit(arg["where"], (*sub, "where"), False)
                if key == "each" and "match" in arg:
                    visit(arg["match"], (*sub, "match"), True)

    def operation(op: Any, base: tuple[str | int, ...]) -> None:
        if not isinstance(op, dict):
            return
        for key, arg in op.items():
            if key == "error":
                visit(arg, (*base, key), False)
            elif isinstance(arg, dict) and "where" in arg:
                visit(arg["where"], (*base, key, "where"), False)

    for si, step in enumerate(data.get("steps") or []):
        if not isinstance(step, dict):
            continue
        for oi, op in enumerate(step.get("do") or []):
            operation(op, ("steps", si, "do", oi))
        for ai, a in enumerate(step.get("expect") or []):
            expectation(a, ("steps", si, "expect", ai))
    for ai, a in enumerate(data.get("expect") or []):
        expectation(a, ("expect", ai))
    return out
