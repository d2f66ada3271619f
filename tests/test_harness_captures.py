"""``$capture`` / ``$captured`` markers and the ``controllers:`` case key."""

from __future__ import annotations

import pytest
from test_harness_bundle import PREAMBLE
from test_harness_runner import assert_passed, messages, run

from fakeapi.harness.captures import Captures, case_capture_problems
from fakeapi.harness.loader import LoadError, load_text
from fakeapi.harness.matcher import match

GIVEN_WIDGET = """\
  - {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 1}}
"""


def load_problems(body: str) -> str:
    with pytest.raises(LoadError) as e:
        load_text("name: case\n" + PREAMBLE + body, "case.yaml")
    return e.value.render(excerpt=False)


# ------------------------------------------------------------------------------------ the matcher


def test_capture_remembers_and_captured_compares() -> None:
    caps = Captures()
    assert match({"metadata": {"uid": {"$capture": "u"}}}, {"metadata": {"uid": "abc"}}, captures=caps) == []
    assert caps.get("u") == "abc"
    assert match({"metadata": {"uid": {"$captured": "u"}}}, {"metadata": {"uid": "abc"}}, captures=caps) == []
    out = match({"metadata": {"uid": {"$captured": "u"}}}, {"metadata": {"uid": "xyz"}}, captures=caps)
    assert len(out) == 1 and "captured as `u`" in out[0].message
    assert match({"metadata": {"uid": {"$not": {"$captured": "u"}}}}, {"metadata": {"uid": "xyz"}},
                 captures=caps) == []
    assert len(match({"metadata": {"uid": {"$not": {"$captured": "u"}}}}, {"metadata": {"uid": "abc"}},
                     captures=caps)) == 1


def test_capture_of_an_absent_value_fails_and_is_reported_later() -> None:
    caps = Captures()
    out = match({"status": {"podUid": {"$capture": "p"}}}, {"status": {}}, captures=caps)
    assert len(out) == 1 and "found none" in out[0].message
    later = match({"status": {"podUid": {"$captured": "p"}}}, {"status": {"podUid": "1"}}, captures=caps)
    assert "found nothing to capture" in later[0].message


def test_not_of_a_name_never_captured_fails_loudly() -> None:
    out = match({"a": {"$not": {"$captured": "nope"}}}, {"a": 1}, captures=Captures())
    assert len(out) == 1 and "never captured" in out[0].message


def test_captured_structured_values_compare_semantically() -> None:
    caps = Captures()
    match({"spec": {"$capture": "s"}}, {"spec": {"containers": [{"name": "a", "env": []}]}}, captures=caps)
    assert match({"spec": {"$captured": "s"}}, {"spec": {"containers": [{"name": "a"}]}}, captures=caps) == []


def test_trial_matches_do_not_capture() -> None:
    caps = Captures()
    # the keyed-list search tries items tentatively; only the final match may capture
    exp = {"items": {"$contains": [{"name": "b"}]}}
    assert match(exp, {"items": [{"name": "a"}, {"name": "b"}]}, captures=caps) == []
    assert caps.values == {}


# ------------------------------------------------------------------------------------ the loader


def test_captured_before_any_capture_is_a_collection_error_with_a_hint() -> None:
    text = load_problems(GIVEN_WIDGET + """\
steps:
  - expect:
      - object: {kind: Widget, metadata: {name: w, namespace: ns, uid: {$capture: widget_uid}}}
expect:
  - object: {kind: Widget, metadata: {name: w, namespace: ns, uid: {$captured: widget_id}}}
""")
    assert "`$captured: widget_id` uses a name no earlier `$capture` defines (did you mean `widget_uid`?)" in text


def test_capture_outside_an_expected_value_is_a_collection_error() -> None:
    text = load_problems(GIVEN_WIDGET + """\
expect:
  - count: {kind: Widget, where: {metadata: {uid: {$capture: u}}}, equals: 1}
  - object: {kind: Widget, metadata: {name: w, namespace: ns, uid: {$not: {$capture: v}}}}
  - object: {kind: Widget, metadata: {name: w, namespace: ns, uid: {$capture: "9bad"}}}
""")
    assert "`$capture` stands only in an `object` expectation or the `match` of an `each`" in text
    assert "`$capture` cannot stand inside `$not`" in text
    assert "`$capture` takes a name" in text


def test_unknown_marker_near_capture_gets_a_hint() -> None:
    text = load_problems(GIVEN_WIDGET + """\
expect:
  - object: {kind: Widget, metadata: {name: w, namespace: ns, uid: {$captur: u}}}
""")
    assert "unknown marker `$captur` (did you mean `$capture`?)" in text


def test_case_capture_problems_follow_the_run_order() -> None:
    data = {"steps": [{"do": [{"delete": {"kind": "Pod", "where": {"metadata": {"uid": {"$captured": "u"}}}}}],
                       "expect": [{"each": {"kind": "Pod", "match": {"metadata": {"uid": {"$capture": "u"}}}}}]}]}
    problems = case_capture_problems(data)
    assert [p for p, _, _ in problems] == [("steps", 0, "do", 0, "delete", "where", "metadata", "uid", "$captured")]


# ------------------------------------------------------------------------------------ in a case


def test_a_recreated_object_has_a_new_uid_across_steps() -> None:
    r = run(GIVEN_WIDGET + """\
steps:
  - name: remember the ConfigMap's uid
    expect:
      - each: {kind: ConfigMap, namespace: ns, match: {metadata: {name: w-0, uid: {$capture: cm_uid}}}}
  - name: the user deletes it; the controller makes a new one
    do:
      - delete: {kind: ConfigMap, namespace: ns, where: {metadata: {uid: {$captured: cm_uid}}}}
    expect:
      - object: {kind: ConfigMap, metadata: {name: w-0, namespace: ns, uid: {$not: {$captured: cm_uid}}}}
      - count: {kind: ConfigMap, namespace: ns, where: {metadata: {uid: {$captured: cm_uid}}}, equals: 0}
""")
    assert_passed(r)


def test_a_captured_value_that_changed_fails_with_both_values() -> None:
    r = run(GIVEN_WIDGET + """\
steps:
  - expect:
      - object: {kind: ConfigMap, metadata: {name: w-0, namespace: ns, uid: {$capture: cm_uid}}}
  - do:
      - delete: {kind: ConfigMap, namespace: ns, name: w-0}
expect:
  - object: {kind: ConfigMap, metadata: {name: w-0, namespace: ns, uid: {$captured: cm_uid}}}
""")
    assert not r.passed
    assert any("expected the value captured as `cm_uid`" in m for m in messages(r))


def test_capture_in_each_needs_exactly_one_object() -> None:
    r = run("""\
  - {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 2}}
expect:
  - each: {kind: ConfigMap, namespace: ns, match: {metadata: {uid: {$capture: u}}}}
""")
    assert any("`$capture` needs exactly one ConfigMap in ns, found 2" in m for m in messages(r))


# ------------------------------------------------------------------------------------ controllers


def test_controllers_selects_which_controllers_run() -> None:
    body = GIVEN_WIDGET + "expect:\n  - count: {kind: ConfigMap, namespace: ns, equals: %d}\n"
    assert_passed(run(body % 1 + "controllers: [widget]\n"))
    r = run(body % 0 + "controllers: []\n")
    assert_passed(r)
    assert r.host is not None and list(r.host.controllers) == []
    assert r.reconciles == 0


def test_unknown_controller_is_a_collection_error_with_did_you_mean() -> None:
    text = load_problems("controllers: [widgit]\n")
    assert "unknown controller `widgit` (did you mean `widget`?)" in text


def test_controllers_without_bundles_and_duplicates_are_collection_errors() -> None:
    with pytest.raises(LoadError) as e:
        load_text("name: case\ncontrollers: [x]\n", "case.yaml")
    assert "the case hosts no bundle" in e.value.render()
    assert "listed twice" in load_problems("controllers: [widget, widget]\n")


def test_crash_of_a_controller_the_case_does_not_run_is_a_collection_error() -> None:
    text = load_problems("controllers: []\nsteps:\n  - do: [{crash: widget}]\n")
    assert "`crash: widget`: the case runs only no controller" in text


def test_controllers_key_is_in_the_schema() -> None:
    from fakeapi.harness.formatschema import MARKERS, shipped_schema

    schema = shipped_schema()
    assert schema["properties"]["controllers"]["type"] == "array"
    assert set(schema["$defs"]["marker"]["properties"]) == set(MARKERS)
    assert {"$capture", "$captured"} <= set(MARKERS)
