"""The actionable-revision helpers (docs/ARC.md "Revision helpers"), as pure functions.

Everything here works on objects as the controllers read them (JSON dicts
decoded through the Go codec) and never talks to the API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.codec.semantic import semantic_equal

from . import constants as c
from .gotypes import ephemeral_runner_spec_type, resource_meta_type

Obj = dict[str, Any]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_DIGITS = frozenset("0123456789")


def parse_int64(value: object) -> int | None:
    """Go's ``strconv.ParseInt(s, 10, 64)``: optional sign, ASCII decimal digits, int64 range.

    Returns None where Go returns an error (``""``, ``" 3"``, ``"3.0"``, ``"1_0"``, ``"+"``,
    overflow, non-strings). Python's ``int()`` accepts whitespace, underscores and
    non-ASCII digits, so it is only called on a string already checked here.
    """
    if type(value) is str:  # (the annotations repeat a few texts: "0", "1", ...)
        hit = _PARSED.get(value, _UNPARSED)
        if hit is not _UNPARSED:
            return hit
    if not isinstance(value, str) or not value:
        return None
    body = value[1:] if value[0] in "+-" else value
    if not body or not _DIGITS.issuperset(body):
        n: int | None = None
    else:
        n = int(value)
        if n < INT64_MIN or n > INT64_MAX:
            n = None
    if type(value) is str and len(value) <= 24 and len(_PARSED) < _PARSED_MAX:
        _PARSED[value] = n
    return n


#: :func:`parse_int64`'s answers by text (short texts, at most :data:`_PARSED_MAX` of them).
_PARSED: dict[str, int | None] = {}
_PARSED_MAX = 4096
_UNPARSED: Any = object()


#: An absent map, read-only (shared).
_NO_META: Mapping[str, Any] = {}


def parse_revision(value: object) -> int:
    """A runner revision annotation as ARC reads it: the ParseInt value, or 0 when it does not parse."""
    n = parse_int64(value)
    return 0 if n is None else n


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((obj.get("metadata") or {}).get("annotations")) or {}


def runner_revision(runner: Mapping[str, Any]) -> int:
    """The ERS revision a runner was created from (``actions.github.com/actionable-revision``; 0 if absent)."""
    return parse_revision(_annotations(runner).get(c.ANNOTATION_ACTIONABLE_REVISION))


def runner_patch_id(runner: Mapping[str, Any]) -> int | None:
    """The runner's ``actions.github.com/patch-id`` annotation (Go ``strconv.Atoi``), None if it does not parse."""
    return parse_int64(_annotations(runner).get(c.ANNOTATION_PATCH_ID))


def is_deleting(obj: Mapping[str, Any]) -> bool:
    """True when the object has a deletionTimestamp."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def runner_status(runner: Mapping[str, Any]) -> Mapping[str, Any]:
    """The runner's status (empty when absent)."""
    return runner.get("status") or {}


def has_job(runner: Mapping[str, Any]) -> bool:
    """A runner has a job when its ``status.jobId`` is non-empty."""
    return bool(runner_status(runner).get("jobId"))


def is_done(runner: Mapping[str, Any]) -> bool:
    """A runner is done when its phase is Succeeded, Failed or Outdated."""
    return runner_status(runner).get("phase") in c.ER_DONE_PHASES


def runner_id(runner: Mapping[str, Any]) -> int:
    """The runner id the Actions service gave the runner (0 = not registered yet)."""
    v = runner_status(runner).get("runnerId")
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


@dataclass
class Classification:
    """The runners of a set, bucketed against an applied revision (each runner in exactly one bucket)."""

    pending: list[Obj] = field(default_factory=list)
    running: list[Obj] = field(default_factory=list)
    finished: list[Obj] = field(default_factory=list)
    failed: list[Obj] = field(default_factory=list)
    deleting: list[Obj] = field(default_factory=list)
    #: Outdated at or after the applied revision: the verdict is about the current spec.
    outdated: list[Obj] = field(default_factory=list)
    #: Outdated before the applied revision: the verdict is about a replaced spec.
    stale_outdated: list[Obj] = field(default_factory=list)
    #: The largest parseable patch-id annotation over all runners (deleting ones included).
    latest_patch_id: int = 0

    def terminated(self) -> list[Obj]:
        """A new list: finished + failed + outdated + stale outdated (never aliases a bucket)."""
        return terminated(self)

    def scale_total(self) -> int:
        """pending + running + failed."""
        return scale_total(self)


def classify(runners: Iterable[Obj], applied: int) -> Classification:
    """Bucket runners in list order against applied revision ``applied`` (ARC ``newEphemeralRunnersByStates``)."""
    out = Classification()
    # runner_patch_id, is_deleting and runner_status inline (issue 22: called for every runner of
    # every list the set's reconcile makes); the same reads in the same order.
    parsed = _PARSED
    for r in runners:
        m = r.get("metadata") or _NO_META
        raw = (m.get("annotations") or _NO_META).get(c.ANNOTATION_PATCH_ID)
        pid = parsed.get(raw, _UNPARSED) if type(raw) is str else _UNPARSED
        if pid is _UNPARSED:
            pid = parse_int64(raw)
        if pid is not None and pid > out.latest_patch_id:
            out.latest_patch_id = pid
        if m.get("deletionTimestamp"):
            out.deleting.append(r)
            continue
        phase = (r.get("status") or _NO_META).get("phase")
        if phase == c.ER_PHASE_RUNNING:
            out.running.append(r)
        elif phase == c.ER_PHASE_SUCCEEDED:
            out.finished.append(r)
        elif phase == c.ER_PHASE_FAILED:
            out.failed.append(r)
        elif phase == c.ER_PHASE_OUTDATED:
            if runner_revision(r) < applied:
                out.stale_outdated.append(r)
            else:
                out.outdated.append(r)
        else:
            out.pending.append(r)
    return out


def terminated(cls: Classification) -> list[Obj]:
    """A freshly allocated list of finished + failed + outdated + stale outdated runners."""
    out: list[Obj] = []
    out.extend(cls.finished)
    out.extend(cls.failed)
    out.extend(cls.outdated)
    out.extend(cls.stale_outdated)
    return out


def scale_total(cls: Classification) -> int:
    """The runners that count toward ``spec.replicas``: pending + running + failed."""
    return len(cls.pending) + len(cls.running) + len(cls.failed)


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def spec_revision(ers: Mapping[str, Any]) -> int:
    """``spec.actionableRevision`` of an EphemeralRunnerSet (0 when absent)."""
    return _int((ers.get("spec") or {}).get("actionableRevision"))


def applied_revision(ers: Mapping[str, Any]) -> int:
    """``status.appliedActionableRevision`` of an EphemeralRunnerSet (0 when absent)."""
    return _int((ers.get("status") or {}).get("appliedActionableRevision"))


def next_revision(spec: int, applied: int) -> int:
    """The next revision to publish: spec + 1 when spec is ahead of applied, else applied + 1."""
    return spec + 1 if spec > applied else applied + 1


def next_revision_of(ers: Mapping[str, Any] | None) -> int:
    """:func:`next_revision` of an EphemeralRunnerSet (1 when there is none yet)."""
    if ers is None:
        return 1
    return next_revision(spec_revision(ers), applied_revision(ers))


def outdated_for_applied(ers: Mapping[str, Any] | None) -> bool:
    """The teardown guard: ERS phase Outdated and applied revision >= spec revision."""
    if ers is None:
        return False
    phase = (ers.get("status") or {}).get("phase")
    return phase == c.ERS_PHASE_OUTDATED and applied_revision(ers) >= spec_revision(ers)


def same_document(a: Any, b: Any) -> bool:
    """``a`` and ``b`` serialise to the same JSON text: one document, key order and types included.

    Go semantic equality holds between a typed value and itself, so for two values read through
    the Go codec this settles "no drift" without the typed walk (the common answer: the spec a
    controller builds is, most of the time, the one it stored). False when orjson cannot
    serialise a value (then the typed comparison decides).
    """
    try:
        return bool(orjson.dumps(a) == orjson.dumps(b))
    except TypeError:  # (orjson.JSONEncodeError)
        return False


def runner_spec_drift(ers_spec: Mapping[str, Any] | None, built_spec: Mapping[str, Any] | None) -> bool:
    """True when two EphemeralRunnerSpecs differ under Go semantic equality (``apiequality.Semantic``).

    ``env: []`` against no ``env`` is not drift; a changed image, env var, config URL,
    scale set id or a removed container is. Both are value structs in Go, so an
    absent spec equals an empty one.
    """
    a, b = dict(ers_spec or {}), dict(built_spec or {})
    if same_document(a, b):
        return False
    return not semantic_equal(a, b, ephemeral_runner_spec_type())


def metadata_drift(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """True when two ``ephemeralRunnerMetadata`` values (Go ``*ResourceMeta``) differ semantically.

    Absent (nil) differs from ``{}``; ``{}`` equals ``{labels: {}}`` (nil and empty maps are equal).
    """
    if (a is None) != (b is None):
        return True
    if a is None or b is None:
        return False
    return not semantic_equal(dict(a), dict(b), resource_meta_type())
