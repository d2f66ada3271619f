"""The conditions the namespace controller keeps on a terminating namespace.

Ported from kube-controller-manager's ``pkg/controller/namespace/deletion/status_condition_utils.go``.
Each pass over a terminating namespace's content sets five conditions on its status, in this
order, each ``False`` with an "ok" reason while all is well:

- ``NamespaceDeletionDiscoveryFailure`` and ``NamespaceDeletionGroupVersionParsingFailure``
  (discovery never fails here);
- ``NamespaceDeletionContentFailure``: a delete failed, or objects remain that neither a
  finalizer nor a pod's grace period explains;
- ``NamespaceContentRemaining``: ``Some resources are remaining: pods. has 1 resource instances``;
- ``NamespaceFinalizersRemaining``: ``Some content in the namespace has finalizers remaining:
  example.com/f in 1 resource instances``.

A condition's ``lastTransitionTime`` changes only when its status does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CONDITION_TYPES = (
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
)
_OK: dict[str, tuple[str, str]] = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def failing_conditions(remaining: Mapping[tuple[str, str], int], finalizers: Mapping[str, int],
                       delete_errors: Sequence[str]) -> dict[str, tuple[str, str]]:
    """The conditions a pass found true, as type -> (reason, message).

    ``remaining``: objects left, by (resource, group); ``finalizers``: how many of them each
    finalizer holds; ``delete_errors``: the errors of the pass (one per resource at most).
    """
    out: dict[str, tuple[str, str]] = {}
    if delete_errors:
        msgs = sorted(delete_errors)
        out["NamespaceDeletionContentFailure"] = (
            "ContentDeletionFailed",
            f"Failed to delete all resource types, {len(msgs)} remaining: {', '.join(msgs)}")
    left = sorted(f"{resource}.{group} has {n} resource instances" for (resource, group), n in remaining.items() if n)
    if left:
        out["NamespaceContentRemaining"] = ("SomeResourcesRemain", "Some resources are remaining: " + ", ".join(left))
    held = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items() if n)
    if held:
        out["NamespaceFinalizersRemaining"] = (
            "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: " + ", ".join(held))
    return out


def update_conditions(current: Sequence[Any] | None, failing: Mapping[str, tuple[str, str]],
                      now: str) -> list[dict[str, Any]] | None:
    """``updateConditions``: the namespace's new conditions list, or None when nothing changed.

    Conditions of other types are kept; each of the five is added in order when missing, or
    updated in place when its status, reason or message differ (its time only with its status).
    """
    conditions = [dict(c) if isinstance(c, dict) else c for c in current or ()]
    changed = False
    for ctype in CONDITION_TYPES:
        status = "True" if ctype in failing else "False"
        reason, message = failing.get(ctype) or _OK[ctype]
        old = next((c for c in conditions if isinstance(c, dict) and c.get("type") == ctype), None)
        if old is None:
            conditions.append({"type": ctype, "status": status, "lastTransitionTime": now, "reason": reason,
                               "message": message})
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (status, reason, message):
            if old.get("status") != status:
                old["lastTransitionTime"] = now
            old.update(status=status, reason=reason, message=message)
            changed = True
    return conditions if changed else None
