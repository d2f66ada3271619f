"""The served cluster's StatefulSet controller (fakeapi.host.statefulsets): its pure parts table-driven,
then in-process on the virtual clock and over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kubernetes import client, config

from fakeapi.host.cluster import ServedCluster
from fakeapi.host.statefulsets import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    Create,
    Delete,
    complete_rolling_update,
    fnv32,
    go_json,
    parent_and_ordinal,
    plan,
    revision_data,
    revision_name,
)
from fakeapi.host.workloads import SAFE_ALPHANUMS
from fakeapi.http import serve
from fakeapi.server.apiserver import APIServer

LABELS = {"app": "db"}
NOW = datetime(2026, 1, 1, tzinfo=UTC)
T0 = "2025-12-31T23:00:00Z"


def template(image: str = "postgres:16") -> dict[str, Any]:
    return {"metadata": {"labels": dict(LABELS)}, "spec": {"containers": [{"name": "c", "image": image}]}}


def statefulset(replicas: int = 3, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "generation": 1},
            "spec": {"replicas": replicas, "serviceName": "db", "selector": {"matchLabels": dict(LABELS)},
                     "template": template(), **spec}}


def pod(ordinal: int, rev: str = "r1", *, ready: bool = True, phase: str = "Running",
        deleting: bool = False, ready_at: str = T0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"db-{ordinal}", "labels": {**LABELS, REVISION_LABEL: rev}}
    if deleting:
        meta["deletionTimestamp"] = T0
    return {"metadata": meta, "status": {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_at}]}}


@pytest.mark.parametrize(("name", "want"), [
    ("db-0", ("db", 0)), ("db-12", ("db", 12)), ("my-db-3", ("my-db", 3)), ("db", ("", -1)),
    ("db-", ("", -1)), ("db-x", ("", -1)), ("db-2147483648", ("db", -1)), ("db-2147483647", ("db", 2147483647)),
])
def test_parent_and_ordinal(name: str, want: tuple[str, int]) -> None:
    assert parent_and_ordinal(name) == want


def test_fnv1_reference_vectors_and_the_revision_name() -> None:
    assert fnv32(b"") == 0x811C9DC5
    assert fnv32(b"a") == 0x050C5D7E  # (FNV-1, not FNV-1a: multiply before the xor)
    assert fnv32(b"foobar") == 0x31F0B262
    assert go_json({"b": "<&>", "a": [1, {"d": 1, "c": "\u2028"}]}) == \
        b'{"a":[1,{"c":"\\u2028","d":1}],"b":"\\u003c\\u0026\\u003e"}'
    assert revision_data({"spec": {"x": 1}, "metadata": {}}) == \
        b'{"spec":{"template":{"$patch":"replace","metadata":{},"spec":{"x":1}}}}'
    name = revision_name("db", template())
    prefix, _, h = name.rpartition("-")
    assert prefix == "db" and set(h) <= set(SAFE_ALPHANUMS)
    assert name == revision_name("db", template()) != revision_name("db", template(), 1)
    assert name != revision_name("db", template("postgres:17"))
    assert revision_name("x" * 300, template()).startswith("x" * 223 + "-")


# (spec changes, pods, want actions, want status counts: replicas ready available current updated)
PLANS: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[Create | Delete], tuple[int, ...]]] = [
    ("ordered: makes only the first pod", {}, [], [Create(0, "r1")], (1, 0, 0, 1, 1)),
    ("ordered: the next once the last is ready", {}, [pod(0)], [Create(1, "r1")], (2, 1, 1, 2, 2)),
    ("ordered: waits for a pod not ready", {}, [pod(0, ready=False)], [], (1, 0, 0, 1, 1)),
    ("ordered: waits for minReadySeconds", {"minReadySeconds": 3600 * 2}, [pod(0)], [], (1, 1, 0, 1, 1)),
    ("ordered: minReadySeconds passed", {"minReadySeconds": 60}, [pod(0)], [Create(1, "r1")], (2, 1, 1, 2, 2)),
    ("parallel: makes every pod at once", {"podManagementPolicy": "Parallel"}, [pod(0, ready=False)],
     [Create(1, "r1"), Create(2, "r1")], (3, 0, 0, 3, 3)),
    ("scale down: the highest ordinal first, one at a time", {"replicas": 1}, [pod(0), pod(1), pod(2)],
     [Delete("db-2")], (3, 3, 3, 2, 2)),
    ("scale down: waits for the one going", {"replicas": 1}, [pod(0), pod(1), pod(2, deleting=True)],
     [], (3, 3, 3, 2, 2)),
    ("scale down parallel: all at once", {"replicas": 1, "podManagementPolicy": "Parallel"},
     [pod(0), pod(1), pod(2)], [Delete("db-2"), Delete("db-1")], (3, 3, 3, 1, 1)),
    ("a failed pod is deleted", {}, [pod(0, phase="Failed", ready=False)], [Delete("db-0")], (1, 0, 0, 1, 1)),
    ("rolling update: the highest outdated pod", {}, [pod(0, "r0"), pod(1, "r0"), pod(2, "r0")],
     [Delete("db-2")], (3, 3, 3, 2, 0)),
    ("rolling update: waits for the new one to be healthy", {}, [pod(0, "r0"), pod(1, "r0"), pod(2, ready=False)],
     [], (3, 2, 2, 2, 1)),
    ("rolling update: the partition stays", {"updateStrategy": {"type": "RollingUpdate",
                                                                 "rollingUpdate": {"partition": 2}}},
     [pod(0, "r0"), pod(1, "r0"), pod(2)], [], (3, 3, 3, 2, 1)),
    ("on delete: outdated pods stay", {"updateStrategy": {"type": "OnDelete"}},
     [pod(0, "r0"), pod(1, "r0"), pod(2, "r0")], [], (3, 3, 3, 3, 0)),
    ("ordinals.start: names from the start", {"ordinals": {"start": 5}, "replicas": 2}, [pod(5)],
     [Create(6, "r1")], (2, 1, 1, 2, 2)),
    ("ordinals.start: below the start is condemned", {"ordinals": {"start": 1}, "replicas": 2},
     [pod(0), pod(1), pod(2)], [Delete("db-0")], (3, 3, 3, 2, 2)),
]


@pytest.mark.parametrize(("spec", "pods", "actions", "counts"), [p[1:] for p in PLANS], ids=[p[0] for p in PLANS])
def test_plan(spec: dict[str, Any], pods: list[dict[str, Any]], actions: list[Create | Delete],
              counts: tuple[int, ...]) -> None:
    s = statefulset()
    s["spec"].update(spec)
    # (r0 is the current revision once pods carry it, as the controller keeps it; else r1 is both)
    current = "r0" if any(p["metadata"]["labels"][REVISION_LABEL] == "r0" for p in pods) else "r1"
    got = plan(s, pods, current, "r1", NOW)
    assert got.actions == actions
    st = got.status
    assert (st["replicas"], st["readyReplicas"], st["availableReplicas"], st["currentReplicas"],
            st["updatedReplicas"]) == counts
    assert st["currentRevision"] == current and st["updateRevision"] == "r1" and st["collisionCount"] == 0


def test_plan_wakes_when_a_pod_becomes_available_and_does_nothing_while_deleting() -> None:
    s = statefulset(minReadySeconds=30)
    got = plan(s, [pod(0, ready_at="2026-01-01T00:00:00Z")], "r1", "r1", NOW)
    assert got.actions == [] and got.wake == NOW + timedelta(seconds=30)
    s["metadata"]["deletionTimestamp"] = T0
    assert plan(s, [], "r1", "r1", NOW).actions == []


def test_complete_rolling_update() -> None:
    status = {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2, "currentReplicas": 0,
              "currentRevision": "r0", "updateRevision": "r1"}
    complete_rolling_update(statefulset(), status)
    assert status["currentRevision"] == "r1" and status["currentReplicas"] == 2
    status = {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2, "currentReplicas": 0,
              "currentRevision": "r0", "updateRevision": "r1"}
    complete_rolling_update(statefulset(), status)
    assert status["currentRevision"] == "r0"
    on_delete = statefulset(updateStrategy={"type": "OnDelete"})
    status = {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "currentReplicas": 0,
              "currentRevision": "r0", "updateRevision": "r1"}
    complete_rolling_update(on_delete, status)
    assert status["currentRevision"] == "r0"


def _names(api: APIServer) -> list[str]:
    return sorted(p["metadata"]["name"] for p in api.list("Pod", "default")["items"]
                  if not p["metadata"].get("deletionTimestamp"))


def _created(api: APIServer, spec: dict[str, Any]) -> tuple[ServedCluster, dict[str, Any]]:
    cluster = ServedCluster(api)
    assert cluster.host.kubelet is not None
    cluster.host.kubelet.start_delay = timedelta(seconds=5)
    body = statefulset(**spec)
    del body["metadata"]["generation"]
    return cluster, api.create(body, namespace="default")


def test_ordered_ready_makes_one_pod_at_a_time_with_identity_and_storage() -> None:
    api = APIServer()
    claim = {"metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    cluster, sset = _created(api, {"volumeClaimTemplates": [claim]})
    seen = []
    for _ in range(4):
        cluster.settle()
        seen.append(_names(api))
        cluster.advance(timedelta(seconds=6))
    assert seen == [["db-0"], ["db-0", "db-1"], ["db-0", "db-1", "db-2"], ["db-0", "db-1", "db-2"]]
    status = api.get("StatefulSet", "db", "default")["status"]
    rev = revision_name("db", api.get("StatefulSet", "db", "default")["spec"]["template"])
    assert status == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                      "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": rev, "updateRevision": rev,
                      "collisionCount": 0}
    p = api.get("Pod", "db-1", "default")
    assert p["metadata"]["labels"] == {**LABELS, POD_NAME_LABEL: "db-1", POD_INDEX_LABEL: "1", REVISION_LABEL: rev}
    [ref] = p["metadata"]["ownerReferences"]
    assert ref["uid"] == sset["metadata"]["uid"] and ref["kind"] == "StatefulSet" and ref["controller"] is True
    assert p["spec"]["hostname"] == "db-1" and p["spec"]["subdomain"] == "db"
    assert p["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}
    pvcs = {c["metadata"]["name"]: c for c in api.list("PersistentVolumeClaim", "default")["items"]}
    assert sorted(pvcs) == ["data-db-0", "data-db-1", "data-db-2"]
    assert pvcs["data-db-0"]["metadata"]["labels"] == LABELS


def test_scale_down_goes_from_the_highest_ordinal_and_keeps_the_claims() -> None:
    api = APIServer()
    claim = {"metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    cluster, _ = _created(api, {"volumeClaimTemplates": [claim], "podManagementPolicy": "Parallel"})
    cluster.settle()
    cluster.advance(timedelta(seconds=6))
    assert _names(api) == ["db-0", "db-1", "db-2"]
    api.patch("StatefulSet", "db", {"spec": {"replicas": 1, "podManagementPolicy": "Parallel"}},
              namespace="default", api_version="apps/v1")
    cluster.settle()
    assert _names(api) == ["db-0"]
    assert api.get("StatefulSet", "db", "default")["status"]["replicas"] == 1
    assert len(api.list("PersistentVolumeClaim", "default")["items"]) == 3  # (claims are retained)


def test_rolling_update_replaces_pods_from_the_highest_ordinal() -> None:
    api = APIServer()
    cluster, _ = _created(api, {})
    for _ in range(4):
        cluster.settle()
        cluster.advance(timedelta(seconds=6))
    old = api.get("StatefulSet", "db", "default")["status"]["currentRevision"]
    api.patch("StatefulSet", "db", {"spec": {"template": template("postgres:17")}}, namespace="default",
              api_version="apps/v1")
    new = revision_name("db", api.get("StatefulSet", "db", "default")["spec"]["template"])
    assert new != old
    order = []
    for _ in range(12):
        cluster.settle()
        for p in api.list("Pod", "default")["items"]:
            if p["metadata"]["labels"][REVISION_LABEL] == new and p["metadata"]["name"] not in order:
                order.append(p["metadata"]["name"])
        cluster.advance(timedelta(seconds=6))
    assert order == ["db-2", "db-1", "db-0"]
    status = api.get("StatefulSet", "db", "default")["status"]
    assert status["currentRevision"] == status["updateRevision"] == new
    assert status["updatedReplicas"] == status["currentReplicas"] == 3
    assert {p["spec"]["containers"][0]["image"] for p in api.list("Pod", "default")["items"]} == {"postgres:17"}


def test_deleting_the_set_collects_its_pods() -> None:
    api = APIServer()
    cluster, _ = _created(api, {"podManagementPolicy": "Parallel"})
    cluster.settle()
    cluster.advance(timedelta(seconds=6))
    api.delete("StatefulSet", "db", "default", api_version="apps/v1")
    for _ in range(3):
        cluster.settle()
        cluster.advance(timedelta(seconds=1))
    assert api.list("Pod", "default")["items"] == []


def test_statefulset_over_http_with_the_official_client() -> None:
    api = APIServer()
    with serve(api, cluster=True) as ep:
        assert ep.cluster is not None
        apps = client.AppsV1Api(config.new_client_from_config(config_file=ep.kubeconfig_path))
        body = statefulset(replicas=2)
        del body["metadata"]["generation"]
        apps.create_namespaced_stateful_set("default", body)
        for _ in range(5):
            assert ep.cluster.wait_idle(10.0)
        got = apps.read_namespaced_stateful_set("db", "default")
        assert got.status.replicas == 2 and got.status.ready_replicas == 2 and got.status.available_replicas == 2
        assert got.status.current_revision == got.status.update_revision
        core = client.CoreV1Api(apps.api_client)
        names = sorted(p.metadata.name for p in core.list_namespaced_pod("default").items)
        assert names == ["db-0", "db-1"]


def test_revision_name_matches_upstreams_compatibility_data() -> None:
    """Upstream's pkg/controller/statefulset/testdata/compatibility_{set,revision}_1.34.0.json: a set
    ``test`` whose defaulted template is below has the revision ``test-776999688b``. Created here from
    the template as a client writes it, the server's defaults and the controller give the same name."""
    stored = {"metadata": {"annotations": {"test": "value"}, "labels": {"app": "foo"}},
              "spec": {"containers": [{"image": "test", "imagePullPolicy": "Always", "name": "test",
                                       "resources": {}, "terminationMessagePath": "/dev/termination-log",
                                       "terminationMessagePolicy": "File"}],
                       "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                       "securityContext": {}, "terminationGracePeriodSeconds": 30}}
    assert revision_name("test", stored) == "test-776999688b"
    api = APIServer()
    cluster = ServedCluster(api)
    api.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "test"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "foo"}}, "template": {
                    "metadata": {"annotations": {"test": "value"}, "labels": {"app": "foo"}},
                    "spec": {"containers": [{"name": "test", "image": "test"}]}}}}, namespace="default")
    cluster.settle()
    got = api.get("StatefulSet", "test", "default")
    assert got["spec"]["template"] == stored
    assert got["status"]["currentRevision"] == got["status"]["updateRevision"] == "test-776999688b"
    assert api.get("Pod", "test-0", "default")["metadata"]["labels"][REVISION_LABEL] == "test-776999688b"
