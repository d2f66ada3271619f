"""The work-queue rules as a hosted controller sees them: dedupe, re-reconcile, back-off, requeue-after."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from support import make_api, widget

from fakeapi.host import Context, Host, Request, Result
from fakeapi.server.apiserver import APIServer

MS = timedelta(milliseconds=1)


def deltas(times: list[datetime]) -> list[timedelta]:
    return [b - a for a, b in itertools.pairwise(times)]


def test_many_events_before_a_reconcile_give_one_reconcile() -> None:
    api = make_api()
    host = Host(api)
    seen: list[Request] = []
    host.controller("widgets").for_("Widget").complete(lambda ctx, req: seen.append(req))
    api.create(widget("w1"))
    for i in range(3):
        api.patch("Widget", "w1", {"spec": {"replicas": i + 2}}, namespace="ns")
    api.create(widget("w2"))
    host.run_until_idle()
    assert sorted(seen) == [Request("ns", "w1"), Request("ns", "w2")]


def test_a_key_that_gets_events_while_reconciled_is_reconciled_again() -> None:
    api = make_api()
    host = Host(api)
    seen: list[int] = []

    def reconcile(ctx: Context, req: Request) -> None:
        w = ctx.client.get("Widget", req.name, req.namespace)
        seen.append(w["spec"].get("replicas", 0))
        if len(seen) == 1:
            # someone else changes the object while this reconcile runs
            api.patch("Widget", req.name, {"spec": {"replicas": 7}}, namespace=req.namespace)

    host.controller("widgets").for_("Widget").complete(reconcile)
    api.create(widget("w1", spec={"replicas": 1}))
    stats = host.run_until_idle()
    assert seen == [1, 7]
    assert stats.reconciles == 2


class Flaky:
    """A reconcile that fails ``failures`` times, then succeeds; records when it ran."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.times: list[datetime] = []

    def __call__(self, ctx: Context, req: Request) -> None:
        self.times.append(ctx.now())
        if len(self.times) <= self.failures:
            raise RuntimeError(f"attempt {len(self.times)} failed")


def hosted(api: APIServer, fn: object) -> Host:
    host = Host(api)
    host.controller("widgets").for_("Widget").complete(fn)  # type: ignore[arg-type]
    return host


def test_errors_back_off_exponentially_from_5ms() -> None:
    api = make_api()
    flaky = Flaky(failures=6)
    host = hosted(api, flaky)
    api.create(widget("w1"))
    stats = host.run_until_idle()
    assert deltas(flaky.times) == [5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS, 160 * MS]
    assert stats.errors == 6 and stats.reconciles == 7
    results = [r.result for r in api.trace.reconciles]
    assert results == ["error: RuntimeError: attempt 1 failed", *[f"error: RuntimeError: attempt {i} failed"
                                                                   for i in range(2, 7)], "done"]


def test_backoff_is_capped_at_1000s() -> None:
    api = make_api()
    flaky = Flaky(failures=21)
    host = hosted(api, flaky)
    api.create(widget("w1"))
    host.run_until_idle()
    d = deltas(flaky.times)
    assert d[17] == timedelta(seconds=655.36)
    assert d[18:] == [timedelta(seconds=1000)] * 3


def test_a_success_resets_the_backoff() -> None:
    api = make_api()
    times: list[datetime] = []
    outcomes = iter(["fail", "fail", "fail", "ok", "fail", "ok"])

    def reconcile(ctx: Context, req: Request) -> None:
        times.append(ctx.now())
        if next(outcomes) == "fail":
            raise RuntimeError("boom")

    host = hosted(api, reconcile)
    api.create(widget("w1"))
    host.run_until_idle()
    assert deltas(times) == [5 * MS, 10 * MS, 20 * MS]
    api.clock.advance(timedelta(seconds=1))
    api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
    host.run_until_idle()
    # the failure after the success starts again at 5ms, not 40ms
    assert deltas(times)[3:] == [timedelta(seconds=1), 5 * MS]


def test_requeue_is_rate_limited() -> None:
    api = make_api()
    times: list[datetime] = []

    def reconcile(ctx: Context, req: Request) -> Result:
        times.append(ctx.now())
        return Result(requeue=len(times) < 4)

    host = hosted(api, reconcile)
    api.create(widget("w1"))
    host.run_until_idle()
    assert deltas(times) == [5 * MS, 10 * MS, 20 * MS]
    assert [r.result for r in api.trace.reconciles] == ["requeue", "requeue", "requeue", "done"]


def test_requeue_after_waits_on_the_virtual_clock_and_forgets_the_backoff_first() -> None:
    api = make_api()
    times: list[datetime] = []

    def reconcile(ctx: Context, req: Request) -> Result | None:
        times.append(ctx.now())
        n = len(times)
        if n <= 2:
            raise RuntimeError("boom")  # back-off 5ms, 10ms
        if n == 3:
            return Result(requeue_after=timedelta(seconds=30), requeue=True)  # requeue_after wins
        if n == 4:
            raise RuntimeError("boom again")  # back-off starts over: 5ms
        return None

    host = hosted(api, reconcile)
    api.create(widget("w1"))
    start = api.clock.now()
    host.run_until_idle()
    assert deltas(times) == [5 * MS, 10 * MS, timedelta(seconds=30), 5 * MS]
    assert api.clock.now() == start + 15 * MS + timedelta(seconds=30) + 5 * MS
    assert api.trace.reconciles[2].result == "requeue after 30s"


def test_a_requeue_after_still_fires_when_an_event_reconciled_the_key_meanwhile() -> None:
    api = make_api()
    times: list[datetime] = []

    def reconcile(ctx: Context, req: Request) -> Result | None:
        times.append(ctx.now())
        return Result(requeue_after=timedelta(minutes=1)) if len(times) == 1 else None

    host = hosted(api, reconcile)
    api.create(widget("w1"))
    host.run_for(timedelta(seconds=10))
    api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
    host.run_until_idle()
    assert deltas(times) == [timedelta(seconds=10), timedelta(seconds=50)]


def test_terminal_state_after_run_until_idle_has_nothing_due() -> None:
    api = make_api()
    host = hosted(api, lambda ctx, req: None)
    api.create(widget("w1"))
    host.run_until_idle()
    assert host.pending() == []
    assert host.step() is False
