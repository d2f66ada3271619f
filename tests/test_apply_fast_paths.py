"""Server-side apply's shortcuts answer as the computations they skip (issue 22).

- A sole applier's re-apply does not walk the comparison of the live and merged objects: only other
  managers' entries need what changed (:func:`fakeapi.machinery.serverapply.apply`).
- An applied object whose top-level value decodes to the stored one (the configuration left out what
  the server defaulted) shares it (:func:`fakeapi.server.patch.share_decoded_as_stored`): each script
  below runs on a server as served and on one without the sharing, and every answer, status code,
  warning and the final store must be the same.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from support import WIDGET_AV, make_api, one_value_mutations

from fakeapi.machinery import serverapply
from fakeapi.machinery.errors import ApiError
from fakeapi.server import patch as patchmod
from fakeapi.server.apiserver import APIServer

NS = "ns"
Script = Callable[[APIServer], None]


def _apply(api: APIServer, body: dict[str, Any], manager: str = "m", **kw: Any) -> dict[str, Any]:
    kind = body["kind"]
    ns = None if kind == "Namespace" else NS
    return api.patch(kind, body["metadata"]["name"], copy.deepcopy(body), namespace=ns,
                     api_version=body["apiVersion"], patch_type="apply", field_manager=manager, **kw)


def _np(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "np", "namespace": NS, "labels": {"a": "1"}}, "spec": spec}


def _network_policy(api: APIServer) -> None:
    base = _np(podSelector={}, ingress=[{"ports": [{"port": 8080}]}])  # (protocol and policyTypes left out)
    for i in range(3):
        base["metadata"]["labels"]["a"] = str(i)
        _apply(api, base)
    _apply(api, _np(podSelector={}, ingress=[{"ports": [{"port": 8081}]}]))  # (a changed spec)
    _apply(api, _np(podSelector={}, ingress=[{"ports": [{"port": 8081, "protocol": "TCP"}]}],
                    policyTypes=["Ingress"]))  # (every default given: the stored spec's JSON)
    _apply(api, _np(podSelector={}, ingress=[{"ports": [{"port": 8081}]}]), dry_run=True)


def _network_policy_warnings(api: APIServer) -> None:
    """CIDRs in a non-standard form: each write of them warns, a shared spec's too."""
    spec = {"podSelector": {"matchLabels": {"app": "x"}},
            "egress": [{"ports": [{"port": 53}], "to": [{"ipBlock": {"cidr": "10.0.0.1/8", "except": ["10.1.0.1/16"]}}]}]}
    for _ in range(2):
        _apply(api, _np(**spec))
    _apply(api, _np(**spec), manager="other")
    bad = copy.deepcopy(spec)
    bad["egress"][0]["to"][0]["ipBlock"]["cidr"] = "10.0.0.0/33"
    _apply(api, _np(**bad))  # (a conflict with the other applier)
    _apply(api, _np(**bad), force=True)  # (invalid)


def _namespace(api: APIServer) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n1", "labels": {"a": "1"}}}
    for i in range(2):
        body["metadata"]["labels"]["a"] = str(i)
        _apply(api, body)
    _apply(api, {**body, "spec": {"finalizers": ["kubernetes"]}})


def _service(api: APIServer) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": NS},
           "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}}  # (clusterIP, protocol, type defaulted)
    for _ in range(2):
        _apply(api, svc)
    svc["spec"]["ports"][0]["port"] = 81
    _apply(api, svc)


def _deployment(api: APIServer) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": NS},
           "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
               "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    for _ in range(2):
        _apply(api, dep)
    _apply(api, dep, manager="second")
    api.patch("Deployment", "d", {"spec": {"replicas": 3}}, namespace=NS)
    _apply(api, dep)


def _widget(api: APIServer) -> None:
    """A custom resource: defaulted ``replicas``, the spec's keys in another order than stored."""
    def w(spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": {"name": "w", "namespace": NS}, "spec": spec}

    _apply(api, w({"mode": "a", "replicas": 2}))
    _apply(api, w({"replicas": 2, "mode": "a"}))  # (equal, another key order: the JSON differs)
    _apply(api, w({"mode": "a"}))  # (replicas defaulted: 1)
    _apply(api, w({"mode": "a"}))
    _apply(api, w({"mode": "a", "extra": {"k": 1.0}}))
    _apply(api, w({"mode": "a", "extra": {"k": 1}}))


SCRIPTS: dict[str, Script] = {"network-policy": _network_policy, "network-policy-warnings": _network_policy_warnings,
                              "namespace": _namespace, "service": _service, "deployment": _deployment,
                              "widget": _widget}


def _run(script: Script, *, share: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every answer of ``script`` (with its code and warnings), then the final store, as JSON."""
    with monkeypatch.context() as m:
        if not share:
            m.setattr(patchmod, "share_decoded_as_stored", lambda decoded, stored, config: None)
        api = make_api()
        out: list[str] = []
        real = api.patch

        def patch(*args: Any, **kw: Any) -> Any:
            try:
                got = real(*args, **kw)
            except ApiError as e:
                out.append(orjson.dumps(e.status).decode())
                return None
            out.append(f"{api.last_code} {orjson.dumps(got).decode()} {api.last_warnings}")
            return got

        api.patch = patch  # type: ignore[method-assign]
        script(api)
        for kind in ("NetworkPolicy", "Namespace", "Service", "Deployment", "Widget"):
            k = api.resolve_kind(kind)
            out.append(orjson.dumps(api.list(kind, NS if k.namespaced else None)).decode())
    return out


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_an_applied_value_decoded_to_the_stored_one_answers_as_unshared(name: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A/B: the sharing changes no answer, code, warning or stored object."""
    served = _run(SCRIPTS[name], share=True, monkeypatch=monkeypatch)
    reference = _run(SCRIPTS[name], share=False, monkeypatch=monkeypatch)
    assert served == reference
    assert len(served) > 5


def test_the_sharing_makes_the_stored_spec_the_applied_one() -> None:
    """The shortcut is taken: a re-apply that leaves out the defaults keeps the stored spec object."""
    api = make_api()
    base = _np(podSelector={}, ingress=[{"ports": [{"port": 8080}]}])
    _apply(api, base)
    before = api._table(api.resolve_kind("NetworkPolicy")).get(NS, "np").obj
    base["metadata"]["labels"]["a"] = "2"
    _apply(api, base)
    after = api._table(api.resolve_kind("NetworkPolicy")).get(NS, "np").obj
    assert after is not before and after["spec"] is before["spec"]


def test_a_sole_applier_does_not_walk_the_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live/merged comparison is walked only for another manager's entry, once whatever their number."""
    calls: list[int] = []
    real = serverapply.changes

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(serverapply, "changes", counting)
    api = make_api()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}, "data": {"a": "1"}}
    _apply(api, cm)
    cm["data"]["a"] = "2"
    _apply(api, cm)
    assert calls == []
    api.patch("ConfigMap", "c", {"data": {"b": "x"}}, namespace=NS, actor="u1")
    api.patch("ConfigMap", "c", {"data": {"c": "y"}}, namespace=NS, actor="u2")
    cm["data"]["a"] = "3"
    out = _apply(api, cm)
    assert calls == [1]
    assert {e["manager"] for e in out["metadata"]["managedFields"]} == {"m", "u1", "u2"}
    with pytest.raises(ApiError) as err:
        _apply(api, {**cm, "data": {"a": "3", "b": "z"}})
    assert err.value.code == 409 and calls == [1, 1]


# --- the typed walks' shortcuts against their references ------------------------------------

_STAND_INS: tuple[Any, ...] = ("x", "", 1, 1.5, True, None, {}, [], {"k": "v"}, {"k": 1}, ["a"])


def _configs() -> list[dict[str, Any]]:
    """Applied Namespaces and ConfigMaps, each with one value changed in turn (types and shapes included)."""
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "n1", "labels": {"a": "1", "b": "2"}, "annotations": {"x": "y"}}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS, "labels": {"a": "1"},
                                                                "finalizers": ["f"]}, "data": {"k": "v"}}
    out = [ns, cm]
    for base in (ns, cm):
        out += [m for m in one_value_mutations(base, _STAND_INS) if m.get("kind") == base["kind"]
                and m.get("apiVersion") == "v1"]
    return out


def _typed(config: dict[str, Any]) -> tuple[APIServer, Any, dict[str, Any]]:
    """A server holding ``config``'s object as applied (or created bare when the apply fails), its root
    type, and the stored object."""
    from fakeapi.machinery.typedfields import root_type

    api = APIServer()
    kind = config["kind"]
    ns = NS if kind != "Namespace" else None
    if ns:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    name = "n1" if kind == "Namespace" else "c"
    try:
        api.patch(kind, name, copy.deepcopy(config), namespace=ns, patch_type="apply", field_manager="m")
    except ApiError:
        api.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": ns, "labels": {"z": "1"}}})
    k = api.resolve_kind(kind)
    return api, root_type(k.schema), api._table(k).get(ns or "", name).obj


def _json(value: Any) -> bytes:
    return orjson.dumps(value)  # (key order included)


def test_field_sets_with_the_memo_answer_as_the_walk() -> None:
    """``to_field_set`` with an apply memo (metadata by shape, twice: a miss, then a hit) answers as
    without one: the same set in the same order, or the same error."""
    from fakeapi.machinery import typedapply
    from fakeapi.machinery.typedfields import ApplyMemo, TypedError, root_type

    api = APIServer()
    memo = ApplyMemo()
    checked = 0
    for config in _configs():
        t = root_type(api.resolve_kind(config["kind"]).schema)
        for closed in (True, False):
            try:
                want: Any = _json(typedapply.to_field_set(config, t, closed=closed))
            except TypedError as e:
                want = str(e)
            for _ in range(2):
                try:
                    got: Any = _json(typedapply.to_field_set(config, t, closed=closed, memo=memo))
                except TypedError as e:
                    got = str(e)
                assert got == want, config
                checked += 1
    assert checked > 200


def test_merges_with_the_shortcuts_answer_as_the_unchecked_merge() -> None:
    """``merge(checked=True)`` with its memo (equal or leaf children taken without a call) builds what
    the plain merge builds, sharing the live object exactly when it does."""
    from fakeapi.machinery import typedapply
    from fakeapi.machinery.typedfields import ApplyMemo, TypedError

    memo = ApplyMemo()
    merged = 0
    configs = _configs()
    for live_config in configs[:2] + configs[2::7]:
        _, t, live = _typed(live_config)
        for config in configs[:40]:
            if config["kind"] != live["kind"]:
                continue
            try:
                typedapply.to_field_set(config, t, closed=True)
            except TypedError:
                continue  # (merge(checked=True) is only called on a configuration that types)
            want = typedapply.merge(live, config, t)
            for _ in range(2):
                got = typedapply.merge(live, config, t, checked=True, memo=memo)
                assert _json(got) == _json(want) and (got is live) == (want is live), config
                merged += 1
    assert merged > 50


def test_stripping_an_applied_set_answers_as_the_set_operations() -> None:
    """``_strip`` (one pass, metadata nodes remembered by identity) answers as ``difference`` with
    STRIPPED, then ``recursive_difference`` with the reset fields (for a set that may hold one of them),
    on every set of the configurations above and on sets that hold the stripped paths as members with
    children."""
    from fakeapi.machinery import fieldmanager, typedapply
    from fakeapi.machinery import fieldpath as fp
    from fakeapi.machinery.typedfields import TypedError, root_type

    api = APIServer()
    sets: list[Any] = [
        {"f:apiVersion": {".": {}, "f:x": {}}, "f:kind": {".": {}}, "f:metadata": {".": {}, "f:name": {}}},
        {"f:metadata": {}, "f:spec": {"f:a": {}}, "f:status": {"f:b": {}}},
        {"f:metadata": {"f:labels": {"f:a": {}}, "f:uid": {".": {}, "f:q": {}}}, "f:status": {}},
        {"f:spec": {}, "f:data": {"f:k": {}}},
    ]
    for config in _configs():
        with contextlib.suppress(TypedError):
            sets.append(typedapply.to_field_set(config, root_type(api.resolve_kind(config["kind"]).schema),
                                                closed=True))
    for s in sets:
        for ignored in (fp.EMPTY, fieldmanager._MAIN_RESET, fieldmanager._STATUS_RESET):
            want = s
            meta = s.get("f:metadata")
            if ("f:apiVersion" in s or "f:kind" in s or (meta is not None and (not meta or fp.MEMBER in meta))
                    or any(k in s for k in ignored)):  # (what can hold a stripped path: the rest is kept as it is)
                want = fp.difference(s, fieldmanager.STRIPPED)
                if ignored:
                    want = fp.recursive_difference(want, ignored)
            for _ in range(2):
                assert _json(fieldmanager._strip(s, ignored)) == _json(want), (s, ignored)
