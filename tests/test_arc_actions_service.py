"""The simulated Actions service: scale sets, runner groups, JIT configs, RemoveRunner, the job queue."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.server.faults import FaultSet
from reconcilers.actions_service import (
    ActionsError,
    ActionsService,
    JobStillRunningError,
    NotFoundError,
    is_job_still_running,
    is_not_found,
)


def service(**kw: Any) -> ActionsService:
    return ActionsService(runner_groups=[{"id": 1, "name": "Default"}, {"id": 7, "name": "Linux"}], **kw)


def test_runner_groups_by_name_case_insensitive() -> None:
    s = service()
    assert s.get_runner_group_by_name("linux").id == 7
    with pytest.raises(NotFoundError):
        s.get_runner_group_by_name("missing")


def test_default_runner_group() -> None:
    assert ActionsService().get_runner_group_by_name("Default").id == 1


def test_scale_set_lifecycle() -> None:
    s = service()
    a = s.create_runner_scale_set("linux", 1, ["linux"], "https://github.com/example/app")
    b = s.create_runner_scale_set("arm", 7)
    assert (a.id, b.id) == (1, 2)
    assert b.runner_group_name == "Linux"
    assert s.get_runner_scale_set(1, "LINUX") is a
    assert s.get_runner_scale_set(7, "linux") is None
    s.update_runner_scale_set(a.id, name="linux-2", runner_group_id=7)
    assert (a.name, a.runner_group_id, a.runner_group_name) == ("linux-2", 7, "Linux")
    s.delete_runner_scale_set(a.id)
    assert a.id not in s.scale_sets
    s.delete_runner_scale_set(a.id)  # already gone: not an error


def test_jit_configs_number_runners_in_order_of_request() -> None:
    s = service()
    ss = s.create_runner_scale_set("linux", 1)
    ids = [s.generate_jit_runner_config(ss.id, f"r{i}").runner_id for i in range(3)]
    assert ids == [1, 2, 3]
    with pytest.raises(ActionsError) as e:
        s.generate_jit_runner_config(ss.id, "r0")
    assert e.value.status_code == 409
    with pytest.raises(NotFoundError):
        s.generate_jit_runner_config(99, "x")


def test_remove_runner_job_still_running_then_gone() -> None:
    s = service()
    ss = s.create_runner_scale_set("linux", 1)
    jit = s.generate_jit_runner_config(ss.id, "r1")
    [job] = s.queue_jobs(ss.id, 1)
    s.assign(job, jit.runner_id)
    with pytest.raises(JobStillRunningError) as e:
        s.remove_runner(jit.runner_id)
    assert is_job_still_running(e.value)
    assert s.runner_exited("r1") is job
    assert s.job_count(ss.id) == 0
    assert jit.runner_id not in s.runners


def test_remove_runner_of_a_runner_the_service_does_not_hold_succeeds() -> None:
    """Upstream removes a scaled-down runner twice (set, then the runner's finalizer) and fails on any
    answer but success or JobStillRunning: a runner already gone, or never registered (id 0), is no error."""
    s = service()
    ss = s.create_runner_scale_set("linux", 1)
    jit = s.generate_jit_runner_config(ss.id, "r1")
    s.remove_runner(jit.runner_id)
    version = s.version
    s.remove_runner(jit.runner_id)
    s.remove_runner(0)
    assert s.runners == {}
    assert s.version == version  # nothing changed
    assert s.calls[-2:] == [("", "RemoveRunner"), ("", "RemoveRunner")]


def test_remove_runner_not_found_comes_from_a_fault_rule() -> None:
    faults = FaultSet()
    faults.add({"on": {"service": "actions", "call": "RemoveRunner"}, "error": "NotFound", "times": "always"})
    s = ActionsService(faults=faults.for_service)
    ss = s.create_runner_scale_set("linux", 1)
    jit = s.generate_jit_runner_config(ss.id, "r1")
    for _ in range(2):
        with pytest.raises(NotFoundError) as nf:
            s.remove_runner(jit.runner_id)
        assert is_not_found(nf.value)
    assert jit.runner_id in s.runners


def test_job_queue_oldest_first_and_counts() -> None:
    s = service()
    ss = s.create_runner_scale_set("linux", 1, config_url="https://github.com/example/app")
    jobs = s.queue_jobs(ss.id, 3)
    assert [j.job_id for j in s.queued(ss.id)] == [j.job_id for j in jobs]
    assert jobs[0].repository == "example/app"
    r = s.generate_jit_runner_config(ss.id, "r1")
    s.assign(jobs[0], r.runner_id)
    assert s.job_count(ss.id) == 3
    assert len(s.queued(ss.id)) == 2
    assert s.assigned(ss.id) == [jobs[0]]
    assert s.job_of_runner(r.runner_id) is jobs[0]
    with pytest.raises(ValueError):
        s.assign(jobs[0], r.runner_id)


def test_runner_exit_without_job_keeps_registration() -> None:
    s = service()
    ss = s.create_runner_scale_set("linux", 1)
    r = s.generate_jit_runner_config(ss.id, "r1")
    assert s.runner_exited("r1") is None
    assert r.runner_id in s.runners


def test_rejected_images() -> None:
    s = service(rejected_images=["bad:1"])
    assert "bad:1" in s.rejected_images
    v = s.version
    s.reject_image("bad:2")
    s.accept_image("bad:1")
    assert s.rejected_images == {"bad:2"}
    assert s.version > v


@pytest.mark.parametrize(
    ("error", "expect"),
    [
        ("JobStillRunning", JobStillRunningError),
        ("NotFound", NotFoundError),
        ("InternalError", ActionsError),
        ({"code": 503, "reason": "ServiceUnavailable", "message": "down"}, ActionsError),
    ],
)
def test_fault_rules_fail_service_calls(error: Any, expect: type[Exception]) -> None:
    faults = FaultSet()
    faults.add({"on": {"service": "actions", "call": "RemoveRunner"}, "error": error})
    s = ActionsService(faults=faults.for_service)
    ss = s.create_runner_scale_set("linux", 1)
    r = s.generate_jit_runner_config(ss.id, "r1")
    with pytest.raises(expect):
        s.remove_runner(r.runner_id, actor="ephemeralrunnerset")
    s.remove_runner(r.runner_id)  # times: 1
    assert r.runner_id not in s.runners


def test_fault_rules_match_the_actor() -> None:
    faults = FaultSet()
    faults.add({"on": {"service": "actions", "call": "RemoveRunner", "actor": "ephemeralrunner"},
                "error": "InternalError"})
    s = ActionsService(faults=faults.for_service)
    ss = s.create_runner_scale_set("linux", 1)
    r = s.generate_jit_runner_config(ss.id, "r1")
    s.remove_runner(r.runner_id, actor="ephemeralrunnerset")
    assert r.runner_id not in s.runners
