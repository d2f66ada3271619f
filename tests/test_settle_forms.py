"""Settle forms for polling controllers, ``given_settle``, and the repeated-error stop (issue 23, item 3)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from fakeapi.harness import Bundle, LoadError, load_text, register_bundle, render_failure, run_case
from fakeapi.host import Context, Host, Request, Result

POLLER = "settle-test-poller"
FAILER = "settle-test-failer"


def _poll(ctx: Context, req: Request) -> Result:
    ctx.client.get("ConfigMap", req.name, req.namespace)
    return Result(requeue_after=timedelta(seconds=30))


def _install_poller(host: Host, settings: dict[str, Any]) -> None:
    host.controller("poller").for_("ConfigMap").complete(_poll)


def _always_fails(ctx: Context, req: Request) -> None:
    raise RuntimeError(f"cannot reach the backend for {req.name}")


def _install_failer(host: Host, settings: dict[str, Any]) -> None:
    host.controller("failer").for_("ConfigMap").complete(_always_fails)


register_bundle(Bundle(POLLER, _install_poller, controllers=("poller",)))
register_bundle(Bundle(FAILER, _install_failer, controllers=("failer",)))

CM = "{apiVersion: v1, kind: ConfigMap, metadata: {name: c1, namespace: default}}"


def _case(body: str) -> Any:
    return load_text(body, "settle.yaml")[0]


def _reconciles(result: Any, controller: str) -> int:
    return sum(1 for r in result.api.trace.reconciles if r.controller == controller)


def test_a_polling_controller_in_given_is_a_hot_loop_by_default() -> None:
    result = run_case(_case(f"name: p\nbundles: [{POLLER}]\ngiven: [{CM}]\n"), budget=50)
    assert not result.passed
    assert result.aborted == "hot loop"


def test_given_settle_until_idle_with_a_bound_sets_up_a_polling_controller() -> None:
    case = _case(f"name: p\nbundles: [{POLLER}]\ngiven: [{CM}]\ngiven_settle: {{until_idle: true, max: 10m}}\n")
    result = run_case(case)
    assert result.passed, render_failure(result)
    # one reconcile at 0s, then one every 30s up to and including 10m
    assert _reconciles(result, "poller") == 21
    assert result.elapsed == timedelta(minutes=10)


def test_a_step_settle_until_idle_with_a_bound() -> None:
    case = _case(f"name: p\nbundles: [{POLLER}]\ngiven: [{CM}]\ngiven_settle: false\n"
                 "steps:\n  - settle: {until_idle: true, max: 1m}\n")
    result = run_case(case)
    assert result.passed, render_failure(result)
    assert _reconciles(result, "poller") == 3  # 0s, 30s, 60s
    assert result.elapsed == timedelta(minutes=1)


def test_until_idle_with_a_bound_stops_when_idle_without_moving_the_clock() -> None:
    case = _case(f"name: p\ngiven: [{CM}]\nsteps:\n  - do:\n      - create: {{apiVersion: v1, kind: ConfigMap, "
                 "metadata: {name: c2, namespace: default}}\n    settle: {until_idle: true, max: 1h}\n")
    result = run_case(case)
    assert result.passed, render_failure(result)
    assert result.elapsed < timedelta(minutes=1)


def test_until_idle_alone_is_settle_true() -> None:
    case = _case(f"name: p\nbundles: [{POLLER}]\ngiven: [{CM}]\ngiven_settle: {{until_idle: true}}\n")
    result = run_case(case, budget=30)
    assert result.aborted == "hot loop"


def test_the_same_error_five_times_in_a_row_ends_the_case_with_its_traceback() -> None:
    result = run_case(_case(f"name: f\nbundles: [{FAILER}]\ngiven: [{CM}]\n"))
    assert not result.passed
    assert _reconciles(result, "failer") == 5
    report = render_failure(result)
    assert "failed 5 times in a row with the same error: RuntimeError: cannot reach the backend for c1" in report
    assert "Traceback (most recent call last)" in report
    assert "in _always_fails" in report
    assert "hot loop" not in report


def test_max_repeated_errors_is_configurable_and_zero_turns_it_off() -> None:
    result = run_case(_case(f"name: f\nbundles: [{FAILER}]\ngiven: [{CM}]\nmax_repeated_errors: 2\n"))
    assert _reconciles(result, "failer") == 2
    off = run_case(_case(f"name: f\nbundles: [{FAILER}]\ngiven: [{CM}]\nmax_repeated_errors: 0\n"), budget=40)
    assert off.aborted == "hot loop"
    assert _reconciles(off, "failer") == 40


def test_a_repeated_error_during_an_advance_ends_the_case_too() -> None:
    case = _case(f"name: f\nbundles: [{FAILER}]\nmax_repeated_errors: 3\nsteps:\n  - do:\n"
                 f"      - create: {CM}\n      - advance: 1m\n")
    result = run_case(case)
    assert "failed 3 times in a row" in render_failure(result)
    assert result.failures[0].mismatch.location == "settle.yaml:7"  # the advance


@pytest.mark.parametrize(("settle", "message"), [
    ("{max: 5m}", "`max` bounds `until_idle`"),
    ("{until_idle: false}", "`until_idle` takes true"),
    ("{for: 5m, reconciles: 3}", "settle takes one of `reconciles`, `for` or `until_idle`"),
    ("{until_idle: true, max: 5}", "is not a Go duration"),
    ("{until_idel: true}", "did you mean `until_idle`"),
])
def test_bad_settle_forms_are_load_errors(settle: str, message: str) -> None:
    for text in (f"name: x\nsteps:\n  - settle: {settle}\n", f"name: x\ngiven_settle: {settle}\n"):
        with pytest.raises(LoadError) as e:
            load_text(text, "x.yaml")
        assert message in e.value.render()


def test_old_settle_forms_still_load() -> None:
    for settle in ("true", "false", "{reconciles: 3}", "{for: 5m}"):
        assert load_text(f"name: x\nsteps:\n  - settle: {settle}\n", "x.yaml")
