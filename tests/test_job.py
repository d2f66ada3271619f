"""batch/v1 Jobs: defaults, the generated selector and labels, validation, and deletion that orphans.

No job controller runs (as under envtest). What the API server does on its own is what a test
sees: ``batch.kubernetes.io/controller-uid`` labels and selector on create, the template frozen
once the job runs, and a delete without a propagation policy that leaves the pods behind.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, drain, field_causes, make_api

from fakeapi.registry.batch.strategy import JOB_DELETE_WARNING


def _job(name: str = "pi", restart: str | None = "Never", **spec: Any) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": [{"name": "pi", "image": "perl:5.34"}]}
    if restart:
        pod_spec["restartPolicy"] = restart
    body: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "ns"},
                            "spec": {"template": {"spec": pod_spec}}}
    body["spec"].update(spec)
    return body



def test_a_job_is_defaulted_and_gets_its_selector_and_labels() -> None:
    api = make_api()
    out = api.create(_job())
    uid, spec = out["metadata"]["uid"], out["spec"]
    expected = {"job-name": "pi", "batch.kubernetes.io/job-name": "pi", "controller-uid": uid,
                "batch.kubernetes.io/controller-uid": uid}
    assert spec["template"]["metadata"]["labels"] == expected
    assert out["metadata"]["labels"] == expected  # the job's own, from its template's (it set none)
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False and spec["manualSelector"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert out["metadata"]["generation"] == 1 and out["status"] == {}


def test_a_job_keeps_labels_it_sets_and_parallelism_alone_leaves_completions_unset() -> None:
    api = make_api()
    body = _job(parallelism=3)
    body["metadata"]["labels"] = {"team": "a"}
    out = api.create(body)
    assert out["metadata"]["labels"] == {"team": "a"}
    assert out["spec"]["parallelism"] == 3 and "completions" not in out["spec"]


def test_a_manual_selector_is_the_user_s() -> None:
    api = make_api()
    body = _job(manualSelector=True)
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert ("spec.selector", "Required value") in field_causes(err)
    body = _job(manualSelector=True, selector={"matchLabels": {"app": "pi"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "pi"}}
    out = api.create(body)
    assert out["spec"]["template"]["metadata"]["labels"] == {"app": "pi"}


@pytest.mark.parametrize(("body", "causes"), [
    (_job(restart=None), [("spec.template.spec.restartPolicy",
                           'Unsupported value: "Always": supported values: "OnFailure", "Never"')]),
    (_job(backoffLimit=-1), [("spec.backoffLimit", "Invalid value: -1: must be greater than or equal to 0")]),
    (_job(parallelism=-2), [("spec.parallelism", "Invalid value: -2: must be greater than or equal to 0")]),
])
def test_invalid_jobs(body: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(body), 422, "Invalid")
    assert field_causes(err) == causes
    assert err.message.startswith('Job.batch "pi" is invalid: ')


def test_what_may_change_once_created() -> None:
    api = make_api()
    stored = api.create(_job())
    out = api.patch("Job", "pi", {"spec": {"parallelism": 2}}, namespace="ns", api_version="batch/v1")
    assert out["spec"]["parallelism"] == 2 and out["metadata"]["generation"] == 2
    changed = copy.deepcopy(stored)
    changed["metadata"].pop("resourceVersion")
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5.36"
    changed["spec"]["completions"] = 3
    err = assert_rejected(api, lambda: api.update(changed), 422, "Invalid")
    assert [f for f, _ in field_causes(err)] == ["spec.completions", "spec.template"]
    # a suspended job's template may change
    api.create(_job("later", suspend=True))
    out = api.patch("Job", "later", {"spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.36"}]}}}},
                    namespace="ns", patch_type="strategic")
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "perl:5.36"


def test_a_delete_without_a_policy_orphans_the_pods_with_a_warning() -> None:
    api = make_api()
    job = api.create(_job())
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": job["metadata"]["uid"], "controller": True,
           "blockOwnerDeletion": True}
    for name in ("pi-a", "pi-b"):
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns",
                                                                     "ownerReferences": [ref]},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}})
    api.delete("Job", "pi", "ns", api_version="batch/v1")
    assert api.last_warnings == [JOB_DELETE_WARNING]
    drain(api)
    pods = api.list("Pod", "ns")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["pi-a", "pi-b"]
    assert all("ownerReferences" not in p["metadata"] for p in pods)
    # Background deletes them, and says nothing
    again = api.create(_job("pi2"))
    ref2 = {**ref, "name": "pi2", "uid": again["metadata"]["uid"]}
    api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pi2-a", "namespace": "ns",
                                                                 "ownerReferences": [ref2]},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}})
    api.delete("Job", "pi2", "ns", api_version="batch/v1", propagation_policy="Background")
    assert api.last_warnings == []
    drain(api)
    assert "pi2-a" not in [p["metadata"]["name"] for p in api.list("Pod", "ns")["items"]]
