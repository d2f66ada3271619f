"""A served fakeapi is a cluster (issue 25): controllers, a node and kube-apiserver's answers, over HTTP.

Every test serves its own server on port 0 with ``cluster=True`` and waits for
the cluster's loop with ``endpoint.cluster.wait_idle()`` (a bounded wait on a
condition, never a sleep). The clock is the virtual one unless a test says
otherwise: it moves only by ``cluster.advance``.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client import ApiException
from support import with_bytecode_cache

from fakeapi.host.cluster import ServedCluster
from fakeapi.http import Endpoint, serve
from fakeapi.registry.core.admission import TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX
from fakeapi.server.apiserver import APIServer
from fakeapi.server.clock import DEFAULT_START

KUBECTL = shutil.which("kubectl")
WAIT = 10.0  # seconds: the bound of every wait in this file (none comes near it)


@pytest.fixture
def served() -> Iterator[tuple[APIServer, Endpoint]]:
    api = APIServer()
    with serve(api, cluster=True) as ep:
        yield api, ep


def idle(ep: Endpoint) -> None:
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT), "the cluster loop did not settle"


def core(ep: Endpoint) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=ep.kubeconfig_path))


def raw(ep: Endpoint, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    """One request with http.client: status and the body's bytes as sent."""
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def owned_config_map(name: str, owner: dict[str, Any], *, block: bool = True) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": meta["uid"],
        "blockOwnerDeletion": block}]}}


# ------------------------------------------------------------------ controllers


def test_namespace_deletion_completes(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    v1 = core(ep)
    v1.create_namespace({"metadata": {"name": "team"}})
    v1.create_namespaced_config_map("team", {"metadata": {"name": "c"}})
    idle(ep)
    v1.delete_namespace("team")
    idle(ep)
    with pytest.raises(ApiException) as e:
        v1.read_namespace("team")
    assert e.value.status == 404
    assert any(c.actor == "namespace-controller" for c in api.trace.calls)


def test_foreground_orphan_and_background_cascades(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = core(ep)
    for policy in ("Foreground", "Background", "Orphan"):
        owner = v1.create_namespaced_config_map("default", {"metadata": {"name": f"owner-{policy.lower()}"}})
        dep = f"dep-{policy.lower()}"
        v1.create_namespaced_config_map("default", owned_config_map(dep, owner.to_dict()))
        idle(ep)
        v1.delete_namespaced_config_map(owner.metadata.name, "default", propagation_policy=policy)
        idle(ep)
        with pytest.raises(ApiException):
            v1.read_namespaced_config_map(owner.metadata.name, "default")
        if policy == "Orphan":
            left = v1.read_namespaced_config_map(dep, "default")
            assert left.metadata.owner_references is None
        else:
            with pytest.raises(ApiException) as e:
                v1.read_namespaced_config_map(dep, "default")
            assert e.value.status == 404


def test_pods_are_scheduled_and_run_on_the_registered_node(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = core(ep)
    v1.create_namespaced_pod("default", {"metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    idle(ep)
    pod = v1.read_namespaced_pod("p", "default")
    assert pod.status.phase == "Running" and pod.spec.node_name == "fakeapi-node"
    assert {c.type: c.status for c in pod.status.conditions}["Ready"] == "True"
    node = v1.read_node("fakeapi-node")
    assert {c.type: c.status for c in node.status.conditions} == {
        "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False", "Ready": "True"}
    assert node.status.capacity["pods"] == "110" and node.status.allocatable == node.status.capacity
    v1.delete_namespaced_pod("p", "default")
    idle(ep)
    assert v1.list_namespaced_pod("default").items == []


def test_every_namespace_gets_its_service_account_and_root_ca(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = core(ep)
    v1.create_namespace({"metadata": {"name": "fresh"}})
    idle(ep)
    assert [s.metadata.name for s in v1.list_namespaced_service_account("fresh").items] == ["default"]
    ca = v1.read_namespaced_config_map("kube-root-ca.crt", "fresh").data["ca.crt"]
    assert ca.startswith("-----BEGIN CERTIFICATE-----")
    v1.delete_namespaced_service_account("default", "fresh")
    idle(ep)
    assert v1.read_namespaced_service_account("default", "fresh").metadata.name == "default"


def test_the_kubernetes_service_exists(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    svc = core(ep).read_namespaced_service("kubernetes", "default")
    assert svc.spec.cluster_ip == "10.96.0.1" and svc.spec.ports[0].port == 443
    assert svc.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}


def test_advance_moves_the_virtual_clock_only_when_asked(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    assert ep.cluster is not None
    idle(ep)
    assert api.clock.now() == DEFAULT_START
    ep.cluster.advance("90s")
    assert api.clock.now() == DEFAULT_START + timedelta(seconds=90)


def test_a_wall_clock_cluster_follows_wall_time_and_refuses_advance() -> None:
    api = APIServer()
    cluster = ServedCluster(api, wall_clock=True)
    cluster.settle()
    assert api.clock.now() > DEFAULT_START  # (the machine's date is past the virtual start)
    with pytest.raises(ValueError, match="wall time"):
        cluster.advance("1s")


# ------------------------------------------------------------------ answer bodies


def test_json_bodies_end_with_a_newline(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, body = raw(ep, "GET", "/api/v1/namespaces/default")
    assert code == 200 and body.endswith(b"}\n") and body.count(b"\n") == 1
    code, body = raw(ep, "GET", "/api/v1/namespaces/default/configmaps/none")
    assert code == 404 and body.endswith(b"}\n")
    code, body = raw(ep, "GET", "/api/v1")
    assert code == 200 and body.endswith(b"}\n")


def test_delete_answers_the_object_for_services_and_claims(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    raw(ep, "POST", "/api/v1/namespaces/default/services",
        {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})
    code, body = raw(ep, "DELETE", "/api/v1/namespaces/default/services/web")
    assert code == 200 and json.loads(body)["kind"] == "Service"
    raw(ep, "POST", "/api/v1/namespaces/default/persistentvolumeclaims",
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}})
    code, body = raw(ep, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data")
    assert code == 200 and json.loads(body)["kind"] == "PersistentVolumeClaim"
    raw(ep, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    code, body = raw(ep, "DELETE", "/api/v1/namespaces/default/configmaps/c")
    assert code == 200 and json.loads(body)["kind"] == "Status"


def test_secret_data_decodes_base64_as_go_does(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    wrapped = base64.encodebytes(b"x" * 100).decode()  # line-wrapped at 76 characters, as `base64` prints
    assert "\n" in wrapped.strip()
    code, body = raw(ep, "POST", "/api/v1/namespaces/default/secrets",
                     {"metadata": {"name": "s"}, "data": {"k": wrapped, "crlf": "aGVs\r\nbG8="}})
    assert code == 201, body
    data = json.loads(body)["data"]
    assert data == {"k": base64.b64encode(b"x" * 100).decode(), "crlf": "aGVsbG8="}
    code, body = raw(ep, "POST", "/api/v1/namespaces/default/secrets",
                     {"metadata": {"name": "bad"}, "data": {"k": "aGVs\nbG8"}})
    assert code == 400 and b"illegal base64 data at input byte 5" in body  # padding is still required


def test_pods_get_the_admission_defaults(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, body = raw(ep, "POST", "/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}, "spec": {
        "initContainers": [{"name": "i", "image": "busybox"}], "containers": [{"name": "c", "image": "busybox"}]}})
    assert code == 201, body
    spec = json.loads(body)["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    [volume] = spec["volumes"]
    name = volume["name"]
    assert name.startswith(TOKEN_VOLUME_PREFIX) and len(name) == len(TOKEN_VOLUME_PREFIX) + 5
    assert volume["projected"]["defaultMode"] == 420
    assert [next(iter(s)) for s in volume["projected"]["sources"]] == ["serviceAccountToken", "configMap",
                                                                        "downwardAPI"]
    for c in (*spec["initContainers"], *spec["containers"]):
        assert c["volumeMounts"] == [{"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
    code, body = raw(ep, "POST", "/api/v1/namespaces/default/pods", {"metadata": {"name": "q"}, "spec": {
        "automountServiceAccountToken": False, "serviceAccountName": "robot",
        "tolerations": [{"operator": "Exists"}], "containers": [{"name": "c", "image": "busybox"}]}})
    spec = json.loads(body)["spec"]
    assert code == 201 and spec["serviceAccountName"] == "robot" and "volumes" not in spec
    assert spec["tolerations"] == [{"operator": "Exists"}]


def test_an_in_process_server_has_no_admission_plugins() -> None:
    api = APIServer()
    pod = api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert "tolerations" not in pod["spec"] and "volumes" not in pod["spec"]


def test_discovery_has_categories_and_short_names(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    core_list = {r["name"]: r for r in json.loads(raw(ep, "GET", "/api/v1")[1])["resources"]}
    assert core_list["pods"]["categories"] == ["all"] and core_list["pods"]["shortNames"] == ["po"]
    assert core_list["replicationcontrollers"]["shortNames"] == ["rc"]
    assert "categories" not in core_list["configmaps"]
    apps = {r["name"]: r for r in json.loads(raw(ep, "GET", "/apis/apps/v1")[1])["resources"]}
    assert apps["deployments"]["categories"] == ["all"] and apps["deployments"]["shortNames"] == ["deploy"]
    crds = json.loads(raw(ep, "GET", "/apis/apiextensions.k8s.io/v1")[1])["resources"]
    assert crds[0]["categories"] == ["api-extensions"]


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/namespaces/default/replicationcontrollers",
     {"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"app": "a"}},
                                                        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
    ("/apis/apiregistration.k8s.io/v1/apiservices",
     {"metadata": {"name": "v1.example.com"}, "spec": {"group": "example.com", "version": "v1",
                                                       "groupPriorityMinimum": 100, "versionPriority": 10}}),
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests",
     {"metadata": {"name": "csr"}, "spec": {"request": "aGVsbG8=", "usages": ["client auth"],
                                            "signerName": "kubernetes.io/kube-apiserver-client"}}),
    ("/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
     {"metadata": {"name": "cap"}, "storageClassName": "standard"}),
])
def test_the_kinds_the_suites_use_are_served(served: tuple[APIServer, Endpoint], path: str,
                                              body: dict[str, Any]) -> None:
    _, ep = served
    code, out = raw(ep, "POST", path, body)
    assert code == 201, out
    code, got = raw(ep, "GET", f"{path}/{body['metadata']['name']}")
    assert code == 200 and json.loads(got)["metadata"]["uid"] == json.loads(out)["metadata"]["uid"]


def test_a_replication_controller_is_defaulted_from_its_template(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    _, out = raw(ep, "POST", "/api/v1/namespaces/default/replicationcontrollers", {"metadata": {"name": "rc"}, "spec": {
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    rc = json.loads(out)
    assert rc["spec"]["selector"] == {"app": "a"} and rc["metadata"]["labels"] == {"app": "a"}
    assert rc["spec"]["replicas"] == 1
    assert rc["spec"]["template"]["spec"]["restartPolicy"] == "Always"


# ------------------------------------------------------------------ TLS


def test_tls_serves_https_with_a_trusted_ca_and_a_client_certificate() -> None:
    api = APIServer()
    with serve(api, tls=True) as ep:
        assert ep.url.startswith("https://127.0.0.1:") and ep.ca_pem is not None
        with open(ep.kubeconfig_path, encoding="utf-8") as f:
            kc = yaml.safe_load(f)
        cluster, user = kc["clusters"][0]["cluster"], kc["users"][0]["user"]
        assert "insecure-skip-tls-verify" not in cluster
        assert base64.b64decode(cluster["certificate-authority-data"]) == ep.ca_pem
        assert user["token"] and user["client-certificate-data"] and user["client-key-data"]
        # the official client, verifying the server against the CA
        v1 = core(ep)
        assert v1.read_namespace("default").metadata.name == "default"
        # the standard library, with the CA and nothing else
        ctx = ssl.create_default_context(cadata=ep.ca_pem.decode())
        conn = http.client.HTTPSConnection(ep.host, ep.port, context=ctx, timeout=WAIT)
        conn.request("GET", "/version")
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["major"] == "1"
        conn.close()
        # a plain HTTP request to the TLS port is refused, and the server keeps serving
        code: int | None
        plain = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
        try:
            plain.request("GET", "/version")
            code = plain.getresponse().status
        except (OSError, http.client.HTTPException):
            code = None
        finally:
            plain.close()
        assert code != 200
        assert v1.read_namespace("default").metadata.name == "default"


def test_api_serve_takes_tls_and_plain_http_stays_the_default() -> None:
    api = APIServer()
    with api.serve(tls=True) as secure, api.serve() as plain:
        assert secure.url.startswith("https://") and plain.url.startswith("http://")
        assert core(plain).read_namespace("default").metadata.name == "default"
        assert core(secure).read_namespace("default").metadata.name == "default"


# ------------------------------------------------------------------ kubectl


def kubectl(ep: Endpoint, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", ep.kubeconfig_path, "--request-timeout=10s", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_delete_namespace_and_cascades_finish() -> None:
    api = APIServer()
    with serve(api, cluster=True, tls=True) as ep:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
        apply = subprocess.run([KUBECTL, "--kubeconfig", ep.kubeconfig_path, "apply", "-f", "-"],
                               input=json.dumps(ns), capture_output=True, text=True, timeout=60)
        assert apply.returncode == 0, apply.stderr
        owner = api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o", "namespace": "team"}})
        api.create({**owned_config_map("d", owner), "metadata": {
            **owned_config_map("d", owner)["metadata"], "namespace": "team"}})
        idle(ep)
        out = kubectl(ep, "-n", "team", "delete", "configmap", "o", "--cascade=foreground", "--timeout=30s")
        assert out.returncode == 0, out.stderr
        assert [c["metadata"]["name"] for c in api.list("ConfigMap", "team")["items"]] == ["kube-root-ca.crt"]
        out = kubectl(ep, "delete", "namespace", "team", "--timeout=30s")
        assert out.returncode == 0, out.stderr
        assert kubectl(ep, "get", "namespace", "team").returncode != 0
        out = kubectl(ep, "get", "all", "-n", "default", "-o", "name")
        assert out.returncode == 0 and "service/kubernetes" in out.stdout, out.stderr


def test_the_control_plane_runs_as_mirror_pods_in_kube_system(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    idle(ep)
    v1 = core(ep)
    pods = {p.metadata.name: p for p in v1.list_namespaced_pod("kube-system").items}
    assert set(pods) == {f"{c}-fakeapi-node" for c in ("etcd", "kube-apiserver", "kube-controller-manager",
                                                         "kube-scheduler")}
    apiserver = pods["kube-apiserver-fakeapi-node"]
    assert apiserver.status.phase == "Running" and apiserver.spec.priority == 2000001000
    assert apiserver.metadata.owner_references[0].kind == "Node"
    assert "kubernetes.io/config.mirror" in apiserver.metadata.annotations
    assert apiserver.spec.volumes is None  # (mirror pods get no service account token)


def test_a_deleted_pod_reports_its_stop_before_it_goes(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    v1 = core(ep)
    v1.create_namespaced_pod("default", {"metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    idle(ep)
    w = api.watch("Pod", "default")
    v1.delete_namespaced_pod("p", "default", grace_period_seconds=10)
    idle(ep)
    events = w.poll()
    w.close()
    stop = next(e.object for e in events if e.type == "MODIFIED" and e.object["status"]["phase"] == "Succeeded")
    assert stop["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert {c["type"]: c["status"] for c in stop["status"]["conditions"]}["Ready"] == "False"
    assert events[-1].type == "DELETED"


def test_fakeapi_serve_tls_runs_a_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    env = with_bytecode_cache({**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")]))})
    proc = subprocess.Popen([sys.executable, "-m", "fakeapi.cli", "serve", "--tls", "--port", "0",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("fakeapi: serving https://127.0.0.1:"), first
        v1 = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
        v1.create_namespace({"metadata": {"name": "team"}})
        w = watch_namespaces(v1)
        assert w, "the namespace never went"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def watch_namespaces(v1: client.CoreV1Api) -> bool:
    """Delete ``team`` and watch (bounded) until the served namespace controller has removed it."""
    from kubernetes import watch

    rv = v1.list_namespace().metadata.resource_version
    v1.delete_namespace("team")
    for event in watch.Watch().stream(v1.list_namespace, resource_version=rv, timeout_seconds=10):
        if event["type"] == "DELETED" and event["object"].metadata.name == "team":
            return True
    return False


def test_with_a_token_a_client_certificate_or_a_service_account_token_also_authenticates(tmp_path: Path) -> None:
    """As kube-apiserver's authenticators: the static token, a client certificate the CA signed, or a
    ServiceAccount token the server issued; any other bearer token is 401."""
    api = APIServer()
    with serve(api, tls=True, token="s3cret", cluster=True) as ep:
        assert ep.ca_pem is not None
        idle(ep)
        v1 = core(ep)
        sa_token = v1.create_namespaced_service_account_token("default", "default", {"spec": {}}).status.token
        kc = yaml.safe_load(Path(ep.kubeconfig_path).read_text())
        user = kc["users"][0]["user"]
        cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))

        def status(token: str | None, with_cert: bool) -> int:
            assert ep.ca_pem is not None
            ctx = ssl.create_default_context(cadata=ep.ca_pem.decode())
            if with_cert:
                ctx.load_cert_chain(str(cert), str(key))
            conn = http.client.HTTPSConnection(ep.host, ep.port, context=ctx, timeout=WAIT)
            try:
                conn.request("GET", "/api/v1/namespaces", headers={"Authorization": f"Bearer {token}"} if token else {})
                resp = conn.getresponse()
                resp.read()
                return resp.status
            finally:
                conn.close()

        assert status("s3cret", False) == 200
        assert status(None, True) == 200
        assert status(sa_token, False) == 200
        assert status("abc123", False) == 401
        assert status(sa_token[:-4] + "AAAA", False) == 401
        assert status(None, False) == 401


def test_a_token_review_of_the_served_token_names_the_administrator() -> None:
    api = APIServer()
    with serve(api, token="s3cret") as ep:
        code, body = raw_with(ep, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                               "spec": {"token": "s3cret"}}, "s3cret")
        assert code == 201, body
        status = json.loads(body)["status"]
        assert status["authenticated"] is True and status["user"]["username"] == "kubernetes-admin"


def raw_with(ep: Endpoint, method: str, path: str, body: Any, token: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        conn.request(method, path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()
