"""kube-apiserver's nesting bound: 10000 levels of objects and arrays, past which Go's JSON scanner
(encoding/json and sigs.k8s.io/json, scanner.go ``maxNestingDepth``) fails with the syntax error
``invalid character '{' exceeded max depth``.

A body at the bound is handled as kube-apiserver handles it (stored, read, patched, served over
HTTP from a worker thread), one past it is Go's error; neither is ever a ``RecursionError``.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest
from support import WIDGET_AV, make_api

from fakeapi.machinery import bodycheck, boundedyaml
from fakeapi.machinery.errors import ApiError

LIMIT = bodycheck.MAX_DEPTH


def nested(depth: int) -> Any:
    """A value ``depth`` objects deep."""
    v: Any = "leaf"
    for _ in range(depth):
        v = {"k": v}
    return v


def widget_at(depth: int) -> dict[str, Any]:
    """A Widget nested ``depth`` containers deep in all (object > spec > extra > ...)."""
    return {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
            "spec": {"extra": nested(depth - 2)}}


def depth_of(value: Any) -> int:
    """The nesting of ``value`` (iteratively)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v)
    return deepest


def test_the_bound_is_kube_apiservers() -> None:
    """Go's ``maxNestingDepth``."""
    assert LIMIT == 10000


def test_json_text_at_the_bound_decodes() -> None:
    """Ten thousand nested arrays: decoded, where Python's own json stops near a thousand."""
    value = bodycheck.loads("[" * LIMIT + "]" * LIMIT)
    assert depth_of(value) == LIMIT


@pytest.mark.parametrize(("text", "char"), [
    ("[" * (LIMIT + 1) + "]" * (LIMIT + 1), "["),
    ('{"a":' * LIMIT + "[]" + "}" * LIMIT, "["),
    ("[" * LIMIT + "{}" + "]" * LIMIT, "{"),
], ids=["arrays", "objects-then-an-array", "arrays-then-an-object"])
def test_json_text_one_past_the_bound_is_gos_syntax_error(text: str, char: str) -> None:
    """The bracket that goes past is named, as Go's scanner does (``s.error(c, "exceeded max depth")``)."""
    with pytest.raises(bodycheck.BodyProblem) as info:
        bodycheck.loads(text)
    assert str(info.value) == f"invalid character '{char}' exceeded max depth"


def test_brackets_inside_strings_do_not_nest() -> None:
    """A string full of brackets is one value at depth one."""
    assert bodycheck.loads(json.dumps(["[{" * 20000])) == ["[{" * 20000]
    assert bodycheck.text_depth_problem(json.dumps({"a": '\\"[' * 20000})) is None


def test_a_dict_body_at_the_bound_is_stored_and_one_past_is_a_400() -> None:
    """In-process bodies (no JSON text) get the same bound, with the path where it is passed."""
    api = make_api()
    out = api.create(widget_at(LIMIT))
    assert depth_of(out["spec"]) == LIMIT - 1
    assert api.get("Widget", "w", "ns")["spec"] == out["spec"]
    with pytest.raises(ApiError) as info:
        api.create({**widget_at(LIMIT + 1), "metadata": {"name": "w2", "namespace": "ns"}})
    assert info.value.code == 400
    assert info.value.message.startswith(f"exceeded max depth of {LIMIT} (at spec.extra.k.k.k")


def test_a_bytes_patch_past_the_bound_is_gos_syntax_error() -> None:
    """A merge patch given as JSON text: decoded with Go's bound."""
    api = make_api()
    api.create(widget_at(10))
    patch = '{"spec":{"extra":' + '{"k":' * LIMIT + "1" + "}" * LIMIT + "}}"
    with pytest.raises(ApiError) as info:
        api.patch("Widget", "w", patch, namespace="ns")
    assert (info.value.code, info.value.message) == (
        400, "error decoding patch: invalid character '{' exceeded max depth")


def _request(ep: Any, method: str, path: str, body: bytes = b"",
             ctype: str = "application/json") -> tuple[int, Any]:
    conn = http.client.HTTPConnection(ep.host, ep.port, timeout=60)
    try:
        conn.request(method, path, body=body or None, headers={"Content-Type": ctype})
        resp = conn.getresponse()
        # (json, not bodycheck.loads: an answer's managedFields mirror the object a few levels deeper
        # than the bound, which kube-apiserver's encoder writes and a Go client could not decode)
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_over_http_a_body_at_the_bound_is_served_and_one_past_is_gos_400() -> None:
    """Create, read, merge-patch and list a Widget 10000 levels deep from the server's worker threads;
    10001 levels is the decoder's 400 (``meta.Interpret``'s ``couldn't get version/kind; json parse
    error: ...`` in the handler's ``transformDecodeError``, with the body's first 30 bytes)."""
    api = make_api()
    bodycheck.ensure_room()  # (for this test's own json.loads of the answers)
    path = "/apis/example.com/v1/namespaces/ns/widgets"
    with api.serve() as ep:
        code, out = _request(ep, "POST", path, json.dumps(widget_at(LIMIT)).encode())
        assert code == 201, out
        assert depth_of(out["spec"]) == LIMIT - 1
        code, got = _request(ep, "GET", path + "/w")
        assert code == 200 and got["spec"] == out["spec"]
        patch = {"spec": {"extra": {"k2": nested(LIMIT - 3)}}}
        code, patched = _request(ep, "PATCH", path + "/w", json.dumps(patch).encode(),
                                 "application/merge-patch+json")
        assert code == 200 and depth_of(patched["spec"]["extra"]["k2"]) == LIMIT - 3
        code, listed = _request(ep, "GET", path)
        assert code == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["w"]
        too_deep = json.dumps({**widget_at(LIMIT + 1), "metadata": {"name": "w2", "namespace": "ns"}})
        code, status = _request(ep, "POST", path, too_deep.encode())
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse "
        f"error: invalid character '{{' exceeded max depth ({too_deep[:30]} ...)")
    assert [w["metadata"]["name"] for w in api.list("Widget", "ns")["items"]] == ["w"]


def test_yaml_bodies_get_go_yamls_bound_and_fixtures_fakeapis() -> None:
    """A request body's YAML nests to 10000 levels as go-yaml allows; fakeapi's own files stop at 100."""
    text = "x: " + "[" * (LIMIT - 1) + "]" * (LIMIT - 1) + "\n"
    assert depth_of(boundedyaml.load(text, max_depth=LIMIT)) == LIMIT
    with pytest.raises(boundedyaml.YAMLBoundError, match=f"yaml: exceeded max depth of {LIMIT} "):
        boundedyaml.load("x: " + "[" * LIMIT + "]" * LIMIT + "\n", max_depth=LIMIT)
    with pytest.raises(boundedyaml.YAMLBoundError, match=f"yaml: exceeded max depth of {boundedyaml.MAX_DEPTH} "):
        boundedyaml.load(text)


def test_libyamls_own_nesting_bound_is_raised_to_the_requested_one_and_never_lowered() -> None:
    """The libyaml of PyYAML 6.0.4 and later stops flow nesting at 1000 on its own: a request body's
    10000 raises it (where PyYAML's extension has no bound, nothing needs raising); a smaller bound
    never lowers it."""
    text = "x: " + "[" * 1500 + "]" * 1500 + "\n"
    assert depth_of(boundedyaml.load(text, max_depth=LIMIT)) == 1501
    assert boundedyaml.libyaml_nest_level() >= LIMIT
    assert boundedyaml.raise_libyaml_nest_level(5)
    assert boundedyaml.libyaml_nest_level() >= LIMIT
