"""What batch/v1 Job and CronJob validation checks beyond the OpenAPI schema (``pkg/apis/batch/validation``).

No job controller runs here (as under envtest): a test creates Jobs and writes their status
itself. These are the rules it meets: counts not negative, a selector (generated unless
``manualSelector``) that matches the template's labels, a template that restarts ``OnFailure``
or ``Never``, and, on update, a selector, template and completion mode that do not change. A
CronJob's schedule must parse (:mod:`fakeapi.registry.batch.cronschedule`), its time zone exist, its name leave
room for the jobs' suffix (52 characters), and its job template leave the selector to the controller.
"""

from __future__ import annotations

import re
from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.metavalidation import (
    invalid,
    label_selector_string,
    not_supported,
    required,
    validate_labels,
)
from fakeapi.machinery.selectors import SelectorError, selector_from_object
from fakeapi.registry.apps.validation import PodSpecCauses, pod_template_causes
from fakeapi.registry.batch.cronschedule import known_zone, schedule_error

_NEGATIVE = "must be greater than or equal to 0"
#: The Job spec's counts that may not be negative.
_JOB_COUNTS = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished")
_IMMUTABLE = "field is immutable"


def job_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``validateJobSpec``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    for name in _JOB_COUNTS:
        v = spec.get(name)
        if type(v) is int and v < 0:  # (JSON integers: bools are not counts)
            causes.append(invalid(f"spec.{name}", v, _NEGATIVE))
    selector = spec.get("selector")
    raw_template = spec.get("template")
    template: dict[str, Any] = raw_template if isinstance(raw_template, dict) else {}
    if selector is None:
        causes.append(required("spec.selector"))
    else:
        try:
            compiled = selector_from_object(selector if isinstance(selector, dict) else {})
        except SelectorError:
            causes.append(invalid("spec.selector", label_selector_string(selector), "invalid label selector"))
        else:
            causes += pod_template_causes(template, compiled, pod_spec_causes)
    tspec = template.get("spec")
    policy = tspec.get("restartPolicy") if isinstance(tspec, dict) else None
    if policy not in ("OnFailure", "Never"):
        causes.append(not_supported("spec.template.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    return causes


def job_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateJobSpecUpdate``: what may not change (the template only while the job is not suspended)."""
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    causes: list[Cause] = []
    if spec.get("selector") != old_spec.get("selector"):
        causes.append(invalid("spec.selector", label_selector_string(spec.get("selector")), _IMMUTABLE))
    for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy",
                 "podReplacementPolicy"):
        if spec.get(name) != old_spec.get(name):
            causes.append(invalid(f"spec.{name}", spec.get(name), _IMMUTABLE))
    if spec.get("completions") != old_spec.get("completions"):
        causes.append(invalid("spec.completions", spec.get("completions"), _IMMUTABLE))
    if spec.get("template") != old_spec.get("template") and not (spec.get("suspend") and old_spec.get("suspend")):
        causes.append(invalid("spec.template", spec.get("template"), _IMMUTABLE))
    return causes


_TZ_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
_CONCURRENCY = ["Allow", "Forbid", "Replace"]


def cron_job_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidateCronJobCreate``/``ValidateCronJobSpec`` and the job template's ``ValidateJobTemplateSpec``.

    A ``TZ=`` prefix in the schedule is refused (a cluster lets an update keep one an older release
    stored; none is ever stored here).
    """
    causes: list[Cause] = []
    name = (obj.get("metadata") or {}).get("name") or ""
    if isinstance(name, str) and len(name) > 52:
        causes.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return causes
    schedule = spec.get("schedule")
    if not schedule:
        causes.append(required("spec.schedule"))
    elif isinstance(schedule, str):
        problem = schedule_error(schedule)
        if problem:
            causes.append(invalid("spec.schedule", schedule, problem))
        if "TZ" in schedule:
            causes.append(invalid("spec.schedule", schedule,
                                  "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    causes += _time_zone_causes(spec.get("timeZone"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        causes.append(required("spec.concurrencyPolicy"))
    elif policy not in _CONCURRENCY:
        causes.append(not_supported("spec.concurrencyPolicy", policy, _CONCURRENCY))
    for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        v = spec.get(field)
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            causes.append(invalid(f"spec.{field}", v, _NEGATIVE))
    causes += _job_template_causes(spec.get("jobTemplate"), pod_spec_causes)
    return causes


def _time_zone_causes(zone: Any) -> list[Cause]:
    """``validateTimeZone``: an explicit IANA zone name."""
    if zone is None:
        return []
    if zone == "":
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    zone = str(zone)
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.match(part):
            return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    if zone.lower() == "local":
        return [invalid("spec.timeZone", zone,
                        "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")]
    if not known_zone(zone):
        return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    return []


def _job_template_causes(template: Any, pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``ValidateJobTemplateSpec``: a job spec whose selector the controller generates."""
    if not isinstance(template, dict):
        return []
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return []
    path = "spec.jobTemplate.spec"
    causes: list[Cause] = []
    for name in _JOB_COUNTS:
        v = spec.get(name)
        if type(v) is int and v < 0:  # (JSON integers: bools are not counts)
            causes.append(invalid(f"{path}.{name}", v, _NEGATIVE))
    if spec.get("selector") is not None:
        causes.append(invalid(f"{path}.selector", label_selector_string(spec.get("selector")),
                              "`selector` will be auto-generated"))
    if spec.get("manualSelector") is True:
        causes.append(not_supported(f"{path}.manualSelector", True, ["nil", "false"]))
    pod_template = spec.get("template")
    pod_template = pod_template if isinstance(pod_template, dict) else {}
    meta = pod_template.get("metadata")
    causes += validate_labels((meta.get("labels") if isinstance(meta, dict) else None) or {}, f"{path}.template.labels")
    tspec = pod_template.get("spec")
    if isinstance(tspec, dict):
        causes += pod_spec_causes(tspec, f"{path}.template.spec")
    policy = tspec.get("restartPolicy") if isinstance(tspec, dict) else None
    if policy not in ("OnFailure", "Never"):
        causes.append(not_supported(f"{path}.template.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    return causes
