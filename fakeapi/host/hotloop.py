"""Hot-loop detection: the repeating part of the recent reconciles, for a failure message.

When the host spends its reconcile budget with work still due, the usual cause
is a cycle: a controller whose every reconcile triggers another (a status
write that changes a timestamp, two controllers undoing each other's
writes, an error retried forever). :func:`find_cycle` finds the shortest
cycle of (controller, key, result) at the end of the reconciles, and
:func:`describe` renders it with the API calls each reconcile made.
"""

from __future__ import annotations

import bisect
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fakeapi.server.trace import ApiCall, ReconcileRecord, Trace

#: How many recent reconciles the search looks at.
WINDOW = 400


class HotLoopError(RuntimeError):
    """The reconcile budget was spent with work still due; the message shows the repeating cycle."""

    def __init__(self, message: str, cycle: Sequence[ReconcileRecord] = ()) -> None:
        super().__init__(message)
        #: One period of the cycle (empty when none was found).
        self.cycle = list(cycle)


@dataclass(frozen=True)
class Cycle:
    """A cycle at the end of a sequence: ``period`` records, repeated ``repeats`` times (at least 2).

    ``strict`` is False for a loop whose members come in varying order (keys due at the same
    time are ordered by the seeded draw): then ``records`` holds the last record of each member
    and ``repeats`` counts how many records at the end belong to the loop.
    """

    period: int
    repeats: int
    #: The records of the last repetition, in order.
    records: tuple[ReconcileRecord, ...]
    strict: bool = True


def _signature(r: ReconcileRecord) -> tuple[str, str, str, str]:
    return (r.controller, r.namespace, r.name, r.result)


def find_cycle(records: Sequence[ReconcileRecord], window: int = WINDOW) -> Cycle | None:
    """The shortest cycle of (controller, key, result) repeated at least twice at the end of ``records``."""
    tail = list(records[-window:])
    sig = [_signature(r) for r in tail]
    n = len(sig)
    for period in range(1, n // 2 + 1):
        run = 0  # trailing items equal to the item one period earlier
        i = n - 1
        while i - period >= 0 and sig[i] == sig[i - period]:
            run += 1
            i -= 1
        if run >= period:
            repeats = (run + period) // period
            return Cycle(period, repeats, tuple(tail[-period:]))
    return _find_loose_cycle(tail, sig)


def _find_loose_cycle(tail: list[ReconcileRecord], sig: list[tuple[str, str, str, str]]) -> Cycle | None:
    """The smallest set of signatures that makes up the end of the sequence, each at least twice."""
    n = len(sig)
    for size in range(2, 9):
        members: set[tuple[str, str, str, str]] = set()
        i = n - 1
        while i >= 0 and (sig[i] in members or len(members) < size):
            members.add(sig[i])
            i -= 1
        length = n - 1 - i
        if len(members) == size and length >= 2 * size:
            counts = {m: sig[i + 1:].count(m) for m in members}
            if min(counts.values()) >= 2:
                last: dict[tuple[str, str, str, str], ReconcileRecord] = {}
                for rec, sg in zip(tail[i + 1:], sig[i + 1:]):
                    if rec.calls or not (sg in last and last[sg].calls):
                        last[sg] = rec  # prefer one that made API calls: it shows the loop's writes
                records = tuple(sorted(last.values(), key=lambda r: r.seq))
                return Cycle(size, length, records, strict=False)
    return None


def _calls_of(trace: Trace, rec: ReconcileRecord) -> list[ApiCall]:
    seqs = [c.seq for c in trace.calls]
    out = []
    for s in rec.calls:
        i = bisect.bisect_left(seqs, s)
        if i < len(seqs) and seqs[i] == s:
            out.append(trace.calls[i])
    return out


def describe(
    trace: Trace,
    budget: int,
    still_due: Sequence[str],
    exceptions: Mapping[str, BaseException] | None = None,
) -> HotLoopError:
    """Build the error for a spent budget: the cycle (or the last reconciles), their calls, what is due."""
    records = trace.reconciles
    cycle = find_cycle(records)
    lines = [f"hot loop: the budget of {budget} reconciles is spent and work is still due"]
    shown: Sequence[ReconcileRecord]
    if cycle is not None and cycle.strict:
        lines.append(
            f"the last {cycle.period * cycle.repeats} reconciles repeat a cycle of {cycle.period} "
            f"({cycle.repeats} times):"
        )
        shown = cycle.records
    elif cycle is not None:
        lines.append(
            f"the last {cycle.repeats} reconciles repeat these {cycle.period} reconciles in varying order "
            "(the last of each that made calls shown):"
        )
        shown = cycle.records
    else:
        shown = records[-20:]
        lines.append(f"no repeating cycle found; the last {len(shown)} reconciles:")
    for rec in shown:
        lines.append("  " + rec.render())
        lines.extend("      " + call.render() for call in _calls_of(trace, rec))
    if still_due:
        lines.append("still due: " + ", ".join(still_due))
    if exceptions:
        controllers = {r.controller for r in shown if r.result.startswith("error")}
        for name in sorted(controllers):
            exc = exceptions.get(name)
            if exc is not None:
                tb = "".join(traceback.format_exception(exc)).rstrip()
                lines.append(f"last error of {name}:\n{tb}")
    return HotLoopError("\n".join(lines), cycle.records if cycle is not None else ())
