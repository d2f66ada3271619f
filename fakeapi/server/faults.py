"""Declarative fault rules: errors, controller crashes and stale cache reads.

A rule matches API calls (or calls to a simulated service) by verb, kind,
name, namespace, subresource and actor; lets ``skip`` matching calls through;
then affects ``times`` of them (``None`` = always). The server consults the
rules on every call (errors and crashes); the controller host consults them
on cache reads (``stale``); simulators consult them for their own calls
(``service``/``call``). See docs/FIXTURES.md "Fault rules".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fakeapi.machinery import errors

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class ControllerCrash(Exception):
    """Raised inside a reconcile when a ``crash`` rule fires; the host restarts the controller."""

    def __init__(self, actor: str, when: str, call: str = "") -> None:
        super().__init__(f"{actor} crashed {when} {call}".strip())
        self.actor = actor
        self.when = when
        self.call = call


def _matches(want: str | list[str] | tuple[str, ...] | None, value: str) -> bool:
    if want is None or want == "*":
        return True
    if isinstance(want, (list, tuple, set, frozenset)):
        return value in want or "*" in want
    return want == value


@dataclass
class FaultRule:
    """One fault rule. Every ``on`` key is optional; ``None`` or ``"*"`` match anything."""

    verb: str | list[str] | None = None
    kind: str | list[str] | None = None
    name: str | list[str] | None = None
    namespace: str | list[str] | None = None
    subresource: str | list[str] | None = None
    actor: str | list[str] | None = None
    #: For simulated services: the service and the call (``{service: actions, call: RemoveRunner}``).
    service: str | None = None
    call: str | None = None
    skip: int = 0
    #: How many matching calls to affect after ``skip``; ``None`` = always.
    times: int | None = 1
    #: A reason (``"Conflict"``) or a partial/complete Status body (``{code, reason, message}``).
    error: str | dict[str, Any] | None = None
    #: ``"before"`` or ``"after"``: the calling controller crashes around the call.
    crash: str | None = None
    #: Cache reads serve the object as it was before its last change.
    stale: bool = False
    seen: int = field(default=0, compare=False)
    fired: int = field(default=0, compare=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FaultRule:
        """Build a rule from the fixture form ``{on: {...}, skip, times, error|crash|stale}``."""
        on = dict(d.get("on") or {})
        times = d.get("times", 1)
        return cls(
            verb=on.get("verb"),
            kind=on.get("kind"),
            name=on.get("name"),
            namespace=on.get("namespace"),
            subresource=on.get("subresource"),
            actor=on.get("actor"),
            service=on.get("service"),
            call=on.get("call"),
            skip=int(d.get("skip", 0)),
            times=None if times in ("always", None) else int(times),
            error=d.get("error"),
            crash=d.get("crash"),
            stale=bool(d.get("stale", False)),
        )

    @property
    def exhausted(self) -> bool:
        """True when the rule has fired ``times`` times."""
        return self.times is not None and self.fired >= self.times

    def matches_call(self, verb: str, kind: str, namespace: str, name: str, subresource: str, actor: str) -> bool:
        """Whether an API call matches the ``on`` keys (not counting skip/times)."""
        if self.service is not None or self.call is not None:
            return False
        verb_ok = _matches(self.verb, verb) or (self.verb == "write" and verb in WRITE_VERBS)
        return (
            verb_ok
            and _matches(self.kind, kind)
            and _matches(self.name, name)
            and _matches(self.namespace, namespace)
            and _matches(self.subresource, subresource or "")
            and _matches(self.actor, actor)
        )

    def take(self) -> bool:
        """Count one matching call; True when this one is affected."""
        if self.exhausted:
            return False
        self.seen += 1
        if self.seen <= self.skip:
            return False
        self.fired += 1
        return True

    def make_error(self, group: str = "", resource: str = "", name: str = "") -> errors.ApiError:
        """The ApiError this rule injects."""
        e = self.error
        if isinstance(e, dict):
            reason = str(e.get("reason", ""))
            if "message" in e or "code" in e:
                body = errors.status_body(
                    int(e.get("code", errors.REASON_CODES.get(reason, 500))),
                    reason,
                    str(e.get("message", errors.REASON_MESSAGES.get(reason, f"injected {reason} fault"))),
                    e.get("details"),
                )
                return errors.ApiError(body)
            return errors.from_reason(reason, group=group, resource=resource, name=name)
        return errors.from_reason(str(e or "InternalError"), group=group, resource=resource, name=name)


class FaultSet:
    """The active fault rules of one server."""

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []

    def add(self, rule: FaultRule | dict[str, Any]) -> FaultRule:
        """Add a rule (a FaultRule or its fixture dict form); active from now on."""
        r = rule if isinstance(rule, FaultRule) else FaultRule.from_dict(rule)
        self.rules.append(r)
        return r

    def clear(self) -> None:
        """Remove every rule."""
        self.rules.clear()

    def __bool__(self) -> bool:
        return bool(self.rules)

    def _first(self, rules: Iterable[FaultRule]) -> FaultRule | None:
        for r in rules:
            if r.take():
                return r
        return None

    def for_call(self, verb: str, kind: str, namespace: str, name: str, subresource: str, actor: str) -> FaultRule | None:
        """The error or crash rule affecting this API call, if any (counts the call)."""
        if not self.rules:
            return None
        return self._first(
            r for r in self.rules
            if not r.stale and not r.exhausted and r.matches_call(verb, kind, namespace, name, subresource, actor)
        )

    def stale_read(self, verb: str, kind: str, namespace: str, name: str, actor: str) -> FaultRule | None:
        """The ``stale`` rule affecting this cache read, if any (counts the read)."""
        if not self.rules:
            return None
        return self._first(
            r for r in self.rules
            if r.stale and not r.exhausted and r.matches_call(verb, kind, namespace, name, "", actor)
        )

    def for_service(self, service: str, call: str, actor: str = "") -> FaultRule | None:
        """The rule affecting a call to a simulated service, if any (counts the call)."""
        if not self.rules:
            return None
        return self._first(
            r for r in self.rules
            if r.service is not None and not r.exhausted and _matches(r.service, service)
            and _matches(r.call, call) and (r.actor is None or _matches(r.actor, actor))
        )
