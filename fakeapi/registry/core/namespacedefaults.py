"""The defaults of a Namespace (``SetDefaults_Namespace`` of ``pkg/apis/core/v1/defaults.go``).

A module of its own: a Namespace create needs only these, and without a bytecode cache importing
the rest of the core group's defaults (:mod:`fakeapi.registry.core.defaults`) would compile them too
(issue 22).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakeapi.registry.core.defaults import JSONDict


def default_namespace(obj: JSONDict) -> None:
    """The ``kubernetes.io/metadata.name`` label (the namespace's name) and ``status.phase: Active``."""
    meta = obj.get("metadata")
    if type(meta) is dict and meta.get("name"):
        labels = meta.get("labels")
        if type(labels) is not dict:
            labels = meta["labels"] = {}
        if labels.get("kubernetes.io/metadata.name") != meta["name"]:  # the map may be a stored one: no needless write
            labels["kubernetes.io/metadata.name"] = meta["name"]
    status = obj.get("status")
    if type(status) is not dict:
        status = obj["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Active"
