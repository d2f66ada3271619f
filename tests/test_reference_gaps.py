"""Reference behaviours once found missing in modules outside the server core, kept as regression tests.

Semantic.DeepEqual on unstructured content (§7.3) is strict about keys: an
empty list or a null value is not the same as an absent key.
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
