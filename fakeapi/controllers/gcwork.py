"""The garbage collector's names and the work it has noted, shared by its two halves.

:class:`fakeapi.controllers.gc.GarbageCollector` notes work on every write (into a :class:`Work`);
:class:`fakeapi.controllers.gccollect.Collection` does it and notes follow-up work. Both import
this module, never each other the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakeapi.registry.core.claims import PVC_PROTECTION

__all__ = ["FOREGROUND", "GC_ACTOR", "NS_ACTOR", "ORPHAN", "PVC_ACTOR", "PVC_PROTECTION", "Work"]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
GC_ACTOR = "garbage-collector"
NS_ACTOR = "namespace-controller"
PVC_ACTOR = "pvc-protection-controller"


@dataclass
class Work:
    """What the collector has noted to do, drained by each run."""

    #: dependents to check: (group, plural, namespace, name)
    attempt: set[tuple[str, str, str, str]] = field(default_factory=set)
    #: owners being deleted in the foreground / with orphaning, by uid
    foreground: set[str] = field(default_factory=set)
    orphan: set[str] = field(default_factory=set)
    #: namespaces being terminated
    namespaces: set[str] = field(default_factory=set)
    terminating: set[str] = field(default_factory=set)
    #: claims for the pvc-protection controller to look at now: (namespace, name)
    claims: set[tuple[str, str]] = field(default_factory=set)
    #: claims being deleted that a pod still used at the last look, by namespace
    claims_in_use: dict[str, set[str]] = field(default_factory=dict)

    def pending(self) -> bool:
        """True when there is collection work to do."""
        return bool(self.attempt or self.foreground or self.orphan or self.namespaces or self.claims)
