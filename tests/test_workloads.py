"""The served cluster's ReplicaSet and Deployment controllers (fakeapi.host.workloads), in-process
on the virtual clock and over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubernetes import client, config

from fakeapi.host.cluster import ServedCluster
from fakeapi.host.workloads import HASH_LABEL, SAFE_ALPHANUMS, fnv32a, safe_encode, template_hash
from fakeapi.http import serve
from fakeapi.server.apiserver import APIServer

LABELS = {"app": "web"}


def template(image: str = "nginx:1") -> dict[str, Any]:
    return {"metadata": {"labels": dict(LABELS)}, "spec": {"containers": [{"name": "c", "image": image}]}}


def deployment(replicas: int = 3, image: str = "nginx:1") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)}, "template": template(image)}}


def pods(api: APIServer) -> list[dict[str, Any]]:
    return [p for p in api.list("Pod", "default")["items"] if not p["metadata"].get("deletionTimestamp")]


def test_fnv32a_and_safe_encoding() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C  # (the FNV-1a reference vector)
    assert safe_encode("0123") == "".join(SAFE_ALPHANUMS[ord(c) % 27] for c in "0123")
    h = template_hash(template())
    assert h == template_hash(template()) and h != template_hash(template(), 1)
    assert set(h) <= set(SAFE_ALPHANUMS)


def test_replicaset_makes_owned_pods_and_counts_them() -> None:
    api = APIServer()
    cluster = ServedCluster(api)
    rs = api.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                     "spec": {"replicas": 2, "selector": {"matchLabels": dict(LABELS)}, "template": template()}},
                    namespace="default")
    cluster.settle()
    got = pods(api)
    assert len(got) == 2
    for p in got:
        assert p["metadata"]["labels"] == LABELS
        assert p["metadata"]["generateName"] == "rs-"
        [ref] = p["metadata"]["ownerReferences"]
        assert ref["uid"] == rs["metadata"]["uid"] and ref["controller"] is True
        assert p["status"]["phase"] == "Running"
    status = api.get("ReplicaSet", "rs", "default")["status"]
    assert status == {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
                      "observedGeneration": 1}
    api.patch("ReplicaSet", "rs", {"spec": {"replicas": 1}}, namespace="default")
    cluster.settle()
    assert len(pods(api)) == 1
    assert api.get("ReplicaSet", "rs", "default")["status"]["replicas"] == 1


def test_replicaset_min_ready_seconds_waits_on_the_clock() -> None:
    api = APIServer()
    cluster = ServedCluster(api)
    api.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                "spec": {"replicas": 1, "minReadySeconds": 30, "selector": {"matchLabels": dict(LABELS)},
                         "template": template()}}, namespace="default")
    cluster.settle()
    status = api.get("ReplicaSet", "rs", "default")["status"]
    assert status["readyReplicas"] == 1 and "availableReplicas" not in status
    cluster.advance(timedelta(seconds=31))
    assert api.get("ReplicaSet", "rs", "default")["status"]["availableReplicas"] == 1


def test_deployment_gets_a_hashed_replicaset_and_becomes_available() -> None:
    api = APIServer()
    cluster = ServedCluster(api)
    d = api.create(deployment(), namespace="default")
    cluster.settle()
    [rs] = api.list("ReplicaSet", "default")["items"]
    h = template_hash(d["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["metadata"]["labels"][HASH_LABEL] == h
    assert rs["spec"]["selector"]["matchLabels"] == {**LABELS, HASH_LABEL: h}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    assert all(p["metadata"]["labels"][HASH_LABEL] == h for p in pods(api))
    status = api.get("Deployment", "web", "default")["status"]
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"],
            status["availableReplicas"]) == (3, 3, 3, 3)
    conds = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conds == {"Available": ("True", "MinimumReplicasAvailable"),
                     "Progressing": ("True", "NewReplicaSetAvailable")}


def test_rolling_update_never_exceeds_surge_and_ends_on_the_new_template() -> None:
    api = APIServer()
    cluster = ServedCluster(api)
    d = deployment(replicas=4)
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    d["spec"]["minReadySeconds"] = 5
    api.create(d, namespace="default")
    cluster.settle()
    cluster.advance(timedelta(seconds=6))
    api.patch("Deployment", "web", {"spec": {"template": template("nginx:2")}}, namespace="default")
    for _ in range(20):
        cluster.settle()
        live = pods(api)
        assert len(live) <= 5  # replicas + maxSurge
        ready = [p for p in live if any(c["type"] == "Ready" and c["status"] == "True"
                                        for c in p["status"].get("conditions", []))]
        assert len(ready) >= 4  # maxUnavailable 0
        cluster.advance(timedelta(seconds=6))
    images = sorted(p["spec"]["containers"][0]["image"] for p in pods(api))
    assert images == ["nginx:2"] * 4
    old, new = sorted(api.list("ReplicaSet", "default")["items"], key=lambda r: r["metadata"]["creationTimestamp"])
    assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == 4
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    status = api.get("Deployment", "web", "default")["status"]
    assert status["updatedReplicas"] == 4 and status["availableReplicas"] == 4


def test_deployment_over_http_with_the_official_client() -> None:
    api = APIServer()
    with serve(api, cluster=True) as ep:
        assert ep.cluster is not None
        apps = client.AppsV1Api(config.new_client_from_config(config_file=ep.kubeconfig_path))
        apps.create_namespaced_deployment("default", deployment(replicas=2))
        for _ in range(5):
            assert ep.cluster.wait_idle(10.0)
        got = apps.read_namespaced_deployment("web", "default")
        assert got.status.ready_replicas == 2 and got.status.available_replicas == 2
        [rs] = apps.list_namespaced_replica_set("default").items
        assert rs.status.ready_replicas == 2
