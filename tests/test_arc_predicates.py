"""reconcilers.predicates.owned_runner: which runner updates wake the EphemeralRunnerSet controller.

Upstream's ``TestEphemeralRunnerUpdateAffectsScale`` (ephemeralrunnerset_controller_cache_test.go)
pins these six answers for ``ephemeralRunnerUpdateAffectsScale``, an event filter of another
controller line. The port's filter follows the reference ``ephemeralRunnerSetOwnedEphemeralRunnerPredicate``
(predicates.go); it must give the same answers, since each of the five updates that pass changes a
field the set's reconcile reads. A filter changes only which reconciles are queued, so no fixture case
can see this: it is checked here, as upstream does, on the function itself.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcilers import constants as c
from reconcilers.predicates import owned_runner

Obj = dict[str, Any]

RUNNING: Obj = {
    "apiVersion": c.API_VERSION,
    "kind": c.KIND_ER,
    "metadata": {"name": "r", "namespace": "ci", "resourceVersion": "1"},
    "status": {"phase": c.ER_PHASE_RUNNING},
}


def _changed(path: tuple[str, ...], value: Any) -> Obj:
    new = copy.deepcopy(RUNNING)
    new["metadata"]["resourceVersion"] = "2"
    node = new
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return new


@pytest.mark.parametrize(("what", "path", "value", "passes"), [
    ("readiness only", ("status", "ready"), True, False),
    ("succeeded", ("status", "phase"), c.ER_PHASE_SUCCEEDED, True),
    ("failed", ("status", "phase"), c.ER_PHASE_FAILED, True),
    ("being deleted", ("metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z", True),
    ("new patch id", ("metadata", "annotations"), {c.ANNOTATION_PATCH_ID: "9"}, True),
    ("registered", ("status", "runnerId"), 1, True),
    # Not in upstream's test: the reference predicate also passes a job id change (HasJob is read).
    ("job assigned", ("status", "jobId"), "job-1", True),
])
def test_ephemeral_runner_update_affects_scale(what: str, path: tuple[str, ...], value: Any, passes: bool) -> None:
    """Upstream's six updates of a Running runner, and a job assignment: only the readiness-only one is dropped."""
    assert owned_runner.on_update(RUNNING, _changed(path, value)) is passes, what
