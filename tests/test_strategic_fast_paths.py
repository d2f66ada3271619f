"""The strategic merge patch's fast paths (issue 22) against the general path on the same inputs.

Each fast path is turned off with monkeypatch to get the general path's answer (the oracle): results
(key order included, compared as JSON text) and errors (type and message) must be identical, and
neither the document nor the patch given may change.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from fakeapi.machinery import patches
from fakeapi.machinery.openapi import builtin_schema

POD_SCHEMA = builtin_schema("Pod", "v1")


def _run(doc: dict[str, Any], patch: Any) -> tuple[str, str]:
    """The patch's result as JSON text, or the error it raises; checks that neither input changes."""
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    try:
        out = ("ok", json.dumps(patches.apply_strategic_merge_patch(doc, patch, POD_SCHEMA)))
    except Exception as e:  # (a PatchError, or what a body no decoder gives breaks: both must agree)
        out = (type(e).__name__, str(e))
    assert doc == doc_before and json.dumps(doc) == json.dumps(doc_before)
    assert patch == patch_before
    return out


def _general(monkeypatch: pytest.MonkeyPatch, cases: list[tuple[dict[str, Any], Any]]) -> list[tuple[str, str]]:
    with monkeypatch.context() as m:
        m.setattr(patches, "_merge_keyed_maps", lambda *args: None)
        return [_run(d, p) for d, p in cases]


def _fast_taken(monkeypatch: pytest.MonkeyPatch, cases: list[tuple[dict[str, Any], Any]]) -> int:
    """How many cases the keyed fast path answered (at least once) on."""
    taken = 0
    real = patches._merge_keyed_maps
    hit = [False]

    def spy(*args: Any) -> Any:
        out = real(*args)
        if out is not None:
            hit[0] = True
        return out

    with monkeypatch.context() as m:
        m.setattr(patches, "_merge_keyed_maps", spy)
        for d, p in cases:
            hit[0] = False
            _run(d, p)
            taken += hit[0]
    return taken


def _conds(*spec: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"type": t, "status": "True", **extra} for t in spec]


def _doc(conditions: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Pending", "conditions": conditions}}


#: (what it shows, the stored conditions, the patch's conditions (None: the key left out), extra status keys)
KEYED_CASES: list[tuple[str, list[Any], Any, dict[str, Any]]] = [
    ("the kubelet's start: one stored condition, four sent", [{"type": "PodScheduled", "status": "True",
                                                               "lastProbeTime": None, "lastTransitionTime": "t"}],
     _conds("PodScheduled", "Initialized", "ContainersReady", "Ready"), {}),
    ("a no-op patch: the same items", _conds("A", "B"), _conds("A", "B"), {}),
    ("an empty patch list", _conds("A", "B"), [], {}),
    ("an empty stored list", [], _conds("A", "B"), {}),
    ("both empty", [], [], {}),
    ("new items go before the stored ones", _conds("A", "B"), _conds("C", "D"), {}),
    ("a server-only item before a named one stays first", _conds("A", "B", "C"), _conds("C"), {}),
    ("a server-only item after a named one", _conds("A", "B", "C"), _conds("A"), {}),
    ("named items in another order than stored", _conds("A", "B", "C", "D"), _conds("D", "B"), {}),
    ("new and named mixed", _conds("A", "B", "C"), _conds("X", "B", "Y", "A"), {}),
    ("a null in a named item drops the key", _conds("A", "B", reason="r"),
     [{"type": "B", "reason": None}], {}),
    ("a null in a new item is discarded", _conds("A"), [{"type": "B", "reason": None, "status": "x"}], {}),
    ("duplicate stored keys: the general path", _conds("A", "A", "B"), _conds("A"), {}),
    ("duplicate patch keys: the general path", _conds("A", "B"), _conds("B", "B"), {}),
    ("a non-string key: the general path", [{"type": 1, "status": "x"}, {"type": "A"}], [{"type": 1}], {}),
    ("a null key in the patch", _conds("A"), [{"type": None, "status": "x"}], {}),
    ("a stored item without the key", [{"status": "x"}, {"type": "A"}], _conds("A"), {}),
    ("a patch item without the key", _conds("A"), [{"status": "x"}], {}),
    ("a stored item that is not a map", ["A", {"type": "A"}], _conds("A"), {}),
    ("a patch item that is not a map", _conds("A"), ["A"], {}),
    ("$patch: delete", _conds("A", "B"), [{"type": "A", "$patch": "delete"}], {}),
    ("$patch: replace", _conds("A", "B"), [{"type": "C", "status": "x"}, {"$patch": "replace"}], {}),
    ("$patch: merge (an error)", _conds("A"), [{"type": "A", "$patch": "merge"}], {}),
    ("an unknown $patch (an error)", _conds("A"), [{"type": "A", "$patch": "x"}], {}),
    ("a stored item holding $patch", [{"type": "A", "$patch": "delete"}, {"type": "B"}], _conds("B"), {}),
    ("$retainKeys in a named item", [{"type": "A", "status": "s", "reason": "r"}],
     [{"type": "A", "status": "t", "$retainKeys": ["type", "status"]}], {}),
    ("$deleteFromPrimitiveList of the key itself", _conds("A", "B"),
     [{"type": "A", "$deleteFromPrimitiveList/type": "B"}], {}),
    ("$setElementOrder of the key itself (an error)", _conds("A"),
     [{"type": "A", "$setElementOrder/type": ["A"]}], {}),
    ("with $setElementOrder/conditions", _conds("A", "B", "C"), _conds("C", "X"),
     {"$setElementOrder/conditions": [{"type": "X"}, {"type": "A"}, {"type": "B"}, {"type": "C"}]}),
    ("$setElementOrder/conditions naming an unknown item", _conds("A", "B"), _conds("B"),
     {"$setElementOrder/conditions": [{"type": "Q"}, {"type": "B"}, {"type": "A"}]}),
    ("$setElementOrder/conditions out of the patch's order (an error)", _conds("A", "B"), _conds("A", "B"),
     {"$setElementOrder/conditions": [{"type": "B"}]}),
    ("$setElementOrder/conditions and no patch list", _conds("A", "B"), None,
     {"$setElementOrder/conditions": [{"type": "B"}, {"type": "A"}]}),
]


@pytest.mark.parametrize(("what", "stored", "sent", "extra"), KEYED_CASES, ids=[c[0] for c in KEYED_CASES])
def test_keyed_list_fast_path_gives_what_the_general_path_gives(
    monkeypatch: pytest.MonkeyPatch, what: str, stored: list[Any], sent: Any, extra: dict[str, Any]
) -> None:
    """One case per surprising behaviour of a merge by key: the fast path's answer is the general path's."""
    status: dict[str, Any] = {"phase": "Running", **extra}
    if sent is not None:
        status["conditions"] = sent
    cases = [(_doc(stored), {"status": status})]
    assert [_run(d, p) for d, p in cases] == _general(monkeypatch, cases)


def test_keyed_list_fast_path_is_taken_only_where_it_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path answers the plain cases (the kubelet's) and leaves directives, duplicates and odd keys alone."""
    plain = [(_doc(_conds("A", "B")), {"status": {"conditions": _conds("B", "C")}}),
             (_doc([]), {"status": {"conditions": _conds("A")}})]
    odd = [(_doc(_conds("A", "A")), {"status": {"conditions": _conds("A")}}),
           (_doc(_conds("A")), {"status": {"conditions": [{"type": "A", "$patch": "delete"}]}}),
           (_doc(_conds("A")), {"status": {"conditions": [{"type": 1}]}}),
           (_doc(_conds("A")), {"status": {"conditions": [{"type": "A", "$retainKeys": ["type"]}]}})]
    assert _fast_taken(monkeypatch, plain) == len(plain)
    assert _fast_taken(monkeypatch, odd) == 0


def test_keyed_list_fast_path_agrees_on_seeded_random_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded random stored and sent lists (string, duplicate, odd and missing keys, directives, nulls,
    nested lists merged by name): every answer, error or result, is the general path's."""
    rnd = random.Random(22)
    keys: list[Any] = ["A", "B", "C", "D", "E", 1, None]

    def item(for_patch: bool) -> Any:
        if rnd.random() < 0.02:
            return "not-a-map"
        d: dict[str, Any] = {"type": rnd.choice(keys) if rnd.random() < 0.1 else rnd.choice(keys[:5])}
        if rnd.random() < 0.03:
            del d["type"]
        for f in ("status", "reason", "message"):
            if rnd.random() < 0.5:
                d[f] = rnd.choice(["x", "y", None] if for_patch else ["x", "y"])
        if for_patch and rnd.random() < 0.06:
            d[rnd.choice(["$patch", "$retainKeys", "$deleteFromPrimitiveList/type"])] = rnd.choice(
                ["delete", "replace", ["type"], "B"])
        return d

    def containers(for_patch: bool) -> list[Any]:
        out = []
        for n in rnd.sample(["a", "b", "c"], rnd.randint(0, 3)):
            c: dict[str, Any] = {"name": n}
            if rnd.random() < 0.6:
                c["env"] = [{"name": e, "value": rnd.choice(["1", "2"] + ([None] if for_patch else []))}
                            for e in rnd.sample(["X", "Y", "Z"], rnd.randint(0, 3))]
            if not for_patch:
                c["image"] = "i"
            out.append(c)
        return out

    cases = []
    for _ in range(600):
        doc = _doc([item(False) for _ in range(rnd.randint(0, 5))])
        doc["spec"]["containers"] = containers(False)
        status: dict[str, Any] = {}
        if rnd.random() < 0.9:
            status["conditions"] = [item(True) for _ in range(rnd.randint(0, 5))]
        if rnd.random() < 0.2:
            status["$setElementOrder/conditions"] = [{"type": t} for t in rnd.sample(keys[:5], rnd.randint(0, 5))]
        patch: dict[str, Any] = {"status": status}
        if rnd.random() < 0.5:
            patch["spec"] = {"containers": containers(True)}
        cases.append((doc, patch))
    fast = [_run(d, p) for d, p in cases]
    assert fast == _general(monkeypatch, cases)
    assert sum(1 for r in fast if r[0] == "ok") > 300
    assert sum(1 for r in fast if r[0] != "ok") > 10  # errors are compared too
    assert _fast_taken(monkeypatch, cases) > 200


def _general_copying(monkeypatch: pytest.MonkeyPatch,
                     cases: list[tuple[dict[str, Any], Any]]) -> list[tuple[str, str]]:
    with monkeypatch.context() as m:
        m.setattr(patches, "_plain_patch", lambda v: False)
        return [_run(d, p) for d, p in cases]


DOC: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["f1", "f2"],
                 "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1"}]},
    "spec": {"containers": [{"name": "c1", "image": "i", "env": [{"name": "A", "value": "1"}],
                             "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
             "tolerations": [{"key": "k", "operator": "Exists"}], "nodeSelector": {"n": "1"},
             "volumes": [{"name": "v", "configMap": {"name": "cm"}}]},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None}],
               "podIPs": [{"ip": "10.0.0.1"}]},
}

#: (what it shows, the patch): the plain path's answer must be the copying general path's.
PLAIN_CASES: list[tuple[str, Any]] = [
    ("the kubelet's start", {"status": {"phase": "Running", "startTime": "t", "containerStatuses": [
        {"name": "c1", "ready": True, "state": {"running": {"startedAt": "t"}}}],
        "conditions": _conds("PodScheduled", "Initialized", "ContainersReady", "Ready")}}),
    ("an empty patch", {}),
    ("a no-op patch", {"status": {"phase": "Pending"}, "metadata": {"labels": {"a": "1"}}}),
    ("finalizers: a set union", {"metadata": {"finalizers": ["f3", "f1"]}}),
    ("tolerations: replaced", {"spec": {"tolerations": [{"key": "j", "operator": "Exists"}]}}),
    ("ports by containerPort (an int key)", {"spec": {"containers": [
        {"name": "c1", "ports": [{"containerPort": 81}, {"containerPort": 80, "name": "h"}]}]}}),
    ("a new container before the stored one", {"spec": {"containers": [{"name": "c0", "image": "j"}]}}),
    ("env merged by name", {"spec": {"containers": [{"name": "c1", "env": [{"name": "B", "value": "2"}]}]}}),
    ("a map over a scalar", {"spec": {"nodeSelector": "x"}}),
    ("a list over a map", {"spec": {"nodeSelector": ["x"]}}),
    ("a scalar over a list", {"metadata": {"finalizers": "x"}}),
    ("a map over a null", {"status": {"conditions": [{"type": "PodScheduled", "lastProbeTime": {"a": 1}}]}}),
    ("a list of lists (an error)", {"metadata": {"finalizers": [["x"]]}}),
    ("mixed list items (an error)", {"metadata": {"finalizers": ["x", 1]}}),
    ("a list item without its merge key (an error)", {"spec": {"containers": [{"image": "x"}]}}),
    ("podIPs merged by ip", {"status": {"podIPs": [{"ip": "10.0.0.2"}]}}),
    ("nulls: the general path", {"status": {"phase": None}}),
    ("a null in a list: the general path", {"metadata": {"finalizers": [None]}}),
    ("$patch: the general path", {"spec": {"nodeSelector": {"$patch": "replace", "m": "2"}}}),
    ("$setElementOrder: the general path", {"metadata": {"$setElementOrder/finalizers": ["f2", "f1"]}}),
    ("a non-string key: the general path", {"spec": {1: "x"}}),
    ("a tuple value: the general path", {"spec": {"x": ("a",)}}),
]


@pytest.mark.parametrize(("what", "patch"), PLAIN_CASES, ids=[c[0] for c in PLAIN_CASES])
def test_plain_patch_path_gives_what_the_copying_path_gives(
    monkeypatch: pytest.MonkeyPatch, what: str, patch: Any
) -> None:
    """A patch with no null and no ``$`` key is merged without a copy: same answer, the patch left as it was."""
    cases = [(DOC, patch)]
    assert [_run(d, p) for d, p in cases] == _general_copying(monkeypatch, cases)


def test_plain_patch_check() -> None:
    """What :func:`_plain_patch` accepts: plain JSON without nulls or ``$`` keys, at any depth."""
    assert patches._plain_patch({"a": [{"b": 1, "c": [1.5, True, "x"]}], "d": {}})
    assert patches._plain_patch({"a": "x$", "b": "$"[:0], "c": -1, "d": 1e300})

    class Text(str):
        pass

    for bad in ({"a": None}, {"a": [None]}, {"a": {"$patch": "delete"}}, {"a": [{"$retainKeys": []}]},
                {"$setElementOrder/x": []}, {"a": {"b": ("t",)}}, {1: "x"}, {"a": [object()]},
                {"a": float("nan")}, {"a": float("inf")}, {"a": 2**70}, {"a": Text("x")}, {Text("a"): 1},
                # (conservative: a string holding ``null`` or starting with ``$`` goes to the general path)
                {"a": "nullable"}, {"a": "$x"}):
        assert not patches._plain_patch(bad), bad


def test_plain_patch_path_agrees_on_seeded_random_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded random patches over every kind of field (merged, replaced, set lists, scalars, maps), some
    with nulls or directives (the general path for both): every answer is the copying path's."""
    rnd = random.Random(2222)

    def value(depth: int) -> Any:
        r = rnd.random()
        if depth > 2 or r < 0.4:
            return rnd.choice(["x", 1, 2.5, True, "y"] + ([None] if rnd.random() < 0.05 else []))
        if r < 0.7:
            return {rnd.choice(["a", "b", "c", "name", "ip"]): value(depth + 1) for _ in range(rnd.randint(0, 3))}
        return [value(depth + 1) for _ in range(rnd.randint(0, 3))]

    def patch() -> dict[str, Any]:
        p: dict[str, Any] = {}
        if rnd.random() < 0.6:
            p["metadata"] = {"finalizers": rnd.sample(["f1", "f2", "f3"], rnd.randint(0, 3))} if rnd.random() < 0.5 \
                else {"labels": {rnd.choice(["a", "b"]): rnd.choice(["1", "2"])}}
        if rnd.random() < 0.7:
            spec: dict[str, Any] = {}
            if rnd.random() < 0.6:
                spec["containers"] = [{"name": rnd.choice(["c1", "c2"]),
                                       **({"env": [{"name": rnd.choice(["A", "B"]), "value": "v"}]}
                                          if rnd.random() < 0.5 else {}),
                                       **({"ports": [{"containerPort": rnd.choice([80, 81])}]}
                                          if rnd.random() < 0.3 else {})}
                                      for _ in range(rnd.randint(0, 2))]
            if rnd.random() < 0.4:
                spec[rnd.choice(["tolerations", "nodeSelector", "volumes", "extra"])] = value(1)
            p["spec"] = spec
        if rnd.random() < 0.7:
            p["status"] = {"phase": rnd.choice(["Running", "Pending"]),
                           "conditions": [{"type": rnd.choice(["PodScheduled", "Ready"]),
                                           "status": rnd.choice(["True", "False"])}
                                          for _ in range(rnd.randint(0, 3))]}
            if rnd.random() < 0.3:
                p["status"]["podIPs"] = [{"ip": rnd.choice(["10.0.0.1", "10.0.0.3"])}]
        if rnd.random() < 0.1:
            p["status" if "status" in p else "spec"] = {"$patch": "replace"} if rnd.random() < 0.5 else None
        return p

    cases = [(DOC, patch()) for _ in range(600)]
    plain = [_run(d, p) for d, p in cases]
    assert plain == _general_copying(monkeypatch, cases)
    assert sum(1 for d, p in cases if patches._plain_patch(p)) > 400
    assert sum(1 for r in plain if r[0] == "ok") > 400
    assert sum(1 for r in plain if r[0] != "ok") > 5


#: Status patches a server answers (strategic, on the status subresource), in order, on one pod.
SERVER_PATCHES: list[Any] = [
    {"status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
                "containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": True, "started": True,
                                       "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}],
                "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                               for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}},
    {"status": {"phase": "Running"}},  # a no-op
    {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "R"}]}},
    {"status": {"$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}],
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "$patch": "delete"}]}},
    {"status": {"conditions": [{"type": "X", "status": "True"}], "message": None}},
    {"status": {"conditions": [{"type": 5}]}},  # a merge key the Go type refuses
    {"status": {"conditions": [{"status": "True"}]}},  # no merge key: a 500
]


def _serve(monkeypatch: pytest.MonkeyPatch, general: bool) -> list[str]:
    """Every answer (body or error), the stored pod and the watch events of :data:`SERVER_PATCHES`."""
    from fakeapi.machinery import errors
    from fakeapi.server.apiserver import APIServer

    with monkeypatch.context() as m:
        if general:
            m.setattr(patches, "_plain_patch", lambda v: False)
            m.setattr(patches, "_merge_keyed_maps", lambda *args: None)
        api = APIServer()
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}})
        api.bind_pod("p", "default", "node")
        w = api.watch("Pod", namespace="default", resource_version=api.get("Pod", "p", namespace="default")[
            "metadata"]["resourceVersion"])
        out = []
        for body in SERVER_PATCHES:
            try:
                out.append(json.dumps(api.patch("Pod", "p", copy.deepcopy(body), namespace="default",
                                                patch_type="strategic", subresource="status", actor="kubelet")))
            except errors.ApiError as e:
                out.append(json.dumps(e.status))
        out.append(json.dumps(api.get("Pod", "p", namespace="default")))
        out.extend(json.dumps([ev.type, ev.object]) for ev in w.poll())
        return out


def test_server_strategic_status_patches_answer_as_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the server (decode, managedFields, watch): the fast paths change no answer, stored byte or event."""
    fast = _serve(monkeypatch, general=False)
    assert fast == _serve(monkeypatch, general=True)
    assert len(fast) > len(SERVER_PATCHES) + 3
