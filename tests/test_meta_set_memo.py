"""``validate_labels`` and ``validate_annotations`` remember the whole sets they found valid (issue 22):
the answer from that memo equals the walk's, label by label, for every set, the first time and again,
with and without the stored set an update replaces."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery import metavalidation as mv

LONG = "v" * 70
SETS: list[Any] = [
    {"app": "runner", "example.com/role": "x"},
    {"app": ""},
    {"bad key!": "v"},
    {"app": "bad value!"},
    {"app": LONG},
    {"app": 1},
    {"app": True},
    {"app": None},
    {"app": ["x"]},
    {"app": {"x": "y"}},
    {"a/b/c": "v", "ok": "v"},
    {"": "v"},
    {"Example.COM/Key": "v"},
    {"big": "x" * (mv.TOTAL_ANNOTATION_SIZE_LIMIT + 1)},
    {},
    None,
    "labels",
    ["app", "x"],
]
OLDS: list[Any] = [None, {"app": "runner"}, {"app": "bad value!"}]


def _as_dicts(causes: list[Any]) -> list[Any]:
    return [(c.reason, c.message, c.field) for c in causes]


@pytest.mark.parametrize("labels", SETS, ids=range(len(SETS)))
@pytest.mark.parametrize("old", OLDS, ids=range(len(OLDS)))
def test_labels_answer_as_the_walk(labels: Any, old: Any) -> None:
    mv._VALID_LABEL_SETS.clear()
    want = _as_dicts(mv._label_causes(labels, "metadata.labels", old))
    for _ in range(2):  # (a miss, then what the memo knows)
        assert _as_dicts(mv.validate_labels(labels, old=old)) == want
        assert _as_dicts(mv.validate_labels(labels, "spec.selector", old=None)) == _as_dicts(
            mv._label_causes(labels, "spec.selector"))


@pytest.mark.parametrize("annotations", SETS, ids=range(len(SETS)))
def test_annotations_answer_as_the_walk(annotations: Any) -> None:
    mv._VALID_ANNOTATION_SETS.clear()
    try:
        want: Any = _as_dicts(mv._annotation_causes(annotations))
    except AttributeError as e:  # (a key that is not a string: the walk fails, and so does the memo's path)
        want = type(e)
    for _ in range(2):
        try:
            got: Any = _as_dicts(mv.validate_annotations(annotations))
        except AttributeError as e:
            got = type(e)
        assert got == want


def test_only_valid_sets_are_remembered_and_the_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    mv._VALID_LABEL_SETS.clear()
    mv.validate_labels({"app": "bad value!"})
    mv.validate_labels({"app": "ok"}, old={"app": "ok"})  # (kept labels skipped: not remembered)
    assert not mv._VALID_LABEL_SETS
    monkeypatch.setattr(mv, "_CACHE_SIZE", 3)
    for i in range(10):
        assert mv.validate_labels({"app": f"v{i}"}) == []
    assert 0 < len(mv._VALID_LABEL_SETS) <= 3
