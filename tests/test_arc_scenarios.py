"""Scenario tests of the ``arc`` bundle on an APIServer + Host (shared/ARC_SPEC.md, issue 4).

Each test drives a whole cluster (controllers, listener, Actions service,
kubelet) with :class:`reconcilers.testing.ArcCluster` and checks the end state
plus every bundle invariant after every reconcile.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcilers import constants as c
from reconcilers.revision import applied_revision, has_job, runner_revision, spec_revision
from reconcilers.testing import ArcCluster

IMG1 = "ghcr.io/actions/actions-runner:2.330.0"
IMG2 = "ghcr.io/actions/actions-runner:2.331.0"
BAD = "ghcr.io/actions/actions-runner:2.200.0"


def names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def phase(obj: dict[str, Any] | None) -> str:
    assert obj is not None
    return str((obj.get("status") or {}).get("phase") or "")


def ers_revisions(a: ArcCluster) -> tuple[int, int]:
    ers = a.ers()
    assert ers is not None
    return spec_revision(ers), applied_revision(ers)


def healthy(min_runners: int = 1, **kw: Any) -> ArcCluster:
    a = ArcCluster(**kw)
    a.create_ars(min_runners=min_runners, max_runners=10)
    a.settle()
    assert phase(a.ars()) == "Running"
    return a


def test_create_settles_at_min_runners() -> None:
    a = healthy(min_runners=2)
    runners = a.runners()
    assert len(runners) == 2
    assert all(phase(r) == "Pending" and r["status"]["runnerId"] > 0 for r in runners)
    assert a.revisions(runners) == [0, 0]
    assert ers_revisions(a) == (0, 0)
    assert a.listener() is not None
    ars = a.ars()
    assert ars is not None
    assert ars["metadata"]["annotations"][c.ANNOTATION_RUNNER_SCALE_SET_ID] == "1"
    assert ars["status"]["currentRunners"] == 2
    assert a.violations == []


def test_spec_change_while_healthy_rebuilds_idle_runners_and_keeps_busy_ones() -> None:
    a = healthy(min_runners=2)
    a.queue_jobs(1)
    a.settle()
    busy = [r for r in a.runners() if has_job(r)]
    idle = [r for r in a.runners() if not has_job(r)]
    assert len(busy) == 1 and len(idle) == 1
    a.set_image(IMG2)
    a.settle()
    assert ers_revisions(a) == (1, 1)
    runners = a.runners()
    by_name = {r["metadata"]["name"]: r for r in runners}
    # The busy runner is kept, still at the old revision, still running its job.
    assert busy[0]["metadata"]["name"] in by_name
    kept = by_name[busy[0]["metadata"]["name"]]
    assert has_job(kept) and runner_revision(kept) == 0 and phase(kept) == "Running"
    # The idle runner was rebuilt from the new spec.
    assert idle[0]["metadata"]["name"] not in by_name
    fresh = [r for r in runners if runner_revision(r) == 1]
    assert len(fresh) == 1
    assert fresh[0]["spec"]["spec"]["containers"][0]["image"] == IMG2
    # The job finishes: the old runner goes, the set is back at its minimum, all at revision 1.
    a.finish_jobs([busy[0]["metadata"]["name"]])
    a.settle()
    runners = a.runners()
    assert len(runners) == 2
    assert a.revisions(runners) == [1, 1]
    assert a.violations == []


def test_rejected_image_parks_the_set_and_a_fixed_image_recovers_it() -> None:
    a = healthy(min_runners=1)
    a.reject_image(BAD)
    a.set_image(BAD)
    a.settle()
    ars, ers = a.ars(), a.ers()
    assert phase(ars) == "Outdated"
    assert a.listener() is None
    assert ers is not None
    assert phase(ers) == "Outdated"
    assert (ers["spec"].get("replicas") or 0) == 0 and ers["spec"]["patchID"] == 0
    assert ers_revisions(a) == (1, 1)
    assert a.runners() == []  # the rejected runner was cleaned up and never replaced

    # An edit that changes neither the runner spec nor its metadata does not un-park.
    a.patch_ars({"spec": {"maxRunners": 5}})
    a.settle()
    assert phase(a.ars()) == "Outdated" and a.listener() is None

    a.set_image(IMG2)
    a.settle()
    ars, ers = a.ars(), a.ers()
    assert phase(ars) == "Running"
    assert phase(ers) == "Running"
    assert a.listener() is not None
    assert ers_revisions(a) == (2, 2)
    runners = a.runners()
    assert len(runners) == 1
    assert a.revisions(runners) == [2]
    assert phase(runners[0]) == "Pending"
    assert a.violations == []


def test_recovery_by_runner_metadata_change_while_parked() -> None:
    a = healthy(min_runners=1)
    a.reject_image(BAD)
    a.set_image(BAD)
    a.settle()
    assert phase(a.ars()) == "Outdated"
    a.accept_image(BAD)
    a.patch_ars({"spec": {"ephemeralRunnerMetadata": {"labels": {"team": "ci"}}}})
    a.settle()
    assert phase(a.ars()) == "Running"
    assert ers_revisions(a) == (2, 2)
    [runner] = a.runners()
    assert runner_revision(runner) == 2
    assert runner["metadata"]["labels"]["team"] == "ci"
    assert a.violations == []


def test_metadata_change_while_healthy_does_not_bump_the_revision() -> None:
    a = healthy(min_runners=1)
    [before] = a.runners()
    a.patch_ars({"spec": {"ephemeralRunnerMetadata": {"labels": {"team": "ci"}}}})
    a.settle()
    assert ers_revisions(a) == (0, 0)
    ers = a.ers()
    assert ers is not None
    assert ers["spec"]["ephemeralRunnerMetadata"] == {"labels": {"team": "ci"}}
    # Metadata reaches new runners only.
    assert names(a.runners()) == [before["metadata"]["name"]]
    assert a.violations == []


def test_outdated_runner_from_before_a_spec_update_is_replaced_and_never_parks() -> None:
    a = healthy(min_runners=1)
    a.queue_jobs(1)
    a.settle()
    [old] = a.runners()
    assert has_job(old)
    # The spec changes while the runner is busy: it is kept at revision 0.
    a.set_image(IMG2)
    a.settle()
    assert ers_revisions(a) == (1, 1)
    # Now the old runner reports Outdated: its verdict is about a spec that no longer exists.
    a.exit_runner(old["metadata"]["name"], 7)
    a.settle()
    assert phase(a.ars()) == "Running"
    assert phase(a.ers()) == "Running"
    assert a.listener() is not None
    runners = a.runners()
    assert old["metadata"]["name"] not in names(runners)
    assert len(runners) == 1 and a.revisions(runners) == [1]
    assert a.violations == []


def test_stale_outdated_runner_given_with_the_set_is_deleted_and_replaced() -> None:
    """A stale Outdated runner (revision 1 < applied 2) never holds the set Outdated."""
    a = healthy(min_runners=1)
    a.set_image(IMG2)
    a.settle()
    a.set_image(IMG1)
    a.settle()
    assert ers_revisions(a) == (2, 2)
    ers = a.ers()
    assert ers is not None
    stale = a.api.create({
        "apiVersion": c.API_VERSION, "kind": c.KIND_ER,
        "metadata": {"name": "stale", "namespace": "ci",
                     "annotations": {c.ANNOTATION_ACTIONABLE_REVISION: "1"},
                     "ownerReferences": [{"apiVersion": c.API_VERSION, "kind": c.KIND_ERS, "name": "linux",
                                          "uid": ers["metadata"]["uid"], "controller": True}]},
        "spec": ers["spec"]["ephemeralRunnerSpec"],
    })
    a.api.patch(c.KIND_ER, "stale", {"status": {"phase": "Outdated"}}, namespace="ci", subresource="status")
    a.settle()
    assert stale["metadata"]["name"] not in names(a.runners())
    assert phase(a.ers()) == "Running" and phase(a.ars()) == "Running"
    assert a.revisions(a.runners()) == [2]
    assert a.violations == []


def test_pending_ars_with_outdated_ers_behind_its_spec_revision_does_not_park() -> None:
    """The guard: Outdated at applied 1 with spec 2 is a verdict about a replaced spec."""
    a = healthy(min_runners=1)
    a.reject_image(BAD)
    a.set_image(BAD)
    a.settle()
    assert phase(a.ars()) == "Outdated"
    # Stop the EphemeralRunnerSet controller from applying: the ARS sees spec 2, applied 1, phase Outdated.
    a.api.faults.add({"on": {"verb": "patch", "kind": c.KIND_ERS, "subresource": "status",
                             "actor": c.CONTROLLER_ERS}, "error": "InternalError", "times": "always"})
    a.set_image(IMG2)
    a.host.run_for("1s", max_reconciles=200, raise_on_budget=False)
    ers = a.ers()
    assert ers is not None
    assert (spec_revision(ers), applied_revision(ers), phase(ers)) == (2, 1, "Outdated")
    # Not parked: the verdict is about the replaced spec, so the listener stays and the ARS is not Outdated.
    assert phase(a.ars()) != "Outdated"
    assert a.listener() is not None
    a.api.faults.clear()
    a.settle()
    assert phase(a.ars()) == "Running" and ers_revisions(a) == (2, 2)
    assert a.violations == []


@pytest.mark.parametrize("crash_after", [0, 1, 2])
def test_crash_after_each_cleanup_delete_applies_the_revision_exactly_once(crash_after: int) -> None:
    a = healthy(min_runners=3)
    old = names(a.runners())
    assert len(old) == 3
    applied_seen: list[int] = [applied_revision(a.ers() or {})]

    def track(etype: str, kind: Any, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        if kind.kind == c.KIND_ERS and obj["metadata"]["name"] == "linux":
            v = applied_revision(obj)
            if not applied_seen or applied_seen[-1] != v:
                applied_seen.append(v)

    a.api.add_listener(track)
    a.api.faults.add({"on": {"verb": "delete", "kind": c.KIND_ER, "actor": c.CONTROLLER_ERS},
                      "skip": crash_after, "times": 1, "crash": "after"})
    a.set_image(IMG2)
    stats = a.settle()
    assert stats.crashes == 1
    assert applied_seen == [0, 1]  # advanced once, straight from 0 to 1
    assert ers_revisions(a) == (1, 1)
    runners = a.runners()
    assert not set(old) & set(names(runners))
    assert a.revisions(runners) == [1, 1, 1]
    assert a.violations == []


def test_crash_after_every_write_of_the_revision_change_converges() -> None:
    """The robustness variant: a crash after each write the ERS controller makes while applying."""
    base = healthy(min_runners=2)
    base.set_image(IMG2)
    mark = len(base.api.trace.calls)
    base.settle()
    writes = sum(1 for call in base.api.trace.calls[mark:] if call.actor == c.CONTROLLER_ERS and call.wrote)
    assert writes >= 4
    for k in range(writes):
        a = healthy(min_runners=2)
        a.api.faults.add({"on": {"verb": "write", "actor": c.CONTROLLER_ERS}, "skip": k, "times": 1,
                          "crash": "after"})
        a.set_image(IMG2)
        a.settle()
        assert ers_revisions(a) == (1, 1), k
        assert a.revisions(a.runners()) == [1, 1], k
        assert a.violations == [], k


def test_conflict_on_the_applied_revision_patch_is_retried() -> None:
    a = healthy(min_runners=1)
    a.api.faults.add({"on": {"verb": "patch", "kind": c.KIND_ERS, "subresource": "status",
                             "actor": c.CONTROLLER_ERS}, "error": "Conflict", "times": 1})
    mark = len(a.api.trace.calls)
    a.set_image(IMG2)
    stats = a.settle()
    assert stats.errors == 0
    calls = [call for call in a.api.trace.calls[mark:]
             if call.actor == c.CONTROLLER_ERS and call.kind == c.KIND_ERS and call.subresource == "status"]
    assert [call.code for call in calls[:2]] == [409, 200]
    assert calls[0].reconcile == calls[1].reconcile  # retried inside the same reconcile
    # Each try re-read the set through the uncached reader.
    reads = [call for call in a.api.trace.calls[mark:] if call.actor == c.CONTROLLER_ERS and call.verb == "get"
             and call.kind == c.KIND_ERS and call.reconcile == calls[0].reconcile]
    assert len(reads) == 2
    assert ers_revisions(a) == (1, 1)
    assert a.violations == []


def test_applied_revision_patch_carries_the_resource_version_it_read() -> None:
    a = healthy(min_runners=1)
    seen: list[Any] = []
    original = a.api.patch

    def spy(kind: str, name: str, patch: Any, **kw: Any) -> Any:
        if kw.get("actor") == c.CONTROLLER_ERS and kw.get("subresource") == "status" and isinstance(patch, dict) \
                and "appliedActionableRevision" in (patch.get("status") or {}):
            seen.append((patch.get("metadata") or {}).get("resourceVersion"))
        return original(kind, name, patch, **kw)

    a.api.patch = spy  # type: ignore[method-assign]
    a.set_image(IMG2)
    a.settle()
    assert len(seen) == 1 and seen[0]
    assert ers_revisions(a) == (1, 1)


def test_env_empty_list_settles_with_one_revision() -> None:
    a = ArcCluster()
    a.create_ars(min_runners=1, env=[])
    a.patch_ars({"spec": {"template": {"spec": {"nodeSelector": {}, "tolerations": []}}}})
    a.settle()
    assert ers_revisions(a) == (0, 0)
    # Unrelated edits make the ARS reconcile again; the revision stays put.
    for i in range(3):
        a.patch_ars({"metadata": {"annotations": {"touch": str(i)}}})
        a.run_for("2m")
    assert ers_revisions(a) == (0, 0)
    [runner] = a.runners()
    assert runner_revision(runner) == 0
    # A real change is one bump.
    a.set_image(IMG2)
    a.settle()
    a.patch_ars({"metadata": {"annotations": {"touch": "again"}}})
    a.settle()
    assert ers_revisions(a) == (1, 1)
    assert a.violations == []


def test_legacy_runners_without_the_annotation() -> None:
    """Runners from before the annotation existed read as revision 0."""
    a = healthy(min_runners=2)
    for r in a.runners():
        a.api.patch(c.KIND_ER, r["metadata"]["name"],
                    {"metadata": {"annotations": {c.ANNOTATION_ACTIONABLE_REVISION: None}}}, namespace="ci")
    a.settle()
    assert all(c.ANNOTATION_ACTIONABLE_REVISION not in r["metadata"]["annotations"] for r in a.runners())
    assert ers_revisions(a) == (0, 0)
    # A legacy runner reporting Outdated before any spec update holds the set Outdated (0 >= 0) ...
    legacy = a.runners()[0]["metadata"]["name"]
    a.reject_image(IMG1)
    a.exit_runner(legacy, 7)
    a.settle()
    assert phase(a.ars()) == "Outdated" and a.listener() is None
    # ... and a spec update rebuilds everything at revision 1.
    a.accept_image(IMG1)
    a.set_image(IMG2)
    a.settle()
    assert phase(a.ars()) == "Running"
    assert a.revisions(a.runners()) == [1, 1]
    assert a.violations == []


def test_legacy_outdated_runner_after_a_spec_update_is_stale() -> None:
    a = healthy(min_runners=1)
    a.queue_jobs(1)
    a.settle()
    [busy] = a.runners()
    a.api.patch(c.KIND_ER, busy["metadata"]["name"],
                {"metadata": {"annotations": {c.ANNOTATION_ACTIONABLE_REVISION: None}}}, namespace="ci")
    a.set_image(IMG2)
    a.settle()
    a.exit_runner(busy["metadata"]["name"], 7)
    a.settle()
    assert phase(a.ars()) == "Running"
    assert a.revisions(a.runners()) == [1]
    assert a.violations == []


def test_an_unregistered_runner_does_not_hold_the_revision_back() -> None:
    """Upstream's cleanUpEphemeralRunners removes every pending runner: no registration grace."""
    a = healthy(min_runners=1)
    # New runners cannot register for now.
    a.api.faults.add({"on": {"service": "actions", "call": "GenerateJitRunnerConfig"},
                      "error": "InternalError", "times": "always"})
    a.patch_ars({"spec": {"minRunners": 2}})
    a.host.run_for("1s", max_reconciles=500, raise_on_budget=False)
    unregistered = [r for r in a.runners() if not r.get("status", {}).get("runnerId")]
    assert len(unregistered) == 1
    a.set_image(IMG2)
    a.host.run_for("1s", max_reconciles=2000, raise_on_budget=False)
    assert ers_revisions(a) == (1, 1)  # the unregistered runner was deleted and the revision applied
    assert unregistered[0]["metadata"]["name"] not in names(a.runners())
    a.api.faults.clear()
    a.settle()
    assert a.revisions(a.runners()) == [1, 1]
    assert a.violations == []


def test_deleting_the_ars_removes_everything_and_the_scale_set() -> None:
    a = healthy(min_runners=2)
    a.queue_jobs(1)
    a.settle()
    assert a.state.service.scale_sets
    a.delete_ars()
    a.settle()
    # A busy runner holds the deletion until its job ends.
    assert a.ars() is not None
    busy = [r["metadata"]["name"] for r in a.runners() if has_job(r)]
    assert len(busy) == 1
    a.finish_jobs(busy)
    a.settle()
    assert a.ars() is None
    assert a.ers() is None
    assert a.listener() is None
    assert a.runners() == []
    assert a.pods() == []
    assert [s for s in a.objects("Secret", "ci") if s["metadata"]["name"] != "gh"] == []
    assert a.state.service.scale_sets == {}
    assert a.state.service.runners == {}
    assert a.violations == []


def test_failed_runner_gets_a_new_pod_after_a_back_off() -> None:
    a = healthy(min_runners=1)
    [r] = a.runners()
    name = r["metadata"]["name"]
    first_pod = a.find("Pod", name, "ci")
    assert first_pod is not None
    a.exit_runner(name, 1)
    a.host.run_for("1s")
    r2 = a.find(c.KIND_ER, name, "ci")
    assert r2 is not None and len(r2["status"]["failures"]) == 1
    a.host.run_for("10s")
    pod = a.find("Pod", name, "ci")
    assert pod is not None and pod["metadata"]["uid"] != first_pod["metadata"]["uid"]
    assert a.violations == []


def test_runner_group_and_name_changes_update_the_scale_set() -> None:
    a = healthy(min_runners=1, settings={"actions": {"runnerGroups": [{"id": 1, "name": "Default"},
                                                                       {"id": 3, "name": "Linux"}]}})
    a.patch_ars({"spec": {"runnerGroup": "Linux", "runnerScaleSetName": "linux-x64"}})
    a.settle()
    ars = a.ars()
    assert ars is not None
    ann = ars["metadata"]["annotations"]
    assert ann[c.ANNOTATION_RUNNER_GROUP_NAME] == "Linux"
    assert ann[c.ANNOTATION_RUNNER_SCALE_SET_NAME] == "linux-x64"
    [ss] = a.state.service.scale_sets.values()
    assert (ss.runner_group_id, ss.name) == (3, "linux-x64")
    assert a.violations == []


def test_listener_patch_ids_follow_the_job_count() -> None:
    a = healthy(min_runners=0)
    assert a.runners() == []
    a.queue_jobs(2)
    a.settle()
    ers = a.ers()
    assert ers is not None
    assert ers["spec"]["replicas"] == 2 and ers["spec"]["patchID"] == 1
    assert len([r for r in a.runners() if has_job(r)]) == 2
    a.queue_jobs(1)
    a.settle()
    ers = a.ers()
    assert ers is not None and ers["spec"]["patchID"] == 2 and ers["spec"]["replicas"] == 3
    a.finish_jobs(names(a.runners()))
    a.settle()
    ers = a.ers()
    assert ers is not None and (ers["spec"].get("replicas") or 0) == 0 and ers["spec"]["patchID"] == 0
    assert a.runners() == []
    assert a.violations == []


def test_the_listener_looks_at_runner_and_pod_writes_only_while_a_job_waits() -> None:
    """Job assignment reads runners and pods; the replica count reads only the listener and the ERS.
    So with no job waiting, a runner or pod write leaves the listener idle; with one waiting, the
    listener runs again and hands the job to the runner that became idle."""
    a = healthy(min_runners=1)
    listener = a.state.listener
    [runner] = a.runners()
    assert listener.next_due() is None
    a.api.patch(c.KIND_ER, runner["metadata"]["name"], {"metadata": {"labels": {"touched": "1"}}},
                namespace="ci")
    assert listener.next_due() is None  # no job waits: nothing for it to look at
    a.api.patch(c.KIND_ERS, "linux", {"metadata": {"labels": {"touched": "1"}}}, namespace="ci")
    assert listener.next_due() is not None  # the replica count reads the ERS
    a.settle()
    a.queue_jobs(2)
    while listener.next_due() is not None:  # the listener alone: one job to the idle runner, replicas to 2
        listener.run()
    assert [j.runner_id for j in a.state.service.jobs].count(None) == 1 and a.state.service.any_queued()
    pod = a.api.list("Pod", "ci")["items"][0]["metadata"]["name"]
    a.api.patch("Pod", pod, {"metadata": {"labels": {"touched": "1"}}}, namespace="ci")
    assert listener.next_due() is not None  # a job waits: a pod write may have freed a runner
    a.settle()
    assert len([r for r in a.runners() if has_job(r)]) == 2
    assert a.violations == []


def _runner_ids_on_service(a: ArcCluster) -> set[int]:
    return set(a.state.service.runners)


def test_a_runner_marked_outdated_is_removed_from_the_service() -> None:
    """upstream markAsOutdated: phase Outdated, then RemoveRunner (the service forgets the runner)."""
    a = healthy(min_runners=1)
    [runner] = a.runners()
    rid = runner["status"]["runnerId"]
    assert rid in _runner_ids_on_service(a)
    a.host.kubelet.exit("ci", runner["metadata"]["name"], "runner", 7)
    a.host.run_for("1s", max_reconciles=200, raise_on_budget=False)
    assert rid not in _runner_ids_on_service(a)


def test_a_pod_refused_as_invalid_fails_the_runner_and_removes_it_from_the_service() -> None:
    """upstream markAsFailed: a pod refused as Invalid -> phase Failed, reason InvalidPod, RemoveRunner."""
    a = healthy(min_runners=0)
    a.api.faults.add({"on": {"verb": "create", "kind": "Pod", "actor": "ephemeralrunner"}, "times": "always",
                      "error": {"code": 422, "reason": "Invalid", "message": "Pod \"x\" is invalid: spec: bad"}})
    a.patch_ars({"spec": {"minRunners": 1}})
    a.host.run_for("1s", max_reconciles=200, raise_on_budget=False)
    failed = [r for r in a.runners() if (r.get("status") or {}).get("reason") == "InvalidPod"]
    assert failed, [r.get("status") for r in a.runners()]
    assert failed[0]["status"]["message"].startswith("Failed to create the pod: ")
    assert failed[0]["status"]["runnerId"] not in _runner_ids_on_service(a)
