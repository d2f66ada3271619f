"""Recording: the actual end state written into a case's expect, the rest of the file kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_harness_bundle import PREAMBLE

from fakeapi.harness.loader import load_file, load_text
from fakeapi.harness.record import clean_object, record_file, recorded_expectations, render_expect, splice
from fakeapi.harness.runner import run_case

FILE = "# yaml-language-server: $schema=../fixture.schema.json\n# the first case\nname: first\n" + PREAMBLE + """\
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: gone, namespace: ns}}
steps:
  - do:
      # a comment inside the steps stays
      - create: {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 2}}
      - delete: {kind: ConfigMap, namespace: ns, name: gone}
    expect:
      - count: {kind: ConfigMap, namespace: ns, min: 1}   # step expectations stay
expect:
  # this old expectation is replaced
  - absent: {kind: Widget, namespace: ns, name: w}
---
# the second case has no expect yet
name: second
given:
  - {apiVersion: v1, kind: Namespace, metadata: {name: other}}
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: other, labels: {a: b}}, data: {k: v}}
---
name: untouched
"""


def test_recorded_expectations_of_a_run() -> None:
    case = load_text(FILE)[0]
    result = run_case(case, check=False)
    got = recorded_expectations(result)
    kinds = [(next(iter(e)), (e.get("object") or {}).get("kind") or e["absent"]["kind"]) for e in got]
    assert kinds == [("object", "Widget"), ("absent", "ConfigMap"), ("object", "ConfigMap"), ("object", "ConfigMap")]
    widget = got[0]["object"]
    assert widget["metadata"] == {"name": "w", "namespace": "ns"}
    assert widget["status"]["phase"] == "Ready"
    child = got[2]["object"]
    assert child["metadata"]["ownerReferences"] == [
        {"apiVersion": "toy.example.com/v1", "kind": "Widget", "name": "w", "controller": True}]
    assert got[1] == {"absent": {"kind": "ConfigMap", "namespace": "ns", "name": "gone"}}


def test_clean_object_drops_server_owned_metadata() -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": "x", "uid": "u", "resourceVersion": "1", "generation": 2, "creationTimestamp": "t",
                        "managedFields": [{}], "labels": {"kubernetes.io/metadata.name": "x"}, "annotations": {}},
           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    assert clean_object(obj) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"},
                                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def test_render_expect_block_style() -> None:
    lines = render_expect([{"object": {"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "c", "namespace": "ns"},
                                       "data": {"when": "2026-01-01T00:00:00Z", "n": "1"}}}], indent=2)
    assert lines == [
        "  expect:",
        "    - object:",
        "        apiVersion: v1",
        "        kind: ConfigMap",
        "        metadata: {name: c, namespace: ns}",
        "        data: {when: '2026-01-01T00:00:00Z', n: '1'}",
    ]
    assert render_expect([]) == ["expect: []"]


def test_record_file_rewrites_only_expect_and_the_result_passes(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(FILE)
    cases = load_file(path)
    records = {}
    for case in cases[:2]:
        records[case.name] = recorded_expectations(run_case(case, check=False))
    record_file(path, records)
    text = path.read_text()
    before, after = FILE.splitlines(), text.splitlines()
    # everything up to the old expect block is unchanged, comments included
    cut = before.index("expect:")
    assert after[:cut] == before[:cut]
    assert "# this old expectation is replaced" not in text
    assert "      - count: {kind: ConfigMap, namespace: ns, min: 1}   # step expectations stay" in after
    assert "# the second case has no expect yet" in after
    assert after[-3:] == ["      name: c", "---", "name: untouched"] or after[-2:] == ["---", "name: untouched"]
    new_cases = load_file(path)
    assert [c.name for c in new_cases] == ["first", "second", "untouched"]
    for case in new_cases:
        result = run_case(case)
        assert result.passed, [f.mismatch for f in result.failures]
    second = new_cases[1].expect
    assert second == [{"object": {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "c", "namespace": "other", "labels": {"a": "b"}},
                                  "data": {"k": "v"}}}]


def test_recording_twice_is_stable(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(FILE)
    for _ in range(2):
        cases = load_file(path)
        record_file(path, {c.name: recorded_expectations(run_case(c, check=False)) for c in cases})
        first = path.read_text()
    cases = load_file(path)
    record_file(path, {c.name: recorded_expectations(run_case(c, check=False)) for c in cases})
    assert path.read_text() == first


def test_flow_style_documents_are_refused() -> None:
    with pytest.raises(ValueError, match="flow-style"):
        splice("{name: a, expect: []}\n", {"a": []})
