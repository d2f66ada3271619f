"""What the EphemeralRunner controller reads from a runner pod's status (shared with its event filter)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakeapi.server.clock import parse_time

Obj = dict[str, Any]


def latest_ready(pod: Obj) -> bool:
    """The status of the pod's Ready condition with the latest lastTransitionTime (False when none)."""
    ready = False
    latest: datetime | None = None
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") != "Ready":
            continue
        try:
            when = parse_time(str(cond.get("lastTransitionTime") or ""))
        except ValueError:
            when = None
        if latest is None or (when is not None and when > latest):
            ready = cond.get("status") == "True"
            latest = when if when is not None else latest
    return ready


def init_container_failed(pod: Obj) -> bool:
    """An init container terminated with a non-zero exit code (upstream ``initContainerFailed``)."""
    for cs in (pod.get("status") or {}).get("initContainerStatuses") or ():
        term = (cs.get("state") or {}).get("terminated")
        if term is not None and int(term.get("exitCode", 0)) != 0:
            return True
    return False
