"""JSON Patch, merge patch, strategic merge patch, create_merge_patch (reference §2.5, §7.4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.machinery.openapi import builtin_schema
from fakeapi.machinery.patches import (
    GENERIC_INVALID_MESSAGE,
    PatchApplyError,
    PatchError,
    PatchFormatError,
    PatchInternalError,
    PatchTooLargeError,
    apply_json_patch,
    apply_json_patch_shared,
    apply_merge_patch,
    apply_strategic_merge_patch,
    create_merge_patch,
)

OBJ: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w1", "namespace": "ns", "labels": {"a": "1"}},
    "spec": {"replicas": 1, "items": ["a", "b"], "nested": {"x": 1, "y": 2}},
}

# --- JSON Patch ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ops", "path", "expected"),
    [
        ([{"op": "add", "path": "/metadata/finalizers", "value": ["x"]}], ("metadata", "finalizers"), ["x"]),
        ([{"op": "replace", "path": "/spec/replicas", "value": 3}], ("spec", "replicas"), 3),
        ([{"op": "add", "path": "/spec/items/-", "value": "c"}], ("spec", "items"), ["a", "b", "c"]),
        ([{"op": "remove", "path": "/spec/items/0"}], ("spec", "items"), ["b"]),
        ([{"op": "remove", "path": "/spec/items/-1"}], ("spec", "items"), ["a"]),  # evanphx negative index
        ([{"op": "add", "path": "/spec/items/-1", "value": "z"}], ("spec", "items"), ["a", "z", "b"]),
        ([{"op": "add", "path": "/spec/extra"}], ("spec", "extra"), None),  # missing value is null
        ([{"op": "test", "path": "/spec/replicas", "value": 1}], ("spec", "replicas"), 1),
        ([{"op": "copy", "from": "/spec/items", "path": "/spec/copy"}], ("spec", "copy"), ["a", "b"]),
        ([{"op": "move", "from": "/spec/nested", "path": "/spec/moved"}], ("spec", "moved"), {"x": 1, "y": 2}),
        ([{"op": "add", "path": "/metadata/labels/a~1b", "value": "v"}], ("metadata", "labels"), {"a": "1", "a/b": "v"}),
        (None, ("spec", "replicas"), 1),  # a null body is an empty patch
        ([], ("spec", "replicas"), 1),
    ],
)
def test_json_patch_operations(ops: Any, path: tuple[str, str], expected: Any) -> None:
    before = copy.deepcopy(OBJ)
    out = apply_json_patch(OBJ, ops)
    assert out[path[0]][path[1]] == expected
    assert before == OBJ  # doc not mutated


def test_json_patch_shared_copies_only_the_path_it_changes() -> None:
    before = copy.deepcopy(OBJ)
    out = apply_json_patch_shared(OBJ, [{"op": "add", "path": "/metadata/labels/b", "value": "2"}])
    assert out == {**OBJ, "metadata": {**OBJ["metadata"], "labels": {"a": "1", "b": "2"}}}
    assert out is not OBJ and out["metadata"] is not OBJ["metadata"]
    assert out["spec"] is OBJ["spec"]  # (untouched: the document's own)
    assert before == OBJ


def test_json_patch_shared_never_changes_the_document_or_the_patch_values() -> None:
    before = copy.deepcopy(OBJ)
    added: dict[str, Any] = {"k": {"v": 1}}
    ops = [{"op": "add", "path": "/spec/added", "value": added},
           {"op": "add", "path": "/spec/added/k/w", "value": 2},  # (into the value just added)
           {"op": "move", "from": "/spec/nested", "path": "/metadata/nested"},
           {"op": "add", "path": "/metadata/nested/z", "value": 3},  # (into a moved part of the document)
           {"op": "remove", "path": "/spec/items/-1"},
           {"op": "copy", "from": "/metadata/labels", "path": "/spec/labels"},
           {"op": "add", "path": "/spec/labels/c", "value": "3"}]
    out = apply_json_patch_shared(OBJ, ops)
    assert out == apply_json_patch(OBJ, ops) == {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "ns", "labels": {"a": "1"}, "nested": {"x": 1, "y": 2, "z": 3}},
        "spec": {"replicas": 1, "items": ["a"], "added": {"k": {"v": 1, "w": 2}}, "labels": {"a": "1", "c": "3"}}}
    assert before == OBJ
    assert added == {"k": {"v": 1}}


def test_json_patch_shared_failure_changes_nothing() -> None:
    before = copy.deepcopy(OBJ)
    with pytest.raises(PatchApplyError):
        apply_json_patch_shared(OBJ, [{"op": "add", "path": "/spec/nested/q", "value": 1},
                                      {"op": "remove", "path": "/spec/nested/missing"}])
    assert before == OBJ


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param([{"op": "add", "path": "/metadata/finalizers/-", "value": "x"}], id="add-to-missing-finalizers"),
        pytest.param([{"op": "test", "path": "/spec/replicas", "value": 2}], id="failed-test"),
        pytest.param([{"op": "remove", "path": "/spec/missing"}], id="remove-missing-key"),
        pytest.param([{"op": "replace", "path": "/spec/missing", "value": 1}], id="replace-missing-key"),
        pytest.param([{"op": "add", "path": "/spec/items/9", "value": "x"}], id="index-out-of-range"),
        pytest.param([{"op": "bogus", "path": "/spec"}], id="unknown-op"),
        pytest.param([{"path": "/spec"}], id="missing-op"),
        pytest.param([{"op": "add", "value": 1}], id="missing-path"),
        pytest.param([None], id="null-operation"),
        pytest.param([{"op": "move", "from": "/nope", "path": "/spec/x"}], id="move-from-missing"),
    ],
)
def test_json_patch_application_failure_is_422_with_generic_message(ops: Any) -> None:
    with pytest.raises(PatchApplyError) as err:
        apply_json_patch(OBJ, ops)
    assert str(err.value) == GENERIC_INVALID_MESSAGE
    assert err.value.code == 422


def test_json_patch_failure_in_a_later_op_changes_nothing() -> None:
    before = copy.deepcopy(OBJ)
    with pytest.raises(PatchApplyError):
        apply_json_patch(OBJ, [{"op": "replace", "path": "/spec/replicas", "value": 9}, {"op": "remove", "path": "/x"}])
    assert before == OBJ


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        ([["op"]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
    ],
)
def test_json_patch_undecodable_body_is_400_with_decoder_message(ops: Any, message: str) -> None:
    with pytest.raises(PatchFormatError) as err:
        apply_json_patch(OBJ, ops)
    assert str(err.value) == message
    assert err.value.code == 400


def test_json_patch_with_more_than_10000_operations_is_413() -> None:
    ops = [{"op": "test", "path": "/spec/replicas", "value": 1}] * 10_001
    with pytest.raises(PatchTooLargeError) as err:
        apply_json_patch(OBJ, ops)
    assert str(err.value) == "The allowed maximum operations in a JSON patch is 10000, got 10001"
    assert apply_json_patch(OBJ, ops[:10_000]) == OBJ


# --- merge patch --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "expected_spec"),
    [
        ({"spec": {"replicas": None}}, {"items": ["a", "b"], "nested": {"x": 1, "y": 2}}),
        ({"spec": {"items": ["c"]}}, {"replicas": 1, "items": ["c"], "nested": {"x": 1, "y": 2}}),
        ({"spec": {"nested": {"x": None, "z": 3}}}, {"replicas": 1, "items": ["a", "b"], "nested": {"y": 2, "z": 3}}),
        ({"spec": {"new": {"a": None, "b": 1}}}, {**OBJ["spec"], "new": {"b": 1}}),  # nulls in added values pruned
        ({"spec": {"new": [1, None, {"k": None}]}}, {**OBJ["spec"], "new": [1, {}]}),
        ({"spec": {"nested": [1, None]}}, {**OBJ["spec"], "nested": [1, None]}),  # array over an object: as is
        ({"spec": {"missing": None}}, OBJ["spec"]),
        ({}, OBJ["spec"]),
    ],
)
def test_merge_patch_null_deletes_objects_merge_arrays_replace(patch: dict[str, Any], expected_spec: Any) -> None:
    before = copy.deepcopy(OBJ)
    assert apply_merge_patch(OBJ, patch)["spec"] == expected_spec
    assert before == OBJ


def test_merge_patch_replaces_finalizers_whole() -> None:
    doc = {"metadata": {"finalizers": ["a", "b"]}}
    assert apply_merge_patch(doc, {"metadata": {"finalizers": ["c"]}}) == {"metadata": {"finalizers": ["c"]}}


@pytest.mark.parametrize("patch", [None, "x", 1, True])
def test_merge_patch_null_or_scalar_body_is_invalid_json_patch(patch: Any) -> None:
    with pytest.raises(PatchFormatError) as err:
        apply_merge_patch(OBJ, patch)
    assert str(err.value) == "Invalid JSON Patch"


def test_merge_patch_array_body_replaces_the_document() -> None:
    assert apply_merge_patch(OBJ, [1, None, {"a": None}]) == [1, {}]


# --- strategic merge patch ------------------------------------------------------------------

POD_SCHEMA = builtin_schema("Pod", "v1")
DEPLOYMENT_SCHEMA = builtin_schema("Deployment", "apps/v1")

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "labels": {"a": "1", "b": "2"},
        "finalizers": ["a", "b"],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1"},
            {"apiVersion": "v1", "kind": "Y", "name": "y", "uid": "2"},
        ],
    },
    "spec": {
        "containers": [
            {"name": "c1", "image": "i1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
            {"name": "c2", "image": "i2", "ports": [{"containerPort": 80}]},
        ],
        "tolerations": [{"key": "k1", "operator": "Exists"}],
        "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
    },
}


def smp(patch: Any, doc: dict[str, Any] = POD, schema: dict[str, Any] = POD_SCHEMA) -> Any:
    before = copy.deepcopy(doc)
    out = apply_strategic_merge_patch(doc, patch, schema)
    assert before == doc  # doc not mutated
    return out


def names(items: list[dict[str, Any]]) -> list[Any]:
    return [i.get("name") for i in items]


def test_smp_merges_containers_by_name_keeping_other_fields() -> None:
    out = smp({"spec": {"containers": [{"name": "c1", "image": "new"}]}})
    assert out["spec"]["containers"][0] == {"name": "c1", "image": "new", "env": POD["spec"]["containers"][0]["env"]}
    assert names(out["spec"]["containers"]) == ["c1", "c2"]


def test_smp_new_list_item_is_placed_before_existing_ones_like_go() -> None:
    out = smp({"spec": {"containers": [{"name": "c3", "image": "i3"}]}})
    assert names(out["spec"]["containers"]) == ["c3", "c1", "c2"]


def test_smp_merges_env_by_name_inside_a_container() -> None:
    out = smp({"spec": {"containers": [{"name": "c1", "env": [{"name": "B", "value": "x"}, {"name": "C", "value": "3"}]}]}})
    assert out["spec"]["containers"][0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "x"},
        {"name": "C", "value": "3"},
    ]


def test_smp_merges_container_ports_by_container_port() -> None:
    out = smp({"spec": {"containers": [{"name": "c2", "ports": [{"containerPort": 80, "name": "http"}]}]}})
    assert out["spec"]["containers"][1]["ports"] == [{"containerPort": 80, "name": "http"}]


@pytest.mark.parametrize(
    ("patch_finalizers", "expected"),
    [
        (["c"], ["c", "a", "b"]),
        (["b", "c"], ["a", "b", "c"]),  # a patch item already on the server keeps its place
        (["a"], ["a", "b"]),
        ([], ["a", "b"]),
    ],
)
def test_smp_finalizers_are_a_set_union(patch_finalizers: list[str], expected: list[str]) -> None:
    assert smp({"metadata": {"finalizers": patch_finalizers}})["metadata"]["finalizers"] == expected


def test_smp_delete_from_primitive_list_removes_finalizers() -> None:
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "zz"]}})
    assert out["metadata"]["finalizers"] == ["b"]


def test_smp_delete_from_primitive_list_and_add_together() -> None:
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c"]}})
    assert out["metadata"]["finalizers"] == ["c", "b"]


def test_smp_patch_delete_directive_removes_a_list_item() -> None:
    out = smp({"spec": {"containers": [{"name": "c1", "$patch": "delete"}]}})
    assert names(out["spec"]["containers"]) == ["c2"]


def test_smp_patch_replace_directive_in_a_list_replaces_it_with_the_other_items() -> None:
    out = smp({"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "only", "image": "x"}]


def test_smp_patch_replace_directive_on_a_map_replaces_the_map() -> None:
    out = smp({"metadata": {"labels": {"$patch": "replace", "c": "3"}}})
    assert out["metadata"]["labels"] == {"c": "3"}


def test_smp_patch_delete_directive_on_a_map_empties_it() -> None:
    assert smp({"metadata": {"labels": {"$patch": "delete"}}})["metadata"]["labels"] == {}
    assert smp({"$patch": "delete"}) == {}


def test_smp_null_deletes_a_key() -> None:
    out = smp({"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"tolerations": None}})
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert "tolerations" not in out["spec"]


def test_smp_list_without_strategy_is_replaced_tolerations() -> None:
    out = smp({"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}})
    assert out["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]


def test_smp_owner_references_merge_by_uid() -> None:
    out = smp({"metadata": {"ownerReferences": [{"uid": "2", "name": "yy"}, {"uid": "3", "kind": "Z"}]}})
    assert out["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1"},
        {"apiVersion": "v1", "kind": "Y", "name": "yy", "uid": "2"},
        {"uid": "3", "kind": "Z"},
    ]


def test_smp_set_element_order_reorders_a_merged_list() -> None:
    out = smp({"spec": {"$setElementOrder/containers": [{"name": "c2"}, {"name": "c1"}]}})
    assert names(out["spec"]["containers"]) == ["c2", "c1"]
    out = smp({"metadata": {"$setElementOrder/finalizers": ["b", "a"]}})
    assert out["metadata"]["finalizers"] == ["b", "a"]


def test_smp_set_element_order_with_a_new_item() -> None:
    out = smp(
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "c1"}, {"name": "c3"}, {"name": "c2"}],
                "containers": [{"name": "c3", "image": "i3"}],
            }
        }
    )
    assert names(out["spec"]["containers"]) == ["c1", "c3", "c2"]


def test_smp_retain_keys_clears_fields_not_listed_volumes() -> None:
    patch = {"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "secret"], "secret": {"secretName": "s"}}]}}
    assert smp(patch)["spec"]["volumes"] == [{"name": "v", "secret": {"secretName": "s"}}]


def test_smp_retain_keys_on_deployment_strategy() -> None:
    dep = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = smp({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, dep, DEPLOYMENT_SCHEMA)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_smp_added_subtree_drops_directives_and_nulls() -> None:
    out = smp({"spec": {"affinity": {"nodeAffinity": {"x": None, "keep": 1, "gone": {"$patch": "delete"}}}}})
    assert out["spec"]["affinity"] == {"nodeAffinity": {"keep": 1}}


@pytest.mark.parametrize(
    ("patch", "error", "message"),
    [
        (
            {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}},
            PatchFormatError,
            "invalid patch format of primitive list",
        ),
        (
            {"spec": {"$setElementOrder": [{"name": "c1"}]}},
            PatchFormatError,
            "invalid patch format of setElementOrder list",
        ),
        ({"spec": {"$retainKeys": ["x"], "containers": []}}, PatchFormatError, "invalid patch format of retainKeys"),
        ({"spec": {"$retainKeys": "x"}}, PatchFormatError, "invalid patch format of retainKeys"),
        ([1], PatchFormatError, "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ({"spec": {"$patch": "merge"}}, PatchInternalError, "unknown patch type: merge in map: map[$patch:merge]"),
        (
            {"spec": {"containers": [{"name": "c1", "$patch": "merge"}]}},
            PatchInternalError,
            "merging lists cannot yet be specified in the patch",
        ),
        (
            {"spec": {"containers": [{"image": "noname"}]}},
            PatchInternalError,
            "map: map[image:noname] does not contain declared merge key: name",
        ),
        (
            {"spec": {"containers": [{"name": "c1", "$patch": "bogus"}]}},
            PatchInternalError,
            "unknown patch type: bogus in map: map[$patch:bogus name:c1]",
        ),
        (
            {"metadata": {"finalizers": [["x"]]}},
            PatchInternalError,
            "list element types are not identical: [[a b] [[x]]]",
        ),
    ],
)
def test_smp_malformed_directives_fail_like_kube_apiserver(
    patch: Any, error: type[PatchError], message: str
) -> None:
    with pytest.raises(error) as err:
        smp(patch)
    assert type(err.value) is error
    assert str(err.value) == message


def test_smp_list_of_lists_is_422_with_generic_message() -> None:
    doc = {"metadata": {"finalizers": [["a"]]}}
    with pytest.raises(PatchApplyError) as err:
        smp({"metadata": {"finalizers": [["b"]]}}, doc)
    assert err.value.detail == "lists of lists are not supported"
    assert str(err.value) == GENERIC_INVALID_MESSAGE


def test_smp_null_body_is_a_no_op() -> None:
    assert smp(None) == POD


# --- create_merge_patch ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "modified", "patch"),
    [
        ({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 2}}, {}),
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
        ({"a": 1}, {"a": 1, "b": [1]}, {"b": [1]}),
        ({"l": [1, 2]}, {"l": [1, 3]}, {"l": [1, 3]}),  # changed arrays are sent whole
        ({"l": [1, 2]}, {"l": [1, 2]}, {}),
        ({"m": {"x": 1, "y": 2}}, {"m": {"x": 1, "y": 3}}, {"m": {"y": 3}}),
        ({"m": {"x": 1}}, {"m": "s"}, {"m": "s"}),  # type change replaces
        ({"n": 1}, {"n": 1.0}, {}),  # all numbers are float64 in Go
        ({"n": None}, {"n": None}, {}),
        ({"n": None}, {"n": 1}, {"n": 1}),
        (
            {"metadata": {"finalizers": ["a", "b"], "resourceVersion": "5"}},
            {"metadata": {"finalizers": ["a"], "resourceVersion": "5"}},
            {"metadata": {"finalizers": ["a"]}},
        ),
    ],
)
def test_create_merge_patch_is_evanphx_create_merge_patch(original: Any, modified: Any, patch: Any) -> None:
    assert create_merge_patch(original, modified) == patch


def test_create_merge_patch_round_trips_through_apply_merge_patch() -> None:
    modified = fast_copy(OBJ)
    modified["spec"]["items"].append("c")
    del modified["spec"]["nested"]["x"]
    modified["metadata"]["labels"]["new"] = "v"
    assert apply_merge_patch(OBJ, create_merge_patch(OBJ, modified)) == modified


def test_create_merge_patch_of_mismatched_documents_fails() -> None:
    with pytest.raises(PatchError):
        create_merge_patch({"a": 1}, [1])


def test_strategic_merge_by_key_index_gives_what_the_scan_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merge-key lists are matched through an index of scalar keys; the pairwise scan it replaces is the oracle.

    ``_hkey`` returning None sends every lookup down the scan, so both paths run on the same seeded
    cases: keys of several Go types, null keys (a null drops the key from the merged item), missing
    keys, ``$patch`` directives and ``$setElementOrder`` lists. Results, and errors, must be identical.
    """
    import json
    import random

    from fakeapi.machinery import patches
    from fakeapi.machinery.openapi import builtin_schema

    schema = builtin_schema("Pod", "v1")
    rnd = random.Random(3)
    keys: list[Any] = ["Ready", "Initialized", "PodScheduled", 1, True, None, 1.0]

    def cond() -> dict[str, Any]:
        d: dict[str, Any] = {"type": rnd.choice(keys), "status": rnd.choice(["True", "False", None])}
        if rnd.random() < 0.15:
            d["$patch"] = rnd.choice(["delete", "replace"])
        if rnd.random() < 0.05:
            d.pop("type")
        return d

    def run(doc: dict[str, Any], patch: dict[str, Any]) -> tuple[str, str]:
        try:
            return "ok", json.dumps(patches.apply_strategic_merge_patch(copy.deepcopy(doc), copy.deepcopy(patch),
                                                                        schema))
        except patches.PatchError as e:
            return type(e).__name__, str(e)

    cases = []
    for _ in range(400):
        doc = {"status": {"conditions": [cond() for _ in range(rnd.randint(0, 4))]},
               "spec": {"containers": [{"name": n, "image": "i", "env": [{"name": "X", "value": "1"}]}
                                       for n in rnd.sample(["a", "b", "c"], rnd.randint(1, 3))]}}
        patch: dict[str, Any] = {"status": {"conditions": [cond() for _ in range(rnd.randint(0, 4))]}}
        if rnd.random() < 0.4:
            patch["status"]["$setElementOrder/conditions"] = [{"type": t} for t in rnd.sample(keys[:4], 3)]
        if rnd.random() < 0.5:
            patch["spec"] = {"containers": [{"name": rnd.choice(["a", "d"]), "env": [{"name": "Q", "value": "2"}]}]}
        cases.append((doc, patch))
    indexed = [run(d, p) for d, p in cases]
    monkeypatch.setattr(patches, "_hkey", lambda x: None)
    scanned = [run(d, p) for d, p in cases]
    assert indexed == scanned
    assert sum(1 for r in indexed if r[0] == "ok") > 100  # most cases apply; some are the errors Go gives


def test_two_way_strategic_diff_applied_to_the_original_gives_the_modified() -> None:
    """``create_strategic_merge_patch``: what the kubelet sends; applying it must give the new status exactly."""
    import random

    from fakeapi.machinery import patches
    from fakeapi.machinery.openapi import builtin_schema

    schema = builtin_schema("Pod", "v1")
    rnd = random.Random(5)

    def status() -> dict[str, Any]:
        s: dict[str, Any] = {}
        if rnd.random() < 0.8:
            s["phase"] = rnd.choice(["Pending", "Running", "Succeeded"])
        if rnd.random() < 0.8:
            s["conditions"] = [{"type": t, "status": rnd.choice(["True", "False"]),
                                **({"reason": "R"} if rnd.random() < 0.3 else {})}
                               for t in rnd.sample(["Ready", "Initialized", "PodScheduled", "ContainersReady"],
                                                   rnd.randint(0, 4))]
        if rnd.random() < 0.6:
            s["containerStatuses"] = [{"name": n, "ready": rnd.random() < 0.5, "restartCount": rnd.randint(0, 2)}
                                      for n in rnd.sample(["a", "b"], rnd.randint(0, 2))]
        if rnd.random() < 0.4:
            s["podIPs"] = [{"ip": ip} for ip in rnd.sample(["10.0.0.1", "10.0.0.2", "fd00::1"], rnd.randint(0, 3))]
        if rnd.random() < 0.3:
            s["startTime"] = "2026-01-01T00:00:00Z"
        return s

    for _ in range(500):
        old = {"spec": {"containers": [{"name": "a", "image": "i"}]}, "status": status()}
        new = {"spec": old["spec"], "status": status() if rnd.random() < 0.7 else copy.deepcopy(old["status"])}
        diff = patches.create_strategic_merge_patch(old, new, schema)
        assert patches.apply_strategic_merge_patch(copy.deepcopy(old), copy.deepcopy(diff), schema) == new
    # one condition flips: the patch names it, keeps the order, and sends nothing else
    conds = [{"type": t, "status": "False"} for t in ("Initialized", "Ready", "PodScheduled")]
    old = {"status": {"phase": "Pending", "conditions": conds}}
    new = {"status": {"phase": "Pending", "conditions": [conds[0], {"type": "Ready", "status": "True"}, conds[2]]}}
    assert patches.create_strategic_merge_patch(old, new, schema) == {"status": {
        "$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "Ready"}, {"type": "PodScheduled"}],
        "conditions": [{"type": "Ready", "status": "True"}]}}
    assert patches.create_strategic_merge_patch(old, copy.deepcopy(old), schema) == {}
