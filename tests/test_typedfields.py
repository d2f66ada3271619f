"""Schema-typed field sets, comparison, merge and removal: fakeapi.machinery.typedfields and typedapply against structured-merge-diff's ``typed``.

The schema is a small hand-written structural (CRD-like) schema with every kind of
node ``schemaconv`` distinguishes: scalars, a struct, a granular map
(``additionalProperties``), an atomic map (``x-kubernetes-map-type: atomic``), a
keyed list (``x-kubernetes-list-type: map``), a set, an atomic list (no list
type), and a ``x-kubernetes-preserve-unknown-fields`` object whose contents are
deduced from their values. Expectations are what ``TypedValue.ToFieldSet``,
``Compare``, ``Merge`` and ``RemoveItems`` give for the same values.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fakeapi.machinery import typedapply as ta
from fakeapi.machinery import typedfields as tf
from fakeapi.machinery.typedfields import MISSING, TypedError

FieldSet = dict[str, Any]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "name": {"type": "string"},
                "paused": {"type": "boolean"},
                "containers": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "image": {"type": "string"},
                            "args": {"type": "array", "items": {"type": "string"}},
                            "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                    },
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "nested": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                    },
                },
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "sub": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}},
            },
        },
    },
}

T = tf.type_of(SCHEMA)

A = 'k:{"name":"a"}'
B = 'k:{"name":"b"}'


def _copy(v: Any) -> Any:
    """A deep copy (MISSING, the absent value, is kept as is)."""
    return v if v is MISSING else copy.deepcopy(v)


def spec(**fields: Any) -> dict[str, Any]:
    """An object with this spec."""
    return {"spec": fields}


def containers(*names: str) -> list[dict[str, Any]]:
    """Keyed list items with only their key."""
    return [{"name": n} for n in names]


# ------------------------------------------------------------ ToFieldSet

TO_SET: list[tuple[str, dict[str, Any], FieldSet]] = [
    ("scalars-are-members", spec(replicas=1, name="n", paused=False),
     {"f:spec": {"f:replicas": {}, "f:name": {}, "f:paused": {}}}),
    ("struct-with-fields-is-not-itself-a-member", spec(sub={"x": 1}),
     {"f:spec": {"f:sub": {"f:x": {}}}}),
    ("empty-struct-is-a-member", spec(sub={}), {"f:spec": {"f:sub": {}}}),
    ("null-struct-is-a-member", spec(sub=None), {"f:spec": {"f:sub": {}}}),
    ("null-scalar-is-a-member", spec(name=None), {"f:spec": {"f:name": {}}}),
    ("map-entries-are-members", spec(labels={"a": "1", "b": "2"}),
     {"f:spec": {"f:labels": {"f:a": {}, "f:b": {}}}}),
    ("empty-map-is-a-member", spec(labels={}), {"f:spec": {"f:labels": {}}}),
    ("map-entries-with-children-are-members-too", spec(nested={"k": {"x": 1}, "e": {}}),
     {"f:spec": {"f:nested": {"f:k": {".": {}, "f:x": {}}, "f:e": {}}}}),
    ("keyed-list-items-are-members", spec(containers=[{"name": "a", "image": "i"}, {"name": "b"}]),
     {"f:spec": {"f:containers": {A: {".": {}, "f:name": {}, "f:image": {}}, B: {".": {}, "f:name": {}}}}}),
    ("inside-a-list-item", spec(containers=[{"name": "a", "args": ["x"], "env": {"E": "v"}}]),
     {"f:spec": {"f:containers": {A: {".": {}, "f:name": {}, "f:args": {}, "f:env": {"f:E": {}}}}}}),
    ("empty-keyed-list-is-not-in-the-set", spec(containers=[]), {}),
    ("set-items-are-value-members", spec(tags=["t1", "t2"]),
     {"f:spec": {"f:tags": {'v:"t1"': {}, 'v:"t2"': {}}}}),
    ("empty-set-is-not-in-the-set", spec(tags=[]), {}),
    ("atomic-list-is-one-member", spec(args=["x", "y"]), {"f:spec": {"f:args": {}}}),
    ("empty-atomic-list-is-one-member", spec(args=[]), {"f:spec": {"f:args": {}}}),
    ("atomic-map-is-one-member", spec(selector={"a": "1", "b": "2"}), {"f:spec": {"f:selector": {}}}),
    ("preserve-unknown-fields-are-deduced", spec(extra={"p": {"q": 1}, "r": [1, 2], "s": "t"}),
     {"f:spec": {"f:extra": {"f:p": {".": {}, "f:q": {}}, "f:r": {}, "f:s": {}}}}),
    ("empty-object", {}, {}),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in TO_SET], ids=[c[0] for c in TO_SET])
def test_to_field_set(obj: dict[str, Any], expected: FieldSet) -> None:
    """``TypedValue.ToFieldSet``: the paths an applied configuration sets."""
    before = copy.deepcopy(obj)
    assert ta.to_field_set(obj, T) == expected
    assert obj == before


BAD_LISTS: list[tuple[str, dict[str, Any], str]] = [
    ("duplicate-key", spec(containers=[{"name": "a"}, {"name": "a", "image": "x"}]),
     '.spec.containers: duplicate entries for key [name="a"]'),
    ("missing-key", spec(containers=[{"image": "x"}]),
     '.spec.containers: element 0: associative list with keys has an element that omits key field "name" '
     "(and doesn't have default value)"),
    ("duplicate-set-item", spec(tags=["a", "b", "a"]), '.spec.tags: duplicate entries for key [="a"]'),
    ("non-map-item", spec(containers=["a"]),
     ".spec.containers: element 0: associative list with keys may not have non-map elements"),
]


@pytest.mark.parametrize(("obj", "message"), [c[1:] for c in BAD_LISTS], ids=[c[0] for c in BAD_LISTS])
def test_to_field_set_rejects_invalid_lists(obj: dict[str, Any], message: str) -> None:
    """The typed conversion's ``ValidationErrors``: one error reads ``<path>: <message>``."""
    with pytest.raises(TypedError) as info:
        ta.to_field_set(obj, T)
    assert str(info.value) == message
    assert len(info.value.errors) == 1


def test_duplicate_key_message() -> None:
    """The duplicate names the item by its key, rendered as ``Path.String`` renders it."""
    with pytest.raises(TypedError, match=r'duplicate entries for key \[name="a"\]'):
        ta.to_field_set(spec(containers=containers("a", "b", "a")), T)


def test_missing_key_message() -> None:
    """A keyless item names the missing key field."""
    with pytest.raises(TypedError, match='omits key field "name"'):
        ta.to_field_set(spec(containers=[{"name": "a"}, {"image": "x"}]), T)


def test_several_errors_are_listed() -> None:
    """More than one error: ``errors:`` then one indented line each (``ValidationErrors.Error``)."""
    with pytest.raises(TypedError) as info:
        ta.to_field_set(spec(containers=containers("a", "a"), tags=["x", "x"]), T)
    text = str(info.value)
    assert text.startswith("errors:\n  ")
    assert '  .spec.containers: duplicate entries for key [name="a"]' in text.splitlines()
    assert '  .spec.tags: duplicate entries for key [="x"]' in text.splitlines()


# --------------------------------------------------------------- Compare

COMPARE: list[tuple[str, Any, Any, FieldSet, FieldSet, FieldSet]] = [
    # (id, old, new, added, modified, removed)
    ("changed-scalar", spec(replicas=1), spec(replicas=2), {}, {"f:spec": {"f:replicas": {}}}, {}),
    ("same", spec(replicas=1, labels={"a": "b"}), spec(replicas=1, labels={"a": "b"}), {}, {}, {}),
    ("new-scalar", spec(replicas=1), spec(replicas=1, name="n"), {"f:spec": {"f:name": {}}}, {}, {}),
    ("new-struct-and-all-under-it", spec(), spec(sub={"x": 1}),
     {"f:spec": {"f:sub": {".": {}, "f:x": {}}}}, {}, {}),
    ("new-keyed-list", spec(), spec(containers=[{"name": "a", "image": "i", "env": {"E": "x"}}]),
     {"f:spec": {"f:containers": {".": {}, A: {".": {}, "f:name": {}, "f:image": {}, "f:env": {
         ".": {}, "f:E": {}}}}}}, {}, {}),
    ("new-empty-struct", spec(), spec(sub={}), {"f:spec": {"f:sub": {}}}, {}, {}),
    ("new-top-level-empty-struct", {}, spec(), {"f:spec": {}}, {}, {}),
    ("removed-fields", spec(replicas=1, labels={"a": "b"}), spec(), {}, {},
     {"f:spec": {"f:replicas": {}, "f:labels": {".": {}, "f:a": {}}}}),
    ("list-item-changed-and-removed",
     spec(containers=[{"name": "a", "image": "i"}, {"name": "b"}]), spec(containers=[{"name": "a", "image": "j"}]),
     {}, {"f:spec": {"f:containers": {A: {"f:image": {}}}}}, {"f:spec": {"f:containers": {B: {".": {}, "f:name": {}}}}}),
    ("set-items", spec(tags=["a", "b"]), spec(tags=["b", "c"]),
     {"f:spec": {"f:tags": {'v:"c"': {}}}}, {}, {"f:spec": {"f:tags": {'v:"a"': {}}}}),
    ("atomic-list-is-modified-whole", spec(args=["a"]), spec(args=["a", "b"]), {}, {"f:spec": {"f:args": {}}}, {}),
    ("atomic-map-is-modified-whole", spec(selector={"a": "1"}), spec(selector={"a": "2"}),
     {}, {"f:spec": {"f:selector": {}}}, {}),
    ("map-entry-added", spec(labels={"a": "1"}), spec(labels={"a": "1", "b": "2"}),
     {"f:spec": {"f:labels": {"f:b": {}}}}, {}, {}),
    ("deduced-map-entry-added", spec(extra={"p": 1}), spec(extra={"p": 1, "q": {"r": 2}}),
     {"f:spec": {"f:extra": {"f:q": {".": {}, "f:r": {}}}}}, {}, {}),
    ("empty-to-null-is-modified", spec(sub={}), spec(sub=None), {}, {"f:spec": {"f:sub": {}}}, {}),
    ("from-nothing", MISSING, spec(replicas=1), {"f:spec": {".": {}, "f:replicas": {}}}, {}, {}),
]


@pytest.mark.parametrize(("old", "new", "added", "modified", "removed"), [c[1:] for c in COMPARE],
                         ids=[c[0] for c in COMPARE])
def test_compare(old: Any, new: Any, added: FieldSet, modified: FieldSet, removed: FieldSet) -> None:
    """``TypedValue.Compare``: leaves that changed are modified; a node that appears (or goes)
    is added (removed) with every node under it a member, ``"."`` on those with children."""
    c = ta.compare(old, new, T)
    assert (c.added, c.modified, c.removed) == (added, modified, removed)


def _maps_over(keys: str, values: tuple[str, ...]) -> list[dict[str, str]]:
    """Every map of some of ``keys`` (in their order) to one of ``values``."""
    out: list[dict[str, str]] = [{}]
    for k in keys:
        out = [*out, *({**m, k: v} for m in out for v in values)]
    return out


def test_changes_of_maps_against_their_definition() -> None:
    """Every pair of small maps (keys kept, changed, added, gone, in every mix; the walk tells added keys
    from the count of those gone rather than by comparing key sets): a key is changed when it is new or its
    value differs, removed when it is gone; and the same one level up, with the maps as a struct's fields."""
    maps = _maps_over("abc", ("1", "2"))
    for old in maps:
        for new in maps:
            changed = {f"f:{k}": {} for k in new if old.get(k) != new[k]}
            removed = {f"f:{k}": {} for k in old if k not in new}
            got = tf.changes(spec(labels=old), spec(labels=new), T)
            assert got == ({"f:spec": {"f:labels": changed}} if changed else {},
                           {"f:spec": {"f:labels": removed}} if removed else {}), (old, new)
            # (the same maps as spec fields: scalars of a struct)
            old_spec = {"name" if k == "a" else "paused" if k == "b" else "replicas": v for k, v in old.items()}
            new_spec = {"name" if k == "a" else "paused" if k == "b" else "replicas": v for k, v in new.items()}
            c2 = {f"f:{k}": {} for k in sorted(new_spec) if old_spec.get(k) != new_spec[k]}
            r2 = {f"f:{k}": {} for k in sorted(old_spec) if k not in new_spec}
            assert tf.changes(spec(**old_spec), spec(**new_spec), T) == (
                {"f:spec": c2} if c2 else {}, {"f:spec": r2} if r2 else {}), (old_spec, new_spec)


def test_compare_changed_is_modified_and_added() -> None:
    """What an updater takes ownership of: ``Modified.Union(Added)``."""
    c = ta.compare(spec(replicas=1), spec(replicas=2, name="n"), T)
    assert c.changed() == {"f:spec": {"f:replicas": {}, "f:name": {}}}


# ----------------------------------------------------------------- Merge

MERGE: list[tuple[str, Any, Any, Any]] = [
    ("config-scalars-win", spec(replicas=1, name="n"), spec(replicas=3), spec(replicas=3, name="n")),
    ("maps-merge-key-by-key", spec(labels={"a": "1", "b": "2"}), spec(labels={"b": "3", "c": "4"}),
     spec(labels={"a": "1", "b": "3", "c": "4"})),
    ("structs-merge-field-by-field", spec(sub={"x": 1, "y": "a"}), spec(sub={"x": 2}), spec(sub={"x": 2, "y": "a"})),
    ("keyed-items-merge-by-key",
     spec(containers=[{"name": "a", "image": "old", "args": ["1"]}, {"name": "b", "image": "b"}]),
     spec(containers=[{"name": "a", "image": "new"}]),
     spec(containers=[{"name": "a", "image": "new", "args": ["1"]}, {"name": "b", "image": "b"}])),
    ("atomic-list-replaced", spec(args=["x", "y"]), spec(args=["z"]), spec(args=["z"])),
    ("atomic-map-replaced", spec(selector={"a": "1", "b": "2"}), spec(selector={"a": "9"}), spec(selector={"a": "9"})),
    ("atomic-list-inside-an-item-replaced",
     spec(containers=[{"name": "a", "args": ["1", "2"]}]), spec(containers=[{"name": "a", "args": ["3"]}]),
     spec(containers=[{"name": "a", "args": ["3"]}])),
    ("deduced-maps-merge-deduced-lists-replace",
     spec(extra={"a": {"b": 1, "c": 2}, "l": [1, 2]}), spec(extra={"a": {"b": 5}, "l": [3]}),
     spec(extra={"a": {"b": 5, "c": 2}, "l": [3]})),
    ("empty-config-list-keeps-live-items", spec(containers=containers("a", "b")), spec(containers=[]),
     spec(containers=containers("a", "b"))),
    ("into-nothing", MISSING, spec(sub={"x": 1}), spec(sub={"x": 1})),
    # (a null over a granular map or keyed list has no items to merge: the live ones stay)
    ("null-over-a-map-keeps-it", spec(labels={"a": "1"}), spec(labels=None), spec(labels={"a": "1"})),
    ("null-over-a-keyed-list-keeps-it", spec(containers=containers("a")), spec(containers=None),
     spec(containers=containers("a"))),
    ("null-over-a-scalar-is-null", spec(replicas=3), spec(replicas=None), spec(replicas=None)),
]


@pytest.mark.parametrize(("live", "config", "expected"), [c[1:] for c in MERGE], ids=[c[0] for c in MERGE])
def test_merge(live: Any, config: Any, expected: Any) -> None:
    """``TypedValue.Merge``: the config's leaves win; maps, structs and keyed lists merge item by
    item; atomic lists and maps are replaced whole. Neither argument is changed."""
    before_live, before_config = _copy(live), copy.deepcopy(config)
    assert ta.merge(live, config, T) == expected
    assert (live, config) == (before_live, before_config)


@pytest.mark.parametrize(("live", "config", "expected"), [c[1:] for c in MERGE], ids=[c[0] for c in MERGE])
def test_merge_of_a_checked_config_answers_the_same(live: Any, config: Any, expected: Any) -> None:
    """``checked=True`` (the configuration walked by to_field_set first) takes subtrees with the same
    JSON on both sides as they are, without a walk: the same merge, JSON for JSON."""
    got = ta.merge(live, config, T, checked=True)
    assert json.dumps(got) == json.dumps(ta.merge(live, config, T)) == json.dumps(expected)


def test_merge_shares_what_the_config_leaves_as_it_is() -> None:
    """The merged object holds the live subtrees the configuration does not change (the very same
    objects), and is ``live`` itself when nothing changes, with or without ``checked``."""
    live = spec(replicas=1, labels={"a": "1"}, containers=[{"name": "a", "image": "x", "args": ["1"]}],
                sub={"x": 1})
    for checked in (False, True):
        out = ta.merge(live, spec(replicas=2, labels={"a": "1"}, containers=[{"name": "a", "args": ["1"]}]), T,
                       checked=checked)
        assert out["spec"]["replicas"] == 2
        assert out["spec"]["labels"] is live["spec"]["labels"]
        assert out["spec"]["containers"] is live["spec"]["containers"]
        assert out["spec"]["sub"] is live["spec"]["sub"]
        assert ta.merge(live, spec(replicas=1, containers=[{"name": "a", "image": "x"}]), T, checked=checked) is live


@pytest.mark.parametrize("checked", [False, True])
def test_merge_keeps_the_configs_json_where_python_finds_values_equal(checked: bool) -> None:
    """``1 == 1.0 == True``, and dicts are equal in any key order, but their JSON differs: an atomic
    value equal to the live one by ``==`` but not in JSON is the configuration's."""
    live = spec(selector={"a": "1", "b": "2"}, args=[1, 2], extra={"n": 1})
    config = spec(selector={"b": "2", "a": "1"}, args=[True, 2], extra={"n": True})
    out = ta.merge(live, config, T, checked=checked)
    assert json.dumps(out["spec"]) == json.dumps({**live["spec"], **config["spec"]})


ORDERS: list[tuple[str, str, str]] = [
    # (live, config, merged): visitListItems of merge.go
    ("abc", "ca", "bca"),
    ("abc", "cb", "acb"),
    ("abc", "ba", "bca"),
    ("abc", "cba", "cba"),
    ("abcd", "dxb", "acdxb"),
    ("abcde", "eb", "acdeb"),
    ("ab", "xa", "xab"),
    ("ab", "xy", "abxy"),
    ("", "ab", "ab"),
    ("ab", "ab", "ab"),
]


@pytest.mark.parametrize(("live", "config", "merged"), ORDERS, ids=[f"{lv or '-'}+{c}" for lv, c, _ in ORDERS])
def test_merge_list_order(live: str, config: str, merged: str) -> None:
    """Merged keyed-list order (``visitListItems``): live-only items keep their place, items
    only in the config come where the config has them, shared items follow the config's
    order (a shared live item not due yet is passed over, and placed when the config reaches it)."""
    out = ta.merge(spec(containers=containers(*live)), spec(containers=containers(*config)), T)
    assert "".join(c["name"] for c in out["spec"]["containers"]) == merged


def test_merge_set_order() -> None:
    """A set merges by value with the same ordering rule."""
    out = ta.merge(spec(tags=["a", "b", "c"]), spec(tags=["c", "a"]), T)
    assert out == spec(tags=["b", "c", "a"])


def test_merge_rejects_duplicate_keys_in_the_config() -> None:
    """A config whose keyed list repeats a key cannot be merged."""
    with pytest.raises(TypedError, match=r'duplicate entries for key \[name="a"\]'):
        ta.merge(spec(containers=containers("a")), spec(containers=containers("a", "a")), T)


# ----------------------------------------------------------- RemoveItems

OBJ = spec(
    replicas=1,
    sub={"x": 1, "y": "a"},
    containers=[{"name": "a", "image": "i", "args": ["1"]}, {"name": "b", "image": "j"}],
    tags=["t1", "t2"],
    labels={"a": "1", "b": "2"},
    selector={"a": "1"},
)

REMOVE: list[tuple[str, FieldSet, Any]] = [
    ("a-member-goes-with-its-subtree", {"f:spec": {"f:sub": {}}},
     spec(**{k: v for k, v in OBJ["spec"].items() if k != "sub"})),
    ("a-member-with-children-goes-whole", {"f:spec": {"f:sub": {".": {}, "f:x": {}}}},
     spec(**{k: v for k, v in OBJ["spec"].items() if k != "sub"})),
    ("a-path-that-only-leads-to-members-stays", {"f:spec": {"f:sub": {"f:x": {}}}},
     spec(**{**OBJ["spec"], "sub": {"y": "a"}})),
    ("a-keyed-item", {"f:spec": {"f:containers": {A: {}}}},
     spec(**{**OBJ["spec"], "containers": [{"name": "b", "image": "j"}]})),
    ("a-field-of-a-keyed-item", {"f:spec": {"f:containers": {A: {"f:image": {}}}}},
     spec(**{**OBJ["spec"], "containers": [{"name": "a", "args": ["1"]}, {"name": "b", "image": "j"}]})),
    ("a-set-item-and-a-map-entry", {"f:spec": {"f:tags": {'v:"t1"': {}}, "f:labels": {"f:b": {}}}},
     spec(**{**OBJ["spec"], "tags": ["t2"], "labels": {"a": "1"}})),
    ("nothing-inside-an-atomic-map", {"f:spec": {"f:selector": {"f:a": {}}}}, OBJ),
    ("absent-paths", {"f:spec": {"f:name": {}, "f:containers": {'k:{"name":"z"}': {}}}}, OBJ),
    ("empty-set", {}, OBJ),
]


@pytest.mark.parametrize(("toremove", "expected"), [c[1:] for c in REMOVE], ids=[c[0] for c in REMOVE])
def test_remove_items(toremove: FieldSet, expected: Any) -> None:
    """``TypedValue.RemoveItems``: each member of the set is removed with all it holds; a path
    that is not a member only leads to what is removed."""
    before = copy.deepcopy(OBJ)
    assert ta.remove_items(OBJ, toremove, T) == expected
    assert before == OBJ


# --------------------------------------------------------------- root_type


def test_root_type_reads_metadata_as_object_meta() -> None:
    """Whatever the kind's schema says of ``metadata``, it is walked as ObjectMeta: labels are a
    granular map, finalizers a set, ownerReferences a list keyed by uid of atomic items."""
    obj = {"metadata": {"name": "x", "labels": {"a": "b"}, "finalizers": ["f1"],
                        "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u1"}]},
           "spec": {"replicas": 1}}
    assert ta.to_field_set(obj, tf.root_type(SCHEMA)) == {
        "f:metadata": {"f:name": {}, "f:labels": {"f:a": {}}, "f:finalizers": {'v:"f1"': {}},
                       "f:ownerReferences": {'k:{"uid":"u1"}': {}}},
        "f:spec": {"f:replicas": {}},
    }


def test_a_creates_memo_changes_nothing_but_the_work() -> None:
    """``changes(zero, obj, t, memo)`` equals the walk without a memo, for objects that share a
    template (the memo hits) and for ones that differ in it (it misses)."""
    from fakeapi.codec.gomodel import go_roundtrip
    from fakeapi.registry.builtin import builtin_kinds

    pod_kind = next(k for k in builtin_kinds() if k.kind == "Pod" and not k.group)
    t = tf.root_type(pod_kind.schema, frozenset({"apiVersion", "kind", "status"}))
    zero = go_roundtrip({"apiVersion": "v1", "kind": "Pod"}, pod_kind.go_type)

    def pod(name: str, image: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"n": name}},
                "spec": {"containers": [{"name": "c", "image": image, "env": [{"name": "A", "value": "1"}]}],
                         "nodeSelector": {}}}

    memo = tf.Memo()
    for obj in (pod("a", "x"), pod("b", "x"), pod("c", "y"), pod("d", "x")):
        assert tf.changes(zero, obj, t, memo) == tf.changes(zero, obj, t)
    assert len(memo) == 2  # (one spec per image)


def test_a_creates_memo_of_metadata_is_keyed_without_the_servers_fields() -> None:
    """Metadata added whole is memoised by its content without the fields no manager owns (name, uid,
    resourceVersion, managedFields...): objects alike but for those share one entry, and every answer,
    for metadata that differs from a template by one value anywhere (a null, an empty map or list, a
    scalar: some leave only skipped keys), equals the walk without a memo, in a memo shared by all."""
    from tests.support import one_value_mutations

    t = tf.root_type(SCHEMA, frozenset({"apiVersion", "kind"}))
    template = {"name": "a", "uid": "u1", "resourceVersion": "3", "generateName": "g-",
                "labels": {"app": "x", "tier": "web"}, "annotations": {"n": "1"},
                "finalizers": ["f1", "f2"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u9", "controller": True}],
                "managedFields": [{"manager": "m", "operation": "Update", "fieldsV1": {"f:spec": {}}}]}
    metas = [template, {}, {"name": "only"}, {"name": "b", "uid": "u2"}, None, [], "x",
             *one_value_mutations(template, (None, {}, [], "v", 0, {"name": "n"}))]
    memo = tf.Memo(probe=len(metas) * 3)
    for meta in metas:
        for other in ({"name": "zz", "uid": "u7"}, {"resourceVersion": "9", "managedFields": []}):
            obj = {"apiVersion": "v1", "kind": "Widget", "metadata": meta, "spec": {"replicas": 1}}
            assert tf.changes({}, obj, t, memo) == tf.changes({}, obj, t), meta
            if isinstance(meta, dict):  # (the same object but for its server fields: the same answer)
                obj = {**obj, "metadata": {**meta, **other}}
                assert tf.changes({}, obj, t, memo) == tf.changes({}, obj, t), obj["metadata"]
    before = len(memo)
    for i in range(5):  # objects of one template: one entry for their metadata
        meta = {**template, "name": f"w{i}", "uid": f"u{i}", "resourceVersion": str(i), "managedFields": [i]}
        tf.changes({}, {"metadata": meta, "spec": {"replicas": 1}}, t, memo)
    assert len(memo) == before
    # an update's metadata is compared, never looked up (its two sides cost more to encode)
    old = {"metadata": template}
    new = {"metadata": {**template, "finalizers": ["f1"]}}
    tries = memo.tries.get((id(t), "metadata"), [0, 0])[0]
    assert tf.changes(old, new, t, memo) == tf.changes(old, new, t)
    assert memo.tries.get((id(t), "metadata"), [0, 0])[0] == tries


def test_changes_memo_of_updates_is_keyed_by_both_sides() -> None:
    """An update's memo hit needs the same content before and after: the same transition of two
    objects is walked once, and a different starting point is walked again."""
    from fakeapi.registry.builtin import builtin_kinds

    pod_kind = next(k for k in builtin_kinds() if k.kind == "Pod" and not k.group)
    t = tf.root_type(pod_kind.schema, frozenset({"apiVersion", "kind", "spec", "metadata"}))

    def pod(name: str, conditions: list[str], phase: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "status": {"phase": phase, "conditions": [{"type": c, "status": "True"} for c in conditions]}}

    memo = tf.Memo()
    steps = [(pod("a", ["PodScheduled"], "Pending"), pod("a", ["PodScheduled", "Ready"], "Running")),
             (pod("b", ["PodScheduled"], "Pending"), pod("b", ["PodScheduled", "Ready"], "Running")),
             (pod("c", [], "Pending"), pod("c", ["PodScheduled", "Ready"], "Running")),
             (pod("d", ["PodScheduled", "Ready"], "Running"), pod("d", ["PodScheduled"], "Failed"))]
    for old, new in steps:
        assert tf.changes(old, new, t, memo) == tf.changes(old, new, t)
    assert len(memo) == 3  # (a and b share one transition)
    assert tf.changes(*steps[3], t, memo)[1] == {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {
        ".": {}, "f:status": {}, "f:type": {}}}}}


def test_changes_memo_stops_looking_up_contents_that_never_repeat() -> None:
    """A field whose contents are new every time (a status with the object's own id) costs the JSON
    of both sides for nothing: after ``probe`` fruitless lookups the memo is not asked again for it,
    while a field whose contents repeat keeps being looked up. The changes are the same either way."""
    from fakeapi.registry.builtin import builtin_kinds

    pod_kind = next(k for k in builtin_kinds() if k.kind == "Pod" and not k.group)
    t = tf.root_type(pod_kind.schema, frozenset({"apiVersion", "kind", "metadata"}))
    memo = tf.Memo(probe=4)

    def pod(i: int) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
                "status": {"podIP": f"10.0.0.{i}", "phase": "Running"}}

    zero = {"apiVersion": "v1", "kind": "Pod"}
    for i in range(10):
        assert tf.changes(zero, pod(i), t, memo) == tf.changes(zero, pod(i), t)
    assert memo.tries[(id(t), "status")] == [4, 0]  # (probed four times, then left alone)
    assert memo.tries[(id(t), "spec")] == [10, 9]
    assert len(memo) == 5  # (one spec, four statuses)


def test_changes_memo_keeps_its_most_recently_used_entries() -> None:
    """Past its size the memo drops the entry used longest ago, not the one looked up last."""
    memo = tf.Memo(size=2)
    a, b, c = (1, "spec", b"", b"a"), (1, "spec", b"", b"b"), (1, "spec", b"", b"c")
    memo.put(a, ({}, None))
    memo.put(b, ({}, None))
    assert memo.get(a) is not None  # a: now the most recent
    memo.put(c, ({}, None))
    assert memo.get(b) is None and memo.get(a) is not None and memo.get(c) is not None


def test_whole_value_sets_of_flat_maps_are_shared_by_key_set() -> None:
    """A map whose keys all have leaf types (labels; a struct of scalars) gets the same set for the
    same keys whatever the values; a map type once seen with a non-leaf child is walked every time."""
    schema = copy.deepcopy(SCHEMA)  # (types of its own: the test sees them fresh)
    t = tf.type_of(schema)

    def obj(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
        return {"spec": {"labels": {"app": name, "tier": "x"}, "sub": {"x": len(name), "y": name},
                         "containers": containers}}

    a, _ = tf.changes(MISSING, obj("a", [{"name": "c", "image": "a"}]), t)
    b, _ = tf.changes(MISSING, obj("bb", [{"name": "c", "image": "b", "env": {"E": "1"}}]), t)
    assert a["f:spec"]["f:labels"] is b["f:spec"]["f:labels"] == {".": {}, "f:app": {}, "f:tier": {}}
    assert a["f:spec"]["f:sub"] is b["f:spec"]["f:sub"] == {".": {}, "f:x": {}, "f:y": {}}
    container_t = t.child("spec")[0].child("containers")[0].item()
    assert container_t._flat is None  # (env, a map of strings, is not a leaf: walked each time)
    assert a["f:spec"]["f:containers"][A.replace('"a"', '"c"')] == {".": {}, "f:image": {}, "f:name": {}}
    assert b["f:spec"]["f:containers"][A.replace('"a"', '"c"')] == {
        ".": {}, "f:env": {".": {}, "f:E": {}}, "f:image": {}, "f:name": {}}
