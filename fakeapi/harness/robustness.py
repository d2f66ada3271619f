"""Robustness variants: the same case again, with a crash or a conflict on each controller write.

``robustness: {crash_after_each_write: true}`` (docs/FIXTURES.md
"Robustness variants") turns one case into many. A plain run lists the API
writes made by controllers (calls that changed stored state, made from a
reconcile); variant ``crash@k`` runs the case again with a fault rule that
crashes the writing controller right after write k, ``conflict@k`` with one
that answers write k with 409 Conflict. Every expectation except ``calls:``
(a crash or a conflict legitimately adds calls) must still hold.

The rule for write k matches its verb, kind, namespace, subresource and
actor (not its name: a generated name is not known before the call) and
skips the matching calls that came before it in the plain run. Runs are
deterministic, so the variant reaches the same call; a variant that never
reaches it fails, saying the runs diverged.

When the plugin expands variants: at collection time, by running the plain
case once and keeping the plan in memory, keyed by the file's content hash
and the case's position (:func:`plan_for_collection`). A full ARC case runs in
milliseconds, so collection stays fast; each xdist worker collects on its own,
and the workers share what they plan through a folder the controller gives them
(:mod:`fakeapi.harness.planshare`), so each plain run is made once. That run is the
plain case's own run, expectations checked as its item checks them (they
read the store, never the API, so the run is the same as without them); when
it passed, the item takes its verdict (:func:`take_plain`) instead of running
the same deterministic case a second time in the same process (issue 22).
A failed expectation does not stop the planning (the item reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fakeapi.harness.loader import Case
from fakeapi.harness.runner import CaseResult, Variant, run_case

MODES = (("crash", "crash_after_each_write"), ("conflict", "conflict_on_each_write"))


@dataclass(frozen=True)
class ControllerWrite:
    """One API write a controller made in the plain run, and how to hit it again."""

    index: int
    verb: str
    kind: str
    namespace: str
    name: str
    subresource: str
    actor: str
    #: Calls with the same verb, kind, namespace, subresource and actor before this one.
    skip: int

    def describe(self) -> str:
        """``patch EphemeralRunner/status ci/x by ephemeralrunner``."""
        sub = f"/{self.subresource}" if self.subresource else ""
        target = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.verb} {self.kind}{sub} {target} by {self.actor}"

    def rule(self, mode: str) -> dict[str, Any]:
        """The fault rule (fixture form) of variant ``mode`` for this write."""
        rule: dict[str, Any] = {
            "on": {"verb": self.verb, "kind": self.kind, "namespace": self.namespace,
                   "subresource": self.subresource, "actor": self.actor},
            "skip": self.skip,
            "times": 1,
        }
        if mode == "crash":
            rule["crash"] = "after"
        else:
            rule["error"] = "Conflict"
        return rule


@dataclass
class Plan:
    """The variants of one case (empty when it asks for none), or why they could not be planned."""

    variants: list[Variant] = field(default_factory=list)
    error: str = ""
    writes: int = 0


def controller_writes(result: CaseResult) -> list[ControllerWrite]:
    """The controller writes of a run, in order, each with its skip count."""
    if result.api is None:
        return []
    seen: dict[tuple[str, str, str, str, str], int] = {}
    out: list[ControllerWrite] = []
    for c in result.api.trace.calls:
        sig = (c.verb, c.kind, c.namespace, c.subresource, c.actor)
        n = seen.get(sig, 0)
        if c.wrote and c.reconcile is not None:
            out.append(ControllerWrite(len(out) + 1, c.verb, c.kind, c.namespace, c.name, c.subresource, c.actor, n))
        seen[sig] = n + 1
    return out


def wanted_modes(case: Case) -> list[str]:
    """The variant modes a case asks for (``crash``, ``conflict``)."""
    rob = case.robustness
    return [mode for mode, key in MODES if rob.get(key)]


_PLANS: dict[tuple[str, int, str], Plan] = {}
#: Passed plain runs made while planning, by (file hash, case index, case name, budget), until their item takes them.
_PLAINS: dict[tuple[str, int, str, int], CaseResult] = {}


def plan_variants(case: Case, plain: CaseResult | None = None, *, budget: int | None = None) -> Plan:
    """The variants of ``case``: one per controller write and mode (cached per file content and case)."""
    modes = wanted_modes(case)
    if not modes:
        return Plan()
    key = (case.digest, case.index, case.name)
    if plain is None and key in _PLANS:
        return _PLANS[key]
    if plain is None:
        plain = run_case(case, check=False) if budget is None else run_case(case, check=False, budget=budget)
    plan = _plan(plain, modes, expectations_count=True)
    if case.digest:
        _PLANS[key] = plan
    return plan


def plan_for_collection(case: Case, *, budget: int) -> Plan:
    """The variants of ``case`` as the pytest plugin collects them (cached like :func:`plan_variants`).

    The planning run is the plain case's checked run with ``budget``; a failed expectation does not
    stop the planning. When it passed, its verdict waits for the plain item (:func:`take_plain`).
    """
    modes = wanted_modes(case)
    if not modes:
        return Plan()
    key = (case.digest, case.index, case.name)
    if key in _PLANS:
        return _PLANS[key]
    plain = run_case(case, budget=budget)
    plan = _plan(plain, modes, expectations_count=False)
    if case.digest:
        _PLANS[key] = plan
        if plain.passed:
            plain.api = plain.host = None  # (the verdict is kept, not the server)
            _PLAINS[(*key, budget)] = plain
    return plan


def take_plain(case: Case, budget: int) -> CaseResult | None:
    """The passed plain run :func:`plan_for_collection` made of ``case`` with ``budget``, once; else None."""
    if not case.digest:
        return None
    return _PLAINS.pop((case.digest, case.index, case.name, budget), None)


def planned_plain(case: Case, budget: int) -> CaseResult | None:
    """The passed plain run kept for ``case`` with ``budget`` (left for its item to take), else None."""
    return _PLAINS.get((case.digest, case.index, case.name, budget))


def adopt_plan(case: Case, budget: int, plan: Plan, plain: CaseResult | None) -> None:
    """Keep a plan another process made of ``case`` (:mod:`fakeapi.harness.planshare`) as if made here, with
    the verdict of its plain run when that passed."""
    if not case.digest:
        return
    key = (case.digest, case.index, case.name)
    _PLANS[key] = plan
    if plain is not None:
        _PLAINS[(*key, budget)] = plain


def _plan(plain: CaseResult, modes: list[str], *, expectations_count: bool) -> Plan:
    """The variants planned from a plain run; an error when the run went wrong (or, when
    ``expectations_count``, an expectation failed)."""
    writes = controller_writes(plain)
    plan = Plan(writes=len(writes))
    wrong = [f for f in plain.failures if f.phase != "invariants" and (expectations_count or not f.expectation)]
    if plain.aborted or wrong:
        reason = plain.aborted or "; ".join(f.mismatch.message for f in wrong[:3])
        plan.error = f"the plain run failed, so its writes cannot be counted: {reason}"
    for mode in modes:
        for w in writes:
            plan.variants.append(Variant(mode, w.index, w.rule(mode), w.describe()))
    return plan
