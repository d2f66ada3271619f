"""A run of many cases for ``fakeapi run``: progress, results by file, failures, summaries, JUnit XML, --lf.

It reads like pytest (docs/RUNNING.md):

- while it runs, one character per case or variant (``.`` passed, ``F``
  failed, ``E`` a broken file) after each file's name, when the output is a
  terminal; nothing while it runs otherwise;
- then (unless the progress was shown, or with ``-v``) the results grouped
  by file, one line per case, its robustness variants folded into one line
  (``crash@1..7: 7 passed``, or which failed);
- the failures in full, each with every mismatch and the tail of the trace;
- a summary by folder and the totals (``218 passed, 1 failed in 3.21s``).

``-x`` stops at the first failure; ``--lf`` runs only the cases that failed
last time (kept in ``lastfailed.json`` in the cache folder, ``.fakeapi_cache``
in the working folder unless ``--cache-dir``); ``--junit-xml PATH`` writes a
JUnit report (one ``testcase`` per case or variant) for CI.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from fakeapi.harness.runner import CaseResult

#: Default cache folder of ``--lf`` (in the working folder).
CACHE_DIR = ".fakeapi_cache"
LASTFAILED = "lastfailed.json"
#: Case names longer than this are cut in result lines.
NAME_WIDTH = 100


@dataclass
class Outcome:
    """One run case or variant (or a broken file, ``case`` empty)."""

    file: str
    case: str
    variant: str = ""
    passed: bool = False
    result: CaseResult | None = None
    wall: float = 0.0
    #: The full failure text (a report, a broken file's problems, a planning error).
    report: str = ""

    @property
    def case_id(self) -> str:
        """``file::case`` (what ``--lf`` remembers: a failed variant reruns its whole case)."""
        return f"{self.file}::{self.case}" if self.case else self.file

    @property
    def test_id(self) -> str:
        """``file::case[variant]``."""
        return self.case_id + (f"[{self.variant}]" if self.variant else "")


@dataclass
class Session:
    """Collects outcomes while cases run, then renders them."""

    out: TextIO
    progress: bool
    verbose: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    _file: str | None = None

    # -- while running ----------------------------------------------------------------------

    def add(self, outcome: Outcome) -> None:
        """Record an outcome; print its progress character."""
        self.outcomes.append(outcome)
        if not self.progress:
            return
        if outcome.file != self._file:
            if self._file is not None:
                self.out.write("\n")
            self.out.write(f"{outcome.file} ")
            self._file = outcome.file
        self.out.write("E" if not outcome.case else ("." if outcome.passed else "F"))
        self.out.flush()

    @property
    def failed(self) -> list[Outcome]:
        """Outcomes that did not pass (broken files included)."""
        return [o for o in self.outcomes if not o.passed]

    # -- afterwards ---------------------------------------------------------------------------

    def finish(self, stopped_early: bool = False) -> None:
        """Print results by file (when no progress was shown, or verbose), failures, summaries."""
        w = self.out.write
        if self.progress and self._file is not None:
            w("\n")
        if not self.progress or self.verbose:
            for line in self.result_lines():
                w(line + "\n")
        failed = self.failed
        if failed:
            w("\n" + " failures ".center(78, "=") + "\n")
            for o in failed:
                w(f"\n___ {o.test_id} ___\n{o.report.rstrip()}\n")
        if self.outcomes:
            w("\n" + " summary by folder ".center(78, "=") + "\n")
            for line in self.folder_lines():
                w(line + "\n")
        if stopped_early:
            w("stopped after the first failure (-x)\n")
        w(self.totals() + "\n")

    def result_lines(self) -> list[str]:
        """Results grouped by file: a header per file, a line per case, variants folded."""
        lines: list[str] = []
        current = None
        by_case: dict[tuple[str, str], list[Outcome]] = {}
        order: list[tuple[str, str]] = []
        for o in self.outcomes:
            key = (o.file, o.case)
            if key not in by_case:
                by_case[key] = []
                order.append(key)
            by_case[key].append(o)
        for key in order:
            group = by_case[key]
            file = key[0]
            if file != current:
                lines.append(file)
                current = file
            plain = [o for o in group if not o.variant]
            variants = [o for o in group if o.variant and o.variant != "robustness"]
            unplanned = [o for o in group if o.variant == "robustness"]
            if not key[1]:
                lines.append("  ERROR  the file does not load (below)")
                continue
            for o in plain:
                lines.append(f"  {'PASS' if o.passed else 'FAIL'}  {_cut(o.case)}  ({_stats(o)})")
            if variants:
                lines.append("        " + fold_variants(variants))
            if unplanned:
                lines.append("        robustness variants not planned (below)")
        return lines

    def folder_lines(self) -> list[str]:
        """One line per folder: how many passed and failed in it."""
        folders: dict[str, list[int]] = {}
        for o in self.outcomes:
            folder = str(Path(o.file).parent.as_posix())
            counts = folders.setdefault(folder, [0, 0, 0])
            if not o.case:
                counts[2] += 1
            elif o.passed:
                counts[0] += 1
            else:
                counts[1] += 1
        width = max(len(f) for f in folders)
        return [f"{f.ljust(width)}  {_counts(*c)}" for f, c in sorted(folders.items())]

    def totals(self) -> str:
        """``12 passed, 1 failed in 0.31s`` (and broken files)."""
        passed = sum(1 for o in self.outcomes if o.case and o.passed)
        failed = sum(1 for o in self.outcomes if o.case and not o.passed)
        broken = sum(1 for o in self.outcomes if not o.case)
        parts = [f"{passed} passed", f"{failed} failed"]
        if broken:
            parts.append(f"{broken} broken file{'s' if broken != 1 else ''}")
        return f"{', '.join(parts)} in {time.perf_counter() - self.started:.2f}s"


def fold_variants(variants: list[Outcome]) -> str:
    """``crash@1..7: 7 passed`` / ``crash@1..7: 6 passed, 1 failed (crash@3)``, per mode."""
    modes: dict[str, list[Outcome]] = {}
    for v in variants:
        mode = v.variant.partition("@")[0]
        modes.setdefault(mode, []).append(v)
    parts = []
    for mode, vs in modes.items():
        nums = [v.variant.partition("@")[2] for v in vs]
        span = f"{mode}@{nums[0]}..{nums[-1]}" if len(nums) > 1 else vs[0].variant
        ok = sum(1 for v in vs if v.passed)
        bad = [v.variant for v in vs if not v.passed]
        text = f"{span}: {ok} passed"
        if bad:
            text += f", {len(bad)} failed ({', '.join(bad)})"
        parts.append(text)
    return "; ".join(parts)


def _cut(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"


def _stats(o: Outcome) -> str:
    from fakeapi.server.clock import format_duration

    r = o.result
    if r is None:
        return "not run"
    return (f"{r.reconciles} reconciles, {r.calls} calls, {format_duration(r.elapsed)} virtual, "
            f"{o.wall * 1000:.1f} ms")


def _counts(passed: int, failed: int, broken: int) -> str:
    parts = [f"{passed} passed"]
    if failed:
        parts.append(f"{failed} failed")
    if broken:
        parts.append(f"{broken} broken")
    return ", ".join(parts)


# ------------------------------------------------------------------------------ --lf


def read_last_failed(cache_dir: Path) -> set[str]:
    """Case ids that failed in the last run (empty when none are recorded or the cache is unreadable)."""
    try:
        data = json.loads((cache_dir / LASTFAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(x) for x in data.get("failed", [])} if isinstance(data, dict) else set()


def write_last_failed(cache_dir: Path, previous: set[str], outcomes: list[Outcome]) -> None:
    """Keep what failed: the previous failures that did not run again, plus this run's failures."""
    ran = {o.case_id for o in outcomes}
    failed = {o.case_id for o in outcomes if not o.passed}
    keep = sorted((previous - ran) | failed)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        (cache_dir / LASTFAILED).write_text(json.dumps({"failed": keep}, indent=1) + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only working folder: --lf then reruns everything, as pytest does without a cache


# ------------------------------------------------------------------------------ JUnit XML


def write_junit(path: Path, outcomes: list[Outcome], seconds: float) -> None:
    """A JUnit XML report (the schema CI servers read): one testcase per case or variant."""
    failures = sum(1 for o in outcomes if o.case and not o.passed)
    errors = sum(1 for o in outcomes if not o.case)
    suite = ET.Element("testsuite", name="fakeapi", tests=str(len(outcomes)), failures=str(failures),
                       errors=str(errors), skipped="0", time=f"{seconds:.3f}")
    for o in outcomes:
        name = (o.case + (f"[{o.variant}]" if o.variant else "")) if o.case else "(load)"
        tc = ET.SubElement(suite, "testcase", classname=o.file, name=name, time=f"{o.wall:.3f}")
        if o.passed:
            continue
        first = o.report.strip().splitlines()[0] if o.report.strip() else "failed"
        tag = "failure" if o.case else "error"
        el = ET.SubElement(tc, tag, message=first[:300])
        el.text = o.report
    path.parent.mkdir(parents=True, exist_ok=True)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    path.write_bytes(b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n")


__all__ = ["CACHE_DIR", "Outcome", "Session", "fold_variants", "read_last_failed", "write_junit",
           "write_last_failed"]
