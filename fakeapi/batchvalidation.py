"""What batch/v1 Job validation checks beyond the OpenAPI schema (``pkg/apis/batch/validation``).

No job controller runs here (as under envtest): a test creates Jobs and writes their status
itself. These are the rules it meets: counts not negative, a selector (generated unless
``manualSelector``) that matches the template's labels, a template that restarts ``OnFailure``
or ``Never``, and, on update, a selector, template and completion mode that do not change.
"""

from __future__ import annotations

from typing import Any

from .appsvalidation import PodSpecCauses, pod_template_causes
from .errors import Cause
from .metavalidation import invalid, label_selector_string, not_supported, required
from .selectors import SelectorError, selector_from_object

_NEGATIVE = "must be greater than or equal to 0"
_IMMUTABLE = "field is immutable"


def job_causes(obj: dict[str, Any], pod_spec_causes: PodSpecCauses) -> list[Cause]:
    """``validateJobSpec``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        v = spec.get(name)
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
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
