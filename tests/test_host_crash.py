"""Crashes: fault rules crash a reconcile before/after a call; the controller restarts from a fresh list."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

from support import make_api, widget

from fakeapi.host import Context, Host, Request, Result
from fakeapi.machinery.errors import ApiError, is_already_exists
from fakeapi.server.apiserver import APIServer


class TwoWrites:
    """Creates a ConfigMap for the widget, then writes the widget's status."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, ctx: Context, req: Request) -> None:
        self.calls += 1
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": req.name, "namespace": req.namespace}}
        try:
            ctx.client.create(cm)
        except ApiError as e:
            if not is_already_exists(e):
                raise
        ctx.client.patch("Widget", req.name, {"status": {"phase": "Ready"}}, namespace=req.namespace,
                         subresource="status")


def hosted(api: APIServer) -> tuple[Host, TwoWrites]:
    host = Host(api)
    fn = TwoWrites()
    host.controller("widgets").for_("Widget").complete(fn)
    return host, fn


def exists(api: APIServer, kind: str, name: str) -> bool:
    try:
        api.get(kind, name, "ns")
    except ApiError:
        return False
    return True


def test_crash_before_a_call_leaves_the_state_of_the_calls_before_it() -> None:
    api = make_api()
    host, _ = hosted(api)
    api.faults.add({"on": {"verb": "patch", "kind": "Widget", "actor": "widgets"}, "crash": "before"})
    api.create(widget("w1"))
    host.step()  # the GC actor and kubelet have nothing to do: this is the reconcile
    rec = api.trace.reconciles[-1]
    assert rec.result == "crash"
    assert exists(api, "ConfigMap", "w1")  # the create before the crash happened
    assert "status" not in api.get("Widget", "w1", "ns")  # the patch did not
    host.run_until_idle()
    assert api.get("Widget", "w1", "ns")["status"] == {"phase": "Ready"}
    assert host.controllers["widgets"].restarts == 1


def test_crash_after_a_call_keeps_that_calls_effect() -> None:
    api = make_api()
    host, _ = hosted(api)
    api.faults.add({"on": {"verb": "create", "kind": "ConfigMap", "actor": "widgets"}, "crash": "after"})
    api.create(widget("w1"))
    host.step()
    assert api.trace.reconciles[-1].result == "crash"
    assert exists(api, "ConfigMap", "w1")
    assert "status" not in api.get("Widget", "w1", "ns")
    host.run_until_idle()
    assert api.get("Widget", "w1", "ns")["status"] == {"phase": "Ready"}


def test_crash_before_the_first_call_changes_nothing() -> None:
    api = make_api()
    host, _ = hosted(api)
    api.faults.add({"on": {"verb": "create", "kind": "ConfigMap"}, "crash": "before"})
    api.create(widget("w1"))
    rv = api.resource_version
    host.step()
    assert api.trace.reconciles[-1].result == "crash"
    assert api.resource_version == rv
    assert not exists(api, "ConfigMap", "w1")


def test_a_crash_is_noted_and_the_controller_relists_everything() -> None:
    api = make_api()
    seen: list[str] = []
    host = Host(api)
    host.controller("widgets").for_("Widget").complete(lambda ctx, req: seen.append(req.name))
    for n in ("a", "b", "c"):
        api.create(widget(n))
    host.run_until_idle()
    assert sorted(seen) == ["a", "b", "c"]
    seen.clear()
    mark = api.trace.mark()
    host.crash("widgets")
    host.run_until_idle()
    assert sorted(seen) == ["a", "b", "c"]  # every object comes back as an initial ADDED event
    lists = [c for c in api.trace.calls_since(mark) if c.verb == "list"]
    assert [(c.actor, c.kind) for c in lists] == [("widgets/informer", "Widget")]
    assert any("crashed" in getattr(e, "text", "") for e in api.trace.entries if e.seq > mark)


def test_a_crash_loses_the_queue_and_the_backoff() -> None:
    api = make_api()
    times: list[datetime] = []

    def reconcile(ctx: Context, req: Request) -> Result | None:
        times.append(ctx.now())
        if len(times) == 4:
            # crash in the fourth attempt: the back-off (5, 10, 20ms so far) and the queue are lost
            api.faults.add({"on": {"verb": "get", "actor": "widgets"}, "crash": "before"})
            ctx.client.get("Widget", req.name, req.namespace)
        if len(times) < 6:
            raise RuntimeError("boom")
        return None

    host = Host(api)
    host.controller("widgets").for_("Widget").complete(reconcile)
    api.create(widget("w1"))
    host.run_until_idle()
    d = [b - a for a, b in itertools.pairwise(times)]
    ms = timedelta(milliseconds=1)
    # after the crash: reconciled at once (fresh list), then back-off from 5ms again
    assert d == [5 * ms, 10 * ms, 20 * ms, timedelta(0), 5 * ms]
    assert [r.result for r in api.trace.reconciles][3] == "crash"


def test_a_crash_loses_pending_requeue_afters() -> None:
    api = make_api()
    times: list[datetime] = []

    def reconcile(ctx: Context, req: Request) -> Result:
        times.append(ctx.now())
        return Result(requeue_after=timedelta(hours=1)) if len(times) == 1 else Result()

    host = Host(api)
    host.controller("widgets").for_("Widget").complete(reconcile)
    api.create(widget("w1"))
    host.step()
    host.crash("widgets")
    host.run_until_idle()
    # reconciled again from the fresh list, and never an hour later
    assert times == [times[0], times[0]]


def test_crash_all_restarts_every_controller() -> None:
    api = make_api()
    host = Host(api)
    counts: dict[str, int] = {"a": 0, "b": 0}

    def counter(name: str) -> Any:
        def fn(ctx: Context, req: Request) -> None:
            counts[name] += 1
        return fn

    host.controller("a").for_("Widget").complete(counter("a"))
    host.controller("b").for_("Widget").complete(counter("b"))
    api.create(widget("w1"))
    host.run_until_idle()
    host.crash("all")
    host.run_until_idle()
    assert counts == {"a": 2, "b": 2}
    assert [c.restarts for c in host.controllers.values()] == [1, 1]
