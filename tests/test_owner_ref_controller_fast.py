"""Issue 22: :func:`validate_owner_references` notes a first controller reference without its typed copy.
Seeded random lists of references (controller flags of every kind, valid and invalid fields, several
controllers) get the same causes as the general path (each reference as a read-only mapping)."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from fakeapi.machinery.metavalidation import validate_owner_references

_FIELDS: dict[str, list[Any]] = {
    "apiVersion": ["v1", "apps/v1", "actions.github.com/v1alpha1", "", "apps/", "a/b/c", 3],
    "kind": ["Pod", "EphemeralRunner", "Event", "", None],
    "name": ["a", "b", "", 7],
    "uid": ["u1", "u2", "", None],
    "controller": [True, False, None, 1, 0, "yes", "", True, True],
    "blockOwnerDeletion": [True, False, None],
}


def _ref(rng: random.Random) -> Any:
    if rng.random() < 0.03:
        return "not a mapping"
    out: dict[str, Any] = {}
    for field, values in _FIELDS.items():
        # (mostly valid values, each field sometimes missing)
        if rng.random() < 0.9:
            out[field] = values[0] if rng.random() < 0.5 and field != "controller" else rng.choice(values)
    return out


def test_controller_fast_path_matches_general_path() -> None:
    rng = random.Random(2022)
    controllers = 0
    for _ in range(3000):
        refs = [_ref(rng) for _ in range(rng.randrange(1, 5))]
        general = [MappingProxyType(r) if isinstance(r, dict) else r for r in refs]  # (never the fast path)
        assert validate_owner_references(refs) == validate_owner_references(general), refs
        controllers += any(isinstance(r, dict) and r.get("controller") is True for r in refs)
    assert controllers > 1000
