"""The schema validators' memo of valid values (issue 22) answers as asking jsonschema-rs every time does:
seeded random variations of real objects (a Pod, a Secret, an EphemeralRunner, their statuses; types
changed, formats broken, keys dropped or added, names changed) get the same causes either way."""

from __future__ import annotations

import copy
import random
from typing import Any

from fakeapi.schema import compiled
from fakeapi.server.apiserver import APIServer
from reconcilers.testing import ArcCluster

_LEAVES: list[Any] = [
    None, True, False, 0, 1, -1, 2.5, "", "x", "2026-01-01T00:00:00Z", "not-a-time", "aGVsbG8=", "%%%", [], {},
    ["a"], {"a": 1}, "Running", "Pending", 10**6,
]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _mutate(value: Any, rng: random.Random) -> Any:
    out = copy.deepcopy(value)
    for _ in range(rng.randrange(3)):
        paths = [p for p in _paths(out) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = out
        for step in path[:-1]:
            parent = parent[step]
        pick = rng.randrange(4)
        if pick == 0 and isinstance(parent, dict):
            del parent[path[-1]]
        elif pick == 1 and isinstance(parent, dict):
            parent[rng.choice(["extra", "phase", "reason", "name"])] = rng.choice(_LEAVES)
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(_LEAVES))
    if isinstance(out, dict) and isinstance(out.get("metadata"), dict) and rng.random() < 0.5:
        out["metadata"]["name"] = f"n{rng.randrange(5)}"
    return out


def _samples() -> list[tuple[compiled.CompiledSchema, str, dict[str, Any]]]:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=2, max_runners=4)
    a.settle()
    api: APIServer = a.api
    out = []
    for kind, version in (("Pod", "v1"), ("Secret", "v1"), ("EphemeralRunner", "actions.github.com/v1alpha1")):
        k = api.kinds.require(kind, version)
        assert k.compiled is not None
        for obj in api.list(kind, "ci")["items"][:2]:
            out.append((k.compiled, "", obj))
            if "status" in obj:
                out.append((k.compiled, "status", obj))
    return out


def test_memo_answers_as_asking_every_time() -> None:
    rng = random.Random(22)
    samples = _samples()
    assert len(samples) >= 8
    hits = invalid = 0
    for schema, part, obj in samples:
        memo = schema._validator(part, True)
        fresh = compiled._Validator(memo.js, memo.base)  # (a validator of its own: its memo emptied every time)
        variants = [obj] + [_mutate(obj, rng) for _ in range(150)]
        for value in variants + variants:  # (twice: the second round finds the valid ones remembered)
            target = value.get("status") if part == "status" else value
            if part == "status" and not isinstance(target, dict):
                continue
            fresh._valid.clear()
            known = orjson_key(memo, target) in memo._valid
            assert memo.causes(target) == fresh.causes(target)
            hits += known
            invalid += bool(fresh.causes(target))
            assert len(memo._valid) <= compiled._VALID_MEMO_SIZE
    assert hits > 100 and invalid > 100  # (the memo answered, as the validator would have; invalid ones too)


def orjson_key(v: compiled._Validator, value: Any) -> bytes:
    import orjson

    return orjson.dumps({**value, "metadata": None} if v._meta_blind and type(value) is dict else value)


def test_meta_blind_only_where_the_schema_ignores_metadata() -> None:
    assert compiled._meta_blind({"type": "object", "properties": {"spec": {}}})
    assert not compiled._meta_blind({"type": "object", "properties": {"metadata": {"type": "object"}}})
    assert not compiled._meta_blind({"type": "object", "properties": {}, "required": ["metadata"]})
    assert not compiled._meta_blind({"type": "object", "properties": {}, "additionalProperties": False})
    assert not compiled._meta_blind({"type": "object", "properties": {}, "maxProperties": 3})
    assert not compiled._meta_blind({"$ref": "#/$defs/x"})
    v = compiled._Validator({"type": "object", "properties": {"spec": {"type": "string"}}, "maxProperties": 1}, "")
    assert v.causes({"spec": "a"}) == []
    assert v.causes({"spec": "a", "metadata": {"name": "x"}}) != []  # (metadata counts here: not skipped)
