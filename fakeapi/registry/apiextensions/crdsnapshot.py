"""A CRD that many servers of one process register: its create computed once, then installed.

A bundle registers the same CustomResourceDefinitions in every server it is installed on
(a fixture corpus makes hundreds of servers), and the create of a large CRD is most of
that: decoding, pruning and defaulting the manifest through the CRD schema, validating
it, encoding it as Go does, and serialising its schemas to find their compiled forms.
All of that depends only on the manifest. A :class:`CRDSnapshot` holds a manifest and,
once a server has installed it, the object a create stored (a *template*, per
managedFields setting) and the warnings the create gave. Installing it in another
server (:meth:`fakeapi.server.APIServer.install_crd`) stores a copy of the template's
top level around the template's own spec, with what each server gives a new object
of its own: uid, creationTimestamp, managedFields (the template's entry at the server's own
time), status, resourceVersion. The request
is made as a create is (trace, faults, events, listeners, the kinds it serves), and what
it stores is what :meth:`~fakeapi.server.APIServer.register_crd` would store, byte for
byte (tests/test_crd_snapshot.py compares the two).

The manifest and the templates are immutable: nothing hands them out without a copy,
and the stored objects share only parts that stored snapshots never change (the
snapshot guard checks that in the project's own tests).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CRDTemplate:
    """What a create of the snapshot's manifest stored in a fresh server, and the warnings it gave."""

    #: The stored object (its spec is shared by every object installed from it).
    obj: dict[str, Any]
    warnings: tuple[str, ...]
    #: The create's one managedFields entry, decoded (``fakeapi.machinery.fieldmanager.ManagerEntry``), or
    #: None (managedFields off): an install owns the same fields of the same object, at its own server's time.
    managed: Any = None


class CRDSnapshot:
    """One CRD manifest, registered once per process and installed from then on (see the module)."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        """``manifest`` is the snapshot's from now on: the caller never changes it."""
        spec = manifest.get("spec") if isinstance(manifest, dict) else None
        names = spec.get("names") if isinstance(spec, dict) else None
        if not isinstance(names, dict) or not isinstance(names.get("kind"), str):
            raise ValueError("a CRD snapshot needs a CustomResourceDefinition manifest with spec.names.kind")
        self.manifest = manifest
        self._templates: dict[bool, CRDTemplate] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The CRD's name (``metadata.name``; empty when the manifest has none)."""
        meta = self.manifest.get("metadata")
        return str(meta.get("name") or "") if isinstance(meta, dict) else ""

    @property
    def kind(self) -> str:
        """The kind the CRD defines (``spec.names.kind``)."""
        return str(self.manifest["spec"]["names"]["kind"])

    def template(self, managed_fields: bool) -> CRDTemplate | None:
        """The template made for this managedFields setting, if one was made yet."""
        return self._templates.get(managed_fields)

    def keep(self, managed_fields: bool, template: CRDTemplate) -> CRDTemplate:
        """Keep ``template`` for this setting (the first kept wins: two threads may make one each)."""
        with self._lock:
            return self._templates.setdefault(managed_fields, template)

    def __repr__(self) -> str:
        return f"CRDSnapshot({self.name or self.kind})"
