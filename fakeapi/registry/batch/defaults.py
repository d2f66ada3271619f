"""Defaults of batch/v1 Jobs and CronJobs (``pkg/apis/batch/v1/defaults.go``), and a Job's generated selector."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.core.defaults import JSONDict, dict_at, list_at, pod_template_defaults


def default_job(obj: JSONDict, stored_spec: bool = False) -> None:
    """``SetObjectDefaults_Job`` (batch/v1): the spec's defaults, the job's labels from its template's, the
    template's pod defaults.

    The selector and the template labels the server generates (``batch.kubernetes.io/controller-uid``)
    come later, with the uid (:func:`job_selector`). ``stored_spec``: the spec is the stored object's
    (defaulted when it was stored): only the labels, which depend on the metadata, are defaulted.
    """
    spec = dict_at(obj, "spec")
    if stored_spec:
        _labels_from_template(obj, spec.get("template"))  # (the stored spec is read, never changed)
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    _labels_from_template(obj, dict_at(spec, "template"))
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = spec.get("podFailurePolicy")
    _pod_failure_policy(policy)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    pod_template_defaults(spec)


def _labels_from_template(obj: JSONDict, template: Any) -> None:
    """A Job without labels gets its template's (``SetDefaults_Job``)."""
    tmeta = template.get("metadata") if type(template) is dict else None
    labels = tmeta.get("labels") if type(tmeta) is dict else None
    meta = dict_at(obj, "metadata")
    if labels is not None and not meta.get("labels"):
        meta["labels"] = dict(labels)


#: The labels a Job's pods get from the server (the legacy ones too), and the one its selector uses.
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")


JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def job_selector(obj: JSONDict) -> None:
    """The Job strategy's ``generateSelector`` (unless ``manualSelector``), on create, once the uid is set.

    The template gets the job-name and controller-uid labels (those it does not set), the selector
    ``batch.kubernetes.io/controller-uid``. The job's own labels, when they came from the template's
    by default, show the new ones too (the defaults run again as the stored object is read back).
    """
    spec = dict_at(obj, "spec")
    if spec.get("manualSelector") is True:
        return
    meta = obj["metadata"]
    template = dict_at(spec, "template")
    tmeta = dict_at(template, "metadata")
    labels = tmeta.get("labels")
    copied = labels is not None and meta.get("labels") == labels
    if type(labels) is not dict:
        labels = tmeta["labels"] = {}
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, meta.get("name") or "")
    for key in JOB_UID_LABELS:
        labels.setdefault(key, meta.get("uid") or "")
    selector = dict_at(spec, "selector")
    match = dict_at(selector, "matchLabels")
    match.setdefault(JOB_UID_LABELS[1], meta.get("uid") or "")
    if copied or not meta.get("labels"):
        meta["labels"] = dict(labels)


def default_cron_job(obj: JSONDict) -> None:
    """``SetObjectDefaults_CronJob``: concurrency, suspension, history limits, and the job template's pod
    template (``SetDefaults_Job`` is a Job's, not a template's)."""
    spec = dict_at(obj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    job_spec = dict_at(dict_at(spec, "jobTemplate"), "spec")
    _pod_failure_policy(job_spec.get("podFailurePolicy"))
    pod_template_defaults(job_spec)


def _pod_failure_policy(policy: Any) -> None:
    """``SetDefaults_PodFailurePolicyOnPodConditionsPattern``: a pattern's status defaults to True."""
    if type(policy) is dict:
        for rule in list_at(policy, "rules"):
            for pattern in list_at(rule, "onPodConditions"):
                if not pattern.get("status"):
                    pattern["status"] = "True"
