"""A status write's "body unchanged" check compares the status alone (issue 22): ``same_status`` answers
as ``_same_body`` does for every object ``_status_write`` makes (all else is the stored object's own)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from fakeapi.server.pipeline import _same_body, same_status
from fakeapi.server.update import _status_write

_ABSENT = object()
STATUS = {"phase": "Running", "conditions": [{"type": "Ready"}]}
VALUES: list[Any] = [_ABSENT, None, STATUS, copy.deepcopy(STATUS), {}, [], ["x"], "Running", 1, True, 1.0, 0, ""]


def _old(status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "resourceVersion": "3"},
                           "spec": {"nodeName": "n"}}
    if status is not _ABSENT:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(("stored", "sent"), list(itertools.product(range(len(VALUES)), repeat=2)))
def test_same_status_answers_as_same_body(stored: int, sent: int) -> None:
    old = _old(VALUES[stored])
    body: dict[str, Any] = {"metadata": {"resourceVersion": "3"}}
    if VALUES[sent] is not _ABSENT:
        body["status"] = VALUES[sent]
    new = _status_write(old, body)
    assert same_status(new, old) == _same_body(new, old)


def test_the_very_same_status_is_the_same_body() -> None:
    old = _old(STATUS)
    assert same_status(_status_write(old, {"metadata": {}, "status": STATUS}), old)
    assert not same_status(_status_write(old, {"metadata": {}, "status": copy.deepcopy(STATUS)}), old)
