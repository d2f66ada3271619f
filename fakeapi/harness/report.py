"""Failure reports: every mismatch with its fixture line, then the tail of the trace.

A report reads::

    case `a status write never changes the spec` failed (fixtures/demo.yaml:3)
    after step 1 (write status):
      fixtures/demo.yaml:47  spec.size  expected 5  got 9  (Gadget demo/g1)
    final expectations:
      fixtures/demo.yaml:66  calls  expected 1 matching call, got 2  (update Gadget)
    trace (last 40 of 57 entries):
      2026-01-01T00:00:00Z #12 user: patch Gadget/status demo/g1 (merge) -> 200 rv=14
      (one line per entry)

Rendered objects leave out server-owned noise (``uid``, ``resourceVersion``,
``managedFields``, ``creationTimestamp``, ``selfLink``) unless asked for.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fakeapi.harness.matcher import ABSENT, Mismatch

if TYPE_CHECKING:
    from fakeapi.harness.runner import CaseResult

#: Server-owned metadata left out of rendered objects.
NOISE_FIELDS = frozenset({"uid", "resourceVersion", "managedFields", "creationTimestamp", "selfLink"})
#: Width at which a rendered value is cut.
VALUE_WIDTH = 400


def _looks_like_meta(d: dict[str, Any]) -> bool:
    """ObjectMeta or an owner reference: has a name and a uid or resourceVersion."""
    return "name" in d and ("uid" in d or "resourceVersion" in d)


def strip_noise(value: Any) -> Any:
    """A copy of ``value`` without server-owned metadata (uid, resourceVersion, managedFields,
    creationTimestamp, selfLink) in anything shaped like ObjectMeta or an owner reference."""
    if isinstance(value, list):
        return [strip_noise(v) for v in value]
    if not isinstance(value, dict):
        return value
    noisy = _looks_like_meta(value)
    return {k: strip_noise(v) for k, v in value.items() if not (noisy and k in NOISE_FIELDS)}


def render_value(value: Any, *, show_noise: bool = False, width: int = VALUE_WIDTH) -> str:
    """A value as compact JSON (``<absent>`` for a missing key), noise stripped, cut at ``width``."""
    if value is ABSENT:
        return "<absent>"
    if not show_noise:
        value = strip_noise(value)
    text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text


def render_mismatch(m: Mismatch, *, show_noise: bool = False) -> str:
    """``file:line  path  expected X  got Y  (message; subject)`` on one line."""
    parts = [m.location or "?"]
    if m.path:
        parts.append(m.path)
    notes = [m.subject] if m.subject else []
    if m.has_values:
        parts.append(f"expected {render_value(m.expected, show_noise=show_noise)}  "
                     f"got {render_value(m.actual, show_noise=show_noise)}")
        if m.message:
            notes.insert(0, m.message)
    else:
        parts.append(m.message)
    text = "  ".join(parts)
    if notes:
        text += "  (" + "; ".join(notes) + ")"
    return text


def render_trace_tail(result: CaseResult, tail: int) -> str:
    """The last ``tail`` trace entries, one per line (calls made by a reconcile indented)."""
    host = result.host
    entries = result.api.trace.entries if result.api is not None else []
    if not entries or tail <= 0:
        return ""
    n = len(entries)
    shown = min(tail, n)
    head = f"trace (last {shown} of {n} entries):" if shown < n else f"trace ({n} entries):"
    if host is not None and hasattr(host, "render_trace"):
        body = host.render_trace(shown)
    else:
        body = result.api.trace.tail(shown)
    return head + "\n" + "\n".join("  " + line for line in body.splitlines())


def render_failure(result: CaseResult, *, tail: int = 40, show_noise: bool = False) -> str:
    """The full report of a failed (or passed) case run."""
    case = result.case
    title = f"case `{case.name}`" + (f" [{result.variant.name}]" if result.variant else "")
    lines = [f"{title} {'passed' if result.passed else 'failed'} ({case.location})"]
    if result.variant is not None:
        lines.append(f"variant: {result.variant.describe()}")
    phase = None
    for f in result.failures:
        if f.phase != phase:
            phase = f.phase
            lines.append(f"{phase}:")
        lines.append("  " + render_mismatch(f.mismatch, show_noise=show_noise))
    if result.aborted:
        lines.append(f"the case stopped early: {result.aborted}")
    trace = render_trace_tail(result, tail)
    if trace:
        lines.append(trace)
    return "\n".join(lines)


def summary_line(result: CaseResult, wall_seconds: float | None = None) -> str:
    """``PASS  name  (12 reconciles, 48 API calls, 5m0s virtual, 3.1 ms)`` for the command-line runner."""
    from fakeapi.server.clock import format_duration

    status = "PASS" if result.passed else "FAIL"
    name = result.case.name + (f"[{result.variant.name}]" if result.variant else "")
    bits = [f"{result.reconciles} reconciles", f"{result.calls} API calls",
            f"{format_duration(result.elapsed)} virtual"]
    if wall_seconds is not None:
        bits.append(f"{wall_seconds * 1000:.1f} ms")
    return f"{status}  {result.case.file}::{name}  ({', '.join(bits)})"
