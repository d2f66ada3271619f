"""Robustness variants: one per controller write, each run with a crash or a conflict on that write."""

from __future__ import annotations

from typing import Any

from test_harness_bundle import PREAMBLE

from fakeapi.harness.bundles import Bundle, register_bundle
from fakeapi.harness.loader import load_text
from fakeapi.harness.report import render_failure
from fakeapi.harness.robustness import controller_writes, plan_variants, wanted_modes
from fakeapi.harness.runner import Variant, run_case
from fakeapi.host import Context, Host, Request, Result
from fakeapi.machinery.errors import ApiError, is_not_found

CASE = "name: widget converges\nrobustness: {crash_after_each_write: true, conflict_on_each_write: true}\n" + \
    PREAMBLE + """\
  - {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 2}}
steps:
  - do:
      - toy.scale: {name: w, namespace: ns, replicas: 3}
expect:
  - object: {kind: Widget, metadata: {name: w, namespace: ns}, status: {phase: Ready, readyReplicas: 3}}
  - count: {kind: ConfigMap, namespace: ns, selector: {toy/widget: w}, equals: 3}
  - calls: {actor: widget, verb: create, equals: 1}
"""


def test_one_variant_per_controller_write_and_mode() -> None:
    case = load_text(CASE, "r.yaml")[0]
    assert wanted_modes(case) == ["crash", "conflict"]
    plain = run_case(case)
    assert plain.passed, render_failure(plain)
    writes = controller_writes(plain)
    # given: 2 creates + status; step: 1 create + status
    assert [w.describe() for w in writes] == [
        "create ConfigMap ns/w-0 by widget",
        "create ConfigMap ns/w-1 by widget",
        "patch Widget/status ns/w by widget",
        "create ConfigMap ns/w-2 by widget",
        "patch Widget/status ns/w by widget",
    ]
    assert [w.skip for w in writes] == [0, 1, 0, 2, 1]
    plan = plan_variants(case)
    assert plan.error == ""
    assert [v.name for v in plan.variants] == [f"{m}@{k}" for m in ("crash", "conflict") for k in range(1, 6)]
    assert plan_variants(case) is plan  # cached per file content


def test_every_variant_runs_and_holds() -> None:
    case = load_text(CASE, "r.yaml")[0]
    for v in plan_variants(case).variants:
        r = run_case(case, v)
        assert r.passed, render_failure(r)
        rule = r.api.faults.rules[0]
        assert rule.fired == 1
        if v.mode == "crash":
            assert any(rec.result == "crash" for rec in r.api.trace.reconciles)
        else:
            assert any(c.code == 409 and c.actor == "widget" for c in r.api.trace.calls)


def test_a_variant_that_never_reaches_its_write_fails() -> None:
    case = load_text(CASE, "r.yaml")[0]
    v = Variant("crash", 9, {"on": {"verb": "delete", "actor": "widget"}, "times": 1, "crash": "after"},
                "delete ConfigMap ns/x by widget")
    r = run_case(case, v)
    assert not r.passed
    assert [f.mismatch.message for f in r.failures] == [
        "controller write 9 (delete ConfigMap ns/x by widget) never happened in this run; "
        "the plain run and this variant diverged before it"]


def test_clear_faults_keeps_the_variant_rule() -> None:
    text = CASE.replace("      - toy.scale:", "      - clear_faults: true\n      - toy.scale:")
    case = load_text(text, "r.yaml")[0]
    plan = plan_variants(case)
    last = plan.variants[4]
    assert last.name == "crash@5"
    r = run_case(case, last)
    assert r.passed, render_failure(r)
    assert r.api.faults.rules[0].fired == 1


# a controller that is not idempotent: it creates its child blindly, so a crash after the create breaks it

def _fragile(ctx: Context, req: Request) -> Result | None:
    try:
        cm = ctx.client.get("ConfigMap", req.name, req.namespace)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise
    if req.name.endswith("-child") or "done" in (cm["metadata"].get("annotations") or {}):
        return None
    ctx.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": f"{req.name}-child", "namespace": req.namespace}})
    ctx.client.patch("ConfigMap", req.name, {"metadata": {"annotations": {"done": "yes"}}}, namespace=req.namespace)
    return None


def _install_fragile(host: Host, settings: dict[str, Any]) -> None:
    host.controller("fragile").for_("ConfigMap", "v1").complete(_fragile)


register_bundle(Bundle(name="fragile", install=_install_fragile, controllers=("fragile",)))

FRAGILE = """\
name: fragile
bundles: [fragile]
robustness: {crash_after_each_write: true}
given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
expect:
  - object: {kind: ConfigMap, metadata: {name: c, namespace: default, annotations: {done: "yes"}}}
"""


def test_a_variant_finds_a_controller_that_is_not_crash_safe() -> None:
    case = load_text(FRAGILE, "f.yaml")[0]
    assert run_case(case).passed
    plan = plan_variants(case, budget=50)
    assert [v.name for v in plan.variants] == ["crash@1", "crash@2"]
    first = run_case(case, plan.variants[0], budget=50)
    assert not first.passed
    text = render_failure(first)
    assert "variant: the writing controller crashes right after controller write 1: " \
           "create ConfigMap default/c-child by fragile" in text
    assert "already exists" in text
    assert run_case(case, plan.variants[1], budget=50).passed


def test_collection_plans_from_the_checked_plain_run_and_its_item_takes_the_verdict() -> None:
    from fakeapi.harness.robustness import plan_for_collection, take_plain

    case = load_text(CASE + "# (a file of its own: plans are cached by content)\n", "collect.yaml")[0]
    plan = plan_for_collection(case, budget=10_000)
    assert plan.error == "" and len(plan.variants) == 10
    assert take_plain(case, 5_000) is None  # (planned with another budget: the item runs it)
    plain = take_plain(case, 10_000)
    assert plain is not None and plain.passed and plain.variant is None and plain.calls > 0
    assert plain.api is None  # (the verdict is kept, not the server)
    assert take_plain(case, 10_000) is None  # once
    assert plan_for_collection(case, budget=10_000) is plan and take_plain(case, 10_000) is None


def test_a_failed_expectation_still_plans_the_variants_and_the_item_runs_again() -> None:
    from fakeapi.harness.robustness import plan_for_collection, take_plain

    wrong = CASE.replace("readyReplicas: 3}", "readyReplicas: 4}") + "# (wrong on purpose)\n"
    case = load_text(wrong, "wrong.yaml")[0]
    plan = plan_for_collection(case, budget=10_000)
    assert plan.error == "" and len(plan.variants) == 10  # (as planned from a run without expectations)
    assert take_plain(case, 10_000) is None
    result = run_case(case)
    assert not result.passed and all(f.expectation for f in result.failures)
    assert "readyReplicas" in render_failure(result)
    assert plan_variants(load_text(wrong + "#\n", "wrong2.yaml")[0], result).error  # (the CLI's rule: unchanged)
