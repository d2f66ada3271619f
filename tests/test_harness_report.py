"""Failure reports: a snapshot of one complete report, and the pieces it is made of."""

from __future__ import annotations

from datetime import timedelta

from test_harness_bundle import PREAMBLE

from fakeapi.harness.loader import load_text
from fakeapi.harness.matcher import ABSENT, Mismatch, problem
from fakeapi.harness.report import render_failure, render_mismatch, render_value, strip_noise, summary_line
from fakeapi.harness.runner import run_case

CASE = "name: widgets report their replicas\n" + PREAMBLE + """\
  - apiVersion: toy.example.com/v1
    kind: Widget
    metadata: {name: w, namespace: ns}
    spec: {replicas: 2, image: app:1}
steps:
  - name: scale up
    do:
      - toy.scale: {name: w, namespace: ns, replicas: 3}
    expect:
      - count: {kind: ConfigMap, namespace: ns, selector: {toy/widget: w}, equals: 2}
expect:
  - object:
      kind: Widget
      metadata: {name: w, namespace: ns}
      spec: {replicas: 3}
      status:
        phase: Ready
        readyReplicas: 2
        conditions:
          - {type: Ready, status: "False"}
          - {type: Degraded, status: "True"}
  - object:
      kind: ConfigMap
      metadata: {name: w-0, namespace: ns, ownerReferences: [{name: w}, {name: v}]}
  - each:
      kind: ConfigMap
      namespace: ns
      match: {data: {image: app:2}}
  - calls: {actor: widget, verb: create, equals: 1}
"""

SNAPSHOT = """\
case `widgets report their replicas` failed (fixtures/widgets.yaml:1)
after step 1 (scale up):
  fixtures/widgets.yaml:14  expected 2, got 3 of ConfigMap in ns with labels toy/widget=w: ConfigMap ns/w-0, \
ConfigMap ns/w-1, ConfigMap ns/w-2
final expectations:
  fixtures/widgets.yaml:22  status.readyReplicas  expected 2  got 3  (Widget ns/w)
  fixtures/widgets.yaml:24  status.conditions[type=Ready].status  expected "False"  got "True"  (Widget ns/w)
  fixtures/widgets.yaml:25  status.conditions[type=Degraded]  expected {"type": "Degraded", "status": "True"}  \
got <absent>  (no item with type=Degraded; Widget ns/w)
  fixtures/widgets.yaml:28  metadata.ownerReferences[1]  expected {"name": "v"}  got [{"apiVersion": \
"toy.example.com/v1", "kind": "Widget", "name": "w", "controller": true}]  (no item matches; ConfigMap ns/w-0)
  fixtures/widgets.yaml:32  data.image  expected "app:2"  got "app:1"  (ConfigMap ns/w-0)
  fixtures/widgets.yaml:32  data.image  expected "app:2"  got "app:1"  (ConfigMap ns/w-1)
  fixtures/widgets.yaml:32  data.image  expected "app:2"  got "app:1"  (ConfigMap ns/w-2)
trace (last 6 of 25 entries):
  2026-01-01T00:00:00Z harness: do toy.scale {"name": "w", "namespace": "ns", "replicas": 3}
  2026-01-01T00:00:00Z #21 user: patch Widget ns/w (merge) -> 200 rv=11
  2026-01-01T00:00:00Z reconcile #22 widget ns/w -> done
      2026-01-01T00:00:00Z #23 widget: create ConfigMap ns/w-2 -> 201 rv=12
      2026-01-01T00:00:00Z #24 widget: patch Widget/status ns/w (merge) -> 200 rv=13
  2026-01-01T00:00:00Z reconcile #25 widget ns/w -> done"""


def test_snapshot_of_a_complete_failure_report() -> None:
    result = run_case(load_text(CASE, "fixtures/widgets.yaml")[0])
    assert render_failure(result, tail=6) == SNAPSHOT


def test_noise_only_with_show_noise() -> None:
    result = run_case(load_text(CASE, "fixtures/widgets.yaml")[0])
    quiet = render_failure(result, tail=0)
    loud = render_failure(result, tail=0, show_noise=True)
    assert '"uid"' not in quiet
    assert '"uid": "' in loud
    assert "trace" not in quiet


def test_strip_noise() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "uid": "u", "resourceVersion": "3", "creationTimestamp": "t",
                        "managedFields": [], "labels": {"a": "b"},
                        "ownerReferences": [{"kind": "W", "name": "w", "uid": "u2"}]},
           "data": {"uid": "kept: not metadata"}}
    assert strip_noise(obj) == {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "c", "labels": {"a": "b"},
                                             "ownerReferences": [{"kind": "W", "name": "w"}]},
                                "data": {"uid": "kept: not metadata"}}


def test_render_value() -> None:
    assert render_value(ABSENT) == "<absent>"
    assert render_value("True") == '"True"'
    assert render_value(None) == "null"
    assert render_value({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert render_value("x" * 500).endswith("…")
    assert len(render_value("x" * 500)) == 400


def test_render_mismatch_forms() -> None:
    m = Mismatch("spec.replicas", 1, 2, "f.yaml", 3, subject="Widget ns/w")
    assert render_mismatch(m) == "f.yaml:3  spec.replicas  expected 1  got 2  (Widget ns/w)"
    assert render_mismatch(problem("it broke", "f.yaml", 9)) == "f.yaml:9  it broke"


def test_summary_line() -> None:
    result = run_case(load_text(CASE, "fixtures/widgets.yaml")[0])
    line = summary_line(result, 0.0123)
    assert line == ("FAIL  fixtures/widgets.yaml::widgets report their replicas  "
                    "(4 reconciles, 19 API calls, 0s virtual, 12.3 ms)")
    result.elapsed = timedelta(minutes=5)
    assert "5m0s virtual" in summary_line(result)
