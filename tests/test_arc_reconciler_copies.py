"""The ARC controllers' copies and texts made once (issue 22) against the code they stand in for.

* :func:`reconcilers.common.mutate` copies with one orjson round trip (was :func:`fast_copy`);
* :func:`reconcilers.common.mutate_top` copies only ``metadata`` and ``spec`` (the ARS controller's
  MergeFrom patches; was :func:`mutate`, a deep copy);
* the EphemeralRunnerSet controller's last create of a batch sends the encoded body itself (was a copy);
* the answers of status and finalizer patches nobody reads are not decoded (``read_answer=False``);
* :func:`reconcilers.resourcebuilder.pod_template_hash` with ``shared_spec`` writes the runner
  spec's text once per spec object (was the whole list's text for every pod);
* the ER controller's runner pod is encoded by parts, its spec once per runner spec object
  (:func:`reconcilers.resourcebuilder.encoded_runner_pod_spec`; was ``client.encode`` of every pod).

Each is checked on its own, table-driven or randomized, against the slow path, and all of them
together by running the ARC lifecycle both ways: the trace and every stored object must be the same.
"""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from typing import Any

import pytest

from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import fast_copy
from reconcilers import autoscalingrunnerset, common, resourcebuilder
from reconcilers import constants as c
from reconcilers.ephemeralrunnerset import EphemeralRunnerSetReconciler
from reconcilers.testing import ArcCluster
from tests.support import one_value_mutations
from tests.test_arc_host_fast_paths import _record

Obj = dict[str, Any]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value of the kinds decoded objects hold (floats and unicode included)."""
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice([0, 1, -7, 2**40, True, False, None, "", "x", "é 日本 \n\"", 0.5, 1e-05, -0.0, 100.0])
    if r < 0.7:
        return {rng.choice("abcdefgh") + str(i): _random_json(rng, depth + 1) for i in range(rng.randrange(5))}
    return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]


def _random_object(rng: random.Random) -> Obj:
    obj: Obj = {"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunnerSet"}
    for key in ("metadata", "spec", "status"):
        if rng.random() < 0.85:
            value = _random_json(rng, 1)
            obj[key] = value if isinstance(value, dict) else {"v": value}
    return obj


# ------------------------------------------------------------------ mutate, mutate_top


def _mutate_by_fast_copy(obj: Obj, fn: Any) -> Obj:
    """:func:`common.mutate` as it was: a :func:`fast_copy`."""
    out = fast_copy(obj)
    out.setdefault("metadata", {})
    fn(out)
    return out


def _top_level_edits(rng: random.Random) -> Any:
    """An ``fn`` of the kind the ARS controller passes: keys of metadata and spec set, replaced, removed."""
    edits = [(rng.choice(["metadata", "spec"]), rng.choice("abcdefgh") + str(rng.randrange(3)),
              rng.choice(["pop", "set"]), _random_json(rng, 2)) for _ in range(rng.randrange(1, 4))]

    def fn(o: Obj) -> None:
        for part, key, op, value in edits:
            target = o.setdefault(part, {})
            if op == "pop":
                target.pop(key, None)
            else:
                target[key] = value

    return fn


@pytest.mark.parametrize("seed", range(40))
def test_mutate_makes_what_the_deep_copy_made(seed: int) -> None:
    rng = random.Random(seed)
    obj = _random_object(rng)
    before = json.dumps(obj)
    fn = _top_level_edits(rng)
    fast, slow = common.mutate(obj, fn), _mutate_by_fast_copy(obj, fn)
    assert json.dumps(fast) == json.dumps(slow)  # (the same document, key order and types included)
    assert json.dumps(obj) == before


@pytest.mark.parametrize("seed", range(40))
def test_mutate_top_makes_what_mutate_made_and_leaves_the_original_alone(seed: int) -> None:
    rng = random.Random(seed)
    obj = _random_object(rng)
    before = json.dumps(obj)
    fn = _top_level_edits(rng)
    fast, slow = common.mutate_top(obj, fn), common.mutate(obj, fn)
    assert json.dumps(fast) == json.dumps(slow)
    assert json.dumps(obj) == before


def test_mutate_copies_what_orjson_cannot_carry_as_fast_copy_does() -> None:
    obj: Obj = {"metadata": {"n": 2**70}, "spec": OrderedDict(a=1)}
    assert common.mutate(obj, lambda o: None) == _mutate_by_fast_copy(obj, lambda o: None)


# ------------------------------------------------------------------ the hash's text, by parts


def _dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


SPECS: list[Any] = [
    {},
    {"spec": {"containers": [{"name": "runner", "image": "i", "env": [{"name": "A", "value": "b"}]}]}},
    {"metadata": {"labels": {"b": "1", "a": "2"}}, "spec": {"containers": [], "nodeSelector": {"z": "é"}}},
    {"githubConfigUrl": "https://github.com/o", "runnerScaleSetId": 2**63 - 1, "spec": {"x": [True, None]}},
    {"spec": {"containers": [{"name": "runner", "resources": {"limits": {"cpu": 0.5}}}]}},  # a float
    {"big": 2**70},  # beyond orjson's 64 bits
    {1: "an int key"},
    {"t": ("a", 1)},
    OrderedDict(b=1, a=2),
]
LABELS: list[Any] = [{}, {"b": "1", "a": "2", c.LABEL_RUNNER_TEMPLATE_HASH: "x"}, {"k": "line\nbreak \u2028"}]
SECRET_DATA: list[Any] = [{}, {"jitToken": "dG9r", "runnerId": "MQ=="}, {"n": 2**70}]


@pytest.mark.parametrize("spec", SPECS)
def test_pod_template_hash_of_a_shared_spec_is_the_hash_of_the_whole_text(spec: Any) -> None:
    for labels in LABELS:
        for annots in ({}, {"z": "1", "a": "é"}):
            for data in SECRET_DATA:
                slow = resourcebuilder.safe_encode_string(str(resourcebuilder._fnv32a(_dumps(
                    [{k: v for k, v in labels.items() if k != c.LABEL_RUNNER_TEMPLATE_HASH}, annots,
                     spec, data]))))
                for _ in range(2):  # (the second time from the memo)
                    got = resourcebuilder.pod_template_hash(labels, annots, spec, data, shared_spec=True)
                    assert got == slow
                    assert resourcebuilder.pod_template_hash(labels, annots, spec, data) == slow


def test_the_spec_text_memo_is_by_identity_and_bounded() -> None:
    a, b = {"x": 1}, {"x": 1}
    assert resourcebuilder._spec_text(a) == resourcebuilder._spec_text(b) == b'{"x":1}'
    assert resourcebuilder._SPEC_TEXTS[id(a)][0] is a
    for i in range(resourcebuilder._SPEC_TEXTS_MAX * 2):
        resourcebuilder._spec_text({"i": i})
    assert len(resourcebuilder._SPEC_TEXTS) <= resourcebuilder._SPEC_TEXTS_MAX


# ------------------------------------------------------------------ the runner pod, encoded by parts


TEMPLATES: list[Any] = [
    {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:latest", "command": ["/run.sh"]}]},
    {"containers": [{"name": "runner", "image": "i", "env": [], "resources": {"limits": {"cpu": "1000m",
                                                                                         "memory": "1Gi"},
                                                                              "requests": {"cpu": "0.5"}}}],
     "restartPolicy": "OnFailure", "nodeSelector": {}, "volumes": []},
    {"initContainers": [{"name": "init", "image": "busybox", "args": []}],
     "containers": [{"name": "sidecar", "image": "s", "ports": [{"containerPort": 80}]},
                    {"name": "runner", "image": "r", "env": [
                        {"name": "ACTIONS_RUNNER_CONTAINER_HOOKS", "value": "/hooks/index.js"},
                        {"name": "FROM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                     "volumeMounts": [{"name": "work", "mountPath": "/home/runner/_work"}],
                     "securityContext": {"runAsUser": 1001, "privileged": False}}],
     "volumes": [{"name": "work", "emptyDir": {}}], "serviceAccountName": "sa",
     "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
     "terminationGracePeriodSeconds": 30},
    {"containers": [{"name": "sidecar", "image": "s"}]},  # no runner container: no JIT config entry
    {"containers": [{"name": "runner", "image": "a"}, {"name": "runner", "image": "b"}]},  # two: the slow path
    {"containers": [{"name": "runner", "image": "i", "env": [{"name": "X", "value": "\x00arc-jit-secret\x00"}]}]},
    {"containers": [{"name": "runner", "image": "i", "resources": {"limits": {"cpu": 2}}}]},  # a number
    {"containers": [{"name": "runner", "image": 7}]},  # does not encode: the slow path raises it
    {},
]


def _runner(template: Any, *, name: str = "linux-abc-runner-x1") -> Obj:
    return {"apiVersion": c.API_VERSION, "kind": c.KIND_ER,
            "metadata": {"name": name, "namespace": "ci", "uid": "u-1", "labels": {"app": "a"},
                         "annotations": {c.ANNOTATION_PATCH_ID: "3"}},
            "spec": {"githubConfigUrl": "https://github.com/o", "runnerScaleSetId": 1,
                     "metadata": {"labels": {"t": "1"}}, "spec": template}}


def _decoded(api: Any, obj: Obj) -> Obj | None:
    """``obj`` as the ER controller reads it: the Go decoding of what the server stores (None: a
    runner no Go client could decode, which the server never stores)."""
    from fakeapi.codec.godecode import go_decode

    kind = api.kinds.find(c.KIND_ER, c.API_VERSION)
    try:
        decoded: Obj = go_decode(obj, kind.go_type)
    except ValueError:
        return None
    return decoded


def _slow_pod(client: Client, er: Obj, secret: Obj) -> Any:
    try:
        return client.encode(resourcebuilder.build_runner_pod(er, secret))
    except ValueError as e:
        return type(e)


@pytest.mark.parametrize("index", range(len(TEMPLATES)))
def test_the_runner_pod_encoded_by_parts_is_the_pod_encoded(index: int) -> None:
    from reconcilers.ephemeralrunner import _encoded_runner_pod

    cluster = ArcCluster()
    client = Client(cluster.api, "t", unsafe_disable_deep_copy=True)
    template = TEMPLATES[index]
    inputs = [template, *one_value_mutations(template, ("", [], {}, None, "x", 0))][:200]
    answered = 0
    for t in inputs:
        er = _decoded(cluster.api, _runner(t))
        if er is None:
            continue
        for secret_name in ("linux-abc-runner-x1", "other", "", "日本"):
            secret = {"metadata": {"name": secret_name}, "data": {"jitToken": "dG9r"}}
            before = json.dumps(er)
            slow = _slow_pod(client, er, secret)
            for _ in range(2):  # (the second time from the memo)
                fast = _encoded_runner_pod(client, er, secret)
                if fast is None:
                    continue
                answered += 1
                assert json.dumps(fast) == json.dumps(slow)
                fast["spec"]["containers"][0]["image"] = "mutated"  # (the caller's own copy)
            assert json.dumps(er) == before
    if index < 3:
        assert answered > 0


def test_the_runner_pod_is_built_as_before() -> None:
    """:func:`build_runner_pod`, now made of its metadata and spec, builds what it built."""
    er = _runner(TEMPLATES[2])
    secret = {"metadata": {"name": "s"}, "data": {"runnerId": "MQ=="}}
    pod = resourcebuilder.build_runner_pod(er, secret)
    assert list(pod) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(pod["metadata"]) == ["name", "namespace", "labels", "annotations", "ownerReferences"]
    runner = pod["spec"]["containers"][1]
    assert [e["name"] for e in runner["env"]][-3:] == [resourcebuilder.ENV_JIT_CONFIG,
                                                       resourcebuilder.ENV_EXTRA_USER_AGENT,
                                                       resourcebuilder.ENV_DEPRECATED_EXIT_CODE]
    assert runner["env"][-3]["valueFrom"] == {"secretKeyRef": {"name": "s", "key": "jitToken"}}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod == resourcebuilder.build_runner_pod(er, secret, shared=True)
    assert pod["spec"] == resourcebuilder.build_runner_pod(er, "s")["spec"]  # (a name: a secret without data)
    assert er == _runner(TEMPLATES[2])  # not mutated


# ------------------------------------------------------------------ the lifecycle, both ways


def _slow_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch every fast path this module checks back to the code it replaced."""
    monkeypatch.setattr(common, "json_copy", fast_copy)
    monkeypatch.setattr(autoscalingrunnerset, "mutate_top", common.mutate)
    patch = Client.patch

    def always_read(self: Client, *args: Any, read_answer: bool = True, **kw: Any) -> Obj:
        return patch(self, *args, **kw)

    monkeypatch.setattr(Client, "patch", always_read)

    def create_runners(self: Any, client: Any, ers: Any, count: int) -> None:
        if count <= 0:
            return
        errs = []
        encoded = client.encode(resourcebuilder.build_ephemeral_runner(ers))
        for _ in range(count):
            try:
                client.create(fast_copy(encoded), encoded=True)  # a copy for every create
            except ApiError as e:
                errs.append(e)
        if errs:
            raise errs[0]

    monkeypatch.setattr(EphemeralRunnerSetReconciler, "_create_runners", create_runners)
    monkeypatch.setattr(resourcebuilder, "_parts_text", lambda *_a: None)
    from reconcilers import ephemeralrunner

    monkeypatch.setattr(ephemeralrunner, "_encoded_runner_pod", lambda *_a: None)


@pytest.mark.parametrize("seed", [0, 5])
def test_the_lifecycle_is_the_same_with_and_without_these_copies_saved(seed: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _record(seed)
    with monkeypatch.context() as m:
        _slow_paths(m)
        slow = _record(seed)
    assert len(fast) == len(slow)
    assert fast == slow
