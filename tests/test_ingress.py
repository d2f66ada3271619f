"""networking.k8s.io/v1 Ingresses: the rules' hosts and paths, the backends, and a status a test writes."""

from __future__ import annotations

from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api


def _ingress(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", "namespace": "ns"},
            "spec": spec}


def _rule(host: str = "web.example.com", path: str = "/", path_type: str | None = "Prefix",
          backend: dict[str, Any] | None = None) -> dict[str, Any]:
    default = {"service": {"name": "web", "port": {"number": 80}}}
    p: dict[str, Any] = {"path": path, "backend": default if backend is None else backend}
    if path_type is not None:
        p["pathType"] = path_type
    return {"host": host, "http": {"paths": [p]}}



def test_an_ingress_and_its_status() -> None:
    api = make_api()
    out = api.create(_ingress(ingressClassName="nginx", rules=[_rule(), _rule("*.example.com", "/api", "Exact")]))
    assert out["metadata"]["generation"] == 1 and out["status"] == {"loadBalancer": {}}
    out = api.patch("Ingress", "web", {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}},
                    namespace="ns", subresource="status")
    assert out["status"]["loadBalancer"]["ingress"] == [{"ip": "203.0.113.9"}]


PATH_0 = "spec.rules[0].http.paths[0]"


@pytest.mark.parametrize(("spec", "causes"), [
    ({}, [("spec", "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be "
                   "specified")]),
    ({"rules": [_rule(path_type=None)]}, [(f"{PATH_0}.pathType", "Required value: pathType must be specified")]),
    ({"rules": [_rule(path="api")]}, [(f"{PATH_0}.path", 'Invalid value: "api": must be an absolute path')]),
    ({"rules": [_rule(path="/a//b")]}, [(f"{PATH_0}.path", "Invalid value: \"/a//b\": must not contain '//'")]),
    ({"rules": [_rule(path_type="Regex")]},
     [(f"{PATH_0}.pathType", 'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", '
                             '"Prefix"')]),
    ({"rules": [_rule(host="10.0.0.1")]}, [("spec.rules[0].host", 'Invalid value: "10.0.0.1": must be a DNS name, '
                                                                 "not an IP address")]),
    ({"rules": [_rule(backend={"service": {"name": "web", "port": {"name": "http", "number": 80}}})]},
     [(f"{PATH_0}.backend", 'Invalid value: "": cannot set both port name & port number')]),
    ({"rules": [_rule(backend={"service": {"name": "web"}})]},
     [(f"{PATH_0}.backend", "Required value: port name or number is required")]),
    ({"rules": [_rule(backend={})]}, [(f"{PATH_0}.backend", 'Invalid value: "": resource or service backend is '
                                                            "required")]),
])
def test_invalid_ingresses(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_ingress(**spec)), 422, "Invalid")
    assert field_causes(err) == causes
