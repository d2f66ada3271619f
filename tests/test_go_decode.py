"""go_decode: what a Go controller holds after reading (json.Unmarshal), as opposed to what it sends."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.codec.godecode import go_decode
from fakeapi.codec.gomodel import builtin_go_type, go_roundtrip
from fakeapi.codec.semantic import semantic_equal

POD_SPEC = builtin_go_type("io.k8s.api.core.v1.PodSpec")


def spec(**container: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "x", **container}]}


@pytest.mark.parametrize(
    ("name", "written", "field", "decoded"),
    [
        ("empty env stays an empty slice", spec(env=[]), "env", []),
        ("empty securityContext stays", spec(securityContext={}), "securityContext", {}),
        ("null env is nil", spec(env=None), "env", None),
        ("quantity keeps its text", spec(resources={"limits": {"cpu": "1000m"}}), "resources",
         {"limits": {"cpu": "1000m"}}),
    ],
)
def test_decode_keeps_what_unmarshal_keeps(name: str, written: dict[str, Any], field: str, decoded: Any) -> None:
    got = go_decode(written, POD_SPEC)["containers"][0]
    assert got.get(field) == decoded


def test_decode_drops_unknown_fields_and_does_not_mutate() -> None:
    written = spec(env=[], bogus=1)
    got = go_decode(written, POD_SPEC)
    assert "bogus" not in got["containers"][0]
    assert written["containers"][0]["bogus"] == 1


def test_the_seed_drift_read_vs_written() -> None:
    """A template read with env: [] against the same template after a Go write: strict differs, semantic not."""
    read = go_decode(spec(env=[], nodeSelector={}, tolerations=[]), POD_SPEC)
    written = go_roundtrip(read, POD_SPEC)
    assert read != written
    assert semantic_equal(read, written, POD_SPEC)


def test_encoding_after_decoding_is_the_roundtrip() -> None:
    written = spec(env=[], resources={"limits": {"cpu": "1000m"}})
    assert go_roundtrip(go_decode(written, POD_SPEC), POD_SPEC) == go_roundtrip(written, POD_SPEC)


# --- decoding a newer snapshot against the older one it shares parts with -------------------------

POD = builtin_go_type("io.k8s.api.core.v1.Pod")
_BASE_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "1"}, "finalizers": ["x/y"]},
    "spec": {"containers": [{"name": "c", "image": "busybox:1", "env": [{"name": "A", "value": "1"}],
                             "resources": {"limits": {"cpu": "1000m"}}}], "tolerations": [{"key": "k"}]},
    "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]},
}


def _changed(prev: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A newer snapshot: new dicts along ``path`` (``value`` at its end), everything else shared with ``prev``."""
    if len(path) == 1:
        out = dict(prev)
        if value is _DROP:
            out.pop(path[0], None)
        else:
            out[path[0]] = value
        return out
    return {**prev, path[0]: _changed(prev[path[0]], path[1:], value)}


_DROP = object()


@pytest.mark.parametrize(
    ("name", "path", "value"),
    [
        ("status changed, spec shared", ("status", "phase"), "Running"),
        ("a label added", ("metadata", "labels"), {"a": "1", "b": "2"}),
        ("an empty env, omitted then kept last", ("spec", "containers"), [{"name": "c", "image": "i", "env": []}]),
        ("empty tolerations at the end of spec", ("spec", "tolerations"), []),
        ("an empty map on an omitempty field", ("spec", "nodeSelector"), {}),
        ("an empty map before other fields", ("spec",), {"nodeSelector": {}, **_BASE_POD["spec"]}),
        ("an unknown field", ("spec", "bogus"), {"x": 1}),
        ("a quantity keeps its text", ("spec", "overhead"), {"cpu": "1000m"}),
        ("a field dropped", ("status", "conditions"), _DROP),
        ("an empty status", ("status",), {}),
        ("metadata emptied", ("metadata", "finalizers"), []),
        # the same keys in the same order: only the changed fields are decoded again
        ("a label value changed", ("metadata", "labels", "a"), "2"),
        ("the namespace emptied (omitted now)", ("metadata", "namespace"), ""),
        ("finalizers replaced", ("metadata", "finalizers"), ["a/b", "c/d"]),
        ("a condition changed", ("status", "conditions"), [{"type": "Ready", "status": "True"}]),
        ("the phase emptied", ("status", "phase"), ""),
        ("a quantity changed deep in the spec", ("spec", "containers"),
         [{"name": "c", "image": "busybox:2", "resources": {"limits": {"cpu": "2"}}}]),
        ("a map replaced by null", ("metadata", "labels"), None),
    ],
)
def test_decoding_against_the_previous_snapshot_gives_what_a_whole_decode_gives(
        name: str, path: tuple[str, ...], value: Any) -> None:
    import json

    from fakeapi.codec.godecode import _decode_reusing

    prev = _BASE_POD
    new = _changed(prev, path, value)
    got = _decode_reusing(new, POD, prev, go_decode(prev, POD))
    assert json.dumps(got) == json.dumps(go_decode(new, POD))  # values and key order
    # and once more on top of that result, with the roles turned
    again = _decode_reusing(prev, POD, new, got)
    assert json.dumps(again) == json.dumps(go_decode(prev, POD))
    # and as a first decode, with nothing to reuse (what the decode cache does for a new object)
    first = _decode_reusing(new, POD, {}, {})
    assert json.dumps(first) == json.dumps(go_decode(new, POD))


# --- the decode cache: objects made from one template share the decoded form of their spec -----------

def _typed_kind() -> Any:
    """A custom kind whose Go type is Pod's (the cache decodes custom kinds field by field)."""
    from types import SimpleNamespace

    return SimpleNamespace(group="example.com", plural="things", kind="Thing", api_version="example.com/v1",
                           builtin=False, go_type=POD)


def _thing(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec, "status": {"phase": "Pending"}}


def test_objects_with_the_same_spec_share_its_decoded_form() -> None:
    import json

    from fakeapi.codec.godecode import DecodeCache

    cache, kind = DecodeCache(), _typed_kind()
    spec = _BASE_POD["spec"]
    a = cache.decode(kind, _thing("a", copy.deepcopy(spec)), copy=False)
    b = cache.decode(kind, _thing("b", copy.deepcopy(spec)), copy=False)
    for name, got in (("a", a), ("b", b)):
        want = go_decode(_thing(name, spec), POD)
        want["apiVersion"], want["kind"] = kind.api_version, kind.kind
        assert json.dumps(got) == json.dumps(want)  # values and key order
    assert b["spec"] is a["spec"]  # decoded once (read-only: handed out without a copy)
    assert b["status"] is a["status"]  # (every top-level struct but metadata, which names the object)
    assert b["metadata"] is not a["metadata"]
    # another spec, or one holding a null (NaN would serialise as null too): decoded on its own
    other = cache.decode(kind, _thing("c", {**spec, "restartPolicy": "Never"}), copy=False)
    assert other["spec"] is not a["spec"] and other["spec"]["restartPolicy"] == "Never"
    nulled = {**spec, "hostname": None}
    d = cache.decode(kind, _thing("d", nulled), copy=False)
    e = cache.decode(kind, _thing("e", copy.deepcopy(nulled)), copy=False)
    assert d["spec"] == e["spec"] == go_decode(nulled, POD.fields["spec"].type)
    assert d["spec"] is not e["spec"]


def test_a_spec_decoded_by_content_stays_unmutated_under_the_snapshot_check() -> None:
    from fakeapi.codec.godecode import DecodeCache
    from fakeapi.codec.snapshots import SnapshotMutated

    cache, kind = DecodeCache(check=True), _typed_kind()
    a = cache.decode(kind, _thing("a", copy.deepcopy(_BASE_POD["spec"])), copy=False)
    b = cache.decode(kind, _thing("b", copy.deepcopy(_BASE_POD["spec"])), copy=False)
    assert b["spec"] is a["spec"]
    a["spec"]["containers"][0]["image"] = "changed"  # a caller breaking the read-only contract
    with pytest.raises(SnapshotMutated):
        cache.check_all()


# --- the decode cache: deleted objects ---------------------------------------------------------------

def _deleting(thing: dict[str, Any]) -> dict[str, Any]:
    """The last state of ``thing`` as its last finalizer's removal deletes it (its spec and status shared)."""
    return {**thing, "metadata": {**thing["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}


def test_the_last_state_of_a_deleted_object_is_decoded_against_its_entry() -> None:
    import json

    from fakeapi.codec.godecode import DecodeCache

    cache, kind = DecodeCache(check=True), _typed_kind()
    thing = _thing("a", copy.deepcopy(_BASE_POD["spec"]))
    live = cache.decode(kind, thing, copy=False)
    cache.forget("example.com", "things", "ns", "a")
    assert len(cache) == 0
    last = _deleting(thing)
    got = cache.decode(kind, last, copy=False)
    want = go_decode(last, POD)
    want["apiVersion"], want["kind"] = kind.api_version, kind.kind
    assert json.dumps(got) == json.dumps(want)  # values and key order
    assert got["spec"] is live["spec"]  # reused, not decoded again
    assert cache.decode(kind, last, copy=False) is got  # the same snapshot again: the same form
    assert len(cache) == 0  # kept apart from the live objects' entries
    cache.check_all()


def test_a_recreated_object_is_not_decoded_against_the_deleted_one() -> None:
    import json

    from fakeapi.codec.godecode import DecodeCache

    cache, kind = DecodeCache(), _typed_kind()
    old = cache.decode(kind, _thing("a", copy.deepcopy(_BASE_POD["spec"])), copy=False)
    cache.forget("example.com", "things", "ns", "a")
    again = _thing("a", {**_BASE_POD["spec"], "restartPolicy": "Never"})
    got = cache.decode(kind, again, copy=False)
    want = go_decode(again, POD)
    want["apiVersion"], want["kind"] = kind.api_version, kind.kind
    assert json.dumps(got) == json.dumps(want) and got["spec"] is not old["spec"]
    assert len(cache) == 1


def test_deleted_objects_entries_are_bounded_and_checked() -> None:
    from fakeapi.codec.godecode import _GONE_MAX, DecodeCache
    from fakeapi.codec.snapshots import SnapshotMutated

    cache, kind = DecodeCache(check=True), _typed_kind()
    forms = []
    for i in range(_GONE_MAX + 5):
        forms.append(cache.decode(kind, _thing(f"t{i}", {"restartPolicy": f"p{i}"}), copy=False))
        cache.forget("example.com", "things", "ns", f"t{i}")
    assert len(cache) == 0 and len(cache._gone) == _GONE_MAX
    assert next(iter(cache._gone))[3] == "t5"  # the oldest went first
    forms[-1]["spec"]["restartPolicy"] = "changed"  # a caller breaking the read-only contract
    with pytest.raises(SnapshotMutated):
        cache.check_all()
