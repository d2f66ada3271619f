"""Table tests of the revision helpers (shared/ARC_SPEC.md "Revision helpers")."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.codec.gomodel import go_roundtrip
from reconcilers import constants as c
from reconcilers.gotypes import ephemeral_runner_spec_type
from reconcilers.revision import (
    classify,
    metadata_drift,
    next_revision,
    next_revision_of,
    outdated_for_applied,
    parse_revision,
    runner_revision,
    runner_spec_drift,
    scale_total,
    terminated,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0", 0),
        ("3", 3),
        ("03", 3),
        ("02", 2),
        ("+3", 3),
        ("-1", -1),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("", 0),
        (" 3", 0),
        ("3 ", 0),
        ("3.0", 0),
        ("1_0", 0),
        ("1e3", 0),
        ("0x10", 0),
        ("+", 0),
        ("-", 0),
        ("+-3", 0),
        ("٣", 0),  # a non-ASCII digit: int() accepts it, ParseInt does not
        ("99999999999999999999", 0),
        ("9223372036854775808", 0),
        ("-9223372036854775809", 0),
        (None, 0),
    ],
)
def test_parse_revision(text: Any, want: int) -> None:
    assert parse_revision(text) == want


def runner(
    name: str,
    phase: str = "",
    revision: str | None = None,
    patch_id: str | None = None,
    deleting: bool = False,
    job: str = "",
) -> dict[str, Any]:
    annotations = {}
    if revision is not None:
        annotations[c.ANNOTATION_ACTIONABLE_REVISION] = revision
    if patch_id is not None:
        annotations[c.ANNOTATION_PATCH_ID] = patch_id
    meta: dict[str, Any] = {"name": name, "annotations": annotations}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {}
    if phase:
        status["phase"] = phase
    if job:
        status["jobId"] = job
    return {"metadata": meta, "status": status}


def names(rs: list[dict[str, Any]]) -> list[str]:
    return [r["metadata"]["name"] for r in rs]


def test_runner_revision_legacy_annotation_missing() -> None:
    assert runner_revision(runner("a")) == 0
    assert runner_revision({"metadata": {}}) == 0
    assert runner_revision(runner("a", revision="7")) == 7


def test_classify_buckets_in_list_order() -> None:
    rs = [
        runner("p1"),
        runner("r1", "Running"),
        runner("p2", "Pending"),
        runner("s1", "Succeeded"),
        runner("f1", "Failed"),
        runner("o-old", "Outdated", revision="1"),
        runner("o-cur", "Outdated", revision="2"),
        runner("o-new", "Outdated", revision="3"),
        runner("o-legacy", "Outdated"),
        runner("weird", "Unknown"),
        runner("r2", "Running"),
    ]
    cls = classify(rs, 2)
    assert names(cls.pending) == ["p1", "p2", "weird"]
    assert names(cls.running) == ["r1", "r2"]
    assert names(cls.finished) == ["s1"]
    assert names(cls.failed) == ["f1"]
    assert names(cls.stale_outdated) == ["o-old", "o-legacy"]
    assert names(cls.outdated) == ["o-cur", "o-new"]
    assert cls.deleting == []


def test_classify_deleting_outdated_runners_go_to_deleting() -> None:
    rs = [
        runner("d-stale", "Outdated", revision="1", deleting=True),
        runner("d-cur", "Outdated", revision="5", deleting=True),
        runner("d-run", "Running", deleting=True, job="j"),
        runner("o", "Outdated", revision="5"),
    ]
    cls = classify(rs, 5)
    assert names(cls.deleting) == ["d-stale", "d-cur", "d-run"]
    assert cls.stale_outdated == []
    assert names(cls.outdated) == ["o"]


def test_classify_each_runner_once() -> None:
    rs = [runner(f"r{i}", p) for i, p in enumerate(["", "Running", "Succeeded", "Failed", "Outdated", "Pending"])]
    cls = classify(rs, 0)
    buckets = [cls.pending, cls.running, cls.finished, cls.failed, cls.deleting, cls.outdated, cls.stale_outdated]
    assert sorted(n for b in buckets for n in names(b)) == sorted(names(rs))


@pytest.mark.parametrize(
    ("patch_ids", "want"),
    [
        ([], 0),
        (["1", "3", "2"], 3),
        (["x", "", " 4", "2"], 2),
        (["-5"], 0),
        (["03"], 3),
    ],
)
def test_latest_patch_id(patch_ids: list[str], want: int) -> None:
    rs = [runner(f"r{i}", patch_id=p) for i, p in enumerate(patch_ids)]
    assert classify(rs, 0).latest_patch_id == want


def test_latest_patch_id_counts_deleting_runners() -> None:
    rs = [runner("a", patch_id="2"), runner("b", patch_id="9", deleting=True)]
    assert classify(rs, 0).latest_patch_id == 9


def test_terminated_is_a_new_list_in_order() -> None:
    rs = [
        runner("o", "Outdated", revision="3"),
        runner("s", "Succeeded"),
        runner("st", "Outdated", revision="1"),
        runner("f", "Failed"),
    ]
    cls = classify(rs, 3)
    t = terminated(cls)
    assert names(t) == ["s", "f", "o", "st"]
    assert names(cls.terminated()) == ["s", "f", "o", "st"]
    t.append(runner("extra"))
    t[0] = runner("replaced")
    assert names(cls.finished) == ["s"]
    assert names(cls.failed) == ["f"]
    assert names(cls.outdated) == ["o"]
    assert names(cls.stale_outdated) == ["st"]
    for bucket in (cls.finished, cls.failed, cls.outdated, cls.stale_outdated):
        assert t is not bucket


def test_terminated_does_not_alias_finished() -> None:
    cls = classify([runner("s", "Succeeded"), runner("f", "Failed")], 0)
    _ = terminated(cls)
    _ = terminated(cls)
    assert names(cls.finished) == ["s"]
    assert names(cls.failed) == ["f"]


def test_scale_total() -> None:
    rs = [runner("p"), runner("r", "Running"), runner("f", "Failed"), runner("s", "Succeeded"),
          runner("o", "Outdated"), runner("d", deleting=True)]
    cls = classify(rs, 0)
    assert scale_total(cls) == 3
    assert cls.scale_total() == 3


@pytest.mark.parametrize(("spec", "applied", "want"), [(3, 2, 4), (2, 7, 8), (5, 5, 6), (0, 0, 1), (1, 0, 2)])
def test_next_revision(spec: int, applied: int, want: int) -> None:
    assert next_revision(spec, applied) == want
    ers = {"spec": {"actionableRevision": spec}, "status": {"appliedActionableRevision": applied}}
    assert next_revision_of(ers) == want


def test_next_revision_of_nothing_is_one() -> None:
    assert next_revision_of(None) == 1


@pytest.mark.parametrize(
    ("phase", "spec", "applied", "want"),
    [
        ("Running", 0, 0, False),
        ("Outdated", 4, 4, True),
        ("Outdated", 5, 4, False),
        ("Outdated", 0, 0, True),
        ("Outdated", 3, 4, True),
        ("", 0, 0, False),
    ],
)
def test_outdated_for_applied(phase: str, spec: int, applied: int, want: bool) -> None:
    ers = {"spec": {"actionableRevision": spec}, "status": {"phase": phase, "appliedActionableRevision": applied}}
    assert outdated_for_applied(ers) is want


def test_outdated_for_applied_nothing() -> None:
    assert outdated_for_applied(None) is False


BASE_SPEC: dict[str, Any] = {
    "githubConfigUrl": "https://github.com/example/app",
    "githubConfigSecret": "gh",
    "runnerScaleSetId": 1,
    "metadata": {"labels": {"team": "ci"}},
    "spec": {
        "containers": [
            {
                "name": "runner",
                "image": "ghcr.io/actions/actions-runner:2.330.0",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            },
            {"name": "dind", "image": "docker:dind"},
        ],
    },
}


def go_written(spec: dict[str, Any]) -> dict[str, Any]:
    """What the ERS holds after a Go controller wrote ``spec`` and read it back."""
    out: dict[str, Any] = go_roundtrip(copy.deepcopy(spec), ephemeral_runner_spec_type())
    return out


def with_(mut: Any) -> dict[str, Any]:
    s = copy.deepcopy(BASE_SPEC)
    mut(s)
    return s


NOT_DRIFT = {
    "identical": lambda s: None,
    "env: []": lambda s: s["spec"]["containers"][1].__setitem__("env", []),
    "nodeSelector: {}": lambda s: s["spec"].__setitem__("nodeSelector", {}),
    "tolerations: []": lambda s: s["spec"].__setitem__("tolerations", []),
    "all three": lambda s: (
        s["spec"]["containers"][1].__setitem__("env", []),
        s["spec"].__setitem__("nodeSelector", {}),
        s["spec"].__setitem__("tolerations", []),
        s["metadata"].__setitem__("annotations", {}),
    ),
}


@pytest.mark.parametrize("case", list(NOT_DRIFT))
def test_empty_collections_against_their_go_round_trip_are_not_drift(case: str) -> None:
    built = with_(NOT_DRIFT[case])
    stored = go_written(built)
    assert not runner_spec_drift(stored, built)
    assert not runner_spec_drift(built, stored)


def test_go_round_trip_drops_the_empty_collections() -> None:
    built = with_(NOT_DRIFT["all three"])
    stored = go_written(built)
    assert "env" not in stored["spec"]["containers"][1]
    assert "nodeSelector" not in stored["spec"]
    assert "tolerations" not in stored["spec"]


def _env(s: dict[str, Any]) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = s["spec"]["containers"][0]["env"]
    return env


DRIFT = {
    "changed image": lambda s: s["spec"]["containers"][0].__setitem__("image", "ghcr.io/actions/actions-runner:2.331.0"),
    "changed env value": lambda s: _env(s)[0].__setitem__("value", "changed"),
    "removed env var": lambda s: _env(s).pop(),
    "added env var": lambda s: _env(s).append({"name": "C", "value": "3"}),
    "changed scale set id": lambda s: s.__setitem__("runnerScaleSetId", 2),
    "changed config url": lambda s: s.__setitem__("githubConfigUrl", "https://github.com/example/other"),
    "removed container": lambda s: s["spec"]["containers"].pop(),
    "changed template label": lambda s: s["metadata"]["labels"].__setitem__("team", "ops"),
}


@pytest.mark.parametrize("case", list(DRIFT))
def test_real_changes_are_drift(case: str) -> None:
    stored = go_written(BASE_SPEC)
    built = with_(DRIFT[case])
    assert runner_spec_drift(stored, built)
    assert runner_spec_drift(stored, go_written(built))


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (None, None, False),
        (None, {}, True),
        ({}, None, True),
        ({}, {}, False),
        ({}, {"labels": {}}, False),
        ({"annotations": {}}, {"labels": {}}, False),
        ({"labels": {"a": "1"}}, {"labels": {"a": "1"}}, False),
        ({"labels": {"a": "1"}}, {"labels": {"a": "2"}}, True),
        ({"labels": {"a": "1"}}, {}, True),
        ({"annotations": {"x": "y"}}, {"annotations": {}}, True),
    ],
)
def test_metadata_drift(a: Any, b: Any, want: bool) -> None:
    assert metadata_drift(a, b) is want
