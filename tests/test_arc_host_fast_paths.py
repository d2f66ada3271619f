"""The controller side's fast paths (issue 22) against the slow paths they stand in for.

Each fast path of the host and the ARC reconcilers is checked twice: on its own, against the
code it replaces, over generated inputs; and together, by running the ARC lifecycle of
``benchmarks/bench_arc.py`` with every fast path and again with every one of them switched
back to its slow path: the trace (every request, its answer and resourceVersion) and every
object the server stored must be the same.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakeapi.codec.godecode import go_decode
from fakeapi.codec.gomodel import go_roundtrip
from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.patches import create_merge_patch
from reconcilers import autoscalingrunnerset, common, resourcebuilder, revision
from reconcilers import constants as c
from reconcilers.common import patch_finalizers, patch_status, status_diff
from reconcilers.ephemeralrunnerset import EphemeralRunnerSetReconciler
from reconcilers.gotypes import status_type
from reconcilers.revision import runner_revision
from reconcilers.testing import ArcCluster
from tests.support import one_value_mutations

# ------------------------------------------------------------------ pod template hash


def _dumps(value: Any) -> str:
    """What pod_template_hash serialised before its encoder was made once."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


HASH_INPUTS: list[Any] = [
    [{}, {}, {}, {}],
    [{"b": "1", "a": "2"}, {"z": "", "é": "ü"}, {"spec": {"containers": [{"name": "runner", "image": "i"}]}}, {}],
    [{"k": "line\nbreak\t\"quoted\" \\ \u0001 \u2028 日本"}, {}, {"n": [1, -2, 3.5, 1e16, 1.5e-7, True, False, None]}, {}],
    [{}, {}, {"nested": {"b": {"d": [], "c": {}}, "a": [{"y": 1, "x": 2}]}, "big": 2**70}, {"jitToken": "dG9r"}],
]


@pytest.mark.parametrize("value", HASH_INPUTS)
def test_the_hash_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    assert resourcebuilder._HASH_ENCODER.encode(value) == _dumps(value)


def test_pod_template_hash_is_the_fnv_of_the_json_dumps_text() -> None:
    labels = {"b": "1", c.LABEL_RUNNER_TEMPLATE_HASH: "x", "a": "é"}
    annotations = {"n": "1"}
    spec = {"spec": {"containers": [{"name": "runner", "image": "i", "env": []}]}, "metadata": {}}
    data = {"jitToken": "dG9r"}
    text = _dumps([{"b": "1", "a": "é"}, annotations, spec, data])
    want = resourcebuilder.safe_encode_string(str(resourcebuilder._fnv32a(text.encode())))
    assert resourcebuilder.pod_template_hash(labels, annotations, spec, data) == want


def _safe_encode_by_character(text: str) -> str:
    alphabet = resourcebuilder._SAFE_ALPHANUMS
    return "".join(alphabet[ord(ch) % len(alphabet)] for ch in text)


@pytest.mark.parametrize("text", ["", "0123456789", "4294967295", "".join(map(chr, range(128))), "abc\u00e9", "日本9"])
def test_safe_encode_string_maps_each_character_as_go_does(text: str) -> None:
    assert resourcebuilder.safe_encode_string(text) == _safe_encode_by_character(text)


PARSE_INPUTS: list[Any] = ["0", "1", "-1", "+7", "", " 3", "3.0", "1_0", "+", "-", "٣", "9223372036854775807",
                           "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "0" * 30 + "1",
                           None, 3, True, 1.0, [], "007"]


def _parse_int64_uncached(value: object) -> int | None:
    if not isinstance(value, str) or not value:
        return None
    body = value[1:] if value[0] in "+-" else value
    if not body or not all(ch in "0123456789" for ch in body):
        return None
    n = int(value)
    return n if -(2**63) <= n <= 2**63 - 1 else None


@pytest.mark.parametrize("value", PARSE_INPUTS)
def test_parse_int64_answers_from_its_memo_as_it_computes(value: Any) -> None:
    want = _parse_int64_uncached(value)
    assert revision.parse_int64(value) == want and type(revision.parse_int64(value)) is type(want)  # (twice: memo)


# ------------------------------------------------------------------ status diffs


#: Values of each Go kind a status field has: zero, others, and one of another JSON type.
_FIELD_VALUES: dict[str, list[Any]] = {
    "bool": [False, True, None],
    "string": ["", "Running", "x", None],
    "int": [0, 1, 7, None],
    "map": [{}, {"u": "2026-01-01T00:00:00Z"}, {"u": "2026-01-01T00:00:00Z", "v": "2026-01-02T00:00:00Z"}, None],
}


def _status_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(kind, status before, values set): every field of every ARC status type, alone and with others, set
    from and to each of its sample values; a field unknown to the Go type; keys in several orders."""
    cases = []
    for kind in (c.KIND_ER, c.KIND_ERS, c.KIND_ARS):
        fields = list(status_type(kind).fields.items())
        full = {n: _FIELD_VALUES[f.type.kind][1] for n, f in fields}
        for i, (name, f) in enumerate(fields):
            other, nxt = fields[(i + 3) % len(fields)][0], fields[(i + 5) % len(fields)][0]
            for a in _FIELD_VALUES[f.type.kind]:
                for b in _FIELD_VALUES[f.type.kind]:
                    for before in ({}, {name: a}, {**full, name: a}, {other: full[other], name: a, "unknown": 1},
                                   dict(reversed(list({**full, name: a}.items())))):
                        if a is None:
                            before = {k: v for k, v in before.items() if k != name}
                        cases.append((kind, before, {name: b}))
                        cases.append((kind, before, {nxt: full[nxt], name: b, other: _FIELD_VALUES[
                            status_type(kind).fields[other].type.kind][0]}))
    return cases


def _ordered(v: Any) -> Any:
    """``v`` with its dicts as lists of items: key order counts in comparisons."""
    if isinstance(v, dict):
        return [(k, _ordered(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [_ordered(x) for x in v]
    return v


def test_status_diff_encodes_only_the_fields_set_and_diffs_as_encoding_all_of_them() -> None:
    cases = _status_cases()
    assert len(cases) > 1000
    for kind, before, values in cases:
        t = status_type(kind)
        want = create_merge_patch(go_roundtrip(dict(before), t), go_roundtrip({**before, **values}, t))
        got = status_diff(before, values, t)
        assert _ordered(got) == _ordered(want), (kind, before, values)


# ------------------------------------------------------------------ spec drift


_RUNNER_SPEC: dict[str, Any] = {
    "githubConfigUrl": "https://github.com/example/app", "githubConfigSecret": "gh", "runnerScaleSetId": 1,
    "metadata": {"labels": {"a": "b"}},
    "spec": {"restartPolicy": "Never", "containers": [
        {"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0", "env": [{"name": "A", "value": "1"}],
         "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}}]},
}
_STAND_INS: tuple[Any, ...] = (None, "", "1", "1000m", 0, 1, 1.0, True, False, [], {}, {"name": "runner"})


def test_runner_spec_drift_with_the_document_check_is_semantic_inequality() -> None:
    """Over every one-value change of a runner spec (valid or not for its Go type), compared with
    the spec and with each other change: the same document is never drift, and the answer is
    ``not semantic_equal`` whenever the two decode alike."""
    from fakeapi.codec.semantic import semantic_equal
    from reconcilers.gotypes import ephemeral_runner_spec_type
    from reconcilers.revision import runner_spec_drift, same_document

    t = ephemeral_runner_spec_type()
    docs = [_RUNNER_SPEC, *one_value_mutations(_RUNNER_SPEC, _STAND_INS)]
    assert len(docs) > 200
    decoded = []
    for d in docs:
        try:
            decoded.append(go_decode(d, t))
        except ValueError:
            continue  # not a value of the Go type: never read through the codec
    pairs = 0
    for a in decoded:
        for b in (decoded[0], go_decode(a, t), json.loads(json.dumps(a))):
            assert runner_spec_drift(a, b) is (not semantic_equal(a, b, t)), (a, b)
            if same_document(a, b):
                pairs += 1
                assert semantic_equal(a, b, t)
    assert pairs >= len(decoded) * 2
    assert same_document({"a": 1}, {"a": 1.0}) is False and same_document({"a": 1}, {"a": True}) is False
    assert same_document({"a": 1, "b": 2}, {"b": 2, "a": 1}) is False  # (key order counts: then the typed walk)
    assert same_document({"a": 2**70}, {"a": 2**70}) is False  # (orjson cannot: the typed walk decides)


# ------------------------------------------------------------------ gets that may find nothing


def _get_or_none_by_error(client: Client, kind: str, name: str, namespace: str) -> Any:
    """What get_or_none did before Client.find: a get, its NotFound caught."""
    from fakeapi.machinery.errors import is_not_found

    try:
        return client.get(kind, name, namespace)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


FIND_RULES: list[dict[str, Any] | None] = [
    None,
    {"on": {"verb": "get", "kind": "Secret"}, "error": "NotFound"},
    {"on": {"verb": "get", "kind": "Secret"}, "error": "InternalError"},
    {"on": {"verb": "get", "kind": "Secret"}, "stale": True},
    {"on": {"verb": "get", "kind": "Secret"}, "crash": "before"},
    {"on": {"verb": "get", "kind": "Secret"}, "crash": "after"},
    {"on": {"verb": "get", "kind": "Pod"}, "error": "NotFound"},
]


def _outcome(fn: Any) -> Any:
    try:
        return ("value", fn())
    except Exception as e:  # (the error itself is the outcome compared)
        return ("raised", type(e).__name__, str(e))


@pytest.mark.parametrize("rule", FIND_RULES)
@pytest.mark.parametrize("name", ["gh", "absent"])
@pytest.mark.parametrize("cached", [True, False])
def test_find_answers_as_a_get_with_its_not_found_caught(rule: dict[str, Any] | None, name: str, cached: bool) -> None:
    """Client.find (what get_or_none calls) against a get whose NotFound is caught: the same answer or
    error, and the same trace, from the controller's cache and from the server, with every kind of
    fault rule."""
    results = []
    for find in (True, False):
        cluster = ArcCluster(check_invariants=False)
        ctx = cluster.host.controllers[c.CONTROLLER_ER].ctx
        client = ctx.client if cached else ctx.api_reader
        if rule is not None:
            cluster.api.faults.add(rule)
        read = (lambda cl=client: cl.find("Secret", name, "ci")) if find else \
            (lambda cl=client: _get_or_none_by_error(cl, "Secret", name, "ci"))
        got = [_outcome(read) for _ in range(2)]
        calls = [f"{e!r}" for e in cluster.api.trace.entries]
        results.append((got, calls, [r.fired for r in cluster.api.faults.rules]))
    assert results[0] == results[1]


# ------------------------------------------------------------------ answers not read


def _runner(name: str) -> dict[str, Any]:
    return {"apiVersion": c.API_VERSION, "kind": c.KIND_ER,
            "metadata": {"name": name, "namespace": "ci", "finalizers": [c.FINALIZER_ER]},
            "spec": {"githubConfigUrl": "https://github.com/example/app", "githubConfigSecret": "gh",
                     "runnerScaleSetId": 1, "spec": {"containers": [{"name": "runner", "image": "i"}]}}}


@pytest.mark.parametrize("values", [
    {"phase": "Pending"},
    {"phase": "Running", "ready": True, "runnerId": 4},
    {"failures": {"u": "2026-01-01T00:00:00Z"}, "ready": False, "reason": "", "message": "m"},
])
def test_a_patch_whose_answer_is_not_read_is_the_same_request(values: dict[str, Any]) -> None:
    """``read_answer=False`` sends what the decoding path sends and stores the same object; a later
    read through the codec sees what ``go_decode`` of the stored object gives."""
    cluster = ArcCluster(check_invariants=False)
    api = cluster.api
    client = Client(api, c.CONTROLLER_ER, unsafe_disable_deep_copy=True)
    rt = status_type(c.KIND_ER)
    stored = []
    for name, read in (("fast", False), ("slow", True)):
        er = client.create(_runner(name))
        patch_status(client, er, values, rt, read_answer=read)
        er = client.get(c.KIND_ER, name, "ci")
        patch_finalizers(client, er, add=["x/y"], read_answer=read)
        got = client.get(c.KIND_ER, name, "ci")
        raw = api.get(c.KIND_ER, name, "ci", api_version=c.API_VERSION)
        want = go_decode(raw, api.kinds.require(c.KIND_ER, c.API_VERSION).go_type)
        want["apiVersion"], want["kind"] = c.API_VERSION, c.KIND_ER
        assert got == want
        stored.append(raw)
    calls = [(e.verb, e.kind, e.subresource, e.patch_type, e.code) for e in api.trace.calls if e.actor == c.CONTROLLER_ER]
    assert calls[: len(calls) // 2] == calls[len(calls) // 2:]
    for raw in stored:
        for m in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields"):
            raw["metadata"].pop(m, None)
    assert stored[0] == stored[1]


# ------------------------------------------------------------------ the lifecycle, both ways


def _slow_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch every fast path of this module's subject back to the code it replaced."""

    class Dumps:
        def encode(self, value: Any) -> str:
            return _dumps(value)

    monkeypatch.setattr(resourcebuilder, "_HASH_ENCODER", Dumps())
    patch = Client.patch

    def always_read(self: Client, *args: Any, read_answer: bool = True, **kw: Any) -> dict[str, Any]:
        return patch(self, *args, **kw)

    monkeypatch.setattr(Client, "patch", always_read)

    def full_status_diff(before: Any, values: Any, t: Any) -> Any:
        return create_merge_patch(go_roundtrip(dict(before), t), go_roundtrip({**before, **values}, t))

    monkeypatch.setattr(common, "status_diff", full_status_diff)

    def create_runners(self: Any, client: Any, ers: Any, count: int) -> None:
        errs = []
        for _ in range(count):
            try:
                client.create(resourcebuilder.build_ephemeral_runner(ers))  # built and encoded for each runner
            except ApiError as e:
                errs.append(e)
        if errs:
            raise errs[0]

    monkeypatch.setattr(EphemeralRunnerSetReconciler, "_create_runners", create_runners)
    monkeypatch.setattr(revision, "same_document", lambda _a, _b: False)
    monkeypatch.setattr(resourcebuilder, "safe_encode_string", _safe_encode_by_character)
    monkeypatch.setattr(revision, "_PARSED_MAX", 0)
    monkeypatch.setattr(revision, "_PARSED", {})
    monkeypatch.setattr(common, "Client", None)  # (get_or_none: a get, its NotFound caught)
    monkeypatch.setattr(autoscalingrunnerset, "same_document", lambda _a, _b: False)


def lifecycle(a: ArcCluster) -> None:
    """``benchmarks/bench_arc.py``'s lifecycle: create, scale to 10, new image, a rejected image, a fix."""
    a.create_ars(min_runners=1, max_runners=20)
    a.settle()
    a.patch_ars({"spec": {"minRunners": 10}})
    a.settle()
    a.set_image("ghcr.io/actions/actions-runner:2.331.0")
    a.settle()
    a.reject_image("ghcr.io/actions/actions-runner:2.100.0")
    a.set_image("ghcr.io/actions/actions-runner:2.100.0")
    a.settle()
    a.set_image("ghcr.io/actions/actions-runner:2.332.0")
    a.settle()
    assert {runner_revision(r) for r in a.runners()} == {3}


def _record(seed: int) -> list[str]:
    """The lifecycle's trace and every object the server stored, as text."""
    cluster = ArcCluster(seed=seed)
    out: list[str] = []
    cluster.api.add_listener(lambda et, k, o, _old: out.append(f"{et} {k.kind} {json.dumps(o, default=str)}"))
    lifecycle(cluster)
    assert cluster.violations == []
    out.extend(f"{e.render()} {e!r}" for e in cluster.api.trace.entries)  # (repr: every field)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_the_lifecycle_is_the_same_with_and_without_the_fast_paths(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _record(seed)
    with monkeypatch.context() as m:
        _slow_paths(m)
        slow = _record(seed)
    assert len(fast) == len(slow)
    assert fast == slow
