"""Informer caches: reads through the cache, selectors, stale reads, read faults, relists."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support import configmap, make_api, widget

from fakeapi.host import Context, Host, Informer, Request
from fakeapi.machinery.errors import ApiError, is_not_found
from fakeapi.server.apiserver import APIServer


class Reader:
    """A reconcile that runs ``fn(ctx, req)`` and keeps what it returns."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.results: list[Any] = []

    def __call__(self, ctx: Context, req: Request) -> None:
        self.results.append(self.fn(ctx, req))


def host_with(api: APIServer, fn: Any, name: str = "widgets") -> tuple[Host, Reader]:
    host = Host(api)
    reader = Reader(fn)
    host.controller(name).for_("Widget").complete(reader)
    return host, reader


def test_cache_reads_are_copies_decoded_like_a_go_client() -> None:
    api = make_api()

    def read(ctx: Context, req: Request) -> dict[str, Any]:
        w = ctx.client.get("Widget", req.name, req.namespace)
        w["spec"]["replicas"] = 99  # mutating what was read never touches the cache
        return ctx.client.get("Widget", req.name, req.namespace)

    host, reader = host_with(api, read)
    api.create(widget("w1", spec={"replicas": 2}))
    host.run_until_idle()
    got = reader.results[0]
    assert got["spec"]["replicas"] == 2
    assert got["apiVersion"] == "example.com/v1" and got["kind"] == "Widget"
    # reads through the cache make no API call
    assert not [c for c in api.trace.calls if c.actor == "widgets"]


def test_cache_get_of_a_missing_object_is_the_servers_not_found() -> None:
    api = make_api()

    def read(ctx: Context, req: Request) -> ApiError:
        with pytest.raises(ApiError) as info:
            ctx.client.get("Widget", "missing", req.namespace)
        return info.value

    host, reader = host_with(api, read)
    api.create(widget("w1"))
    host.run_until_idle()
    err = reader.results[0]
    assert is_not_found(err)
    assert err.status == _server_error(api, lambda: api.get("Widget", "missing", "ns")).status


def _server_error(api: APIServer, fn: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn()
    return info.value


def test_cache_lists_with_namespaces_and_selectors() -> None:
    api = make_api()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    api.create(configmap("a", labels={"tier": "web"}, data={"k": "1"}))
    api.create(configmap("b", labels={"tier": "db"}))
    api.create(configmap("c", ns="other", labels={"tier": "web"}))

    def read(ctx: Context, req: Request) -> dict[str, list[str]]:
        def names(items: list[dict[str, Any]]) -> list[str]:
            return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]

        return {
            "ns": names(ctx.client.list("ConfigMap", "ns")),
            "all web": names(ctx.client.list("ConfigMap", labels={"tier": "web"})),
            "not web": names(ctx.client.list("ConfigMap", "ns", labels="tier!=web")),
            "by name": names(ctx.client.list("ConfigMap", fields="metadata.name=a")),
            "by map": names(ctx.client.list("ConfigMap", fields={"metadata.namespace": "other"})),
        }

    host, reader = host_with(api, read)
    api.create(widget("w1"))
    host.run_until_idle()
    lists = reader.results[0]
    assert lists["ns"] == ["ns/a", "ns/b", "ns/kube-root-ca.crt"] or lists["ns"] == ["ns/a", "ns/b"]
    assert lists["all web"] == ["ns/a", "other/c"]
    assert "ns/a" not in lists["not web"] and "ns/b" in lists["not web"]
    assert lists["by name"] == ["ns/a"]
    assert lists["by map"] == ["other/c"]


def test_reads_of_an_unwatched_kind_start_an_informer_on_first_use() -> None:
    api = make_api()
    api.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
                "data": {"k": "dg=="}})
    host, reader = host_with(api, lambda ctx, req: ctx.client.get("Secret", "s", "ns")["data"])
    api.create(widget("w1"))
    host.run_until_idle()
    assert reader.results == [{"k": "dg=="}]
    ctrl = host.controllers["widgets"]
    assert ("v1", "Secret") in ctrl.informers
    # the informer's list is not counted as a call of the reconcile
    assert all(not r.calls for r in api.trace.reconciles)


def test_the_cache_lags_behind_the_controllers_own_writes_until_the_reconcile_ends() -> None:
    api = make_api()

    def write_then_read(ctx: Context, req: Request) -> tuple[int, int]:
        w = ctx.client.get("Widget", req.name, req.namespace)
        if w["spec"].get("replicas", 1) >= 5:
            return (0, 0)
        ctx.client.patch("Widget", req.name, {"spec": {"replicas": 5}}, namespace=req.namespace)
        cached = ctx.client.get("Widget", req.name, req.namespace)["spec"]["replicas"]
        fresh = ctx.api_reader.get("Widget", req.name, req.namespace)["spec"]["replicas"]
        return (cached, fresh)

    host, reader = host_with(api, write_then_read)
    api.create(widget("w1", spec={"replicas": 1}))
    host.run_until_idle()
    assert reader.results == [(1, 5), (0, 0)]


def test_stale_get_serves_the_object_as_before_its_last_change() -> None:
    api = make_api()
    host, reader = host_with(api, lambda ctx, req: ctx.client.get("Widget", req.name, req.namespace)["spec"])
    api.create(widget("w1", spec={"replicas": 1}))
    host.run_until_idle()
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    api.faults.add({"on": {"verb": "get", "kind": "Widget", "actor": "widgets"}, "stale": True})
    host.run_until_idle()
    assert [s["replicas"] for s in reader.results] == [1, 1]
    assert any("stale read: get Widget ns/w1" in getattr(e, "text", "") for e in api.trace.entries)
    # the rule fired once; the next read is fresh
    api.patch("Widget", "w1", {"spec": {"replicas": 3}}, namespace="ns")
    host.run_until_idle()
    assert reader.results[-1]["replicas"] == 3


def test_stale_get_of_a_just_created_object_is_not_found() -> None:
    api = make_api()

    def read(ctx: Context, req: Request) -> str:
        try:
            ctx.client.get("Widget", req.name, req.namespace)
        except ApiError as e:
            return e.reason
        return "found"

    host, reader = host_with(api, read)
    host.run_until_idle()
    api.faults.add({"on": {"verb": "get", "kind": "Widget"}, "stale": True})
    api.create(widget("w1"))
    host.run_until_idle()
    assert reader.results == ["NotFound"]


def test_uncached_reads_are_never_stale() -> None:
    api = make_api()
    host, reader = host_with(api, lambda ctx, req: ctx.api_reader.get("Widget", req.name, req.namespace)["spec"])
    api.create(widget("w1", spec={"replicas": 1}))
    host.run_until_idle()
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    api.faults.add({"on": {"kind": "Widget"}, "stale": True, "times": "always"})
    host.run_until_idle()
    assert reader.results[-1]["replicas"] == 2


def test_stale_list_is_one_change_behind() -> None:
    api = make_api()

    def read(ctx: Context, req: Request) -> list[tuple[str, int]]:
        return [(o["metadata"]["name"], o["spec"].get("replicas", 0)) for o in ctx.client.list("Widget", "ns")]

    host, reader = host_with(api, read)
    api.create(widget("w1", spec={"replicas": 1}))
    api.create(widget("w2", spec={"replicas": 1}))
    host.run_until_idle()
    api.patch("Widget", "w1", {"spec": {"replicas": 2}}, namespace="ns")
    api.create(widget("w3", spec={"replicas": 1}))
    api.faults.add({"on": {"verb": "list", "kind": "Widget"}, "stale": True, "times": 1})
    host.run_until_idle()
    stale = reader.results[2]
    # the newest change (w3's creation) is not there yet; the older change to w1 is
    assert stale == [("w1", 2), ("w2", 1)]
    assert reader.results[3] == [("w1", 2), ("w2", 1), ("w3", 1)]


def test_error_faults_on_cached_reads_fail_the_read() -> None:
    api = make_api()
    host, reader = host_with(api, lambda ctx, req: ctx.client.get("Widget", req.name, req.namespace)["metadata"]["name"])
    api.faults.add({"on": {"verb": "get", "kind": "Widget", "actor": "widgets"}, "error": "InternalError"})
    api.create(widget("w1"))
    host.run_until_idle()
    assert [r.result for r in api.trace.reconciles] == ["error: Internal error occurred: injected fault", "done"]
    assert reader.results == ["w1"]


def test_an_informer_relists_after_410_and_sends_the_differences() -> None:
    api = make_api(watch_history=2)
    kind = api.kinds.require("ConfigMap")
    events: list[str] = []

    class Sink:
        def on_create(self, obj: dict[str, Any]) -> None:
            events.append(f"create {obj['metadata']['name']}")

        def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
            events.append(f"update {new['metadata']['name']}")

        def on_delete(self, obj: dict[str, Any]) -> None:
            events.append(f"delete {obj['metadata']['name']}")

    api.create(configmap("keep"))
    api.create(configmap("gone"))
    inf = Informer(api, kind, "test/informer")
    inf.handlers.append(Sink())
    inf.start()
    start_rv = inf.resource_version
    assert sorted(events) == ["create gone", "create keep"]
    events.clear()
    # the watch falls out of the history while disconnected: replace it by one resuming from an old RV
    inf.watch.close()
    api.delete("ConfigMap", "gone", "ns")
    for i in range(30):
        api.create(configmap(f"new{i}"))
    inf.watch = api.watch("ConfigMap", resource_version=start_rv, actor="test/informer")
    inf.deliver()
    assert inf.relists == 1
    assert "delete gone" in events and "update keep" in events
    assert sorted(e for e in events if e.startswith("create")) == sorted(f"create new{i}" for i in range(30))
    assert sorted(n for _, n in inf.objects) == sorted(["keep", *[f"new{i}" for i in range(30)]])
    api.create(configmap("after"))
    inf.deliver()
    assert ("ns", "after") in inf.objects


# -- kinds read from the server (with_options(disable_cache_for=...)) -----------------------------


def _uncached_host(api: APIServer, fn: Any, kinds: list[str]) -> tuple[Host, Reader]:
    host = Host(api)
    reader = Reader(fn)
    host.controller("widgets").for_("Widget").with_options(disable_cache_for=kinds).complete(reader)
    return host, reader


def test_a_kind_left_out_of_the_cache_is_read_from_the_server_with_requests_in_the_trace() -> None:
    # controller-runtime's client.CacheOptions.DisableFor: get, a missing object's get and list of that
    # kind are API requests (in the trace), no informer lists or watches it; other kinds stay cached.
    api = make_api()
    api.create(configmap("a", labels={"tier": "web"}, data={"k": "1"}))

    def read(ctx: Context, req: Request) -> tuple[str, Any, list[str], str]:
        cm = ctx.client.get("ConfigMap", "a", "ns")
        missing = ctx.client.find("ConfigMap", "nope", "ns")
        listed = [o["metadata"]["name"] for o in ctx.client.list("ConfigMap", "ns", labels={"tier": "web"})]
        own = ctx.client.get("Widget", req.name, req.namespace)
        return cm["data"]["k"], missing, listed, own["metadata"]["name"]

    host, reader = _uncached_host(api, read, ["ConfigMap"])
    api.create(widget("w1"))
    host.run_until_idle()
    assert reader.results == [("1", None, ["a"], "w1")]
    calls = [(c.verb, c.kind, c.code) for c in api.trace.calls if c.actor.startswith("widgets")]
    assert ("get", "ConfigMap", 200) in calls and ("get", "ConfigMap", 404) in calls
    assert ("list", "ConfigMap", 200) in calls
    assert not [c for c in calls if c[1] == "ConfigMap" and c[0] == "watch"]
    assert not [c for c in calls if c[1] == "Widget" and c[0] == "get"]  # (the cache answers)


def test_a_stale_rule_does_not_touch_a_kind_read_from_the_server() -> None:
    # A stale rule is about cache reads: a read from the server is never stale.
    api = make_api()
    api.create(configmap("a", data={"k": "1"}))

    def read(ctx: Context, req: Request) -> str:
        return str(ctx.client.get("ConfigMap", "a", "ns")["data"]["k"])

    host = Host(api)
    cached, uncached = Reader(read), Reader(read)
    host.controller("cached").for_("Widget").complete(cached)
    host.controller("uncached").for_("Widget").with_options(disable_cache_for=["ConfigMap"]).complete(uncached)
    api.create(widget("w1"))
    host.run_until_idle()  # (the cached controller's informer has seen the ConfigMap as first stored)
    api.patch("ConfigMap", "a", {"data": {"k": "2"}}, namespace="ns")
    api.faults.add({"on": {"verb": "get", "kind": "ConfigMap"}, "stale": True, "times": "always"})
    api.patch("Widget", "w1", {"metadata": {"labels": {"again": "yes"}}}, namespace="ns")
    host.run_until_idle()
    assert cached.results == ["1", "1"] and uncached.results == ["1", "2"]


@pytest.mark.parametrize(("kinds", "error"), [
    (["NoSuchKind"], ApiError),  # (as for_ of a kind the server does not know)
    ("ConfigMap", TypeError),
])
def test_disable_cache_for_takes_kind_names_the_server_knows(kinds: Any, error: type[Exception]) -> None:
    api = make_api()
    with pytest.raises(error):
        Host(api).controller("widgets").for_("Widget").with_options(disable_cache_for=kinds).complete(Reader(
            lambda ctx, req: None))


def test_informers_never_resync_however_far_the_clock_moves() -> None:
    # docs/HOST.md: client-go's periodic resync (controller-runtime's SyncPeriod) is not modelled
    api = make_api()
    host, reader = host_with(api, lambda ctx, req: req.name)
    api.create(widget("w1"))
    host.run_until_idle()
    assert reader.results == ["w1"]
    start = api.clock.now()
    host.run_for("24h")
    assert api.clock.now() - start == timedelta(hours=24)
    assert reader.results == ["w1"]
    events = sum(inf.events for ctrl in host.controllers.values() for inf in ctrl.informer_list)
    assert events == 1
