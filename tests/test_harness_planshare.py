"""pytest-xdist workers share robustness plans (fakeapi/harness/planshare.py): what a worker reads from the
shared folder is what it would have planned itself, plans and plain verdicts alike."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from fakeapi.harness import planshare, robustness
from fakeapi.harness.loader import Case, load_file
from fakeapi.harness.runner import DEFAULT_BUDGET

ROOT = Path(__file__).resolve().parents[1]
FILES = ["fixtures/arc/outdated/classification.yaml", "fixtures/arc/outdated/recover.yaml"]


class Config:
    """What planshare reads of a pytest config: an xdist worker's ``workerinput`` (or none)."""

    def __init__(self, workerinput: dict[str, Any] | None = None) -> None:
        if workerinput is not None:
            self.workerinput = workerinput


@pytest.fixture
def fresh() -> Iterator[None]:
    """Each planning starts with empty in-process caches, as in a new worker."""
    saved = dict(robustness._PLANS), dict(robustness._PLAINS)
    robustness._PLANS.clear()
    robustness._PLAINS.clear()
    yield
    robustness._PLANS.clear()
    robustness._PLAINS.clear()
    robustness._PLANS.update(saved[0])
    robustness._PLAINS.update(saved[1])


def robust_cases() -> list[Case]:
    cases = [c for f in FILES for c in load_file(ROOT / f, f) if c.robustness]
    # one whose plain run fails an expectation: planned all the same, and no verdict to share
    failing = cases[-1]
    failing.data["expect"] = [*failing.data.get("expect", []),
                              {"count": {"kind": "ConfigMap", "namespace": "nowhere", "equals": 99}}]
    return cases


def figures(result: Any) -> Any:
    if result is None:
        return None
    return (result.passed, result.reconciles, result.calls, result.elapsed, result.case_mark, result.variant,
            result.failures, result.objects, result.injected)


def planned(config: Any, cases: list[Case]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Plans (as tuples) and kept verdicts (as figures) of ``cases``, keyed by case."""
    plans: dict[Any, Any] = {}
    for file in {c.file for c in cases}:
        mine = [c for c in cases if c.file == file]
        for index, plan in planshare.plans(config, mine, DEFAULT_BUDGET).items():
            plans[(file, index)] = (plan.error, plan.writes, [astuple(v) for v in plan.variants])
    verdicts = {(c.file, c.index): figures(robustness.planned_plain(c, DEFAULT_BUDGET)) for c in cases}
    return plans, verdicts


def count_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    runs: list[str] = []
    run_case = robustness.run_case

    def counted(case: Case, *args: Any, **kwargs: Any) -> Any:
        runs.append(case.name)
        return run_case(case, *args, **kwargs)

    monkeypatch.setattr(robustness, "run_case", counted)
    return runs


def test_shared_plans_and_verdicts_equal_the_workers_own(fresh: None, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    cases = robust_cases()
    runs = count_runs(monkeypatch)
    alone = planned(Config(), cases)  # (no xdist: every case planned here)
    assert len(runs) == len(cases) and any(alone[0].values())
    assert alone[1][(cases[-1].file, cases[-1].index)] is None and any(alone[1].values())
    for worker in ("gw0", "gw1", "gw3"):  # the first plans and writes each; the others only read
        robustness._PLANS.clear()
        robustness._PLAINS.clear()
        runs.clear()
        got = planned(Config({planshare.KEY: str(tmp_path), "workerid": worker}), cases)
        assert got == alone, worker
        assert len(runs) == (len(cases) if worker == "gw0" else 0), worker
    for case in cases:  # the kept verdict is taken once, as a plain run's own
        taken = robustness.take_plain(case, DEFAULT_BUDGET)
        assert figures(taken) == alone[1][(case.file, case.index)]
        assert robustness.take_plain(case, DEFAULT_BUDGET) is None


def test_a_case_another_worker_is_planning_is_waited_for_and_read(fresh: None, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [c for c in robust_cases() if c.file == FILES[0]]
    alone = planned(Config(), cases)
    theirs = cases[1]
    plan = robustness._PLANS[(theirs.digest, theirs.index, theirs.name)]
    verdict = robustness.planned_plain(theirs, DEFAULT_BUDGET)
    robustness._PLANS.clear()
    robustness._PLAINS.clear()
    runs = count_runs(monkeypatch)
    name = planshare._name(theirs, DEFAULT_BUDGET)
    waiting = threading.Event()
    take = planshare._take

    def signalled(folder: Path, case: Case, budget: int, *, wait: bool) -> Any:
        if wait:
            waiting.set()
        return take(folder, case, budget, wait=wait)

    monkeypatch.setattr(planshare, "_take", signalled)
    result: dict[str, Any] = {}
    config = Config({planshare.KEY: str(tmp_path), "workerid": "gw1"})
    with planshare._locked(tmp_path / f"{name}.lock", wait=True) as held:  # (another worker plans `theirs`)
        assert held
        worker = threading.Thread(target=lambda: result.update(got=planned(config, cases)))
        worker.start()
        assert waiting.wait(timeout=300)
        planshare._write(tmp_path, name, planshare._plan_data(plan, verdict))
    worker.join(timeout=300)
    assert result["got"] == alone
    assert theirs.name not in runs and len(runs) == len(cases) - 1


@pytest.mark.parametrize("damage", ["unreadable", "no folder"])
def test_a_broken_share_means_planning_here(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            damage: str) -> None:
    cases = [c for c in robust_cases() if c.file == FILES[1]]
    alone = planned(Config(), cases)
    robustness._PLANS.clear()
    robustness._PLAINS.clear()
    folder = tmp_path / "plans"
    if damage == "unreadable":
        folder.mkdir()
        for c in cases:
            (folder / f"{planshare._name(c, DEFAULT_BUDGET)}.json").write_text("{not json", encoding="utf-8")
    runs = count_runs(monkeypatch)
    assert planned(Config({planshare.KEY: str(folder), "workerid": "gw1"}), cases) == alone
    assert len(runs) == len(cases)
