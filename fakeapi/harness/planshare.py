"""pytest-xdist workers share the robustness plans they make at collection time.

Every worker collects every item, and a robustness case's items (``<case>[crash@k]``...) are known
only once its plain run has counted the controller writes (:mod:`fakeapi.harness.robustness`): with
two workers each plain run was made twice. Now the controller gives its workers one folder
(``workerinput``, :func:`pytest_configure_node`), and for the robustness cases of a file a worker
takes each case in turn under an exclusive lock of its own (:func:`fcntl.flock`, per case): a case
whose plan is in the folder is read, one no other worker is planning is planned here and written
there, and one another worker is planning now is left for later, when this worker waits for that
lock (no polling) and reads what was written. Even-numbered workers take a file's cases first to
last, the others last to first, so two workers collecting the same file plan different cases.

A plain run that passed is shared as its verdict (the figures of the :class:`CaseResult`, without
server or host), which the plain item takes as it takes its own worker's (:func:`robustness.take_plain`).
Runs are deterministic, so what a worker reads is what it would have computed. Anything that goes
wrong with the folder (no ``fcntl``, a file that cannot be written or read) only means the worker
plans the case itself, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fakeapi.harness.loader import Case
    from fakeapi.harness.robustness import Plan

#: The ``workerinput`` key of the shared folder.
KEY = "fakeapi_plans"
_FOLDER = pytest.StashKey[str]()

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: every worker plans on its own
    fcntl = None  # type: ignore[assignment]


def configure_node(node: Any) -> None:
    """(xdist controller) Give a worker the folder its plans are shared in, made once per run."""
    if fcntl is None:
        return
    config = node.config
    folder = config.stash.get(_FOLDER, None)
    if folder is None:
        folder = config.stash[_FOLDER] = tempfile.mkdtemp(prefix="fakeapi-plans-")
    node.workerinput[KEY] = folder


def unconfigure(config: pytest.Config) -> None:
    """(xdist controller) Remove the shared folder."""
    folder = config.stash.get(_FOLDER, None)
    if folder is not None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        del config.stash[_FOLDER]


def plans(config: pytest.Config, cases: Sequence[Case], budget: int) -> dict[int, Plan]:
    """The plans of ``cases`` (robustness cases of one file) by case index: shared with the other workers
    when this process is an xdist worker given a folder, else each planned here."""
    from fakeapi.harness.robustness import plan_for_collection

    workerinput = getattr(config, "workerinput", None) or {}
    folder = workerinput.get(KEY)
    if folder is None or fcntl is None:
        return {c.index: plan_for_collection(c, budget=budget) for c in cases}
    number = "".join(ch for ch in str(workerinput.get("workerid", "")) if ch.isdigit())
    order = list(cases) if int(number or 0) % 2 == 0 else list(reversed(cases))
    out: dict[int, Plan] = {}
    later = []
    for case in order:
        plan = _take(Path(folder), case, budget, wait=False)
        if plan is None:
            later.append(case)
        else:
            out[case.index] = plan
    for case in later:
        plan = _take(Path(folder), case, budget, wait=True)
        out[case.index] = plan if plan is not None else plan_for_collection(case, budget=budget)
    return out


def _name(case: Case, budget: int) -> str:
    return hashlib.sha256(f"{case.digest}\0{case.index}\0{case.name}\0{budget}".encode()).hexdigest()[:40]


@contextmanager
def _locked(path: Path, wait: bool) -> Iterator[bool]:
    """Hold the exclusive lock of ``path`` (True), or, without ``wait``, False when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _take(folder: Path, case: Case, budget: int, *, wait: bool) -> Plan | None:
    """The plan of ``case``: read from ``folder``, or made here and written there; None when another
    worker is making it and ``wait`` is false."""
    from fakeapi.harness.robustness import adopt_plan, plan_for_collection, planned_plain

    if not case.digest:
        return plan_for_collection(case, budget=budget)
    name = _name(case, budget)
    try:
        with _locked(folder / f"{name}.lock", wait) as held:
            if not held:
                return None
            data = _read(folder / f"{name}.json")
            if data is not None:
                plan = _plan_from(data)
                adopt_plan(case, budget, plan, None if data["passed"] is None else _result_from(case, data["passed"]))
                return plan
            plan = plan_for_collection(case, budget=budget)
            _write(folder, name, _plan_data(plan, planned_plain(case, budget)))
            return plan
    except OSError:
        return plan_for_collection(case, budget=budget)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == 1 else None


def _write(folder: Path, name: str, data: dict[str, Any]) -> None:
    tmp = folder / f"{name}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, folder / f"{name}.json")
    except OSError:
        tmp.unlink(missing_ok=True)


def _plan_data(plan: Plan, passed: Any) -> dict[str, Any]:
    verdict = None if passed is None else {
        "reconciles": passed.reconciles, "calls": passed.calls, "case_mark": passed.case_mark,
        "elapsed": [passed.elapsed.days, passed.elapsed.seconds, passed.elapsed.microseconds]}
    return {"format": 1, "error": plan.error, "writes": plan.writes, "passed": verdict,
            "variants": [[v.mode, v.index, v.rule, v.write] for v in plan.variants]}


def _plan_from(data: dict[str, Any]) -> Plan:
    from fakeapi.harness.robustness import Plan
    from fakeapi.harness.runner import Variant

    return Plan([Variant(mode, index, rule, write) for mode, index, rule, write in data["variants"]],
                error=data["error"], writes=data["writes"])


def _result_from(case: Case, verdict: dict[str, Any]) -> Any:
    from fakeapi.harness.runner import CaseResult

    days, seconds, micros = verdict["elapsed"]
    return CaseResult(case, reconciles=verdict["reconciles"], calls=verdict["calls"], case_mark=verdict["case_mark"],
                      elapsed=timedelta(days=days, seconds=seconds, microseconds=micros))
