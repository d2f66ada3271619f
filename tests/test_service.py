"""core/v1 Services: defaults, the storage's allocations (cluster IPs, node ports) and validation.

A single-stack IPv4 cluster with kube-apiserver's default ranges (10.96.0.0/12, node ports
30000-32767). IPs and ports are picked at random from the server's seeded generator, so a test
asserts ranges and relations, not values. Messages are kube-apiserver's.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api

from fakeapi.server.apiserver import APIServer

CIDR = ipaddress.ip_network("10.96.0.0/12")


def _svc(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "ns"},
                            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    body["spec"].update(spec)
    return body



def test_a_cluster_ip_service_is_defaulted_and_gets_an_ip() -> None:
    api = make_api()
    out = api.create(_svc())
    spec = out["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec
    assert spec["ipFamilyPolicy"] == "SingleStack" and spec["ipFamilies"] == ["IPv4"]
    assert ipaddress.ip_address(spec["clusterIP"]) in CIDR and spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["clusterIP"] != "10.96.0.1"  # the kubernetes Service's
    assert out["status"] == {"loadBalancer": {}} and "generation" not in out["metadata"]


def test_ips_are_distinct_and_repeatable_for_a_seed() -> None:
    ips = []
    for _ in range(2):
        api = make_api(seed=7)
        ips.append([api.create(_svc(f"s{i}"))["spec"]["clusterIP"] for i in range(20)])
    assert ips[0] == ips[1] and len(set(ips[0])) == 20


def test_a_requested_cluster_ip() -> None:
    api = make_api()
    assert api.create(_svc(clusterIP="10.96.0.10"))["spec"]["clusterIPs"] == ["10.96.0.10"]
    err = assert_rejected(api, lambda: api.create(_svc("other", clusterIP="10.96.0.10")), 422, "Invalid")
    assert err.message == ('Service "other" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: '
                           "failed to allocate IP 10.96.0.10: provided IP is already allocated")
    err = assert_rejected(api, lambda: api.create(_svc("far", clusterIP="192.168.0.1")), 422, "Invalid")
    assert err.message.endswith("failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the "
                                "valid range. The range of valid IPs is 10.96.0.0/12")
    api.delete("Service", "web", "ns")
    assert api.create(_svc("other", clusterIP="10.96.0.10"))["spec"]["clusterIP"] == "10.96.0.10"  # freed


def test_node_ports() -> None:
    api = make_api()
    out = api.create(_svc(type="NodePort", ports=[{"name": "http", "port": 80}, {"name": "https", "port": 443}]))
    spec = out["spec"]
    node_ports = [p["nodePort"] for p in spec["ports"]]
    assert all(30000 <= n <= 32767 for n in node_ports) and len(set(node_ports)) == 2
    assert spec["externalTrafficPolicy"] == "Cluster"
    err = assert_rejected(api, lambda: api.create(_svc("b", type="NodePort", ports=[{"port": 80,
                                                                                     "nodePort": node_ports[0]}])),
                          422, "Invalid")
    assert field_causes(err) == [("spec.ports[0].nodePort", f"Invalid value: {node_ports[0]}: provided port is already "
                                                       "allocated")]
    err = assert_rejected(api, lambda: api.create(_svc("c", type="NodePort", ports=[{"port": 80, "nodePort": 80}])),
                          422, "Invalid")
    assert field_causes(err) == [("spec.ports[0].nodePort", "Invalid value: 80: provided port is not in the valid range. "
                                                       "The range of valid ports is 30000-32767")]
    assert api.create(_svc("d", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))["spec"]["ports"][0][
        "nodePort"] == 30080


def test_tcp_and_udp_of_one_port_share_a_node_port() -> None:
    api = make_api()
    spec = api.create(_svc(type="NodePort", ports=[{"name": "dns", "port": 53, "protocol": "UDP"},
                                                   {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
                                                   {"name": "web", "port": 80}]))["spec"]
    node_ports = [p["nodePort"] for p in spec["ports"]]
    assert node_ports[0] == node_ports[1] != node_ports[2]


def test_a_load_balancer_without_node_ports_gets_only_those_asked_for() -> None:
    api = make_api()
    spec = api.create(_svc(type="LoadBalancer", allocateLoadBalancerNodePorts=False,
                           ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30081}]))["spec"]
    assert "nodePort" not in spec["ports"][0] and spec["ports"][1]["nodePort"] == 30081


def test_a_load_balancer() -> None:
    api = make_api()
    spec = api.create(_svc(type="LoadBalancer", externalTrafficPolicy="Local"))["spec"]
    assert spec["allocateLoadBalancerNodePorts"] is True and spec["ports"][0]["nodePort"]
    assert 30000 <= spec["healthCheckNodePort"] <= 32767 and spec["healthCheckNodePort"] != spec["ports"][0]["nodePort"]
    # what a cloud controller would write: the status subresource
    out = api.patch("Service", "web", {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}},
                    namespace="ns", subresource="status")
    assert out["status"]["loadBalancer"]["ingress"] == [{"ip": "203.0.113.7"}]


@pytest.mark.parametrize(("spec", "policy", "families", "cluster_ips"), [
    ({"clusterIP": "None"}, "SingleStack", ["IPv4"], ["None"]),
    ({"clusterIP": "None", "selector": None}, "RequireDualStack", ["IPv4", "IPv6"], ["None"]),  # selectorless
    ({"type": "ExternalName", "externalName": "db.example.com", "ports": []}, None, None, None),
])
def test_headless_and_external_name(spec: dict[str, Any], policy: str | None, families: list[str] | None,
                                    cluster_ips: list[str] | None) -> None:
    api = make_api()
    out = api.create(_svc(**spec))["spec"]
    assert out.get("ipFamilyPolicy") == policy and out.get("ipFamilies") == families
    assert out.get("clusterIPs") == cluster_ips


@pytest.mark.parametrize(("spec", "causes"), [
    ({"ports": []}, [("spec.ports", "Required value")]),
    # a port without a number has Go's zero value: out of range (the schema's Required is not a cluster's)
    ({"ports": [{"name": "x"}]}, [("spec.ports[0].port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
                                  ("spec.ports[0].targetPort", "Invalid value: 0: must be between 1 and 65535, "
                                                               "inclusive")]),
    ({"ports": [{"port": 80}, {"port": 443}]}, [("spec.ports[0].name", "Required value"),
                                                ("spec.ports[1].name", "Required value")]),
    ({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 443}]}, [("spec.ports[1].name", 'Duplicate value: "a"')]),
    # (the target port was defaulted to the port: both are out of range)
    ({"ports": [{"port": 0}]}, [("spec.ports[0].port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
                                ("spec.ports[0].targetPort", "Invalid value: 0: must be between 1 and 65535, inclusive")]),
    ({"ports": [{"port": 80, "protocol": "HTTP"}]},
     [("spec.ports[0].protocol", 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"')]),
    ({"ports": [{"port": 80, "targetPort": "Web_Port"}]},
     [("spec.ports[0].targetPort", 'Invalid value: "Web_Port": must contain only alpha-numeric characters (a-z, '
                                   '0-9), and hyphens (-)')]),
    ({"ports": [{"port": 80, "nodePort": 30001}]},
     [("spec.ports[0].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'")]),
    ({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
     [("spec.ports[1]", 'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), '
                        'Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}')]),
    ({"type": "Internal"}, [("spec.type", 'Unsupported value: "Internal": supported values: "ClusterIP", '
                                         '"ExternalName", "LoadBalancer", "NodePort"')]),
    ({"type": "ExternalName", "ports": []}, [("spec.externalName", "Required value")]),
    ({"type": "ExternalName", "externalName": "Db_Host.", "ports": []},
     [("spec.externalName", 'Invalid value: "Db_Host": a lowercase RFC 1123 subdomain must consist of lower case '
                            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                            "character (e.g. 'example.com', regex used for validation is "
                            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
])
def test_invalid_services(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_svc(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


@pytest.mark.parametrize(("spec", "causes"), [
    ({"ipFamilyPolicy": "RequireDualStack"},
     [("spec.ipFamilyPolicy", 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack '
                              "services")]),
    ({"ipFamilies": ["IPv6"]}, [("spec.ipFamilies[0]", 'Invalid value: "IPv6": not configured on this cluster')]),
    ({"clusterIP": "fd00::10"},
     [("spec.clusterIPs[0]", 'Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster')]),
])
def test_a_single_stack_cluster(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    """initIPFamilyFields: this cluster serves IPv4 services only (headless selectorless ones aside)."""
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_svc(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


def test_a_service_name_is_a_dns_1035_label() -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_svc("1web")), 422, "Invalid")
    assert field_causes(err)[0][0] == "metadata.name" and "a DNS-1035 label must consist of" in field_causes(err)[0][1]


def test_an_update_keeps_what_was_allocated_and_the_client_left_out() -> None:
    """patchAllocatedValues: a PUT of a Service built from scratch keeps its cluster IP and node ports."""
    api = make_api()
    stored = api.create(_svc(type="NodePort", ports=[{"name": "http", "port": 80}]))
    fresh = _svc(type="NodePort", ports=[{"name": "http", "port": 8080}], selector={"app": "web2"})
    out = api.update(fresh)
    assert out["spec"]["clusterIP"] == stored["spec"]["clusterIP"]
    assert out["spec"]["ports"][0]["nodePort"] == stored["spec"]["ports"][0]["nodePort"]  # by the port's name
    assert out["spec"]["selector"] == {"app": "web2"}


def test_the_cluster_ip_may_not_change() -> None:
    api = make_api()
    stored = api.create(_svc())
    changed = copy.deepcopy(stored)
    changed["spec"]["clusterIP"] = changed["spec"]["clusterIPs"][0] = "10.96.0.77"
    err = assert_rejected(api, lambda: api.update(changed), 422, "Invalid")
    assert field_causes(err) == [("spec.clusterIPs[0]", 'Invalid value: []string{"10.96.0.77"}: may not change once set')]


def test_cluster_ip_and_cluster_ips_must_agree() -> None:
    """normalizeClusterIPs fills clusterIPs from an old client's clusterIP; a new client's pair must agree."""
    api = make_api()
    assert api.create(_svc(clusterIP="10.96.0.20"))["spec"]["clusterIPs"] == ["10.96.0.20"]
    err = assert_rejected(api, lambda: api.create(_svc("b", clusterIP="10.96.0.21", clusterIPs=["10.96.0.22"])),
                          422, "Invalid")
    assert field_causes(err) == [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.22"}: first value must match '
                                                "`clusterIP`")]
    # an update that changes clusterIP alone changes clusterIPs with it: the change is refused
    err = assert_rejected(api, lambda: api.patch("Service", "web", {"spec": {"clusterIP": "10.96.0.23"}},
                                                 namespace="ns"), 422, "Invalid")
    assert field_causes(err) == [("spec.clusterIPs[0]", 'Invalid value: []string{"10.96.0.23"}: may not change once set')]


def test_type_changes_allocate_and_drop() -> None:
    api = make_api()
    api.create(_svc())
    out = api.patch("Service", "web", {"spec": {"type": "NodePort"}}, namespace="ns")
    assert out["spec"]["ports"][0]["nodePort"] and out["spec"]["externalTrafficPolicy"] == "Cluster"
    out = api.patch("Service", "web", {"spec": {"type": "ClusterIP", "externalTrafficPolicy": None}}, namespace="ns")
    assert "nodePort" not in out["spec"]["ports"][0]  # dropped with the type (dropTypeDependentFields)
    ext = api.create(_svc("ext", type="ExternalName", externalName="db.example.com", ports=[]))
    assert "clusterIP" not in ext["spec"]
    out = api.patch("Service", "ext", {"spec": {"type": "ClusterIP", "externalName": None, "ports": [{"port": 5432}]}},
                    namespace="ns")
    assert ipaddress.ip_address(out["spec"]["clusterIP"]) in CIDR and out["spec"]["ipFamilies"] == ["IPv4"]


def test_over_the_core_group() -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create(_svc())
    assert [s["metadata"]["name"] for s in api.list("Service", "ns")["items"]] == ["web"]
    assert api.resolve_kind("svc").plural == "services"


def test_a_strategic_merge_patch_merges_ports_by_port() -> None:
    api = make_api()
    api.create(_svc(ports=[{"name": "http", "port": 80}]))
    out = api.patch("Service", "web", {"spec": {"ports": [{"name": "https", "port": 443}]}}, namespace="ns",
                    patch_type="strategic")
    assert [(p["name"], p["port"], p["targetPort"]) for p in out["spec"]["ports"]] == [("https", 443, 443),
                                                                                         ("http", 80, 80)]
