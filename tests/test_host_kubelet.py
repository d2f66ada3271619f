"""The kubelet actor: start after a delay, container exits and pod phases, deletion confirmation."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support import make_api

from fakeapi.host import Host, Kubelet
from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer


def pod(name: str = "p1", *, containers: tuple[str, ...] = ("main",), restart_policy: str | None = None,
        node: str | None = None, **meta: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "namespace": "ns", **meta}
    spec: dict[str, Any] = {"containers": [{"name": c, "image": f"img/{c}:1"} for c in containers]}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec}


def setup(delay: timedelta = timedelta(0)) -> tuple[APIServer, Host, Kubelet]:
    api = make_api()
    host = Host(api)
    assert host.kubelet is not None
    host.kubelet.start_delay = delay
    return api, host, host.kubelet


def conditions(p: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in p["status"].get("conditions") or []}


def test_a_new_pod_runs_after_the_start_delay() -> None:
    api, host, kubelet = setup(timedelta(seconds=5))
    api.create(pod())
    start = api.clock.now()
    host.run_for("4s")
    assert (api.get("Pod", "p1", "ns").get("status") or {}).get("phase") != "Running"
    host.run_until_idle()
    assert api.clock.now() == start + timedelta(seconds=5)
    p = api.get("Pod", "p1", "ns")
    st = p["status"]
    assert st["phase"] == "Running"
    assert conditions(p) == {"PodScheduled": "True", "Initialized": "True", "ContainersReady": "True",
                             "Ready": "True"}
    times = {c["type"]: c["lastTransitionTime"] for c in st["conditions"]}
    # scheduled (bound to the node) when the kubelet first saw it; running after the delay
    assert times.pop("PodScheduled") == "2026-01-01T00:00:00Z"
    assert set(times.values()) == {"2026-01-01T00:00:05Z"}
    assert p["spec"]["nodeName"] == "fakeapi-node"
    [cs] = st["containerStatuses"]
    assert cs["name"] == "main" and cs["image"] == "img/main:1"
    assert cs["ready"] is True and cs["started"] is True and cs["restartCount"] == 0
    assert cs["state"] == {"running": {"startedAt": "2026-01-01T00:00:05Z"}}
    assert kubelet.pods_started == [("ns", "p1")]
    [call] = [c for c in api.trace.calls if c.actor == "kubelet" and c.verb == "patch"]
    assert call.subresource == "status"


def test_started_hooks_can_end_a_container_right_away() -> None:
    api, host, kubelet = setup()

    def reject(p: dict[str, Any]) -> None:
        kubelet.exit(p["metadata"]["namespace"], p["metadata"]["name"], "main", 7)

    kubelet.on_started.append(reject)
    api.create(pod(restart_policy="Never"))
    host.run_until_idle()
    st = api.get("Pod", "p1", "ns")["status"]
    assert st["phase"] == "Failed"
    term = st["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 7 and term["reason"] == "Error"


@pytest.mark.parametrize(
    ("policy", "codes", "phase"),
    [
        ("Never", {"a": 0, "b": 0}, "Succeeded"),
        ("Never", {"a": 0, "b": 1}, "Failed"),
        ("Never", {"a": 3}, "Running"),  # b still runs
        ("OnFailure", {"a": 0, "b": 0}, "Succeeded"),
    ],
)
def test_exit_codes_give_the_kubelets_phase(policy: str, codes: dict[str, int], phase: str) -> None:
    api, host, kubelet = setup()
    api.create(pod(containers=("a", "b"), restart_policy=policy))
    host.run_until_idle()
    for c, code in codes.items():
        kubelet.exit("ns", "p1", c, code)
    host.run_until_idle()
    p = api.get("Pod", "p1", "ns")
    assert p["status"]["phase"] == phase
    assert conditions(p)["Ready"] == "False"
    ready = next(c for c in p["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == ("PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady")
    by_name = {s["name"]: s for s in p["status"]["containerStatuses"]}
    for c, code in codes.items():
        term = by_name[c]["state"]["terminated"]
        assert term["exitCode"] == code
        assert term["reason"] == ("Completed" if code == 0 else "Error")
        assert term["startedAt"] == "2026-01-01T00:00:00Z" and "finishedAt" in term
        assert by_name[c]["ready"] is False


def test_restart_policy_always_restarts_the_container() -> None:
    api, host, kubelet = setup()
    api.create(pod())  # restartPolicy defaults to Always
    host.run_until_idle()
    api.clock.advance("1m")
    kubelet.exit("ns", "p1", "main", 1)
    p = api.get("Pod", "p1", "ns")
    cs = p["status"]["containerStatuses"][0]
    assert p["status"]["phase"] == "Running"
    assert cs["restartCount"] == 1 and cs["ready"] is True
    assert cs["state"] == {"running": {"startedAt": "2026-01-01T00:01:00Z"}}
    assert cs["lastState"]["terminated"]["exitCode"] == 1


def test_exit_of_unknown_pods_or_containers_is_refused() -> None:
    api, host, kubelet = setup()
    api.create(pod(restart_policy="Never"))
    host.run_until_idle()
    with pytest.raises(ValueError, match="no pod"):
        kubelet.exit("ns", "nope", "main", 0)
    with pytest.raises(ValueError, match="no container"):
        kubelet.exit("ns", "p1", "sidecar", 0)
    kubelet.exit("ns", "p1", "main", 0)
    with pytest.raises(ValueError, match="not running"):
        kubelet.exit("ns", "p1", "main", 0)


def test_a_graceful_deletion_is_confirmed_by_the_kubelet() -> None:
    api, host, _ = setup()
    api.create(pod(node="node-1"))
    host.run_until_idle()
    out = api.delete("Pod", "p1", "ns")
    assert out["metadata"].get("deletionTimestamp")  # the server keeps it for the kubelet
    host.run_until_idle()
    with pytest.raises(ApiError):
        api.get("Pod", "p1", "ns")
    [call] = [c for c in api.trace.calls if c.actor == "kubelet" and c.verb == "delete"]
    assert call.code == 200


def test_a_pod_with_finalizers_is_deleted_once_they_are_gone() -> None:
    api, host, _ = setup()
    api.create(pod(node="node-1", finalizers=["example.com/keep"]))
    host.run_until_idle()
    api.delete("Pod", "p1", "ns")
    host.run_until_idle()
    assert api.get("Pod", "p1", "ns")["metadata"]["deletionTimestamp"]
    api.patch("Pod", "p1", {"metadata": {"finalizers": None}}, namespace="ns")
    host.run_until_idle()
    with pytest.raises(ApiError):
        api.get("Pod", "p1", "ns")


def test_a_pod_deleted_before_its_start_is_never_started() -> None:
    api, host, kubelet = setup(timedelta(seconds=10))
    api.create(pod())
    host.run_for("1s")
    api.delete("Pod", "p1", "ns")
    host.run_until_idle()
    assert kubelet.pods_started == []
    assert not [c for c in api.trace.calls if c.actor == "kubelet" and c.verb == "patch"]


def test_pods_start_in_the_order_they_appeared_each_after_its_own_delay() -> None:
    api, host, kubelet = setup(timedelta(seconds=5))
    start = api.clock.now()
    api.create(pod("b"))
    host.run_for("2s")
    api.create(pod("a"))
    times: dict[str, timedelta] = {}
    kubelet.on_started.append(lambda p: times.__setitem__(p["metadata"]["name"], api.clock.now() - start))
    host.run_until_idle()
    assert kubelet.pods_started == [("ns", "b"), ("ns", "a")]
    assert times == {"b": timedelta(seconds=5), "a": timedelta(seconds=7)}


def test_a_scheduled_pod_is_deleted_gracefully_and_confirmed_by_the_kubelet() -> None:
    api, host, kubelet = setup()
    api.create(pod())
    host.run_until_idle()
    assert api.get("Pod", "p1", "ns")["spec"]["nodeName"] == kubelet.node_name
    out = api.delete("Pod", "p1", "ns")  # graceful: the server keeps a bound pod for its kubelet
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30
    assert out["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:30Z"
    host.run_until_idle()
    with pytest.raises(ApiError) as err:
        api.get("Pod", "p1", "ns")
    assert err.value.code == 404
    deletes = [c for c in api.trace.calls if c.verb == "delete" and c.kind == "Pod"]
    assert [(c.actor, c.code) for c in deletes] == [("user", 200), ("kubelet", 200)]
    assert [c.actor for c in api.trace.calls if c.subresource == "binding"] == ["default-scheduler"]


def test_started_hooks_get_the_stored_pod_itself() -> None:
    """No copy per start: the hook is handed the snapshot the status write stored (read it, never mutate it)."""
    api, host, kubelet = setup()
    seen: list[dict[str, Any]] = []
    kubelet.on_started.append(seen.append)
    api.create(pod())
    host.run_until_idle()
    stored = api.get("Pod", "p1", "ns", shared=True)
    assert len(seen) == 1 and seen[0] is stored  # nothing wrote the pod after it started
    assert seen[0]["status"]["phase"] == "Running"
