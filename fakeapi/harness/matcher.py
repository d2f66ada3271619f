"""Partial matching of expectations against objects (pure: no server, no I/O).

The rules are docs/FIXTURES.md "Matching rules":

- maps match partially (keys the expectation does not mention are ignored);
- values compare with Go semantic equality (:func:`fakeapi.codec.semantic.semantic_equal`):
  an absent list or map equals an empty one, an absent scalar equals its zero
  value where the Go field is not a pointer, ``1000m`` equals ``1``;
- lists whose schema has merge keys (``x-kubernetes-list-map-keys`` or the
  patch merge key: containers and env by ``name``, conditions by ``type``)
  match by key in any order, extra actual items allowed; other lists must
  have the same length and order, each element matching partially;
- markers (a map whose keys all start with ``$``): ``$absent``, ``$present``,
  ``$regex``, ``$len``, ``$gte``, ``$lte``, ``$not``, ``$contains``, ``$exact``,
  ``$capture`` and ``$captured`` (see :mod:`fakeapi.harness.captures`).
  ``$exact`` turns partial matching off below it (no extra map keys, no
  extra items in keyed lists; values still compare semantically, and
  markers inside it still apply).

Type knowledge comes from a :class:`Shape`: the kind's OpenAPI schema (for
merge keys) and its Go type model (for pointer-ness and quantities),
navigated along the path. :class:`Shape` itself knows nothing (plain JSON
equality, no merge keys); :func:`kind_shape` builds the real one for a Kind.

Each :class:`Mismatch` carries the JSON path of the value
(``status.conditions[type=Ready].status``), the expected and actual values,
and the fixture file and line of the expectation node (through a locator
function from expectation sub-paths to lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from fakeapi.harness.captures import Captures, capture_marker, uncaptured

JsonPath = tuple[str | int, ...]


class _Absent:
    """The value of a key that is not there."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"

    def __bool__(self) -> bool:
        return False


#: The actual value of a missing key.
ABSENT: Any = _Absent()

MARKERS = ("$absent", "$present", "$regex", "$len", "$gte", "$lte", "$not", "$contains", "$exact", "$capture",
           "$captured")

#: Maps an expectation sub-path to ``(file, line)``.
Locator = Callable[[JsonPath], tuple[str, int | None]]


def _no_location(path: JsonPath) -> tuple[str, int | None]:
    return "", None


def problem(message: str, file: str = "", line: int | None = None, subject: str = "") -> Mismatch:
    """A failure that is only a message (no expected/actual values)."""
    return Mismatch("", None, None, file, line, message, subject, has_values=False)


@dataclass
class Mismatch:
    """One difference between an expectation and the actual state."""

    #: JSON path of the value inside the object (``spec.replicas``), or "" for the whole thing.
    path: str
    expected: Any
    actual: Any
    file: str = ""
    line: int | None = None
    #: What the mismatch is about when it is not a plain value (``expected no item with ...``).
    message: str = ""
    #: The object it concerns (``EphemeralRunnerSet ci/linux``), if any.
    subject: str = ""
    #: False for failures that are only a message (an operation that failed, a violated invariant).
    has_values: bool = True

    @property
    def location(self) -> str:
        """``file:line`` (or the file alone)."""
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}"


def is_marker(value: Any) -> bool:
    """True for a marker map: a non-empty map whose keys all start with ``$``."""
    return type(value) is dict and bool(value) and all(k[:1] == "$" for k in value)


# ------------------------------------------------------------------------------- shapes


def _semantic() -> Callable[..., bool] | None:
    try:
        from fakeapi.codec.semantic import loose_equal, semantic_equal
    except ImportError:  # pragma: no cover - semantic equality not available yet
        return None

    def equal(a: Any, b: Any, t: Any) -> bool:
        return semantic_equal(a, b, t) if t is not None else loose_equal(a, b)

    return equal


def _plain_equal(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return a is b if type(a) is bool and type(b) is bool else False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        return all(_plain_equal(a.get(k, ABSENT), b.get(k, ABSENT)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_plain_equal(x, y) for x, y in zip(a, b))
    if a is ABSENT or a is None:
        return b is ABSENT or b is None or b == [] or b == {}
    if b is ABSENT or b is None:
        return a == [] or a == {}
    return bool(a == b)


class Shape:
    """What the matcher knows about a node's type. This base knows nothing: JSON equality, no merge keys."""

    def child(self, key: str) -> Shape:
        """The shape of a map value or struct field."""
        return self

    def item(self) -> Shape:
        """The shape of a list element."""
        return self

    def list_keys(self) -> list[str]:
        """The merge keys of this list node (empty: an ordered list)."""
        return []

    def go_type(self) -> Any:
        """The Go type model of this node, when known."""
        return None

    def equal(self, expected: Any, actual: Any) -> bool:
        """Go semantic equality of two whole values at this node."""
        eq = _semantic()
        if eq is not None:
            return bool(eq(expected, _strip_absent(actual), self.go_type()))
        return _plain_equal(expected, actual)

    def absent_equals(self, key: str, expected: Any) -> bool:
        """Whether an absent ``key`` of this (map/struct) node equals ``expected`` in Go terms."""
        eq = _semantic()
        if eq is not None:
            return bool(eq({key: expected}, {}, self.go_type()))
        return _plain_equal(expected, ABSENT)


def _strip_absent(v: Any) -> Any:
    return None if v is ABSENT else v


UNTYPED = Shape()


class SchemaShape(Shape):
    """A node of a kind's OpenAPI schema, with the matching node of its Go type model."""

    def __init__(self, schema: dict[str, Any] | None, gotype: Any = None) -> None:
        self.schema = schema
        self.gotype = gotype

    def child(self, key: str) -> Shape:
        """See :meth:`Shape.child`."""
        from fakeapi.machinery import openapi

        return SchemaShape(openapi.child(self.schema, key) if self.schema is not None else None,
                           _go_child(self.gotype, key))

    def item(self) -> Shape:
        """See :meth:`Shape.item`."""
        from fakeapi.machinery import openapi

        return SchemaShape(openapi.items(self.schema) if self.schema is not None else None, _go_elem(self.gotype))

    def list_keys(self) -> list[str]:
        """See :meth:`Shape.list_keys`."""
        if self.schema is None:
            return []
        from fakeapi.machinery import openapi

        return openapi.list_map_keys(self.schema)

    def go_type(self) -> Any:
        """See :meth:`Shape.go_type`."""
        return self.gotype

    def absent_equals(self, key: str, expected: Any) -> bool:
        """See :meth:`Shape.absent_equals`; a key the Go struct does not have compares untyped."""
        t = self.gotype
        if t is not None and getattr(t, "kind", None) == "struct" and key not in t.fields:
            return UNTYPED.absent_equals(key, expected)
        return super().absent_equals(key, expected)


def _go_child(t: Any, key: str) -> Any:
    """The Go type of field/map value ``key`` of type ``t`` (None when unknown)."""
    if t is None:
        return None
    kind = getattr(t, "kind", None)
    if kind == "struct":
        f = t.fields.get(key)
        return f.type if f is not None else None
    if kind == "map":
        return t.elem
    return None


def _go_elem(t: Any) -> Any:
    """The Go type of the elements of slice type ``t`` (None when unknown)."""
    if t is None or getattr(t, "kind", None) != "slice":
        return None
    return t.elem


def kind_shape(kind: Any) -> Shape:
    """The shape of a whole object of a :class:`~fakeapi.registry.kinds.Kind` (UNTYPED for None)."""
    if kind is None:
        return UNTYPED
    return SchemaShape(getattr(kind, "schema", None), getattr(kind, "go_type", None))


# ------------------------------------------------------------------------------- paths


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def join_key(path: str, key: str) -> str:
    """``a.b`` or ``a["x.io/y"]`` for keys that are not plain."""
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f'{path}["{key}"]'


def _label(keys: list[str], item: dict[str, Any]) -> str:
    return "[" + ",".join(f"{k}={_text(item.get(k))}" for k in keys if k in item) + "]"


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None or v is ABSENT:
        return "null"
    return str(v)


# ------------------------------------------------------------------------------- matching


class _Matcher:
    def __init__(self, locate: Locator, subject: str, strict: bool = False,
                 captures: Captures | None = None) -> None:
        self.locate = locate
        self.subject = subject
        #: Inside ``$exact``: no extra keys in maps, no extra items in keyed lists.
        self.strict = strict
        #: Values remembered by ``$capture`` (read by ``$captured``); None: no case to remember them in.
        self.captures = captures
        self.out: list[Mismatch] = []

    def fail(self, jp: str, sp: JsonPath, expected: Any, actual: Any, message: str = "") -> None:
        file, line = self.locate(sp)
        self.out.append(Mismatch(jp, expected, actual, file, line, message, self.subject))

    # -- entry -------------------------------------------------------------------------

    def value(self, exp: Any, act: Any, shape: Shape, jp: str, sp: JsonPath,
              parent: Shape | None = None, key: str | None = None) -> None:
        """Match ``exp`` against ``act`` (ABSENT when missing; ``parent``/``key`` say where it sits)."""
        if type(exp) is dict:
            if exp and all(k[:1] == "$" for k in exp):
                self.markers(exp, act, shape, jp, sp, parent, key)
                return
            self.mapping(exp, act, shape, jp, sp, parent, key)
            return
        if act is ABSENT or act is None:
            if parent is not None and key is not None:
                ok = parent.absent_equals(key, exp)
            else:
                ok = shape.equal(exp, None)
            if not ok:
                self.fail(jp, sp, exp, act)
            return
        if type(exp) is list:
            if type(act) is not list:
                self.fail(jp, sp, exp, act)
                return
            keys = shape.list_keys()
            if keys:
                self.keyed_list(exp, act, shape, keys, jp, sp)
            else:
                self.ordered_list(exp, act, shape, jp, sp)
            return
        if type(act) in (dict, list) or not shape.equal(exp, act):
            self.fail(jp, sp, exp, act)

    def mapping(self, exp: dict[str, Any], act: Any, shape: Shape, jp: str, sp: JsonPath,
                parent: Shape | None, key: str | None) -> None:
        if act is ABSENT or act is None:
            # absent map/struct: equal to {} unless it is a pointer (securityContext: {} vs absent)
            if parent is not None and key is not None and not parent.absent_equals(key, {}):
                self.fail(jp, sp, exp, act)
                return
            act = {}
        elif type(act) is not dict:
            self.fail(jp, sp, exp, act)
            return
        for k, e in exp.items():
            self.value(e, act.get(k, ABSENT), shape.child(k), join_key(jp, k), (*sp, k), shape, k)
        if self.strict:
            for k, a in act.items():
                if k not in exp and not shape.absent_equals(k, a):
                    self.fail(join_key(jp, k), sp, ABSENT, a, "unexpected key")

    def ordered_list(self, exp: list[Any], act: list[Any], shape: Shape, jp: str, sp: JsonPath) -> None:
        if len(exp) != len(act):
            self.fail(jp, sp, exp, act, f"expected {len(exp)} items, got {len(act)}")
            return
        item = shape.item()
        for i, (e, a) in enumerate(zip(exp, act)):
            self.value(e, a, item, f"{jp}[{i}]", (*sp, i))

    def keyed_list(self, exp: list[Any], act: list[Any], shape: Shape, keys: list[str], jp: str,
                   sp: JsonPath) -> None:
        item = shape.item()
        if self.strict and len(exp) != len(act):
            self.fail(jp, sp, exp, act, f"expected {len(exp)} items, got {len(act)}")
            return
        for i, e in enumerate(exp):
            given = [k for k in keys if type(e) is dict and k in e and not is_marker(e[k])]
            if not given:
                # no key to go by: some actual item must match it
                if not any(not self.sub(e, a, item) for a in act):
                    self.fail(f"{jp}[{i}]", (*sp, i), e, act, "no item matches")
                continue
            label = _label(given, e)
            candidates = [a for a in act if type(a) is dict and all(
                k in a and item.child(k).equal(e[k], a[k]) for k in given)]
            if not candidates:
                self.fail(f"{jp}{label}", (*sp, i), e, ABSENT, f"no item with {label[1:-1]}")
                continue
            best = next((a for a in candidates if not self.sub(e, a, item)), candidates[0])
            self.value(e, best, item, f"{jp}{label}", (*sp, i))

    def sub(self, exp: Any, act: Any, shape: Shape, parent: Shape | None = None, key: str | None = None
            ) -> list[Mismatch]:
        """Mismatches of a nested match (not added to this matcher's)."""
        m = _Matcher(self.locate, self.subject, self.strict, self.captures.trial() if self.captures else None)
        m.value(exp, act, shape, "", (), parent, key)
        return m.out

    # -- markers -----------------------------------------------------------------------

    def markers(self, exp: dict[str, Any], act: Any, shape: Shape, jp: str, sp: JsonPath,
                parent: Shape | None, key: str | None) -> None:
        for name, arg in exp.items():
            msp = (*sp, name)
            present = act is not ABSENT and act is not None
            if name in ("$absent", "$present"):
                want_absent = bool(arg) if name == "$absent" else not arg
                if want_absent and present and not _is_zero(act):
                    self.fail(jp, msp, exp, act, "expected absent")
                elif not want_absent and not present:
                    self.fail(jp, msp, exp, act, "expected present")
            elif name == "$regex":
                if not present or isinstance(act, (dict, list)) or not re.search(str(arg), _text(act)):
                    self.fail(jp, msp, exp, act, f"expected a match of /{arg}/")
            elif name == "$len":
                n = len(act) if isinstance(act, (list, dict, str)) else 0 if not present else None
                if n != arg:
                    self.fail(jp, msp, exp, act, f"expected length {arg}, got {'no length' if n is None else n}")
            elif name in ("$gte", "$lte"):
                cmp = _compare(act, arg)
                ok = cmp is not None and (cmp >= 0 if name == "$gte" else cmp <= 0)
                if not ok:
                    self.fail(jp, msp, exp, act, f"expected {'>=' if name == '$gte' else '<='} {_text(arg)}")
            elif name == "$not":
                missing = uncaptured(arg, self.captures)
                if missing:
                    self.fail(jp, msp, exp, act, missing)
                elif not self.sub(arg, act, shape, parent, key):
                    self.fail(jp, msp, exp, act, f"expected anything but {_text(arg) if not isinstance(arg, (dict, list)) else 'that'}")
            elif name == "$contains":
                self.contains(exp, arg, act, shape, jp, msp)
            elif name == "$exact":
                exact = _Matcher(self.locate, self.subject, strict=True, captures=self.captures)
                exact.value(arg, act, shape, jp, msp, parent, key)
                self.out.extend(exact.out)
            elif name in ("$capture", "$captured"):
                message = capture_marker(name, arg, None if not present else act, shape.equal, self.captures)
                if message:
                    self.fail(jp, msp, exp, act, message)
            else:
                raise ValueError(f"unknown marker {name!r}")

    def contains(self, exp: dict[str, Any], arg: Any, act: Any, shape: Shape, jp: str, sp: JsonPath) -> None:
        if isinstance(arg, str):
            if not isinstance(act, str) or arg not in act:
                self.fail(jp, sp, exp, act, f"expected to contain {arg!r}")
            return
        if type(act) is not list:
            if arg and not (act is ABSENT or act is None):
                self.fail(jp, sp, exp, act, "expected a list")
            elif arg:
                self.fail(jp, sp, exp, act, "expected a list containing these items")
            return
        item = shape.item()
        used: set[int] = set()
        for i, e in enumerate(arg):
            hit = next((j for j, a in enumerate(act) if j not in used and not self.sub(e, a, item)), None)
            if hit is None:
                self.fail(f"{jp}", (*sp, i), e, act, f"expected an item matching {_text(e) if not isinstance(e, (dict, list)) else 'this'}")
            else:
                used.add(hit)


def _is_zero(v: Any) -> bool:
    return v is None or v is ABSENT or v is False or v == "" or (type(v) in (int, float) and v == 0) \
        or v == [] or v == {}


def _number(v: Any) -> Fraction | None:
    if type(v) is bool:
        return None
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v)
    if isinstance(v, str):
        try:
            from fakeapi.machinery.quantity import parse_quantity

            return parse_quantity(v)
        except Exception:  # not a quantity
            return None
    return None


def _time(v: Any) -> datetime | None:
    if not isinstance(v, str) or not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]", v):
        return None
    from fakeapi.server.clock import parse_time

    try:
        return parse_time(v)
    except ValueError:
        return None


def _compare(act: Any, ref: Any) -> int | None:
    """-1/0/1 comparing ``act`` with ``ref`` as numbers, quantities or times; None when incomparable."""
    ta, tr = _time(act), _time(ref)
    if ta is not None and tr is not None:
        return (ta > tr) - (ta < tr)
    na, nr = _number(act), _number(ref)
    if na is None or nr is None:
        return None
    return (na > nr) - (na < nr)


# ------------------------------------------------------------------------------- API


def match(expected: Any, actual: Any, *, shape: Shape | None = None, path: str = "",
          locate: Locator | None = None, subject: str = "", captures: Captures | None = None) -> list[Mismatch]:
    """Every mismatch of ``expected`` (partial, with markers) against ``actual`` (ABSENT when missing).

    ``path`` prefixes the reported JSON paths; ``locate`` maps sub-paths of
    ``expected`` to fixture lines; ``subject`` names the object; ``captures``
    holds the values ``$capture`` remembers and ``$captured`` compares with.
    """
    m = _Matcher(locate or _no_location, subject, captures=captures)
    m.value(expected, actual, shape or UNTYPED, path, ())
    return m.out


def matches(expected: Any, actual: Any, shape: Shape | None = None, captures: Captures | None = None) -> bool:
    """True when ``actual`` matches ``expected`` (see :func:`match`); ``captures`` are only read."""
    return not match(expected, actual, shape=shape, captures=captures.trial() if captures else None)


def is_zero(value: Any) -> bool:
    """True for a Go zero value (absent, null, false, 0, "", [] or {})."""
    return _is_zero(value)
