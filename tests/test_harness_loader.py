"""The fixture loader: YAML with positions, the closed schema, the checks only a case can tell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_harness_bundle import PREAMBLE

from fakeapi.harness.formatschema import SCHEMA_FILE, build_schema, schema_text
from fakeapi.harness.loader import LoadError, Problem, load_file, load_text, validate

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures"


def problems(text: str) -> list[Problem]:
    with pytest.raises(LoadError) as info:
        load_text(text, "bad.yaml")
    return info.value.problems


def one_problem(text: str) -> Problem:
    found = problems(text)
    assert len(found) == 1, [p.render() for p in found]
    return found[0]


# ---------------------------------------------------------------------------------- each broken kind


def test_unknown_key_names_line_and_nearest_key() -> None:
    p = one_problem("name: a\nsteps: []\nexpct: []\n")
    assert (p.file, p.line, p.column) == ("bad.yaml", 3, 1)
    assert p.message == "unknown key `expct` in the case (did you mean `expect`?)"
    assert "expct: []" in p.excerpt


def test_unknown_key_deep_in_a_step() -> None:
    p = one_problem("name: a\nsteps:\n  - do: []\n    setle: false\n")
    assert (p.line, p.column) == (4, 5)
    assert p.message == "unknown key `setle` in a step (did you mean `settle`?)"


def test_unknown_key_without_a_close_match_lists_the_valid_keys() -> None:
    p = one_problem("name: a\nzzz: 1\n")
    assert p.message.startswith("unknown key `zzz` in the case (valid keys: name, description, tags")


def test_wrong_type() -> None:
    p = one_problem("name: a\nsteps:\n  - settle: maybe\n")
    assert (p.line, p.column) == (3, 13)
    assert p.message == "`steps[0].settle` must be a boolean (true or false) or a mapping, got a string `maybe`"


def test_wrong_type_of_a_list() -> None:
    p = one_problem("name: a\ngiven: {apiVersion: v1}\n")
    assert p.line == 2
    assert p.message == "`given` must be a list, got a mapping `{\"apiVersion\": \"v1\"}`"


def test_bad_duration() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - advance: 5 minutes\n")
    assert (p.line, p.column) == (4, 18)
    assert p.message == "`5 minutes` is not a Go duration (write it like 500ms, 30s, 5m or 1h30m)"


def test_bare_number_duration_suggests_seconds() -> None:
    p = one_problem("name: a\nsteps:\n  - settle: {for: 30}\n")
    assert p.line == 3
    assert "`30` is not a Go duration: write `30s`" in p.message


def test_unknown_kind_in_a_target() -> None:
    p = one_problem("name: a\nexpect:\n  - absent: {kind: ConfgMap, namespace: x, name: y}\n")
    assert (p.line, p.column) == (3, 20)
    assert p.message == "unknown kind `ConfgMap` in an `absent` expectation (did you mean `ConfigMap`?)"


def test_kinds_of_crds_in_given_and_of_bundles_are_known() -> None:
    crd = ("  - apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\n"
           "    metadata: {name: gadgets.example.org}\n"
           "    spec: {group: example.org, names: {kind: Gadget, plural: gadgets}, scope: Namespaced}\n")
    text = ("name: a\n" + PREAMBLE + crd + "expect:\n  - count: {kind: Gadget, equals: 0}\n"
            "  - count: {kind: gadgets, equals: 0}\n  - count: {kind: Widget, equals: 0}\n"
            "  - count: {kind: cm, equals: 0}\n")
    assert load_text(text)[0].name == "a"
    p = one_problem("name: a\n" + PREAMBLE + "expect:\n  - count: {kind: Widgit, equals: 0}\n")
    assert p.message == "unknown kind `Widgit` in a `count` expectation (did you mean `Widget`?)"


def test_unknown_bundle() -> None:
    p = one_problem("name: a\nbundles: [toy, tot]\n")
    assert (p.line, p.column) == (2, 16)
    assert p.message.startswith("unknown bundle `tot` (did you mean `toy`?)")


def test_unknown_operation() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - pach: {kind: Pod, name: x, patch: {}}\n")
    assert (p.line, p.column) == (4, 9)
    assert p.message == "unknown key `pach` in an operation (did you mean `patch`?)"


def test_unknown_bundle_operation() -> None:
    p = one_problem("name: a\n" + PREAMBLE + "steps:\n  - do:\n      - toy.scal: {name: w, namespace: ns}\n")
    assert p.line == 7
    assert p.message == "unknown operation `toy.scal` (did you mean `toy.scale`?)"


def test_bundle_operation_of_a_bundle_not_hosted() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - toy.scale: {name: w, namespace: ns, replicas: 1}\n")
    assert p.line == 4
    assert p.message == "operation `toy.scale` needs bundle `toy` in `bundles`"


def test_bundle_operation_arguments_are_checked_against_its_schema() -> None:
    p = one_problem("name: a\n" + PREAMBLE + "steps:\n  - do:\n      - toy.scale: {name: w, namespace: ns, replicas: -1}\n")
    assert p.line == 7
    assert "replicas" in p.message and "minimum" in p.message


def test_duplicate_case_name() -> None:
    p = one_problem("name: same\n---\nname: other\n---\nname: same\n")
    assert (p.line, p.column) == (5, 7)
    assert p.message == "duplicate case name `same` (first at line 1)"


def test_invalid_yaml() -> None:
    p = one_problem("name: a\nsteps:\n  - do: [\n")
    assert p.line == 4
    assert p.message.startswith("invalid YAML:")


def test_invalid_yaml_colon_in_plain_scalar() -> None:
    p = one_problem("name: a\nexpect:\n  - object: {kind: Pod}\ndescription: this: breaks\n")
    assert (p.line, p.column) == (4, 18)
    assert p.message.startswith("invalid YAML: mapping values are not allowed")


def test_duplicate_key_is_an_error() -> None:
    p = one_problem("name: a\nsteps: []\nname: b\n")
    assert (p.line, p.column) == (3, 1)
    assert p.message == "duplicate key `name` (first at line 1)"


def test_every_problem_of_a_file_is_reported_in_order() -> None:
    found = problems("name: a\nexpct: []\n---\nname: b\nsteps:\n  - settle: {for: soon}\n")
    assert [(p.line, p.message.split(" ")[0]) for p in found] == [(2, "unknown"), (6, "`soon`")]


# ---------------------------------------------------------------------------------- semantic checks


def test_markers_are_checked() -> None:
    p = one_problem("name: a\nexpect:\n  - object: {kind: Pod, metadata: {name: x}, spec: {a: {$regx: b}}}\n")
    assert p.message == "unknown marker `$regx` (did you mean `$regex`?)"
    p = one_problem("name: a\nexpect:\n  - object: {kind: Pod, metadata: {name: x}, spec: {a: {$len: 1, b: 2}}}\n")
    assert p.message.startswith("a marker map takes only `$` keys")
    p = one_problem("name: a\nexpect:\n  - object: {kind: Pod, metadata: {name: x}, spec: {a: {$regex: '('}}}\n")
    assert p.message.startswith("bad regular expression")


def test_an_expectation_takes_exactly_one_assertion() -> None:
    p = one_problem("name: a\nexpect:\n  - {absent: {kind: Pod}, count: {kind: Pod, equals: 1}}\n")
    assert p.message == ("an expectation needs exactly one of object, absent, count, each, calls; "
                         "found `absent`, `count`")


def test_an_operation_takes_exactly_one_operation() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - {advance: 1s, crash: all}\n")
    assert p.message == "an operation needs exactly one operation key; found `advance`, `crash`"
    p = one_problem("name: a\nsteps:\n  - do:\n      - {as: widget}\n")
    assert p.message == "an operation needs exactly one operation key; found none"


def test_count_needs_a_bound() -> None:
    p = one_problem("name: a\nexpect:\n  - count: {kind: Pod}\n")
    assert p.message == "`expect[0].count` needs one of `equals`, `min`, `max`"


def test_fault_rule_needs_one_effect() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - fault: {on: {verb: patch}, crash: after, stale: true}\n")
    assert p.message == "a fault rule needs exactly one of `error`, `crash`, `stale`; found `crash`, `stale`"


def test_unknown_controller_in_as_and_crash() -> None:
    p = one_problem("name: a\n" + PREAMBLE + "steps:\n  - do:\n      - crash: widgt\n")
    assert p.message == "unknown controller `widgt` to crash (did you mean `widget`?)"
    p = one_problem("name: a\n" + PREAMBLE + "steps:\n  - do:\n      - create: {apiVersion: v1, kind: ConfigMap, "
                    "metadata: {name: x, namespace: ns}}\n        as: widgets\n")
    assert p.message == "unknown controller `widgets` in `as` (did you mean `widget`?)"


def test_unknown_invariant_and_services_of_unhosted_bundle() -> None:
    p = one_problem("name: a\n" + PREAMBLE + "invariants: [toy.max-configmap]\n")
    assert p.message == "unknown invariant `toy.max-configmap` (did you mean `toy.max-configmaps`?)"
    p = one_problem("name: a\nservices: {toy: {}}\n")
    assert p.message == "`services.toy` is for a bundle the case does not host"
    p = one_problem("name: a\n" + PREAMBLE + "services: {toy: {maxConfigMap: 1}}\n")
    assert p.message == "unknown key `maxConfigMap` (did you mean `maxConfigMaps`?)"


def test_as_only_on_api_operations() -> None:
    p = one_problem("name: a\nsteps:\n  - do:\n      - advance: 1s\n        as: someone\n")
    assert p.message.startswith("`as` applies to API operations")


def test_as_any_go_client_without_bundles() -> None:
    text = ("name: a\nsteps:\n  - do:\n      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n"
            "        as: my-controller\n")
    assert load_text(text)[0].steps[0].do[0]["as"] == "my-controller"


# ---------------------------------------------------------------------------------- YAML dialect


def test_yaml_1_2_scalars() -> None:
    text = ("name: a\nsteps:\n  - do:\n      - fault: {on: {verb: get}, error: NotFound}\n"
            "      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: default,\n"
            "          creationTimestamp: 2026-01-01T00:00:00Z}, data: {a: yes, b: off, c: '1', d: 0x10}}\n")
    case = load_text(text)[0]
    do = case.steps[0].do
    assert do[0]["fault"]["on"] == {"verb": "get"}
    obj = do[1]["create"]
    assert obj["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert obj["data"] == {"a": "yes", "b": "off", "c": "1", "d": 16}


def test_anchors_and_merge_keys() -> None:
    text = ("name: a\ngiven:\n  - &ns {apiVersion: v1, kind: Namespace, metadata: {name: x}}\n"
            "  - <<: *ns\n    metadata: {name: y}\n")
    case = load_text(text)[0]
    assert [g["metadata"]["name"] for g in case.given] == ["x", "y"]
    assert case.given[1]["kind"] == "Namespace"


def test_multi_document_file_and_positions() -> None:
    text = "# a comment\nname: one\n---\n\n---\nname: two\nsteps:\n  - name: s\n    do: []\n"
    one, two = load_text(text, "f.yaml")
    assert (one.name, one.line, one.index) == ("one", 2, 0)
    assert (two.name, two.line) == ("two", 6)
    assert two.line_of(("steps", 0, "name")) == 8
    assert two.line_of(("steps", 0, "do"), key=True) == 9
    assert two.location == "f.yaml:6"


def test_load_file_reads_and_names(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("name: a\n")
    assert load_file(f, "shown.yaml")[0].file == "shown.yaml"
    with pytest.raises(LoadError) as info:
        load_file(tmp_path / "missing.yaml")
    assert "cannot read the file" in info.value.render()


def test_validate_plain_dict() -> None:
    assert validate({"name": "a"}) == []
    assert validate({"name": "a", "stepz": []}) == ["stepz: unknown key `stepz` in the case (did you mean `steps`?)"]


# ---------------------------------------------------------------------------------- the schema


def test_shipped_schema_is_the_generated_one() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == build_schema()
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()


def test_schema_is_closed_and_valid() -> None:
    import jsonschema

    schema = build_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["step"]["additionalProperties"] is False
    assert schema["$defs"]["operation"]["additionalProperties"] is False


def test_schema_with_bundles_lists_their_operations() -> None:
    schema = build_schema(bundles=True)
    assert "toy.scale" in schema["$defs"]["operation"]["properties"]
    assert "toy" in schema["properties"]["bundles"]["items"]["enum"]
    assert "toy.max-configmaps" in schema["properties"]["invariants"]["items"]["enum"]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("**/*.yaml")), ids=lambda p: p.name)
def test_repository_fixtures_load_or_fail_cleanly(path: Path) -> None:
    try:
        cases = load_file(path)
    except LoadError as e:
        assert all(p.line is not None for p in e.problems)
    else:
        assert all(c.name for c in cases)


def test_a_service_fault_may_name_the_services_own_error() -> None:
    text = ("name: a\nsteps:\n  - do:\n"
            "      - fault: {on: {service: actions, call: RemoveRunner}, error: JobStillRunning}\n")
    assert load_text(text)[0].steps[0].do[0]["fault"]["error"] == "JobStillRunning"


def test_an_api_fault_reason_must_be_one_the_server_has() -> None:
    text = "name: a\nsteps:\n  - do:\n      - fault: {on: {verb: get}, error: Conflcit}\n"
    with pytest.raises(LoadError) as err:
        load_text(text, "bad.yaml")
    assert "did you mean `Conflict`" in str(err.value)
    assert "bad.yaml:4" in str(err.value)


def _bundle_schema_inputs() -> list[tuple[str, dict[str, object], object]]:
    """The arc bundle's settings and operation schemas, each with a valid value and every one-value change of it."""
    from support import one_value_mutations

    from reconcilers.bundle import OPERATION_SCHEMAS, SETTINGS_SCHEMA

    stand_ins = (None, True, False, 0, 1, -1, 1.0, 1.5, "", "x", [], {}, ["x"], {"x": 1})
    valid: dict[str, tuple[dict[str, object], object]] = {
        "settings": (SETTINGS_SCHEMA, {
            "controllerNamespace": "arc-systems",
            "actions": {"runnerGroups": [{"id": 1, "name": "default"}], "rejectedImages": ["bad:1"],
                        "scaleSets": [{"id": 1, "name": "s", "runnerGroupId": 1, "labels": ["l"]}],
                        "runners": [{"id": 2, "name": "r", "scaleSetId": 1}]},
            "kubelet": {"startDelay": "5s"}}),
        "arc.queue_jobs": (OPERATION_SCHEMAS["arc.queue_jobs"], {"name": "s", "namespace": "ns", "count": 2}),
        "arc.delete_scale_set": (OPERATION_SCHEMAS["arc.delete_scale_set"], {"name": "s", "namespace": "ns"}),
        "arc.finish_jobs": (OPERATION_SCHEMAS["arc.finish_jobs"], {"exitCode": 0}),
        "arc.reject_image": (OPERATION_SCHEMAS["arc.reject_image"], "bad:1"),
    }
    out = []
    for name, (schema, value) in valid.items():
        for v in [value, *stand_ins, *one_value_mutations(value, stand_ins)]:
            out.append((name, schema, v))
    return out


def test_bundle_schema_problems_equal_jsonschemas_own() -> None:
    """A bundle's schemas checked through jsonschema-rs first (jsonschema's errors only when it finds a problem)
    give the problems jsonschema alone gives, for valid values and every one-value change of them."""
    import jsonschema

    from fakeapi.harness.casechecks import _schema_problems, bundle_schema_problems

    inputs = _bundle_schema_inputs()
    assert len(inputs) > 400
    invalid = 0
    for name, schema, value in inputs:
        slow = _schema_problems(jsonschema.Draft202012Validator(schema), value, schema.get("$defs", {}), ("x",))
        assert bundle_schema_problems(schema, value, ("x",)) == slow, (name, value)
        invalid += bool(slow)
    assert 0 < invalid < len(inputs)
