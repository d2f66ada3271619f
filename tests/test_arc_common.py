"""reconcilers.common.patch_status: the MergeFrom diff of a status, and nothing sent when nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from reconcilers import constants as c
from reconcilers.common import patch_status
from reconcilers.gotypes import status_type

ER = {"apiVersion": c.API_VERSION, "kind": c.KIND_ER,
      "metadata": {"name": "r", "namespace": "ci", "resourceVersion": "7"},
      "status": {"phase": "Running", "ready": True, "runnerId": 3}}


class Recorder:
    """Records patches; answers with a marker object."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any, str | None]] = []

    def patch(self, kind: str, name: str, body: Any, *, namespace: str | None = None,
              api_version: str | None = None, patch_type: str = "merge", subresource: str | None = None) -> Any:
        self.sent.append((kind, name, body, subresource))
        return {"answered": True}


@pytest.mark.parametrize(("values", "body"), [
    ({"phase": "Running"}, None),                       # already so: nothing sent, no encoding
    ({"phase": "Running", "ready": True}, None),
    # EphemeralRunnerStatus.Ready is `json:"ready"` (no omitempty): false is sent; reason is omitempty
    ({"ready": False, "reason": ""}, {"ready": False}),
    ({"phase": "Failed"}, {"phase": "Failed"}),
    ({"runnerId": 4}, {"runnerId": 4}),
    ({"message": ""}, None),                            # absent and empty encode alike: no diff
])
def test_patch_status_sends_the_diff_or_nothing(values: dict[str, Any], body: dict[str, Any] | None) -> None:
    client = Recorder()
    out = patch_status(client, ER, values, status_type(c.KIND_ER))  # type: ignore[arg-type]
    if body is None:
        assert client.sent == [] and out is ER
    else:
        assert client.sent == [(c.KIND_ER, "r", {"status": body}, "status")]
        assert out == {"answered": True}


def test_patch_status_optimistic_lock_carries_the_resource_version() -> None:
    client = Recorder()
    patch_status(client, ER, {"phase": "Outdated"}, status_type(c.KIND_ER), optimistic_lock=True)  # type: ignore[arg-type]
    assert client.sent[0][2] == {"status": {"phase": "Outdated"}, "metadata": {"resourceVersion": "7"}}


def test_patch_status_compares_types_not_only_values() -> None:
    """``1 == True`` in Python, not in JSON: an int where a bool is stored is not taken as unchanged."""
    client = Recorder()
    patch_status(client, {**ER, "status": {"runnerId": True}}, {"runnerId": 1}, None)  # type: ignore[arg-type]
    assert client.sent == [(c.KIND_ER, "r", {"status": {"runnerId": 1}}, "status")]
