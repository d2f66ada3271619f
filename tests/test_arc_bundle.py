"""The ``arc`` bundle's contract: registration, settings, operations, invariants."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from fakeapi.harness.bundles import Bundle, OpContext, get_bundle
from reconcilers import constants as c
from reconcilers.bundle import OPERATION_SCHEMAS, SETTINGS_SCHEMA, bundle
from reconcilers.revision import has_job, runner_revision
from reconcilers.testing import ArcCluster


def test_bundle_shape() -> None:
    assert isinstance(bundle, Bundle)
    assert bundle.name == "arc"
    assert bundle.controllers == ("autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner")
    assert set(bundle.operations) == {
        "arc.queue_jobs", "arc.finish_jobs", "arc.reject_image", "arc.accept_image", "arc.delete_scale_set"}
    assert set(bundle.operation_schemas) == set(bundle.operations)
    assert set(bundle.invariants) == {
        "arc.applied-never-ahead",
        "arc.revision-monotonic",
        "arc.busy-runners-kept",
        "arc.no-listener-while-parked",
    }


def test_bundle_is_found_by_name() -> None:
    found = get_bundle("arc")
    assert found is not None and found.name == "arc"


def test_installed_controllers_match_the_declared_names() -> None:
    a = ArcCluster()
    assert tuple(a.host.controllers) == bundle.controllers
    for kind in (c.KIND_ARS, c.KIND_ERS, c.KIND_ER, c.KIND_AL):
        k = a.api.kinds.require(kind, c.API_VERSION)
        assert k.go_type is not None and k.status_subresource and k.namespaced


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"controllerNamespace": "arc-systems"},
        {"actions": {"runnerGroups": [{"id": 1, "name": "Default"}], "rejectedImages": ["x"]}},
        {"kubelet": {"startDelay": "5s"}},
    ],
)
def test_settings_schema_accepts(settings: dict[str, Any]) -> None:
    jsonschema.validate(settings, SETTINGS_SCHEMA)


@pytest.mark.parametrize(
    "settings",
    [{"controllerNamespce": "x"}, {"actions": {"runnerGroups": [{"name": "x"}]}}, {"kubelet": {"delay": "1s"}}],
)
def test_settings_schema_rejects(settings: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(settings, SETTINGS_SCHEMA)


def test_operation_schemas() -> None:
    jsonschema.validate({"name": "linux", "namespace": "ci", "count": 2}, OPERATION_SCHEMAS["arc.queue_jobs"])
    jsonschema.validate({"kind": "EphemeralRunner", "namespace": "ci", "where": {"status": {"phase": "Running"}},
                         "pick": "all", "exitCode": 0}, OPERATION_SCHEMAS["arc.finish_jobs"])
    jsonschema.validate("img:1", OPERATION_SCHEMAS["arc.reject_image"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "linux", "namespace": "ci", "count": -1}, OPERATION_SCHEMAS["arc.queue_jobs"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"kind": "EphemeralRunner", "exitcode": 0}, OPERATION_SCHEMAS["arc.finish_jobs"])


def test_settings_reach_the_simulators() -> None:
    a = ArcCluster({"controllerNamespace": "runners-system", "actions": {"rejectedImages": ["bad:1"]},
                    "kubelet": {"startDelay": "10s"}})
    assert a.state.controller_namespace == "runners-system"
    assert a.state.service.rejected_images == {"bad:1"}
    assert a.host.kubelet is not None and a.host.kubelet.start_delay.total_seconds() == 10
    a.create_ars(min_runners=1)
    a.settle()
    assert a.listener() is not None
    assert a.listener()["metadata"]["namespace"] == "runners-system"  # type: ignore[index]


def _ctx(a: ArcCluster) -> OpContext:
    return OpContext(host=a.host, state=a.state, resolve=lambda target: [])


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("arc.queue_jobs", {"name": "missing", "namespace": "ci", "count": 1}),
        ("arc.queue_jobs", {"namespace": "ci", "count": 1}),
        ("arc.queue_jobs", {"name": "linux", "namespace": "ci", "count": "2"}),
        ("arc.queue_jobs", "linux"),
        ("arc.finish_jobs", {"kind": "EphemeralRunner", "exitCode": "0"}),
        ("arc.reject_image", ""),
        ("arc.accept_image", {"image": "x"}),
    ],
)
def test_operations_reject_bad_arguments(op: str, args: Any) -> None:
    a = ArcCluster()
    a.create_ars(min_runners=0)
    a.settle()
    with pytest.raises(ValueError):
        bundle.operations[op](_ctx(a), args)


def test_queue_jobs_before_registration_is_an_error() -> None:
    a = ArcCluster()
    a.create_ars(min_runners=0)  # not settled: no scale set yet
    with pytest.raises(ValueError, match="no scale set"):
        bundle.operations["arc.queue_jobs"](_ctx(a), {"name": "linux", "namespace": "ci", "count": 1})


def test_example_two_jobs() -> None:
    """shared/examples/arc_two_jobs.yaml, step by step."""
    a = ArcCluster()
    a.create_ars(min_runners=1, max_runners=3)
    a.settle()
    a.queue_jobs(2)
    a.settle()
    busy = [r for r in a.runners() if (r.get("status") or {}).get("phase") == "Running" and has_job(r)]
    assert len(busy) == 2
    a.finish_jobs([r["metadata"]["name"] for r in busy], 0)
    a.settle()
    ers = a.ers()
    assert ers is not None
    assert (ers["spec"].get("replicas"), ers["spec"]["patchID"]) == (1, 0)
    assert ers["status"]["phase"] == "Running" and ers["status"]["currentReplicas"] == 1
    runners = a.runners()
    assert runners
    for r in runners:
        assert r["metadata"]["annotations"][c.ANNOTATION_ACTIONABLE_REVISION] == "0"
        assert r["status"]["phase"] == "Pending"
    assert a.violations == []


# ------------------------------------------------------------------------------ invariants


def _violations(a: ArcCluster, name: str) -> list[str]:
    out: list[str] = bundle.invariants[name](a.host, a.state)
    return out


def test_invariant_applied_never_ahead_detects() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=0)
    a.settle()
    assert _violations(a, "arc.applied-never-ahead") == []
    a.api.patch(c.KIND_ERS, "linux", {"status": {"appliedActionableRevision": 3}}, namespace="ci",
                subresource="status")
    [v] = _violations(a, "arc.applied-never-ahead")
    assert "applied revision 3 is ahead of spec revision 0" in v


def test_invariant_revision_monotonic_detects() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=0)
    a.settle()
    a.set_image("img:2")
    a.settle()
    assert _violations(a, "arc.revision-monotonic") == []
    a.api.patch(c.KIND_ERS, "linux", {"spec": {"actionableRevision": 0}}, namespace="ci")
    a.api.patch(c.KIND_ERS, "linux", {"status": {"appliedActionableRevision": 0}}, namespace="ci",
                subresource="status")
    out = _violations(a, "arc.revision-monotonic")
    assert len(out) == 2 and "spec revision went from 1 to 0" in out[0]


def test_invariant_busy_runners_kept_detects() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=1)
    a.settle()
    a.queue_jobs(1)
    a.settle()
    assert _violations(a, "arc.busy-runners-kept") == []
    [busy] = a.runners()
    assert has_job(busy)
    # A delete of a busy runner by the EphemeralRunnerSet controller (here: forced through its client).
    a.host.controllers[c.CONTROLLER_ERS].ctx.client.delete(c.KIND_ER, busy["metadata"]["name"], "ci")
    [v] = _violations(a, "arc.busy-runners-kept")
    assert busy["metadata"]["name"] in v and "job-1" in v
    assert _violations(a, "arc.busy-runners-kept") == []  # each call is checked once


def test_invariant_busy_runners_kept_ignores_done_runners_and_other_actors() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=1)
    a.settle()
    a.queue_jobs(1)
    a.settle()
    [busy] = a.runners()
    a.api.delete(c.KIND_ER, busy["metadata"]["name"], "ci")  # the user may
    assert _violations(a, "arc.busy-runners-kept") == []


def test_invariant_no_listener_while_parked_detects() -> None:
    a = ArcCluster(check_invariants=False)
    a.create_ars(min_runners=0)
    a.settle()
    assert a.listener() is not None
    a.api.patch(c.KIND_ARS, "linux", {"status": {"phase": "Outdated"}}, namespace="ci", subresource="status")
    [v] = _violations(a, "arc.no-listener-while-parked")
    assert "linux-c7dbc689-listener" in v


def test_rejected_image_runner_exits_7_right_after_start() -> None:
    a = ArcCluster({"actions": {"rejectedImages": ["bad:1"]}})
    a.create_ars(min_runners=1, image="bad:1")
    a.settle()
    # The very first spec is rejected: the set parks at revision 0.
    ars, ers = a.ars(), a.ers()
    assert ars is not None and ers is not None
    assert ars["status"]["phase"] == "Outdated" and ers["status"]["phase"] == "Outdated"
    assert a.listener() is None
    assert a.runners() == []
    a.set_image("good:1")
    a.settle()
    assert [runner_revision(r) for r in a.runners()] == [1]
    assert a.violations == []
