"""Subresources and review resources over HTTP (issue 25): tokens, reviews, logs, eviction, scale, CSR approval.

Each test serves its own cluster on port 0 (``cluster=True``, the virtual
clock) and talks to it with the official ``kubernetes`` client or raw JSON;
waits go through ``endpoint.cluster.wait_idle()`` (bounded, no sleeping).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client import ApiException
from support import widget_crd

from fakeapi.http import Endpoint, serve
from fakeapi.http.subresources import ALLOW_REASON
from fakeapi.http.tls import ADMIN_USER
from fakeapi.server.apiserver import APIServer

WAIT = 10.0


@pytest.fixture
def served() -> Iterator[tuple[APIServer, Endpoint]]:
    api = APIServer()
    with serve(api, cluster=True) as ep:
        assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
        yield api, ep


def api_client(ep: Endpoint) -> client.ApiClient:
    return config.new_client_from_config(config_file=ep.kubeconfig_path)


def raw(ep: Endpoint, method: str, path: str, body: Any = None, *, token: str | None = None,
        content_type: str = "application/json") -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=WAIT)
    try:
        headers = {"Content-Type": content_type}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


def pod(name: str, labels: dict[str, str] | None = None, containers: tuple[str, ...] = ("c",)) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}


# ------------------------------------------------------------------ tokens and reviews


def test_token_request_gives_a_token_token_review_accepts(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = client.CoreV1Api(api_client(ep))
    tr = v1.create_namespaced_service_account_token("default", "default", {"spec": {"expirationSeconds": 600}})
    assert tr.status.token.count(".") == 2 and tr.spec.expiration_seconds == 600
    auth = client.AuthenticationV1Api(api_client(ep))
    review = auth.create_token_review({"spec": {"token": tr.status.token}})
    assert review.status.authenticated is True
    assert review.status.user.username == "system:serviceaccount:default:default"
    assert "system:serviceaccounts:default" in review.status.user.groups
    sa_uid = v1.read_namespaced_service_account("default", "default").metadata.uid
    assert review.status.user.uid == sa_uid
    # not a token of this server, a wrong audience, an expired one (virtual time), a deleted account
    assert not auth.create_token_review({"spec": {"token": "a.b.c"}}).status.authenticated
    other = auth.create_token_review({"spec": {"token": tr.status.token, "audiences": ["vault"]}}).status
    assert not other.authenticated and "audiences" in other.error
    assert ep.cluster is not None
    ep.cluster.advance("601s")
    assert not auth.create_token_review({"spec": {"token": tr.status.token}}).status.authenticated
    fresh = v1.create_namespaced_service_account_token("default", "default", {"spec": {}}).status.token
    v1.delete_namespaced_service_account("default", "default")
    assert not auth.create_token_review({"spec": {"token": fresh}}).status.authenticated


def test_token_request_errors(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = client.CoreV1Api(api_client(ep))
    with pytest.raises(ApiException) as e:
        v1.create_namespaced_service_account_token("nobody", "default", {"spec": {}})
    assert e.value.status == 404
    with pytest.raises(ApiException) as e:
        v1.create_namespaced_service_account_token("default", "default", {"spec": {"expirationSeconds": 60}})
    assert e.value.status == 422 and "less than 10 minutes" in json.loads(e.value.body)["message"]


def test_access_reviews_allow_everything_and_say_so(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    authz = client.AuthorizationV1Api(api_client(ep))
    ssar = authz.create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert ssar.status.allowed is True and ssar.status.reason == ALLOW_REASON
    sar = authz.create_subject_access_review({"spec": {"user": "someone", "nonResourceAttributes": {
        "path": "/healthz", "verb": "get"}}})
    assert sar.status.allowed is True
    local = authz.create_namespaced_local_subject_access_review("default", {"spec": {
        "user": "someone", "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}}})
    assert local.status.allowed is True and local.metadata.namespace == "default"
    rules = authz.create_self_subject_rules_review({"spec": {"namespace": "default"}})
    assert rules.status.resource_rules[0].verbs == ["*"] and rules.status.incomplete is False
    code, _, _ = raw(ep, "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert code == 405


def test_self_subject_review_names_the_caller(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    code, _, body = raw(ep, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert code == 201 and json.loads(body)["status"]["userInfo"]["username"] == ADMIN_USER
    token = client.CoreV1Api(api_client(ep)).create_namespaced_service_account_token(
        "default", "default", {"spec": {}}).status.token
    code, _, body = raw(ep, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {}, token=token)
    assert json.loads(body)["status"]["userInfo"]["username"] == "system:serviceaccount:default:default"


def test_discovery_lists_reviews_and_subresources(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    groups = {g["name"] for g in json.loads(raw(ep, "GET", "/apis")[2])["groups"]}
    assert {"authentication.k8s.io", "authorization.k8s.io"} <= groups
    authn = {r["name"]: r for r in json.loads(raw(ep, "GET", "/apis/authentication.k8s.io/v1")[2])["resources"]}
    assert authn["tokenreviews"]["verbs"] == ["create"] and not authn["tokenreviews"]["namespaced"]
    core = {r["name"]: r for r in json.loads(raw(ep, "GET", "/api/v1")[2])["resources"]}
    assert core["pods/log"]["verbs"] == ["get"] and core["pods/eviction"]["kind"] == "Eviction"
    assert core["serviceaccounts/token"]["group"] == "authentication.k8s.io"
    assert core["replicationcontrollers/scale"]["kind"] == "Scale"
    apps = {r["name"] for r in json.loads(raw(ep, "GET", "/apis/apps/v1")[2])["resources"]}
    assert {"deployments/scale", "replicasets/scale", "statefulsets/scale"} <= apps


# ------------------------------------------------------------------ logs


def test_pod_log_is_what_the_kubelet_containers_wrote(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = client.CoreV1Api(api_client(ep))
    v1.create_namespaced_pod("default", pod("p", containers=("a", "b")))
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
    kubelet = ep.cluster.host.kubelet
    assert kubelet is not None
    kubelet.write_log("default", "p", "a", "one\ntwo\n")
    kubelet.write_log("default", "p", "a", "three")
    assert v1.read_namespaced_pod_log("p", "default", container="a") == "one\ntwo\nthree\n"
    assert v1.read_namespaced_pod_log("p", "default", container="a", tail_lines=1) == "three\n"
    stamped = v1.read_namespaced_pod_log("p", "default", container="a", tail_lines=1, timestamps=True)
    assert stamped == "2026-01-01T00:00:00.000000000Z three\n"
    assert v1.read_namespaced_pod_log("p", "default", container="b") == ""
    code, ctype, body = raw(ep, "GET", "/api/v1/namespaces/default/pods/p/log")
    assert code == 400 and b"a container name must be specified for pod p, choose one of: [a b]" in body
    code, _, body = raw(ep, "GET", "/api/v1/namespaces/default/pods/p/log?container=z")
    assert code == 400 and b"container z is not valid for pod p" in body
    code, ctype, _ = raw(ep, "GET", "/api/v1/namespaces/default/pods/p/log?container=a")
    assert code == 200 and ctype == "text/plain"
    v1.delete_namespaced_pod("p", "default")
    assert ep.cluster.wait_idle(WAIT) and kubelet.read_log("default", "p", "a") == []


# ------------------------------------------------------------------ eviction


def test_eviction_honours_pod_disruption_budgets(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    v1 = client.CoreV1Api(api_client(ep))
    for name in ("a", "b"):
        v1.create_namespaced_pod("default", pod(name, {"app": "web"}))
    client.PolicyV1Api(api_client(ep)).create_namespaced_pod_disruption_budget("default", {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}
    code, _, body = raw(ep, "POST", "/api/v1/namespaces/default/pods/a/eviction", eviction)
    assert code == 201 and json.loads(body)["status"] == "Success"
    assert ep.cluster.wait_idle(WAIT)
    code, _, body = raw(ep, "POST", "/api/v1/namespaces/default/pods/b/eviction",
                        {**eviction, "metadata": {"name": "b"}})
    assert code == 429, body
    status = json.loads(body)
    assert status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert status["details"]["causes"] == [{"reason": "DisruptionBudget", "message":
                                            "The disruption budget web needs 1 healthy pods and has 1 currently"}]
    assert [p.metadata.name for p in v1.list_namespaced_pod("default").items] == ["b"]
    code, _, _ = raw(ep, "POST", "/api/v1/namespaces/default/pods/none/eviction",
                     {**eviction, "metadata": {"name": "none"}})
    assert code == 404


# ------------------------------------------------------------------ scale


def deployment(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                                                 "template": {"metadata": {"labels": {"app": name}},
                                                              "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def test_scale_of_workloads(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    apps = client.AppsV1Api(api_client(ep))
    apps.create_namespaced_deployment("default", deployment("web"))
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 1 and scale.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 4
    apps.create_namespaced_stateful_set("default", {**deployment("db"), "spec": {**deployment("db")["spec"],
                                                                                  "serviceName": "db"}})
    # (the cluster's StatefulSet controller writes the new set's status: a replace carrying the
    # resourceVersion read before that write is a conflict, as on a real cluster; read after it)
    assert ep.cluster is not None and ep.cluster.wait_idle(WAIT)
    current = apps.read_namespaced_stateful_set_scale("db", "default")
    current.spec.replicas = 2
    apps.replace_namespaced_stateful_set_scale("db", "default", current)
    assert apps.read_namespaced_stateful_set("db", "default").spec.replicas == 2
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert e.value.status == 422
    stale = apps.read_namespaced_stateful_set_scale("db", "default")
    stale.metadata.resource_version = "1"
    with pytest.raises(ApiException) as e:
        apps.replace_namespaced_stateful_set_scale("db", "default", stale)
    assert e.value.status == 409
    code, _, _ = raw(ep, "GET", "/api/v1/namespaces/default/configmaps/x/scale")
    assert code == 404


def test_scale_of_a_custom_resource_with_the_scale_subresource(served: tuple[APIServer, Endpoint]) -> None:
    api, ep = served
    crd = widget_crd()
    version = crd["spec"]["versions"][0]
    version["subresources"] = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                       "statusReplicasPath": ".status.replicas",
                                                       "labelSelectorPath": ".status.selector"}}
    schema = version["schema"]["openAPIV3Schema"]
    schema["properties"].setdefault("status", {"type": "object"})
    schema["properties"]["status"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    api.register_crd(crd)
    api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                "spec": {"replicas": 2}})
    path = "/apis/example.com/v1/namespaces/default/widgets/w/scale"
    code, _, body = raw(ep, "GET", path)
    assert code == 200 and json.loads(body)["spec"] == {"replicas": 2}
    code, _, body = raw(ep, "PATCH", path, {"spec": {"replicas": 5}}, content_type="application/merge-patch+json")
    assert code == 200 and json.loads(body)["spec"] == {"replicas": 5}
    assert api.get("Widget", "w", "default")["spec"]["replicas"] == 5
    resources = {r["name"] for r in json.loads(raw(ep, "GET", "/apis/example.com/v1")[2])["resources"]}
    assert "widgets/scale" in resources


# ------------------------------------------------------------------ CSR approval


def test_certificate_signing_request_approval(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    certs = client.CertificatesV1Api(api_client(ep))
    certs.create_certificate_signing_request({"metadata": {"name": "csr"}, "spec": {
        "request": "aGVsbG8=", "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}})
    csr = certs.read_certificate_signing_request("csr")
    csr.status.conditions = [client.V1CertificateSigningRequestCondition(
        type="Approved", status="True", reason="Test", message="approved by a test")]
    out = certs.replace_certificate_signing_request_approval("csr", csr)
    assert [c.type for c in out.status.conditions] == ["Approved"]
    assert certs.read_certificate_signing_request("csr").status.conditions[0].reason == "Test"
    csr = certs.read_certificate_signing_request("csr")
    csr.status.conditions.append(client.V1CertificateSigningRequestCondition(type="Denied", status="True"))
    with pytest.raises(ApiException) as e:
        certs.replace_certificate_signing_request_approval("csr", csr)
    assert e.value.status == 422


def test_token_review_of_the_kubeconfig_token_names_the_administrator(served: tuple[APIServer, Endpoint]) -> None:
    _, ep = served
    review = client.AuthenticationV1Api(api_client(ep)).create_token_review({"spec": {"token": "fakeapi"}})
    assert review.status.authenticated and review.status.user.username == ADMIN_USER
