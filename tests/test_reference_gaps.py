"""Known departures from shared/reference/APISERVER_SEMANTICS.md in modules outside the server core.

Each test states the reference's behaviour and is marked ``xfail(strict=True)``
with the module and the bug, so the suite stays green while the bug is open and
fails loudly (XPASS) once it is fixed, at which point the mark comes off.
"""

from __future__ import annotations

import pytest

from fakeapi import semantic_equal


@pytest.mark.xfail(strict=True, reason="semantic.py: unstructured mode treats [] / null / absent as equal (§7.3)")
def test_unstructured_empty_list_differs_from_absent_key() -> None:
    # §7.3: "For unstructured CR content (map[string]interface{}), []interface{}{} versus a missing
    # key is **not** equal." (Semantic.DeepEqual compares map lengths first.)
    assert not semantic_equal({"spec": {"items": []}}, {"spec": {}})


@pytest.mark.xfail(strict=True, reason="semantic.py: unstructured mode treats a null value as an absent key (§7.3)")
def test_unstructured_nil_value_differs_from_absent_key() -> None:
    # §7.3: "An absent map key ≠ a key holding a nil interface."
    assert not semantic_equal({"a": None}, {})
