"""The namespace controller's deletion conditions (fakeapi.controllers.nsconditions; status_condition_utils.go)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.controllers.nsconditions import CONDITION_TYPES, failing_conditions, update_conditions

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


@pytest.mark.parametrize(("remaining", "finalizers", "errors", "expected"), [
    ({}, {}, [], {}),
    ({("pods", ""): 2, ("widgets", "example.com"): 1}, {}, [],
     {"NamespaceContentRemaining": ("SomeResourcesRemain", "Some resources are remaining: pods. has 2 resource "
                                                           "instances, widgets.example.com has 1 resource instances")}),
    ({("widgets", "example.com"): 3}, {"z.io/b": 1, "example.com/f": 2, "unused": 0}, [],
     {"NamespaceContentRemaining": ("SomeResourcesRemain",
                                    "Some resources are remaining: widgets.example.com has 3 resource instances"),
      "NamespaceFinalizersRemaining": ("SomeFinalizersRemain", "Some content in the namespace has finalizers "
                                                              "remaining: example.com/f in 2 resource instances, "
                                                              "z.io/b in 1 resource instances")}),
    ({}, {}, ["zz failed", "aa failed"],
     {"NamespaceDeletionContentFailure": ("ContentDeletionFailed",
                                          "Failed to delete all resource types, 2 remaining: aa failed, zz failed")}),
])
def test_failing_conditions(remaining: dict[tuple[str, str], int], finalizers: dict[str, int], errors: list[str],
                            expected: dict[str, tuple[str, str]]) -> None:
    assert failing_conditions(remaining, finalizers, errors) == expected


def test_a_first_pass_adds_the_five_conditions_in_order_all_ok() -> None:
    out = update_conditions(None, {}, T0)
    assert out is not None
    assert [c["type"] for c in out] == list(CONDITION_TYPES)
    assert out[3] == {"type": "NamespaceContentRemaining", "status": "False", "lastTransitionTime": T0,
                      "reason": "ContentRemoved", "message": "All content successfully removed"}
    assert {c["status"] for c in out} == {"False"}


def test_nothing_changed_is_no_update() -> None:
    out = update_conditions(None, {}, T0)
    assert update_conditions(out, {}, T1) is None


def test_the_time_moves_only_with_the_status() -> None:
    failing = {"NamespaceContentRemaining": ("SomeResourcesRemain", "Some resources are remaining: a. has 2 resource "
                                                                    "instances")}
    first = update_conditions(None, failing, T0)
    fewer = {"NamespaceContentRemaining": ("SomeResourcesRemain", "Some resources are remaining: a. has 1 resource "
                                                                  "instances")}
    second = update_conditions(first, fewer, T1)
    assert second is not None and second[3]["lastTransitionTime"] == T0 and "has 1" in second[3]["message"]
    third = update_conditions(second, {}, T1)
    assert third is not None and third[3]["status"] == "False" and third[3]["lastTransitionTime"] == T1
    assert third[0]["lastTransitionTime"] == T0


def test_other_conditions_are_kept_and_the_input_is_not_changed() -> None:
    current: list[Any] = [{"type": "Custom", "status": "True"}]
    out = update_conditions(current, {}, T0)
    assert out is not None and out[0] == {"type": "Custom", "status": "True"} and len(out) == 6
    assert current == [{"type": "Custom", "status": "True"}]
