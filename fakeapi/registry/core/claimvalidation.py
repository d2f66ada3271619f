"""What PersistentVolumeClaim validation checks beyond the OpenAPI schema (``pkg/apis/core/validation``).

A claim needs access modes and a storage request (a positive quantity); once created, its spec is
frozen but for the volume name (set once, by the binder) and, for a bound claim, a storage request
that does not shrink.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.metavalidation import forbidden, invalid, not_supported, required
from fakeapi.machinery.quantity import parse_quantity

_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_VOLUME_MODES = ["Block", "Filesystem"]
_FROZEN = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"


def claim_causes(obj: dict[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolumeClaimSpec`` (the rules a claim without a data source meets)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        causes.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    if not spec.get("dataSource") and not spec.get("dataSourceRef"):
        requests = (spec.get("resources") or {}).get("requests") or {}
        storage = requests.get("storage")
        if storage is None:
            causes.append(required("spec.resources[storage]"))
        elif (q := _quantity(storage)) is not None and q <= 0:
            causes.append(invalid("spec.resources[storage]", storage, "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        causes.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return causes


def _quantity(v: Any) -> Fraction | None:
    """The exact value of a quantity, or None when it is not one (the schema and decoder say so)."""
    try:
        return parse_quantity(v)
    except (ValueError, TypeError):
        return None


def claim_update_causes(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolumeClaimUpdate``: the frozen spec, and a storage request that may not shrink."""
    spec, old_spec = dict(obj.get("spec") or {}), dict(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = spec.get("volumeName")  # set once, by the binder
    bound = (obj.get("status") or {}).get("phase") == "Bound"
    new_storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    old_storage = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
    for s in (spec, old_spec):
        s.pop("volumeAttributesClassName", None)
        if bound:
            res = dict(s.get("resources") or {})
            res["requests"] = {**(res.get("requests") or {}), "storage": None}
            s["resources"] = res
    causes: list[Cause] = []
    if {k: v for k, v in spec.items() if v is not None} != {k: v for k, v in old_spec.items() if v is not None}:
        causes.append(forbidden("spec", _FROZEN))
    new_q, old_q = _quantity(new_storage), _quantity(old_storage)
    if new_q is not None and old_q is not None and new_q < old_q:
        causes.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    return causes
