"""The body checks' ``json_only`` trust (issue 22): a Go client's body (``go_encoded``) is JSON, so the check
does not read it back to compare. On JSON values it answers exactly as the untrusting check does; with
``FAKEAPI_CHECK_SNAPSHOTS=1`` a go_encoded body that is not JSON raises NotGoEncoded instead of passing."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakeapi.codec.gomodel import go_roundtrip
from fakeapi.codec.snapshoterrors import NotGoEncoded
from fakeapi.machinery import bodycheck, errors
from fakeapi.server.apiserver import APIServer
from tests.test_bodycheck_fastpath import _FINE, _ODD


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value (the types a decoded JSON text holds), nested a few levels."""
    pick = rng.randrange(9 if depth < 4 else 6)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice([0, 1, -7, 2**63 - 1, -(2**63), 2**64 - 1])
    if pick == 3:
        return rng.choice([0.5, -1.25, 1e300, 2.0, -0.0, 3.0e-5])
    if pick in (4, 5):
        return rng.choice(["", "a", "é", "\u2028", "x" * rng.randrange(1, 40), "名前", "\\\"q"])
    if pick in (6, 7):
        return {rng.choice(["a", "b", "spec", "é", ""]) + str(i): _json_value(rng, depth + 1)
                for i in range(rng.randrange(4))}
    return [_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _answer(fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return ("ok", fn(*args, **kw))
    except errors.ApiError as e:
        return (e.code, e.message)


def _bodies() -> list[Any]:
    rng = random.Random(22)
    out: list[Any] = [{"v": [leaf]} for leaf in _FINE]
    out += [{"apiVersion": "v1", "kind": "ConfigMap", "data": _json_value(rng)} for _ in range(300)]
    deep: Any = "x"
    for _ in range(bodycheck.ROOM_FROM + 3):
        deep = [deep]
    out.append({"v": deep})  # (walked: nested past ROOM_FROM)
    out.append({"data": {"v": "x" * (bodycheck.MAX_OBJECT_BYTES // 2)}})  # (walked: its size)
    out.append({"data": {"v": "x" * bodycheck.MAX_OBJECT_BYTES}})  # (too large: 500)
    return out


def test_json_only_checks_answer_as_the_checks_on_json_values() -> None:
    for body in _bodies():
        assert bodycheck.is_json_only(body) in (True, None)
        assert _answer(bodycheck.check_object, body, json_only=True) == _answer(bodycheck.check_object, body)
        assert _answer(bodycheck.check_body, body, json_only=True) == _answer(bodycheck.check_body, body)
        base: dict[str, Any] = {"data": {"keep": [1, 2]}, "spec": {"a": "b"}}
        result = {**base, "data": {**base["data"], "new": body}}
        for chars in (10, bodycheck.SMALL_BODY):
            assert (_answer(bodycheck.check_patched, result, base, chars, json_only=True)
                    == _answer(bodycheck.check_patched, result, base, chars))


def test_is_json_only_tells_what_the_trust_would_let_through() -> None:
    """False exactly where the untrusting check reads back something else (a tuple, a UUID, an enum member,
    NaN, a fragment: the values orjson writes that are not JSON); None where orjson cannot write it."""
    for leaf in _FINE:
        assert bodycheck.is_json_only({"v": [leaf]}) is True
    for leaf in _ODD:
        plain = bodycheck._plain_size({"v": [leaf]}, bodycheck.MAX_DEPTH)
        trusted = bodycheck._plain_size({"v": [leaf]}, bodycheck.MAX_DEPTH, True)
        got = bodycheck.is_json_only({"v": [leaf]})
        assert got is not True or plain is not None, leaf
        if got is None:
            assert trusted is None, leaf  # (orjson refuses it: walked, trusted or not)
        elif got is False:
            assert plain is None and trusted is not None, leaf


def _pod(name: str, extra: Any = None) -> dict[str, Any]:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    if extra is not None:
        pod["spec"]["containers"][0]["args"] = extra
    return pod


def test_guarded_server_refuses_a_go_encoded_body_that_is_not_json() -> None:
    api = APIServer()
    assert api.snapshot_guard is not None  # (conftest: FAKEAPI_CHECK_SNAPSHOTS=1)
    with pytest.raises(NotGoEncoded):
        api.create(_pod("p", ("a", "b")), go_encoded=True)
    with pytest.raises(errors.ApiError) as got:  # (the untrusting path: the walk's 400)
        api.create(_pod("p", ("a", "b")))
    assert got.value.code == 400
    api.create(_pod("p"), go_encoded=True)
    with pytest.raises(NotGoEncoded):
        api.patch("Pod", "p", {"status": {"conditions": ({"type": "Ready", "status": "True"},)}},
                  namespace="default", patch_type="strategic", subresource="status", go_encoded=True)


def test_go_encoded_writes_answer_as_untrusted_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Creates and status patches of Go-encoded JSON bodies: the same answers, errors, stored objects and
    trace, go_encoded (trusted, as a server without the snapshot guard trusts it) or not."""
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "0")
    runs = []
    for go in (True, False):
        rng = random.Random(5)
        api = APIServer(seed=3)
        answers = []
        for i in range(12):
            extra = [rng.choice(["x", "é", "--flag=1"]) for _ in range(i % 4)] if i % 3 else None
            pod = go_roundtrip(_pod(f"p{i}", extra), api.kinds.require("Pod", "v1").go_type)
            answers.append(_answer(api.create, pod, go_encoded=go))
            big = {"data": {"v": "x" * (bodycheck.MAX_OBJECT_BYTES if i == 7 else 10)}}
            cm = go_roundtrip({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": f"c{i}", "namespace": "default"}, **big},
                              api.kinds.require("ConfigMap", "v1").go_type)
            answers.append(_answer(api.create, cm, go_encoded=go))
            patch = {"status": {"conditions": [{"type": "Ready", "status": rng.choice(["True", "False"]),
                                                "lastProbeTime": None}]}}
            answers.append(_answer(api.patch, "Pod", f"p{i}", patch, namespace="default", patch_type="strategic",
                                   subresource="status", go_encoded=go))
        stored = [(o["metadata"]["name"], o) for o in api.list("Pod", "default")["items"]]
        runs.append((answers, stored, api.trace.render()))
    assert runs[0] == runs[1]
