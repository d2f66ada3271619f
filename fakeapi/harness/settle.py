"""Settling: how long the hosted controllers run after ``given`` and after each step.

A settle form is one of (docs/FIXTURES.md "Settle forms"):

- ``true`` (the default): run until nothing is due, moving the virtual clock
  to each delayed requeue; more than the reconcile budget is a hot loop;
- ``false``: do not run the controllers (an ``advance`` then only moves the clock);
- ``{reconciles: N}``: at most N reconciles, then stop (not an error);
- ``{for: 5m}``: run with the clock for exactly that long (the clock ends 5m later);
- ``{until_idle: true, max: 10m}``: run until nothing is due, but for at most
  that much virtual time: a controller that requeues itself every 30s (a
  polling controller) settles at the bound instead of being a hot loop. Without
  ``max`` it is the same as ``true``.

The case key ``given_settle`` takes a settle form for the settle after
``given`` (default ``true``), so a polling controller's object can be in
``given``.

A reconcile that fails with the same error for the same key
``max_repeated_errors`` times in a row (a case key; default
:data:`DEFAULT_MAX_REPEATED_ERRORS`, ``0`` turns the check off) stops the case
at once with that error and its traceback (:class:`RepeatedError`), instead of
retrying with back-off until the reconcile budget is spent. Errors a fault
rule injected (a fault fired during the reconcile) do not count: a case that
injects them means the retries.
"""

from __future__ import annotations

import traceback
from datetime import datetime, timedelta
from typing import Any

from fakeapi.server.clock import format_duration, parse_duration

#: Reconcile budget of ``settle: true`` before a hot loop is reported.
DEFAULT_BUDGET = 10_000
#: Consecutive identical reconcile errors of one key that end a case.
DEFAULT_MAX_REPEATED_ERRORS = 5

JsonPath = tuple[str | int, ...]


def settle_problems(value: Any, path: JsonPath) -> list[tuple[JsonPath, bool, str]]:
    """What is wrong with a settle form the schema let through (combinations of keys)."""
    if not isinstance(value, dict):
        return []
    keys = set(value)
    ok = [{"reconciles"}, {"for"}, {"until_idle"}, {"until_idle", "max"}]
    if keys in ok:
        if "until_idle" in keys and value["until_idle"] is not True:
            return [((*path, "until_idle"), False, "`until_idle` takes true (use `settle: false` not to settle)")]
        return []
    if "max" in keys and "until_idle" not in keys:
        return [((*path, "max"), True, "`max` bounds `until_idle`: write `{until_idle: true, max: "
                                       f"{value['max']}}}`" + (" (or `{for: ...}` alone)" if "for" in keys else ""))]
    found = ", ".join(f"`{k}`" for k in value)
    return [(path, False, f"settle takes one of `reconciles`, `for` or `until_idle` (with `max`); found {found}")]


class RepeatedError(Exception):
    """A reconcile failed with the same error for the same key N times in a row."""

    def __init__(self, controller: str, key: str, times: int, message: str, tb: str) -> None:
        super().__init__(message)
        self.controller = controller
        self.key = key
        self.times = times
        self.message = message
        self.tb = tb

    def render(self) -> str:
        """What the report says: the error, how often, and the traceback of its last occurrence."""
        head = (f"reconcile of {self.key} by {self.controller} failed {self.times} times in a row with the same "
                f"error: {self.message}")
        return head + ("\n" + self.tb.rstrip() if self.tb else "")


class RepeatedErrorWatch:
    """An ``after_reconcile`` hook raising :class:`RepeatedError` on the Nth identical failure in a row."""

    def __init__(self, host: Any, limit: int) -> None:
        self.host = host
        self.limit = limit
        self._runs: dict[tuple[str, str, str], tuple[str, int]] = {}
        self._fired: dict[int, int] = {}

    def _fault_fired(self) -> bool:
        """Whether a fault rule fired since the last reconcile (its errors are the case's own doing)."""
        rules = self.host.api.faults.rules
        if not rules and not self._fired:
            return False
        now = {id(r): r.fired for r in rules}
        fired = any(n > self._fired.get(i, 0) for i, n in now.items())
        self._fired = now
        return fired

    def __call__(self, rec: Any) -> None:
        """Count the reconcile's outcome for its key (errors a fault rule injected do not count)."""
        key = (rec.controller, rec.namespace, rec.name)
        injected = self._fault_fired()
        if not str(rec.result).startswith("error:") or injected:
            self._runs.pop(key, None)
            return
        msg = rec.error or str(rec.result)[len("error: "):]
        last, n = self._runs.get(key, ("", 0))
        n = n + 1 if last == msg else 1
        self._runs[key] = (msg, n)
        if self.limit > 0 and n >= self.limit:
            exc = self.host.last_errors.get(rec.controller)
            tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
            name = f"{rec.namespace}/{rec.name}" if rec.namespace else rec.name
            raise RepeatedError(rec.controller, name, n, msg, tb)


def run_settle(host: Any, settle: Any, budget: int) -> None:
    """Run the host as a settle form says (``true``/None, ``false``, or one of the mappings)."""
    if settle is False:
        return
    if settle is True or settle is None or settle == {"until_idle": True}:
        host.run_until_idle(max_reconciles=budget)
    elif isinstance(settle, dict) and "reconciles" in settle:
        host.run_until_idle(max_reconciles=int(settle["reconciles"]), raise_on_budget=False)
    elif isinstance(settle, dict) and "for" in settle:
        host.run_for(parse_duration(str(settle["for"])), max_reconciles=budget)
    elif isinstance(settle, dict) and "max" in settle:
        run_until_idle_within(host, parse_duration(str(settle["max"])), budget)
    else:  # pragma: no cover - the loader refuses other forms
        raise ValueError(f"unknown settle form {settle!r}")


def run_until_idle_within(host: Any, bound: Any, budget: int) -> datetime:
    """Run until nothing is due or until ``bound`` of virtual time has passed, whichever is first.

    Everything due at or before the bound runs; the clock stops at the last
    thing that ran (it is not moved to the bound when the host went idle
    earlier). Returns the time it stopped at.
    """
    end = host.clock.now() + bound
    while True:
        host.run_for(timedelta(0), max_reconciles=budget)  # everything due now
        t = host.next_wakeup()
        if t is None or t > end:
            return host.clock.now()
        host.clock.set(t)


def describe_settle(settle: Any) -> str:
    """A settle form in words, for notes and reports."""
    if settle is True or settle is None:
        return "until idle"
    if settle is False:
        return "not settled"
    if isinstance(settle, dict):
        if "reconciles" in settle:
            return f"at most {settle['reconciles']} reconciles"
        if "for" in settle:
            return f"for {format_duration(parse_duration(str(settle['for'])))}"
        if "max" in settle:
            return f"until idle, at most {format_duration(parse_duration(str(settle['max'])))}"
        return "until idle"
    return str(settle)


__all__ = ["DEFAULT_MAX_REPEATED_ERRORS", "RepeatedError", "RepeatedErrorWatch", "describe_settle",
           "run_settle", "run_until_idle_within", "settle_problems"]
