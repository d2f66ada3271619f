"""Event filters of ARC's controllers (``predicates.go``): projections of the fields each reconciler reads.

They only keep work out of the queues: an update is dropped only when every
field the reconciler branches on is unchanged, so they never change what a
reconcile does. Create, delete and generic events always pass. Objects are the
watch stream's shared snapshots: read only.
"""

from __future__ import annotations

from typing import Any

from fakeapi.host.predicates import Predicate

from .podstate import latest_ready
from .resourcebuilder import EMPTY

Obj = dict[str, Any]

_META_KEYS = ("generation", "deletionTimestamp", "finalizers", "labels", "annotations", "ownerReferences")




def _status(obj: Obj) -> dict[str, Any]:
    s = obj.get("status")
    return s if isinstance(s, dict) else {}


# The predicates below read ``obj.get("metadata") or EMPTY`` inline (one call less per event): the
# objects are stored snapshots, whose metadata and status are maps when present.


_EMPTIES: tuple[Any, ...] = (None, "", [], {})


def equal_reconciled_meta(old: Obj, new: Obj) -> bool:
    """The metadata the controllers branch on is unchanged (generation, deletion, finalizers, labels,
    annotations, owner references); server bookkeeping (resourceVersion, managedFields) is left out.
    An empty value and an absent one are the same."""
    mo, mn = old.get("metadata") or EMPTY, new.get("metadata") or EMPTY
    # The keys of _META_KEYS one after the other (issue 22: every update event of the three
    # controllers' watches); a write shares the values it leaves alone, so most are the same object.
    a, b = mo.get("generation"), mn.get("generation")
    if a is not b and _differ(a, b):
        return False
    a, b = mo.get("deletionTimestamp"), mn.get("deletionTimestamp")
    if a is not b and _differ(a, b):
        return False
    a, b = mo.get("finalizers"), mn.get("finalizers")
    if a is not b and _differ(a, b):
        return False
    a, b = mo.get("labels"), mn.get("labels")
    if a is not b and _differ(a, b):
        return False
    a, b = mo.get("annotations"), mn.get("annotations")
    if a is not b and _differ(a, b):
        return False
    a, b = mo.get("ownerReferences"), mn.get("ownerReferences")
    return a is b or not _differ(a, b)


def _differ(a: Any, b: Any) -> bool:
    """Two metadata values differ, an empty value (``None``, ``""``, ``[]``, ``{}``) being an absent one."""
    if a in _EMPTIES:
        a = None
    if b in _EMPTIES:
        b = None
    return bool(a != b)


def _runner_update(old: Obj, new: Obj) -> bool:
    if not equal_reconciled_meta(old, new) or old.get("spec") != new.get("spec"):
        return True
    so, sn = old.get("status") or EMPTY, new.get("status") or EMPTY
    return (so.get("phase") != sn.get("phase") or so.get("runnerId") != sn.get("runnerId")
            or so.get("jobId") != sn.get("jobId"))


#: The EphemeralRunnerSet controller's filter on its EphemeralRunners (ARC
#: ``ephemeralRunnerSetOwnedEphemeralRunnerPredicate``): metadata, spec, phase, runner id, and the job id
#: (the set skips runners with a job).
owned_runner = Predicate(update=_runner_update)

_ERS_STATUS_KEYS = (
    "phase",
    "appliedActionableRevision",
    "currentReplicas",
    "pendingEphemeralRunners",
    "runningEphemeralRunners",
    "failedEphemeralRunners",
)


def _runner_set_update(old: Obj, new: Obj) -> bool:
    if not equal_reconciled_meta(old, new) or old.get("spec") != new.get("spec"):
        return True
    so, sn = old.get("status") or EMPTY, new.get("status") or EMPTY
    return any(so.get(k) != sn.get(k) for k in _ERS_STATUS_KEYS)


#: The AutoscalingRunnerSet controller's filter on its EphemeralRunnerSet: metadata, spec, the phase
#: and applied revision (the teardown guard) and the counts it copies into the ARS status.
owned_runner_set = Predicate(update=_runner_set_update)


def _pod_update(old: Obj, new: Obj) -> bool:
    mo, mn = old.get("metadata") or EMPTY, new.get("metadata") or EMPTY
    if mo.get("uid") != mn.get("uid") or mo.get("deletionTimestamp") != mn.get("deletionTimestamp"):
        return True
    so, sn = old.get("status") or EMPTY, new.get("status") or EMPTY
    for k in ("phase", "reason", "message", "containerStatuses", "initContainerStatuses"):
        if so.get(k) != sn.get(k):
            return True
    return latest_ready(old) != latest_ready(new)


#: The EphemeralRunner controller's filter on its Pod: uid, deletion, phase, reason, message,
#: container statuses and the Ready condition.
owned_pod = Predicate(update=_pod_update)


def _primary_update(old: Obj, new: Obj) -> bool:
    if not equal_reconciled_meta(old, new):
        return True
    return bool(old.get("spec") != new.get("spec"))


#: The EphemeralRunner controller's filter on its own kind (ARC ``ephemeralRunnerPrimaryPredicate``):
#: metadata and spec changes; its own status writes and the listener's job assignment are not news.
primary_runner = Predicate(update=_primary_update)
