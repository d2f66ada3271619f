"""The trace: every API call and every reconcile, in order, on the virtual clock.

Tests and fixtures assert on it (``calls:``), failure reports show its tail,
and the command-line runner prints it as a timeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from fakeapi.server.clock import format_time


@dataclass(slots=True)
class ApiCall:
    """One API request as the server saw it."""

    seq: int
    time: datetime
    actor: str
    verb: str
    kind: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    patch_type: str = ""
    code: int = 200
    reason: str = ""
    resource_version: str = ""
    #: True when the call changed stored state (a real write).
    wrote: bool = False
    #: The reconcile this call was made from (ReconcileRecord.seq), if any.
    reconcile: int | None = None

    def render(self) -> str:
        """One readable line."""
        target = f"{self.namespace}/{self.name}" if self.namespace else self.name
        sub = f"/{self.subresource}" if self.subresource else ""
        pt = f" ({self.patch_type})" if self.patch_type else ""
        res = f"{self.code}" + (f" {self.reason}" if self.reason else "")
        rv = f" rv={self.resource_version}" if self.resource_version else ""
        return f"{format_time(self.time)} #{self.seq} {self.actor}: {self.verb} {self.kind}{sub} {target}{pt} -> {res}{rv}"


@dataclass(slots=True)
class ReconcileRecord:
    """One reconcile of one key by one controller."""

    seq: int
    controller: str
    namespace: str
    name: str
    start: datetime
    end: datetime | None = None
    result: str = ""  # "done", "requeue", "requeue after 5s", "error: ...", "crash"
    error: str = ""
    calls: list[int] = field(default_factory=list)

    def render(self) -> str:
        """One readable line."""
        key = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{format_time(self.start)} reconcile #{self.seq} {self.controller} {key} -> {self.result or 'running'}"


@dataclass
class Note:
    """A free-form trace entry (steps, simulator actions, crashes)."""

    seq: int
    time: datetime
    actor: str
    text: str

    def render(self) -> str:
        """One readable line."""
        return f"{format_time(self.time)} {self.actor}: {self.text}"


Entry = ApiCall | ReconcileRecord | Note


class Trace:
    """Ordered record of API calls, reconciles and notes."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.calls: list[ApiCall] = []
        self.reconciles: list[ReconcileRecord] = []
        self._seq = 0
        #: The reconcile in flight, whose calls get attributed to it.
        self.current_reconcile: ReconcileRecord | None = None

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def record_call(self, time: datetime, actor: str, verb: str, kind: str, namespace: str = "", name: str = "",
                    subresource: str = "", patch_type: str = "", code: int = 200, reason: str = "",
                    resource_version: str = "", wrote: bool = False) -> ApiCall:
        """Append an API call."""
        self._seq += 1
        rec = self.current_reconcile
        call = ApiCall(self._seq, time, actor, verb, kind, namespace, name, subresource, patch_type, code, reason,
                       resource_version, wrote, rec.seq if rec is not None else None)
        if rec is not None:
            rec.calls.append(call.seq)
        self.calls.append(call)
        self.entries.append(call)
        return call

    def start_reconcile(self, controller: str, namespace: str, name: str, start: datetime) -> ReconcileRecord:
        """Open a reconcile record; calls made until it ends are attributed to it."""
        rec = ReconcileRecord(seq=self._next(), controller=controller, namespace=namespace, name=name, start=start)
        self.reconciles.append(rec)
        self.entries.append(rec)
        self.current_reconcile = rec
        return rec

    def end_reconcile(self, rec: ReconcileRecord, end: datetime, result: str, error: str = "") -> None:
        """Close a reconcile record."""
        rec.end = end
        rec.result = result
        rec.error = error
        if self.current_reconcile is rec:
            self.current_reconcile = None

    def note(self, time: datetime, actor: str, text: str) -> Note:
        """Append a free-form note."""
        n = Note(seq=self._next(), time=time, actor=actor, text=text)
        self.entries.append(n)
        return n

    def mark(self) -> int:
        """A position in the trace, for ``since`` queries."""
        return self._seq

    def calls_since(self, mark: int = 0) -> list[ApiCall]:
        """API calls recorded after ``mark``."""
        return [c for c in self.calls if c.seq > mark]

    def render(self, entries: Iterable[Entry] | None = None) -> str:
        """The trace (or the given entries), one line each."""
        return "\n".join(e.render() for e in (self.entries if entries is None else entries))

    def tail(self, n: int = 40) -> str:
        """The last ``n`` entries, rendered."""
        return self.render(self.entries[-n:])
