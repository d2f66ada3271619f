"""The runner: given, every operation, as, error, every settle form, invariants, every assertion."""

from __future__ import annotations

import json
from typing import Any

from test_harness_bundle import API_VERSION, PREAMBLE, WIDGET_CRD

from fakeapi.harness.bundles import Bundle, register_bundle
from fakeapi.harness.loader import load_text
from fakeapi.harness.runner import CaseResult, run_case
from fakeapi.host import Context, Host, Request, Result

WIDGET = "{apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 2}}"


def run(body: str, *, toy: bool = True, **kw: Any) -> CaseResult:
    text = "name: case\n" + (PREAMBLE if toy else "given:\n  - {apiVersion: v1, kind: Namespace, metadata: {name: ns}}\n")
    return run_case(load_text(text + body, "case.yaml")[0], **kw)


def messages(r: CaseResult) -> list[str]:
    out = []
    for f in r.failures:
        m = f.mismatch
        out.append(f"{m.line}: {m.path + ' ' if m.path else ''}{m.message}".strip())
    return out


def assert_passed(r: CaseResult) -> None:
    from fakeapi.harness.report import render_failure

    assert r.passed, render_failure(r)


# ------------------------------------------------------------------------------------------ given


def test_given_status_creation_timestamp_and_owner_uid() -> None:
    r = run(f"""\
  - {json.dumps(WIDGET_CRD)}
  - apiVersion: toy.example.com/v1
    kind: Widget
    metadata: {{name: w, namespace: ns, creationTimestamp: "2025-06-01T00:00:00Z"}}
    spec: {{replicas: 0}}
    status: {{phase: Custom, readyReplicas: 7}}
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: dep
      namespace: ns
      ownerReferences: [{{apiVersion: {API_VERSION}, kind: Widget, name: w}}]
steps:
  - settle: false
expect:
  - object:
      kind: Widget
      metadata: {{name: w, namespace: ns, creationTimestamp: "2025-06-01T00:00:00Z"}}
      status: {{phase: Custom, readyReplicas: 7}}
  - object:
      kind: ConfigMap
      metadata: {{name: dep, namespace: ns, ownerReferences: [{{name: w, uid: {{$regex: "^[0-9a-f-]{{36}}$"}}}}]}}
""", toy=False)
    assert_passed(r)


def test_given_settles_before_step_one() -> None:
    r = run(f"  - {WIDGET}\nexpect:\n  - count: {{kind: ConfigMap, namespace: ns, equals: 2}}\n")
    assert_passed(r)
    assert r.reconciles >= 1


def test_given_owner_that_does_not_exist_fails_at_its_line() -> None:
    r = run("""\
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: dep, namespace: ns, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: nope}]}
""")
    assert not r.passed
    [msg] = messages(r)
    assert msg.startswith("5: storing ConfigMap ns/dep: ownerReferences[0]: no ConfigMap ns/nope")


# ------------------------------------------------------------------------------------------ operations


def test_create_apply_update_patch_status_delete() -> None:
    r = run("""\
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {a: "1"}}
      - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {b: "2"}}
      - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: ns}, data: {x: "y"}}
      - update: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: ns}, data: {x: "z"}}
      - patch: {kind: ConfigMap, namespace: ns, name: c, patch: {data: {c: "3"}}}
      - patch: {kind: ConfigMap, namespace: ns, name: c, type: json, patch: [{op: remove, path: /data/a}]}
    expect:
      - object: {kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {$exact: {b: "2", c: "3"}}}
      - object: {kind: ConfigMap, metadata: {name: d, namespace: ns}, data: {x: z}}
  - do:
      - create: {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 0}}
      - status: {kind: Widget, namespace: ns, name: w, status: {phase: Hand}}
    settle: false
    expect:
      - object: {kind: Widget, metadata: {name: w, namespace: ns}, status: {phase: Hand}}
  - do:
      - delete: {kind: ConfigMap, namespace: ns, selector: "toy/widget notin (x)", pick: all}
expect:
  - absent: {kind: ConfigMap, namespace: ns}
  - calls: {verb: delete, kind: ConfigMap, since: step, equals: 2}
  - calls: {actor: user, verb: patch, since: case, equals: 4}
""")
    assert_passed(r)


def test_update_takes_the_stored_resource_version_unless_given() -> None:
    r = run(f"""\
  - {WIDGET}
steps:
  - do:
      - update: {{apiVersion: {API_VERSION}, kind: Widget, metadata: {{name: w, namespace: ns}}, spec: {{replicas: 1}}}}
      - update:
          apiVersion: {API_VERSION}
          kind: Widget
          metadata: {{name: w, namespace: ns, resourceVersion: "1"}}
          spec: {{replicas: 3}}
        error: {{code: 409, reason: Conflict}}
      - update:
          apiVersion: {API_VERSION}
          kind: Widget
          metadata: {{name: w, namespace: ns, resourceVersion: ""}}
          spec: {{replicas: 3}}
        error: {{code: 422, message: {{$regex: "must be specified for an update"}}}}
expect:
  - object: {{kind: Widget, metadata: {{name: w, namespace: ns}}, spec: {{replicas: 1}}, status: {{readyReplicas: 1}}}}
""")
    assert_passed(r)


def test_strategic_patch_of_a_pod_and_status_subresource_patch() -> None:
    r = run("""\
  - apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: ns}
    spec: {containers: [{name: a, image: ia}, {name: b, image: ib}], restartPolicy: Never}
steps:
  - do:
      - patch: {kind: Pod, namespace: ns, name: p, type: strategic, patch: {spec: {containers: [{name: b, image: ib2}]}}}
      - patch: {kind: Pod, namespace: ns, name: p, subresource: status, patch: {status: {message: hi}}}
    settle: false
expect:
  - object:
      kind: Pod
      metadata: {name: p, namespace: ns}
      spec: {containers: [{name: b, image: ib2}, {name: a, image: ia}]}
      status: {message: hi}
""", toy=False)
    assert_passed(r)


def test_delete_with_propagation_policy() -> None:
    r = run(f"""\
  - {WIDGET}
steps:
  - do:
      - delete: {{kind: Widget, namespace: ns, name: w, propagationPolicy: Orphan}}
expect:
  - absent: {{kind: Widget, namespace: ns, name: w}}
  - count: {{kind: ConfigMap, namespace: ns, selector: {{toy/widget: w}}, equals: 2}}
  - each:
      kind: ConfigMap
      namespace: ns
      selector: {{toy/widget: w}}
      match: {{metadata: {{ownerReferences: {{$absent: true}}}}}}
""")
    assert_passed(r)


def test_bundle_operations_and_their_state() -> None:
    r = run(f"""\
  - {WIDGET}
steps:
  - do:
      - toy.scale: {{name: w, namespace: ns, replicas: 3}}
  - do:
      - toy.label: {{kind: ConfigMap, namespace: ns, selector: "toy/widget=w", pick: all, label: seen=yes}}
expect:
  - count: {{kind: ConfigMap, namespace: ns, selector: "seen=yes", equals: 3}}
  - object: {{kind: Widget, metadata: {{name: w, namespace: ns}}, status: {{readyReplicas: 3}}}}
""")
    assert_passed(r)


def test_bundle_operation_failure_stops_the_case() -> None:
    r = run("steps:\n  - do:\n      - toy.label: {kind: ConfigMap, namespace: ns, label: a=b}\n")
    assert not r.passed
    assert r.aborted
    [msg] = messages(r)
    assert msg.startswith("7: `toy.label`: expected exactly one ConfigMap in ns, found 0")


def test_as_a_controller_and_calls_by_actor() -> None:
    r = run("""\
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {}}
        as: widget
expect:
  - calls: {actor: widget, verb: create, kind: ConfigMap, name: c, equals: 1}
  - calls: {actor: user, verb: create, kind: ConfigMap, equals: 0}
""")
    assert_passed(r)


def test_advance_runs_controllers_with_the_clock_unless_settle_false() -> None:
    r = run("""\
steps:
  - do:
      - advance: 5m
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}
    settle: false
  - do:
      - advance: 1h30m
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: ns}}
expect:
  - object: {kind: ConfigMap, metadata: {name: c, namespace: ns, creationTimestamp: "2026-01-01T00:05:00Z"}}
  - object: {kind: ConfigMap, metadata: {name: d, namespace: ns, creationTimestamp: "2026-01-01T01:35:00Z"}}
""")
    assert_passed(r)
    assert str(r.elapsed) == "1:35:00"


def test_clock_and_seed_of_the_case() -> None:
    text = ("name: c\nclock: 2030-05-01T12:00:00Z\nseed: 7\ngiven:\n"
            "  - {apiVersion: v1, kind: ConfigMap, metadata: {generateName: g-, namespace: default}}\n"
            "expect:\n  - each: {kind: ConfigMap, namespace: default, match: {metadata: "
            "{name: {$regex: '^g-'}, creationTimestamp: '2030-05-01T12:00:00Z'}}}\n")
    r = run_case(load_text(text)[0])
    assert_passed(r)


def test_crash_and_fault_rules() -> None:
    r = run(f"""\
  - {WIDGET}
steps:
  - do:
      - crash: widget
      - fault: {{on: {{verb: patch, kind: Widget, subresource: status, actor: widget}}, error: Conflict, times: 2}}
      - toy.scale: {{name: w, namespace: ns, replicas: 1}}
    expect:
      - object: {{kind: Widget, metadata: {{name: w, namespace: ns}}, status: {{readyReplicas: 1}}}}
      - calls: {{actor: widget, verb: patch, subresource: status, min: 3}}
      - calls: {{actor: widget, verb: patch, code: 409, equals: 2}}
  - do:
      - fault: {{on: {{verb: create, kind: ConfigMap}}, error: {{code: 500, reason: InternalError, message: boom}}, times: always}}
      - clear_faults: true
      - create: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: ok, namespace: ns}}}}
  - do:
      - fault: {{on: {{verb: create, kind: ConfigMap, actor: user}}, error: AlreadyExists}}
      - create: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: ok2, namespace: ns}}}}
        error: {{code: 409, reason: AlreadyExists}}
""")
    assert_passed(r)
    assert any("crashed" in getattr(e, "text", "") for e in r.api.trace.entries)


def test_kubelet_exit() -> None:
    r = run("""\
  - apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: ns}
    spec: {containers: [{name: main, image: i}], restartPolicy: Never}
steps:
  - expect:
      - object: {kind: Pod, metadata: {name: p, namespace: ns}, status: {phase: Running}}
  - do:
      - kubelet.exit: {namespace: ns, name: p, container: main, code: 3}
expect:
  - object:
      kind: Pod
      metadata: {name: p, namespace: ns}
      status:
        phase: Failed
        containerStatuses: [{name: main, state: {terminated: {exitCode: 3}}}]
""", toy=False)
    assert_passed(r)


# ------------------------------------------------------------------------------------------ error


def test_error_that_does_not_come_fails_the_case() -> None:
    r = run("""\
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}
        error: {code: 409}
""")
    assert messages(r) == ['8: expected `create` to fail with {"code": 409}, but it succeeded']


def test_error_that_differs_is_a_mismatch_at_its_line() -> None:
    r = run("""\
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: nope}}
        error:
          code: 404
          reason: Conflict
""")
    [f] = r.failures
    assert (f.mismatch.line, f.mismatch.path, f.mismatch.expected, f.mismatch.actual) == (10, "error.reason",
                                                                                          "Conflict", "NotFound")


def test_unexpected_api_error_stops_the_case() -> None:
    r = run("""\
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: nope}}
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: ns}}
""")
    assert messages(r) == ['7: `create` failed: 404 NotFound: namespaces "nope" not found']
    assert "failed" in r.aborted
    assert r.api.trace.calls[-1].name == "c"


# ------------------------------------------------------------------------------------------ settle


def test_settle_false_and_reconcile_budget() -> None:
    r = run(f"""\
steps:
  - do:
      - create: {WIDGET}
    settle: false
    expect:
      - count: {{kind: ConfigMap, namespace: ns, equals: 0}}
  - settle: {{reconciles: 1}}
    expect:
      - count: {{kind: ConfigMap, namespace: ns, equals: 2}}
      - calls: {{verb: create, kind: ConfigMap, equals: 2}}
""")
    assert_passed(r)


def test_settle_for_a_while() -> None:
    r = run("steps:\n  - settle: {for: 5m}\n")
    assert_passed(r)
    assert str(r.elapsed) == "0:05:00"


class _Spin:
    def __call__(self, ctx: Context, req: Request) -> Result | None:
        cm = ctx.api_reader.get("ConfigMap", req.name, req.namespace)
        n = int((cm.get("data") or {}).get("n", "0")) + 1
        ctx.client.patch("ConfigMap", req.name, {"data": {"n": str(n)}}, namespace=req.namespace)
        return None


def _install_spin(host: Host, settings: dict[str, Any]) -> None:
    host.controller("spinner").for_("ConfigMap", "v1").complete(_Spin())


register_bundle(Bundle(name="spin", install=_install_spin, controllers=("spinner",)))


def test_hot_loop_is_a_failure_with_the_cycle() -> None:
    text = ("name: spins\nbundles: [spin]\ngiven:\n"
            "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}\n")
    r = run_case(load_text(text, "spin.yaml")[0], budget=20)
    assert not r.passed
    assert r.aborted == "hot loop"
    [msg] = messages(r)
    assert msg.startswith("3: the controllers did not settle:")
    assert "spinner" in msg


def test_settle_reconciles_budget_is_not_a_hot_loop() -> None:
    text = """\
name: spins
bundles: [spin]
steps:
  - do:
      - create: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
    settle: {reconciles: 3}
"""
    r = run_case(load_text(text)[0])
    assert_passed(r)
    assert r.reconciles == 3


# ------------------------------------------------------------------------------------------ invariants


def test_invariant_violation_is_reported_once_with_the_reconcile() -> None:
    r = run(f"""\
services: {{toy: {{maxConfigMaps: 1}}}}
invariants: [toy.max-configmaps]
steps:
  - do:
      - create: {WIDGET}
""")
    assert not r.passed
    [f] = r.failures
    assert f.phase == "invariants"
    assert f.mismatch.line == 6
    assert "invariant `toy.max-configmaps` violated after reconcile #" in f.mismatch.message
    assert f.mismatch.message.endswith("widget ns/w: 2 toy ConfigMaps in ns (max 1)")


# ------------------------------------------------------------------------------------------ assertions


def test_every_assertion_failing() -> None:
    r = run(f"""\
  - {WIDGET}
expect:
  - object: {{kind: Widget, metadata: {{name: nope, namespace: ns}}}}
  - object: {{kind: Widget, metadata: {{name: w, namespace: ns}}, spec: {{replicas: 3}}}}
  - absent: {{kind: ConfigMap, namespace: ns, selector: {{toy/widget: w}}}}
  - count: {{kind: ConfigMap, namespace: ns, equals: 1}}
  - count: {{kind: ConfigMap, namespace: ns, min: 3}}
  - count: {{kind: ConfigMap, namespace: ns, max: 1}}
  - each: {{kind: ConfigMap, namespace: ns, match: {{data: {{image: x}}}}}}
  - each: {{kind: Secret, namespace: ns, match: {{}}}}
  - each: {{kind: Secret, namespace: ns, match: {{}}, allow_none: true}}
  - calls: {{verb: create, kind: ConfigMap, since: case, equals: 1}}
""")
    got = messages(r)
    assert got[0] == "7: Widget ns/nope does not exist"
    assert got[1] == "8: spec.replicas"
    assert got[2].startswith("9: expected no ConfigMap in ns with labels toy/widget=w, found 2: ConfigMap ns/w-0")
    assert got[3].startswith("10: expected 1, got 2 of ConfigMap in ns: ")
    assert got[4].startswith("11: expected at least 3, got 2 of ConfigMap in ns")
    assert got[5].startswith("12: expected at most 1, got 2 of ConfigMap in ns")
    assert got[6:8] == ["13: data.image", "13: data.image"]
    assert got[8] == "14: expected at least one Secret in ns, found none (add allow_none: true to allow that)"
    assert got[9].startswith('16: expected 1, got 2 calls matching {"verb": "create", "kind": "ConfigMap", '
                             '"since": "case"}')
    assert len(got) == 10
    assert [f.phase for f in r.failures] == ["final expectations"] * 10


def test_step_expectations_are_checked_after_their_step() -> None:
    r = run(f"""\
steps:
  - name: one
    do:
      - create: {WIDGET}
    expect:
      - count: {{kind: ConfigMap, namespace: ns, equals: 5}}
  - name: two
    expect:
      - calls: {{verb: create, equals: 0}}
""")
    assert [(f.phase, f.mismatch.line) for f in r.failures] == [("after step 1 (one)", 10)]
