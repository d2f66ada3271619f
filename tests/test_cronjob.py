"""batch/v1 CronJobs: defaults, the schedule as robfig/cron parses it, time zones, the job template's rules."""

from __future__ import annotations

from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api

from fakeapi.registry.batch.cronschedule import schedule_error


@pytest.mark.parametrize(("schedule", "error"), [
    ("*/5 * * * *", None),
    ("0 3 * * mon-fri", None),
    ("15 2 1 JAN,jul *", None),
    ("0 0 * * 0/2", None),
    ("@daily", None),
    ("@every 1h30m", None),
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/2/3 * * * *", "too many slashes: */2/3"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'),
    ("TZ=Nowhere/City 0 0 * * *", "provided bad location Nowhere/City: unknown time zone Nowhere/City"),
])
def test_schedule_error(schedule: str, error: str | None) -> None:
    assert schedule_error(schedule) == error


def _cron(name: str = "backup", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"schedule": "0 3 * * *",
                 "jobTemplate": {"spec": {"template": {"spec": {
                     "restartPolicy": "OnFailure", "containers": [{"name": "b", "image": "backup:1"}]}}}}},
    }
    body["spec"].update(spec)
    return body



def test_a_cron_job_is_defaulted() -> None:
    api = make_api()
    out = api.create(_cron())
    spec = out["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    pod_spec = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["dnsPolicy"] == "ClusterFirst" and pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "backoffLimit" not in spec["jobTemplate"]["spec"]  # a Job's defaults are not a template's
    assert out["metadata"]["generation"] == 1


@pytest.mark.parametrize(("body", "causes"), [
    (_cron(schedule="61 * * * *"), [("spec.schedule", 'Invalid value: "61 * * * *": end of range (61) above '
                                                      "maximum (59): 61")]),
    (_cron(schedule="TZ=UTC 0 3 * * *"),
     [("spec.schedule", 'Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone '
                        "field instead")]),
    (_cron(timeZone="Mars/Olympus"), [("spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone '
                                                        "Mars/Olympus")]),
    (_cron(timeZone="Local"), [("spec.timeZone", 'Invalid value: "Local": timeZone must be an explicit time zone as '
                                                 "defined in https://www.iana.org/time-zones")]),
    (_cron(concurrencyPolicy="Sometimes"),
     [("spec.concurrencyPolicy", 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"')]),
    (_cron("a" * 53), [("metadata.name", f'Invalid value: "{"a" * 53}": must be no more than 52 characters')]),
])
def test_invalid_cron_jobs(body: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == causes


def test_the_job_template_leaves_the_selector_to_the_controller() -> None:
    api = make_api()
    body = _cron()
    body["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    del body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"]
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == [
        ("spec.jobTemplate.spec.selector", "Invalid value: &LabelSelector{MatchLabels:map[string]string{a: b,},"
                                           "MatchExpressions:[]LabelSelectorRequirement{},}: `selector` will be "
                                           "auto-generated"),
        ("spec.jobTemplate.spec.template.spec.restartPolicy",
         'Unsupported value: "Always": supported values: "OnFailure", "Never"')]


def test_a_valid_time_zone() -> None:
    api = make_api()
    assert api.create(_cron(timeZone="Europe/Berlin"))["spec"]["timeZone"] == "Europe/Berlin"
