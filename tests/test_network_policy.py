"""networking.k8s.io/v1 NetworkPolicies: defaults, generation, no status, ValidateNetworkPolicy's rules, the CIDR
warnings, the Go client and discovery.

The rules and messages are kube-apiserver's: ``pkg/registry/networking/networkpolicy/strategy.go``,
``pkg/apis/networking/validation/validation.go`` and ``pkg/apis/networking/v1/defaults.go``.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import assert_rejected, expect_error, field_causes, make_api

from fakeapi.codec.gomodel import builtin_go_type, go_roundtrip
from fakeapi.host.client import Client
from fakeapi.http.discovery import api_resource_list
from fakeapi.registry.networking.validation import network_policy_update_causes, parse_cidr_sloppy
from fakeapi.server.apiserver import APIServer

AV = "networking.k8s.io/v1"
_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_SUBSET = "must be a strict subset of `cidr`"
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_LABEL_NAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
               "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
               "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def _np(name: str = "np", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AV, "kind": "NetworkPolicy", "metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def _from(*peers: dict[str, Any]) -> dict[str, Any]:
    """A policy spec with one ingress rule from ``peers``."""
    return {"ingress": [{"from": list(peers)}]}


def _ports(*ports: dict[str, Any]) -> dict[str, Any]:
    """A policy spec with one ingress rule on ``ports``."""
    return {"ingress": [{"ports": list(ports)}]}


def _block(cidr: str, *excepts: str) -> dict[str, Any]:
    block: dict[str, Any] = {"cidr": cidr}
    if excepts:
        block["except"] = list(excepts)
    return {"ipBlock": block}


# ------------------------------------------------------------------------------- defaults


def test_a_created_policy_is_defaulted() -> None:
    # SetDefaults_NetworkPolicy: policyTypes [Ingress]; SetDefaults_NetworkPolicyPort: protocol TCP; the pod
    # selector is a struct value: an absent one is stored as the empty selector
    api = make_api()
    out = api.create(_np(ingress=[{"ports": [{"port": 80}, {"port": "http"}, {}]}]))
    assert out["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"],
                           "ingress": [{"ports": [{"protocol": "TCP", "port": 80}, {"protocol": "TCP", "port": "http"},
                                                  {"protocol": "TCP"}]}]}
    assert api.get("NetworkPolicy", "np", "ns")["spec"] == out["spec"]


def test_a_policy_without_a_spec_isolates_every_pod_for_ingress() -> None:
    api = make_api()
    body = _np()
    del body["spec"]
    assert api.create(body)["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}


@pytest.mark.parametrize(("spec", "policy_types"), [
    ({"egress": [{}]}, ["Ingress", "Egress"]),
    ({"egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}], "ingress": [{}]}, ["Ingress", "Egress"]),
    ({"egress": []}, ["Ingress"]),  # len(egress) == 0: no Egress
    ({"policyTypes": []}, ["Ingress"]),
    ({"policyTypes": ["Egress"]}, ["Egress"]),  # set: kept, even without egress rules
    ({"policyTypes": ["Ingress"], "egress": [{}]}, ["Ingress"]),
])
def test_the_policy_types_default_from_the_rules(spec: dict[str, Any], policy_types: list[str]) -> None:
    api = make_api()
    assert api.create(_np(**spec))["spec"]["policyTypes"] == policy_types


@pytest.mark.parametrize("protocol", ["UDP", "SCTP", "TCP"])
def test_a_ports_protocol_is_kept(protocol: str) -> None:
    api = make_api()
    out = api.create(_np(egress=[{"ports": [{"port": 53, "protocol": protocol}]}]))
    assert out["spec"]["egress"][0]["ports"] == [{"port": 53, "protocol": protocol}]


def test_an_empty_pod_selector_is_kept() -> None:
    # "an empty selector matches all pods in the policy's namespace": {} is stored and read as {}
    api = make_api()
    out = api.create(_np(podSelector={}, policyTypes=["Ingress", "Egress"]))
    assert out["spec"]["podSelector"] == {}
    assert api.get("NetworkPolicy", "np", "ns")["spec"]["podSelector"] == {}


# ---------------------------------------------------------------------- generation, status


def test_a_create_starts_at_generation_1() -> None:
    api = make_api()
    body = _np()
    body["metadata"]["generation"] = 7
    assert api.create(body)["metadata"]["generation"] == 1


@pytest.mark.parametrize(("patch", "generation"), [
    ({"metadata": {"labels": {"a": "b"}}}, 1),
    ({"metadata": {"annotations": {"a": "b"}}}, 1),
    ({"spec": {"podSelector": {"matchLabels": {"app": "db"}}}}, 2),
    ({"spec": {"policyTypes": ["Ingress", "Egress"]}}, 2),
    ({"spec": {"ingress": [{"ports": [{"port": 5432}]}]}}, 2),
])
def test_the_generation_follows_the_spec_only(patch: dict[str, Any], generation: int) -> None:
    api = make_api()
    api.create(_np())
    assert api.patch("NetworkPolicy", "np", patch, namespace="ns")["metadata"]["generation"] == generation


def test_an_update_that_changes_nothing_in_the_spec_keeps_the_generation() -> None:
    api = make_api()
    stored = api.create(_np(ingress=[{"ports": [{"port": 80}]}]))
    assert api.update(stored)["metadata"]["generation"] == 1
    # the defaults and the empty pod selector the body leaves out are what is stored: no spec change
    out = api.update(_np(ingress=[{"ports": [{"port": 80}]}]))
    assert out["metadata"]["generation"] == 1 and out["spec"] == stored["spec"]


def test_there_is_no_status() -> None:
    # NetworkPolicyStatus is gone from networking/v1: a status in a body is an unknown field, and there
    # is no status subresource
    api = make_api()
    body = _np()
    body["status"] = {"conditions": []}
    out = api.create(body)
    assert "status" not in out and api.last_warnings == ['unknown field "status"']
    expect_error(lambda: api.patch("NetworkPolicy", "np", {"status": {}}, namespace="ns", subresource="status"),
                 404, "NotFound")
    assert "status" not in api.get("NetworkPolicy", "np", "ns")


# ----------------------------------------------------------------------------- validation


INGRESS_0 = "spec.ingress[0]"
PORT_0 = "spec.ingress[0].ports[0]"
PEER_0 = "spec.ingress[0].from[0]"
BLOCK_0 = "spec.ingress[0].from[0].ipBlock"


@pytest.mark.parametrize(("spec", "causes"), [
    # ValidateNetworkPolicySpec: the pod selector (ValidateLabelSelector)
    ({"podSelector": {"matchLabels": {"app": "a b"}}},
     [("spec.podSelector.matchLabels", f'Invalid value: "a b": {_LABEL_VALUE}')]),
    ({"podSelector": {"matchLabels": {"-app": "a"}}},
     [("spec.podSelector.matchLabels", f'Invalid value: "-app": {_LABEL_NAME}')]),
    ({"podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
     [("spec.podSelector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'")]),
    ({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]}},
     [("spec.podSelector.matchExpressions[0].values",
       "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]),
    ({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["a"]}]}},
     [("spec.podSelector.matchExpressions[0].operator", 'Invalid value: "Equals": not a valid selector operator')]),
    ({"podSelector": {"matchExpressions": [{"key": "-app", "operator": "NotIn", "values": ["a/b"]}]}},
     [("spec.podSelector.matchExpressions[0].key", f'Invalid value: "-app": {_LABEL_NAME}'),
      ("spec.podSelector.matchExpressions[0].values[0]", f'Invalid value: "a/b": {_LABEL_VALUE}')]),
    # ValidateNetworkPolicyPort
    (_ports({"protocol": "ICMP", "port": 80}),
     [(f"{PORT_0}.protocol", 'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"')]),
    (_ports({"protocol": "tcp"}),
     [(f"{PORT_0}.protocol", 'Unsupported value: "tcp": supported values: "TCP", "UDP", "SCTP"')]),
    (_ports({"port": 0}), [(f"{PORT_0}.port", f"Invalid value: 0: {_PORT_RANGE}")]),
    (_ports({"port": 65536}), [(f"{PORT_0}.port", f"Invalid value: 65536: {_PORT_RANGE}")]),
    (_ports({"port": "HTTP"}),
     [(f"{PORT_0}.port", 'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and '
                         "hyphens (-)"),
      (f"{PORT_0}.port", 'Invalid value: "HTTP": must contain at least one letter (a-z)')]),
    (_ports({"port": "8080"}), [(f"{PORT_0}.port", 'Invalid value: "8080": must contain at least one letter (a-z)')]),
    (_ports({"port": "a-very-long-port-name"}),
     [(f"{PORT_0}.port", 'Invalid value: "a-very-long-port-name": must be no more than 15 characters')]),
    (_ports({"port": "web--ui"}), [(f"{PORT_0}.port", 'Invalid value: "web--ui": must not contain consecutive hyphens')]),
    # endPort: after a numeric port, not below it, itself a port number
    (_ports({"port": 8080, "endPort": 8000}),
     [(f"{PORT_0}.endPort", "Invalid value: 8000: must be greater than or equal to `port`")]),
    (_ports({"port": 8080, "endPort": 70000}), [(f"{PORT_0}.endPort", f"Invalid value: 70000: {_PORT_RANGE}")]),
    (_ports({"port": 0, "endPort": -1}),
     [(f"{PORT_0}.port", f"Invalid value: 0: {_PORT_RANGE}"),
      (f"{PORT_0}.endPort", "Invalid value: -1: must be greater than or equal to `port`"),
      (f"{PORT_0}.endPort", f"Invalid value: -1: {_PORT_RANGE}")]),
    (_ports({"port": "http", "endPort": 8090}),
     [(f"{PORT_0}.endPort", "Invalid value: 8090: may not be specified when `port` is non-numeric")]),
    (_ports({"endPort": 8090}),
     [(f"{PORT_0}.endPort", "Invalid value: 8090: may not be specified when `port` is not specified")]),
    # ValidateNetworkPolicyPeer: one kind of peer
    (_from({}), [(PEER_0, "Required value: must specify a peer")]),
    ({**_from(), "egress": [{"to": [{}]}]}, [("spec.egress[0].to[0]", "Required value: must specify a peer")]),
    (_from({**_block("10.0.0.0/8"), "podSelector": {}}),
     [(PEER_0, "Forbidden: may not specify both ipBlock and another peer")]),
    (_from({**_block("10.0.0.0/8"), "namespaceSelector": {"matchLabels": {"team": "a"}}}),
     [(PEER_0, "Forbidden: may not specify both ipBlock and another peer")]),
    (_from({"podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "namespaceSelector": {"matchLabels": {"team": "a b"}}}),
     [(f"{PEER_0}.podSelector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
      (f"{PEER_0}.namespaceSelector.matchLabels", f'Invalid value: "a b": {_LABEL_VALUE}')]),
    # ValidateIPBlock
    (_from({"ipBlock": {"cidr": ""}}), [(f"{BLOCK_0}.cidr", "Required value")]),
    (_from({"ipBlock": {}}), [(f"{BLOCK_0}.cidr", "Required value")]),
    (_from(_block("10.0.0.1")), [(f"{BLOCK_0}.cidr", f'Invalid value: "10.0.0.1": {_CIDR}')]),
    (_from(_block("10.0.0.0/33")), [(f"{BLOCK_0}.cidr", f'Invalid value: "10.0.0.0/33": {_CIDR}')]),
    (_from(_block("2001:db8::/129")), [(f"{BLOCK_0}.cidr", f'Invalid value: "2001:db8::/129": {_CIDR}')]),
    (_from(_block("10.0.0.0/+8")), [(f"{BLOCK_0}.cidr", f'Invalid value: "10.0.0.0/+8": {_CIDR}')]),
    (_from(_block("cluster")), [(f"{BLOCK_0}.cidr", f'Invalid value: "cluster": {_CIDR}')]),
    # (an invalid cidr: its exceptions are not looked at)
    (_from(_block("10.0.0.0", "nonsense")), [(f"{BLOCK_0}.cidr", f'Invalid value: "10.0.0.0": {_CIDR}')]),
    (_from(_block("10.0.0.0/8", "10.1.0.0/16", "nonsense")),
     [(f"{BLOCK_0}.except[1]", f'Invalid value: "nonsense": {_CIDR}')]),
    (_from(_block("10.0.0.0/16", "10.0.0.0/16")), [(f"{BLOCK_0}.except[0]", f'Invalid value: "10.0.0.0/16": {_SUBSET}')]),
    (_from(_block("10.0.0.0/16", "10.0.0.0/8")), [(f"{BLOCK_0}.except[0]", f'Invalid value: "10.0.0.0/8": {_SUBSET}')]),
    (_from(_block("10.0.0.0/16", "10.1.0.0/24")),
     [(f"{BLOCK_0}.except[0]", f'Invalid value: "10.1.0.0/24": {_SUBSET}')]),
    (_from(_block("10.0.0.0/8", "2001:db8::/64")),
     [(f"{BLOCK_0}.except[0]", f'Invalid value: "2001:db8::/64": {_SUBSET}')]),
    (_from(_block("2001:db8::/32", "2001:db9::/48")),
     [(f"{BLOCK_0}.except[0]", f'Invalid value: "2001:db9::/48": {_SUBSET}')]),
    # policyTypes: Ingress or Egress, at most two (then nothing else is checked)
    ({"policyTypes": ["Ingress", "Other"]},
     [("spec.policyTypes[1]", 'Unsupported value: "Other": supported values: "Ingress", "Egress"')]),
    ({"policyTypes": ["ingress"]},
     [("spec.policyTypes[0]", 'Unsupported value: "ingress": supported values: "Ingress", "Egress"')]),
    ({"policyTypes": ["Ingress", "Egress", "Other"]},
     [("spec.policyTypes", 'Invalid value: []networking.PolicyType{"Ingress", "Egress", "Other"}: may not specify '
                           "more than two policyTypes")]),
    # the order: the pod selector, the ingress rules (ports, then peers), the egress rules, the policy types
    ({"policyTypes": ["Sideways"], "egress": [{"to": [{}]}], "ingress": [{"from": [{}], "ports": [{"port": 0}]}],
      "podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
     [("spec.podSelector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
      (f"{PORT_0}.port", f"Invalid value: 0: {_PORT_RANGE}"),
      (PEER_0, "Required value: must specify a peer"),
      ("spec.egress[0].to[0]", "Required value: must specify a peer"),
      ("spec.policyTypes[0]", 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"')]),
])
def test_invalid_policies(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np(**spec)), 422, "Invalid")
    assert field_causes(err) == causes
    assert err.message.startswith('NetworkPolicy.networking.k8s.io "np" is invalid: ')


def test_an_invalid_policy_is_invalid_with_every_cause_in_its_message() -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np(ingress=[{"ports": [{"port": 0}], "from": [{}]}])),
                          422, "Invalid")
    assert err.message == ('NetworkPolicy.networking.k8s.io "np" is invalid: [spec.ingress[0].ports[0].port: Invalid '
                           f"value: 0: {_PORT_RANGE}, spec.ingress[0].from[0]: Required value: must specify a peer]")
    assert err.status["details"]["kind"] == "NetworkPolicy" and err.status["details"]["group"] == "networking.k8s.io"


def test_the_name_is_a_dns_subdomain() -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np("Deny_All")), 422, "Invalid")
    assert [f for f, _ in field_causes(err)] == ["metadata.name"]
    assert api.create(_np("deny.all"))["metadata"]["name"] == "deny.all"


def test_a_wrong_json_type_is_a_decode_error() -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np(ingress=[{"ports": [{"endPort": "90"}]}])), 400, "BadRequest")
    assert "cannot unmarshal string into Go struct field" in err.message and "of type int32" in err.message


# ------------------------------------------------------------------------- valid policies


def test_a_policy_with_ip_blocks_named_ports_and_port_ranges() -> None:
    api = make_api()
    spec = {
        "podSelector": {"matchLabels": {"app": "db"}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{
            "from": [_block("172.17.0.0/16", "172.17.1.0/24", "172.17.2.128/25"),
                     {"namespaceSelector": {"matchLabels": {"project": "myproject"}},
                      "podSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["frontend"]}]}},
                     {"podSelector": {}}],
            "ports": [{"protocol": "TCP", "port": 6379}, {"port": "metrics"}],
        }],
        "egress": [{
            "to": [_block("10.0.0.0/24"), _block("2001:db8::/32", "2001:db8:1::/48"), {"namespaceSelector": {}}],
            "ports": [{"protocol": "TCP", "port": 32000, "endPort": 32768}, {"protocol": "UDP", "port": 53,
                                                                              "endPort": 53}],
        }],
    }
    out = api.create(_np(**spec))
    assert out["spec"]["ingress"][0]["from"][0] == _block("172.17.0.0/16", "172.17.1.0/24", "172.17.2.128/25")
    assert out["spec"]["ingress"][0]["ports"][1] == {"protocol": "TCP", "port": "metrics"}
    assert out["spec"]["egress"][0]["ports"][0] == {"protocol": "TCP", "port": 32000, "endPort": 32768}
    assert out["spec"]["egress"][0]["to"][2] == {"namespaceSelector": {}}
    assert api.last_warnings == []


@pytest.mark.parametrize("cidr", [
    "0.0.0.0/0", "::/0", "192.168.1.5/24", "010.000.000.000/8", "10.0.0.0/08", "::ffff:10.0.0.0/104",
    "2001:DB8::/32", "2001:0db8:0000::/48",
])
def test_a_cidr_that_parses_sloppily_is_valid(cidr: str) -> None:
    # IsValidCIDRForLegacyField with StrictIPCIDRValidation off (its default): netutils.ParseCIDRSloppy decides
    api = make_api()
    assert api.create(_np(ingress=[{"from": [_block(cidr)]}]))["spec"]["ingress"][0]["from"][0] == _block(cidr)


@pytest.mark.parametrize(("cidr", "excepts"), [
    ("10.0.0.0/8", ["10.0.0.0/9", "10.255.255.255/32", "10.1.2.3/16"]),  # (the except's masked address counts)
    ("::ffff:10.0.0.0/104", ["::ffff:10.1.0.0/112"]),
    ("10.0.0.0/8", ["::ffff:10.1.0.0/112"]),  # an IPv4 block contains IPv4-mapped addresses
    ("2001:db8::/32", ["2001:db8:ffff::/48"]),
])
def test_exceptions_strictly_inside_the_block_are_valid(cidr: str, excepts: list[str]) -> None:
    api = make_api()
    out = api.create(_np(ingress=[{"from": [_block(cidr, *excepts)]}]))
    assert out["spec"]["ingress"][0]["from"][0]["ipBlock"]["except"] == excepts


def test_the_prefix_lengths_compare_as_written() -> None:
    # ValidateIPBlock compares the masks' sizes as parsed: an IPv4-mapped /104 block (10.0.0.0/8) is longer
    # than an IPv4 /16 exception inside it, so the exception is refused
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np(ingress=[{"from": [_block("::ffff:10.0.0.0/104", "10.1.0.0/16")]}])),
                          422, "Invalid")
    assert field_causes(err) == [(f"{BLOCK_0}.except[0]", f'Invalid value: "10.1.0.0/16": {_SUBSET}')]


def test_a_cidr_in_an_egress_rule_is_validated_too() -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_np(egress=[{"to": [_block("10.0.0.0/16", "10.1.0.0/24")]}])),
                          422, "Invalid")
    assert field_causes(err) == [("spec.egress[0].to[0].ipBlock.except[0]", f'Invalid value: "10.1.0.0/24": {_SUBSET}')]


# ----------------------------------------------------------------------------- warnings


@pytest.mark.parametrize(("cidr", "warning"), [
    ("10.0.0.0/8", None),
    ("2001:db8::/32", None),
    ("10.0.0.1/8", 'CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)'),
    ("010.0.0.0/8", 'non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes '
                    'release: use "10.0.0.0/8"'),
    ("10.0.0.0/08", 'non-standard CIDR value "10.0.0.0/08" will be considered invalid in a future Kubernetes '
                    'release: use "10.0.0.0/8"'),
    ("::ffff:10.0.0.0/104", 'non-standard CIDR value "::ffff:10.0.0.0/104" will be considered invalid in a future '
                            'Kubernetes release: use "10.0.0.0/8"'),
    ("2001:DB8::/32", 'IPv6 CIDR value "2001:DB8::/32" should be in RFC 5952 canonical format ("2001:db8::/32")'),
    ("2001:db8:0:0::/64", 'IPv6 CIDR value "2001:db8:0:0::/64" should be in RFC 5952 canonical format '
                          '("2001:db8::/64")'),
])
def test_a_cidr_in_a_non_standard_form_is_warned_about(cidr: str, warning: str | None) -> None:
    # the strategy's WarningsOnCreate: GetWarningsForCIDR for each ipBlock's cidr
    api = make_api()
    api.create(_np(egress=[{"to": [{"podSelector": {}}, _block(cidr)]}]))
    path = "spec.egress[0].to[1].ipBlock.cidr"
    assert api.last_warnings == ([] if warning is None else [f"{path}: {warning}"])


def test_every_warning_of_a_cidr_and_its_exceptions_is_given_on_create_and_update() -> None:
    api = make_api()
    body = _np(ingress=[{"from": [_block("192.012.2.8/16", "192.12.2.0/24", "192.12.3.1/24")]}])
    expected = [
        'spec.ingress[0].from[0].ipBlock.cidr: CIDR value "192.012.2.8/16" is ambiguous in this context (should be '
        '"192.12.0.0/16" or "192.12.2.8/32"?)',
        'spec.ingress[0].from[0].ipBlock.cidr: non-standard CIDR value "192.012.2.8/16" will be considered invalid '
        'in a future Kubernetes release: use "192.12.0.0/16"',
        'spec.ingress[0].from[0].ipBlock.except[1]: CIDR value "192.12.3.1/24" is ambiguous in this context (should '
        'be "192.12.3.0/24" or "192.12.3.1/32"?)',
    ]
    api.create(body)
    assert api.last_warnings == expected
    body["metadata"]["labels"] = {"a": "b"}
    api.update(body)  # (WarningsOnUpdate: the same, on every update)
    assert api.last_warnings == expected


def test_a_rejected_policy_gets_no_warnings() -> None:
    api = make_api()
    assert_rejected(api, lambda: api.create(_np(ingress=[{"from": [_block("10.0.0.1/8"), {}]}])), 422, "Invalid")
    assert api.last_warnings == []


# -------------------------------------------------------------------------------- updates


def test_an_update_validates_the_spec_twice() -> None:
    # the strategy's ValidateUpdate runs ValidateNetworkPolicy and then ValidateNetworkPolicyUpdate, and both
    # validate the spec: each spec cause is listed twice; the message names it once (ToAggregate)
    api = make_api()
    api.create(_np())
    err = assert_rejected(api, lambda: api.patch("NetworkPolicy", "np", {"spec": {"policyTypes": ["Both"]}},
                                                 namespace="ns"), 422, "Invalid")
    cause = ("spec.policyTypes[0]", 'Unsupported value: "Both": supported values: "Ingress", "Egress"')
    assert field_causes(err) == [cause] * 2
    assert err.message == f'NetworkPolicy.networking.k8s.io "np" is invalid: {cause[0]}: {cause[1]}'


def test_an_update_checks_the_metadata_too() -> None:
    api = make_api()
    stored = api.create(_np())
    body = {**stored, "metadata": {**stored["metadata"], "uid": "other"}}
    body["metadata"].pop("resourceVersion")
    expect_error(lambda: api.update(body), 409, "Conflict")
    err = assert_rejected(api, lambda: api.patch("NetworkPolicy", "np", {"metadata": {"labels": {"-a": "b"}}},
                                                 namespace="ns"), 422, "Invalid")
    assert [f for f, _ in field_causes(err)] == ["metadata.labels"]


def test_the_spec_may_change() -> None:
    api = make_api()
    api.create(_np(ingress=[{"from": [_block("10.0.0.0/8")]}]))
    out = api.patch("NetworkPolicy", "np", {"spec": {"ingress": [{"from": [_block("10.0.0.0/8", "10.1.0.0/16")]}],
                                                     "egress": [{}], "policyTypes": ["Egress"]}}, namespace="ns")
    assert out["spec"]["policyTypes"] == ["Egress"] and out["metadata"]["generation"] == 2
    out = api.patch("NetworkPolicy", "np", {"spec": {"ingress": [{"ports": [{"port": "dns", "protocol": "UDP"}]}]}},
                    namespace="ns", patch_type="strategic")  # (atomic lists: replaced whole)
    assert out["spec"]["ingress"] == [{"ports": [{"port": "dns", "protocol": "UDP"}]}]


def test_the_update_pass_lets_the_stored_cidrs_through() -> None:
    # ValidateNetworkPolicyUpdate: AllowCIDRsEvenIfInvalid holds every CIDR of the old policy (a stored policy
    # passed the same rules here, so only the function itself can show it)
    old = _np(ingress=[{"from": [_block("10.0.0.0/33", "bad")]}])
    new = _np(egress=[{"to": [_block("10.0.0.0/33"), _block("10.0.0.0/8", "bad", "worse")]}])
    causes = network_policy_update_causes(new, old)
    assert [(c.field, c.message) for c in causes] == [
        ("spec.egress[0].to[1].ipBlock.except[1]", f'Invalid value: "worse": {_CIDR}')]


def test_the_update_pass_allows_invalid_label_values_after_an_invalid_stored_pod_selector() -> None:
    # ValidationOptionsForNetworking: AllowInvalidLabelValueInSelector when the old pod selector is invalid
    old = _np(podSelector={"matchExpressions": [{"key": "a", "operator": "In", "values": ["x y"]}]})
    new = _np(podSelector={"matchExpressions": [{"key": "a", "operator": "In", "values": ["x y", "z w"]}]},
              ingress=[{"from": [{"namespaceSelector": {"matchExpressions": [
                  {"key": "b", "operator": "NotIn", "values": ["p q"]}]}}]}])
    assert network_policy_update_causes(new, old) == []
    strict = network_policy_update_causes(new, _np())
    assert [c.field for c in strict] == ["spec.podSelector.matchExpressions[0].values[0]",
                                         "spec.podSelector.matchExpressions[0].values[1]",
                                         "spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values[0]"]


# ----------------------------------------------------------------------------- Go client


def test_an_empty_pod_selector_survives_a_go_client_round_trip() -> None:
    api = make_api()
    client = Client(api, "ctrl")
    created = client.create(_np("deny-all", podSelector={}, policyTypes=["Ingress", "Egress"]))
    assert created["spec"]["podSelector"] == {}
    read = client.get("NetworkPolicy", "deny-all", "ns")
    assert read["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    labels = {**(read["metadata"].get("labels") or {}), "touched": "yes"}
    updated = client.update({**read, "metadata": {**read["metadata"], "labels": labels}})
    assert updated["spec"]["podSelector"] == {} and updated["metadata"]["generation"] == 1
    assert api.get("NetworkPolicy", "deny-all", "ns")["spec"]["podSelector"] == {}
    api.check_snapshots()


def test_peers_and_ports_survive_a_go_client_round_trip() -> None:
    api = make_api()
    client = Client(api, "ctrl")
    spec = {"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"podSelector": {}}, {"namespaceSelector": {}, "podSelector": {}},
                                  _block("10.0.0.0/8", "10.1.0.0/16")],
                         "ports": [{"port": 5432, "endPort": 5433}, {"port": "metrics", "protocol": "SCTP"}]}]}
    client.create(_np(**spec))
    read = client.get("NetworkPolicy", "np", "ns")
    assert read["spec"]["ingress"] == [{
        "from": [{"podSelector": {}}, {"namespaceSelector": {}, "podSelector": {}}, _block("10.0.0.0/8", "10.1.0.0/16")],
        "ports": [{"protocol": "TCP", "port": 5432, "endPort": 5433}, {"protocol": "SCTP", "port": "metrics"}]}]
    updated = client.update(read)
    assert updated["metadata"]["generation"] == 1
    api.check_snapshots()


def test_the_go_type_model() -> None:
    np_type = builtin_go_type("io.k8s.api.networking.v1.NetworkPolicy")
    obj = {"spec": {"ingress": [{"from": [{"podSelector": {}}], "ports": [{"protocol": "", "port": 0, "endPort": 0}]}],
                    "egress": [], "policyTypes": []},
           "status": {"conditions": []}}
    out = go_roundtrip(obj, np_type)
    # the pod selector is a LabelSelector value (always sent); a peer's selectors and a port's fields are
    # pointers (kept at their zero values); empty slices are omitempty; there is no status
    assert out == {"metadata": {}, "spec": {"podSelector": {},
                            "ingress": [{"from": [{"podSelector": {}}], "ports": [{"protocol": "", "port": 0,
                                                                                   "endPort": 0}]}]}}
    assert set(np_type.fields) == {"apiVersion", "kind", "metadata", "spec"}


# ------------------------------------------------------------------------------ discovery


def test_listed_and_served_under_networking() -> None:
    api = APIServer()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create(_np())
    assert [d["metadata"]["name"] for d in api.list("NetworkPolicy", "ns", api_version=AV)["items"]] == ["np"]
    kind = api.resolve_kind("netpol")
    assert (kind.plural, kind.group, kind.version, kind.namespaced) == ("networkpolicies", "networking.k8s.io", "v1",
                                                                        True)
    assert not kind.status_subresource
    assert api.resolve_kind("networkpolicies") is kind and api.resolve_kind(f"{AV}/NetworkPolicy") is kind
    resources = api_resource_list(api.kinds, "networking.k8s.io", "v1")
    assert resources is not None
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["networkpolicies"]["shortNames"] == ["netpol"]
    assert by_name["networkpolicies"]["kind"] == "NetworkPolicy" and by_name["networkpolicies"]["namespaced"]
    assert by_name["networkpolicies"]["singularName"] == "networkpolicy"
    assert [r["name"] for r in resources["resources"]] == ["ingresses", "ingresses/status", "networkpolicies"]


def test_a_policy_is_deleted_with_its_namespace_content() -> None:
    api = make_api()
    api.create(_np())
    out = api.delete("NetworkPolicy", "np", "ns")
    assert out["kind"] == "Status" and out["status"] == "Success"
    expect_error(lambda: api.get("NetworkPolicy", "np", "ns"), 404, "NotFound")


# --------------------------------------------------------------------------- CIDR parsing


@pytest.mark.parametrize(("text", "network"), [
    ("10.0.0.0/8", "10.0.0.0/8"),
    ("10.1.2.3/8", "10.0.0.0/8"),
    ("0010.1.2.3/008", "10.0.0.0/8"),
    ("::ffff:1.2.3.0/120", "1.2.3.0/24"),
    ("2001:DB8:0:0:0:0:0:1/64", "2001:db8::/64"),
    ("00001::/16", "1::/16"),
    ("::1.2.3.4/128", "::102:304/128"),
    ("1:2:3:4:5:6:7::/128", "1:2:3:4:5:6:7:0/128"),
    ("10.0.0.0", None),
    ("10.0.0.0/8/8", None),
    ("10.0.0.0/-8", None),
    ("1.2.3/8", None),
    ("256.0.0.0/8", None),
    ("1::2::3/64", None),
    ("1:2:3:4:5:6:7:8::/64", None),
    ("fe80::1%eth0/64", None),
    ("", None),
])
def test_cidrs_parse_as_parse_cidr_sloppy_parses_them(text: str, network: str | None) -> None:
    parsed = parse_cidr_sloppy(text)
    assert (parsed.string() if parsed is not None else None) == network
