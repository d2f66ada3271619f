"""Known departures from shared/reference/APISERVER_SEMANTICS.md in modules outside the server core.

Each test states the reference's behaviour and is marked ``xfail(strict=True)``
with the module and the bug, so the suite stays green while the bug is open and
fails loudly (XPASS) once it is fixed, at which point the mark comes off.
"""

from __future__ import annotations

from fakeapi import semantic_equal


def test_unstructured_empty_list_differs_from_absent_key() -> None:
    # §7.3: "For unstructured CR content (map[string]interface{}), []interface{}{} versus a missing
    # key is **not** equal." (Semantic.DeepEqual compares map lengths first.)
    assert not semantic_equal({"spec": {"items": []}}, {"spec": {}})


def test_unstructured_nil_value_differs_from_absent_key() -> None:
    # §7.3: "An absent map key ≠ a key holding a nil interface."
    assert not semantic_equal({"a": None}, {})
