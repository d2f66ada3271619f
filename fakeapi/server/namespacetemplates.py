"""Regenerate ``default_namespaces.json``: what the creates of the default Namespaces store.

``APIServer()`` starts with ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``,
stored from that file's templates rather than by four creates, which would decode, default, validate
and walk each Namespace for its managedFields (issue 22: they were most of a first ``APIServer()``).
This module makes the four creates as ``system`` on a server that has none, once with managedFields
kept and once without, and records what each stored and its warnings. Run
``python -m fakeapi.server.namespacetemplates`` after changing what a Namespace create stores;
tests/test_default_namespaces.py fails while the file and the creates differ.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.server.apiserver import DEFAULT_NAMESPACES, NAMESPACE_TEMPLATES_FILE, APIServer


def stored_by_creates(managed_fields: bool) -> list[dict[str, Any]]:
    """Each default Namespace as its create by ``system`` stores it on a new server, with the create's warnings."""
    api = APIServer(managed_fields=managed_fields, default_namespaces=False)
    out = []
    for ns in DEFAULT_NAMESPACES:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, actor="system")
        entry = api.store.table("", "namespaces").get("", ns)
        assert entry is not None
        out.append({"object": entry.obj, "warnings": list(api.last_warnings)})
    return out


def templates() -> dict[str, Any]:
    """The file's content: the stored objects with managedFields kept and without."""
    return {"managedFields": stored_by_creates(True), "noManagedFields": stored_by_creates(False)}


def render() -> str:
    """The file's text (key order as stored: it is observable)."""
    return json.dumps(templates(), indent=1) + "\n"


def main() -> None:
    """Write the templates to ``fakeapi/server/default_namespaces.json``."""
    with open(NAMESPACE_TEMPLATES_FILE, "w", encoding="utf-8") as f:
        f.write(render())
    print(f"wrote {NAMESPACE_TEMPLATES_FILE}")


if __name__ == "__main__":
    main()
