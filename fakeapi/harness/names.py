"""Did-you-mean for names a case looks up: kinds and API versions (in ``given``, creates and targets).

The loader checks what it can know before running (built-in kinds, the
case's own CRDs, the hosted bundles' kinds); :func:`kind_hint` words the
runtime 404 of a write whose kind or API version the server does not serve
(a bare ``the server could not find the requested resource`` otherwise).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def builtin_api_versions() -> dict[str, frozenset[str]]:
    """The API versions each built-in kind is served in (``Deployment -> {apps/v1}``)."""
    from fakeapi.registry.builtin import BUILTINS

    out: dict[str, set[str]] = {}
    for b in BUILTINS:
        out.setdefault(b.kind, set()).add(f"{b.group}/{b.version}" if b.group else b.version)
    return {k: frozenset(v) for k, v in out.items()}


def crd_api_versions(obj: Any) -> tuple[str, frozenset[str]] | None:
    """``(kind, API versions)`` a CustomResourceDefinition manifest serves, or None."""
    if not isinstance(obj, dict) or obj.get("kind") != "CustomResourceDefinition":
        return None
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        return None
    names = spec.get("names") or {}
    kind = names.get("kind") if isinstance(names, dict) else None
    group = spec.get("group")
    versions = [v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("name")]
    if not kind or not group:
        return None
    return str(kind), frozenset(f"{group}/{v}" for v in versions)


def api_version_problem(kind: str, api_version: str, served: dict[str, frozenset[str]]) -> str:
    """A message when ``kind`` is known but not in ``api_version`` (``""`` when fine or unknown)."""
    versions = served.get(kind)
    if not versions or api_version in versions:
        return ""
    listed = " and ".join(f"`{v}`" for v in sorted(versions))
    return f"`{kind}` is served in {listed}, not in `{api_version}`"


def kind_hint(api: Any, kind: str, api_version: str | None) -> str:
    """Why the server has no resource for ``kind`` in ``api_version``, with the nearest names (or "")."""
    if not kind:
        return ""
    if api.kinds.find(kind, api_version) is not None:
        return ""
    from fakeapi.harness.suggest import did_you_mean

    same = [k for k in api.kinds.all() if k.kind == kind]
    if same:
        versions = sorted({k.api_version for k in same})
        return f"`{kind}` is served in {' and '.join(f'`{v}`' for v in versions)}, not in `{api_version}`"
    known = sorted({k.kind for k in api.kinds.all()})
    hint = did_you_mean(kind, known)
    if hint:
        return f"the server serves no kind `{kind}`{hint}"
    return f"the server serves no kind `{kind}` (register its CRD first, in given or a create step)"


__all__ = ["api_version_problem", "builtin_api_versions", "crd_api_versions", "kind_hint"]
