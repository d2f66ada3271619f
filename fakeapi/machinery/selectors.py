"""Label selectors and field selectors, as kube-apiserver parses and matches them.

- :func:`parse_label_selector`: the string grammar of
  ``k8s.io/apimachinery/pkg/labels/selector.go`` (lexer and parser ported, so
  malformed selectors fail with Go's exact messages).
- :func:`selector_from_object`: ``metav1.LabelSelector`` (``LabelSelectorAsSelector``).
- :func:`parse_field_selector`: ``k8s.io/apimachinery/pkg/fields/selector.go``.

Parsed selectors are immutable and cached: parsing the same text twice is a
dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fakeapi.machinery.metavalidation import (
    bad_value,
    go_json,
    go_quote,
    is_qualified_name,
    is_valid_label_value,
)

__all__ = [
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOT_EQUALS",
    "NOT_IN",
    "FieldSelector",
    "FieldTerm",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "field_value",
    "parse_field_selector",
    "parse_label_selector",
    "selector_from_map",
    "selector_from_object",
]


class SelectorError(ValueError):
    """A malformed selector; ``str(err)`` is kube-apiserver's message (answered with 400)."""

    @property
    def message(self) -> str:
        """The message text."""
        return str(self)


# selection.Operator values
DOES_NOT_EXIST = "!"
EQUALS = "="
DOUBLE_EQUALS = "=="
IN = "in"
NOT_EQUALS = "!="
NOT_IN = "notin"
EXISTS = "exists"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)
_INDEXABLE = frozenset({EQUALS, DOUBLE_EQUALS, IN})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: optional sign, ASCII digits, in range."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not body.isascii() or not body.isdigit():
        return None
    v = int(s)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


# --- label selectors ---------------------------------------------------------------------


@dataclass(frozen=True)
class Requirement:
    """One term of a label selector: ``key``, ``operator`` (a selection.Operator) and ``values``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    _set: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    _match: Callable[[Mapping[str, str]], bool] = field(default=bool, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_set", frozenset(self.values))
        object.__setattr__(self, "_match", _compile(self.key, self.operator, self._set, self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``Requirement.Matches``."""
        return self._match(labels)

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({vals})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{sym}{vals}"


def _compile(
    key: str, op: str, allowed: frozenset[str], values: tuple[str, ...]
) -> Callable[[Mapping[str, str]], bool]:
    """A matcher closure for one requirement (precompiled once per parsed selector)."""
    if op in (EQUALS, DOUBLE_EQUALS, IN):
        if len(allowed) == 1:
            (only,) = allowed
            return lambda labels: labels.get(key) == only
        return lambda labels: (v := labels.get(key)) is not None and v in allowed
    if op in (NOT_EQUALS, NOT_IN):
        return lambda labels: (v := labels.get(key)) is None or v not in allowed
    if op == EXISTS:
        return lambda labels: key in labels
    if op == DOES_NOT_EXIST:
        return lambda labels: key not in labels
    if op in (GREATER_THAN, LESS_THAN) and len(values) == 1:
        want = _parse_int64(values[0])
        if want is None:
            return lambda labels: False
        greater = op == GREATER_THAN

        def compare(labels: Mapping[str, str]) -> bool:
            v = labels.get(key)
            have = None if v is None else _parse_int64(v)
            if have is None:
                return False
            return have > want if greater else have < want

        return compare
    return lambda labels: False


class LabelSelector:
    """A parsed label selector (immutable): ``requirements`` ANDed; ``empty`` / ``nothing`` flags."""

    __slots__ = ("_empty", "_matchers", "_nothing", "_reqs", "_str")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        # sort.Sort(ByKey): stable here, so equal keys keep their parse order
        reqs: tuple[Requirement, ...] = () if nothing else tuple(requirements)
        if len(reqs) > 1:
            reqs = tuple(sorted(reqs, key=_requirement_key))
        self._reqs = reqs
        self._nothing = nothing
        self._empty = not nothing and not reqs
        #: The selector's text, made when first read (a write's validation never reads it).
        self._str: str | None = "" if nothing or not reqs else None
        self._matchers = tuple(r._match for r in reqs)

    def _text(self) -> str:
        text = self._str
        if text is None:
            text = self._str = ",".join([str(r) for r in self._reqs])
        return text

    @property
    def requirements(self) -> list[Requirement]:
        """The requirements, sorted by key (empty for ``nothing``)."""
        return list(self._reqs)

    @property
    def empty(self) -> bool:
        """True when the selector selects everything (``Selector.Empty()``)."""
        return self._empty

    @property
    def nothing(self) -> bool:
        """True for ``labels.Nothing()`` (a nil ``metav1.LabelSelector``): selects nothing."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """True when every requirement matches ``labels`` (None = no labels)."""
        if self._nothing:
            return False
        if labels is None:
            labels = _NO_LABELS
        for m in self._matchers:  # noqa: SIM110 (hot path: a loop beats all() over a generator)
            if not m(labels):
                return False
        return True

    def index_terms(self) -> list[tuple[str, frozenset[str]]]:
        """(key, allowed values) pairs every match must satisfy (from ``=``, ``==``, ``in``).

        A store can intersect its label index over these instead of scanning;
        candidates must still be checked with :meth:`matches`.
        """
        return [(r.key, r._set) for r in self._reqs if r.operator in _INDEXABLE]

    def requires_exact_match(self, key: str) -> str | None:
        """``RequiresExactMatch``: the single value the first requirement on ``key`` demands."""
        for r in self._reqs:
            if r.key == key:
                if r.operator in _INDEXABLE and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector(<nothing>)"
        return f"LabelSelector({self._text()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._nothing == other._nothing and self._text() == other._text()

    def __hash__(self) -> int:
        return hash((self._nothing, self._text()))


_NO_LABELS: Mapping[str, str] = {}
EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


# Go field.Error rendering for NewRequirement's aggregate.
def _field_err(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {bad_value(value)}: {detail}"


def _aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message, or ``[a, b]`` (deduplicated)."""
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def _requirement_key(r: Requirement) -> str:
    return r.key


def _new_requirement(key: str, op: str, values: list[str] | None, path: str | None = None) -> Requirement:
    """``labels.NewRequirement``: validates, raises SelectorError with the aggregated field errors.

    ``values`` None is Go's nil slice (rendered ``null`` in errors).
    """
    if op == EQUALS and values is not None and len(values) == 1 and not is_qualified_name(key) and (
            not is_valid_label_value(values[0])):
        return Requirement(key, op, (values[0],))  # (a valid term: no error to gather)
    errs: list[str] = []
    vals = values or []
    key_path = (path + ".key") if path else "key"
    values_path = (path + ".values") if path else "values"
    kerrs = is_qualified_name(key)
    if kerrs:
        errs.append(_field_err(key_path, key, "; ".join(kerrs)))
    if op in (IN, NOT_IN):
        if not vals:
            errs.append(f"{values_path}: Invalid value: {go_json(values)}: for 'in', 'notin' operators, values set can't be empty")
    elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(f"{values_path}: Invalid value: {go_json(values)}: exact-match compatibility requires one single value")
    elif op in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(
                f"{values_path}: Invalid value: {go_json(values)}: values set must be empty for exists and does not exist"
            )
    elif op in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(
                f"{values_path}: Invalid value: {go_json(values)}: for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errs.append(_field_err(f"{values_path}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        supported = ", ".join(go_quote(o) for o in _VALID_OPERATORS)
        op_path = (path + ".operator") if path else "operator"
        errs.append(f"{op_path}: Unsupported value: {go_quote(op)}: supported values: {supported}")
    for i, v in enumerate(vals):
        verrs = is_valid_label_value(v)
        if verrs:
            errs.append(_field_err(f"{values_path}[{i}][{key}]", v, "; ".join(verrs)))
    if errs:
        raise SelectorError(_aggregate(errs))
    return Requirement(key, op, tuple(vals))


# Lexer tokens (labels/selector.go)
_ERROR, _EOS, _CLOSED_PAR, _COMMA, _DOES_NOT_EXIST, _DOUBLE_EQUALS, _EQUALS, _GT, _IDENT, _IN, _LT, _NEQ, _NOT_IN, _OPEN_PAR = range(
    14
)
_STRING2TOKEN = {
    ")": _CLOSED_PAR,
    ",": _COMMA,
    "!": _DOES_NOT_EXIST,
    "==": _DOUBLE_EQUALS,
    "=": _EQUALS,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOT_IN,
    "(": _OPEN_PAR,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(s: str) -> list[tuple[int, str]]:
    """Tokenize like ``Lexer.Lex`` until end of string (a NUL reads as end, as in Go)."""
    items: list[tuple[int, str]] = []
    n = len(s)
    pos = 0

    def read() -> str:
        nonlocal pos
        if pos < n:
            ch = s[pos]
            pos += 1
            return "" if ch == "\x00" else ch
        return ""

    while True:
        ch = read()
        while ch in _WHITESPACE:
            ch = read()
        if ch == "":
            items.append((_EOS, ""))
            return items
        if ch in _SPECIAL:
            buf = ch
            last: tuple[int, str] | None = None
            tok = _STRING2TOKEN.get(buf)
            if tok is not None:
                last = (tok, buf)
            while True:
                c = read()
                if c == "":
                    break
                if c in _SPECIAL:
                    buf += c
                    tok = _STRING2TOKEN.get(buf)
                    if tok is not None:
                        last = (tok, buf)
                    elif last is not None:
                        pos -= 1
                        break
                else:
                    pos -= 1
                    break
            items.append(last if last is not None else (_ERROR, f"error expected: keyword found '{buf}'"))
        else:
            buf = ch
            while True:
                c = read()
                if c == "":
                    break
                if c in _SPECIAL or c in _WHITESPACE:
                    pos -= 1
                    break
                buf += c
            items.append((_STRING2TOKEN.get(buf, _IDENT), buf))


class _Parser:
    __slots__ = ("items", "pos")

    def __init__(self, items: list[tuple[int, str]]) -> None:
        self.items = items
        self.pos = 0

    def lookahead(self, values_ctx: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values_ctx and tok in (_IN, _NOT_IN):
            tok = _IDENT
        return tok, lit

    def consume(self, values_ctx: bool) -> tuple[int, str]:
        tok, lit = self.lookahead(values_ctx)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_IDENT, _DOES_NOT_EXIST):
                try:
                    reqs.append(self.parse_requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, lit = self.consume(True)
                if t == _EOS:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_IDENT, _DOES_NOT_EXIST):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return _new_requirement(key, op, [])
        op = self.parse_operator()
        if op in (IN, NOT_IN):
            values = self.parse_values()
        else:
            values = self.parse_exact_value()
        return _new_requirement(key, op, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(True)
        if tok == _DOES_NOT_EXIST:
            op = DOES_NOT_EXIST
            tok, lit = self.consume(True)
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        errs = is_qualified_name(lit)
        if errs:
            raise SelectorError(_field_err("<nil>", lit, "; ".join(errs)))
        t, _ = self.lookahead(True)
        if t in (_EOS, _COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(False)
        op = {
            _IN: IN,
            _EQUALS: EQUALS,
            _DOUBLE_EQUALS: DOUBLE_EQUALS,
            _GT: GREATER_THAN,
            _LT: LESS_THAN,
            _NOT_IN: NOT_IN,
            _NEQ: NOT_EQUALS,
        }.get(tok)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return op

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != _OPEN_PAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_IDENT, _COMMA):
            s = self.parse_identifiers_list()
            tok, _ = self.consume(True)
            if tok != _CLOSED_PAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CLOSED_PAR:
            self.consume(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _IDENT:
                s.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSED_PAR:
                    return s
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.add("")
                tok2, _ = self.lookahead(True)
                if tok2 == _CLOSED_PAR:
                    s.add("")
                    return s
                if tok2 == _COMMA:
                    self.consume(True)
                    s.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(True)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok == _IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=2048)
def _parse_label_selector_cached(text: str) -> LabelSelector | str:
    try:
        return LabelSelector(_Parser(_lex(text)).parse())
    except SelectorError as e:
        return str(e)


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` string (``labels.Parse``); "" selects everything.

    Raises SelectorError with Go's message, e.g. for ``env in prod``:
    ``unable to parse requirement: found 'prod' expected: '('``.
    """
    got = _parse_label_selector_cached(text)
    if isinstance(got, str):
        raise SelectorError(got)
    return got


_SELECTOR_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def selector_from_object(sel: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None selects nothing, {} selects everything.

    Raises SelectorError with Go's messages for a bad operator, key or value.
    """
    if sel is None:
        return NOTHING
    match_labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    if not match_labels and not exprs:
        return EVERYTHING
    reqs: list[Requirement] = []
    for k, v in match_labels.items():
        reqs.append(_new_requirement(k, EQUALS, [v if isinstance(v, str) else ""]))
    for expr in exprs:
        expr = expr if isinstance(expr, Mapping) else {}
        op_name = expr.get("operator") or ""
        op = _SELECTOR_OPS.get(op_name)
        if op is None:
            raise SelectorError(f"{go_quote(str(op_name))} is not a valid pod selector operator")
        values = [v if isinstance(v, str) else "" for v in (expr.get("values") or [])]
        reqs.append(_new_requirement(expr.get("key") or "", op, values or None))  # Go: append(nil, ...)
    return LabelSelector(reqs)


def selector_from_map(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromSet``: one equality term per entry (not validated); empty selects everything."""
    if not labels:
        return EVERYTHING
    return LabelSelector(Requirement(k, EQUALS, (v,)) for k, v in labels.items())


# --- field selectors ---------------------------------------------------------------------


@dataclass(frozen=True)
class FieldTerm:
    """One term of a field selector: ``field``, ``operator`` (``=``, ``==`` or ``!=``) and ``value``."""

    field: str
    operator: str
    value: str

    def matches(self, get: Callable[[str], str]) -> bool:
        """``hasTerm``/``notHasTerm`` Matches."""
        eq = get(self.field) == self.value
        return not eq if self.operator == NOT_EQUALS else eq

    def __str__(self) -> str:
        op = "!=" if self.operator == NOT_EQUALS else "="
        return f"{self.field}{op}{escape_field_value(self.value)}"


class FieldSelector:
    """A parsed field selector (immutable): ``terms`` ANDed."""

    __slots__ = ("_fields", "_str", "_terms")

    def __init__(self, terms: Iterable[FieldTerm] = ()) -> None:
        self._terms = tuple(terms)
        self._fields = frozenset(t.field for t in self._terms)
        self._str = ",".join(str(t) for t in self._terms)

    @property
    def terms(self) -> list[FieldTerm]:
        """The terms, in Go's order (sorted by their source text)."""
        return list(self._terms)

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self._terms

    def fields(self) -> set[str]:
        """The field names used (the server checks them against the kind's supported fields)."""
        return set(self._fields)

    def matches(self, get: Callable[[str], str]) -> bool:
        """True when every term matches; ``get(field)`` returns the field's value ("" when missing)."""
        return all(t.matches(get) for t in self._terms)

    def exact(self, field: str) -> str | None:
        """``RequiresExactMatch``: the value of the first ``=``/``==`` term on ``field``, or None."""
        for t in self._terms:
            if t.field == field and t.operator != NOT_EQUALS:
                return t.value
        return None

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return f"FieldSelector({self._str!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._str == other._str

    def __hash__(self) -> int:
        return hash(self._str)


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(s: str) -> str:
    """``fields.UnescapeValue``."""
    if "\\" not in s and "," not in s and "=" not in s:
        return s
    out: list[str] = []
    in_slash = False
    for c in s:
        if in_slash:
            if c in "\\,=":
                out.append(c)
            else:
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            in_slash = False
            continue
        if c == "\\":
            in_slash = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(s: str) -> list[str]:
    """``splitTerms``: split on commas not escaped by a backslash."""
    if not s:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(s):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(s[start:i])
            start = i + 1
    terms.append(s[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """``splitTerm``: the first ``!=``, ``==`` or ``=`` splits (no escaping in the field)."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


@lru_cache(maxsize=2048)
def _parse_field_selector_cached(text: str) -> FieldSelector | str:
    terms: list[FieldTerm] = []
    try:
        for part in sorted(_split_terms(text)):
            if part == "":
                continue
            split = _split_term(part)
            if split is None:
                return f"invalid selector: '{text}'; can't understand '{part}'"
            lhs, op, rhs = split
            terms.append(FieldTerm(lhs, op, _unescape_field_value(rhs)))
    except SelectorError as e:
        return str(e)
    return FieldSelector(terms)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` string (``fields.ParseSelector``); "" selects everything.

    Field names are not checked here: the server answers an unsupported one with
    ``field label not supported: <field>``.
    """
    got = _parse_field_selector_cached(text)
    if isinstance(got, str):
        raise SelectorError(got)
    return got


_MISSING = object()


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The value of a dotted field path as a field selector sees it (``fmt.Sprint``).

    ``""`` when missing; ``true``/``false``; integers as digits; floats as Go
    prints them; ``<nil>`` for an explicit null. A leading ``.`` (a
    selectableFields jsonPath) is accepted.
    """
    cur: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part, _MISSING)
        if cur is _MISSING:
            return ""
    return _go_sprint(cur)


def _go_sprint(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "<nil>"
    if isinstance(v, (int, float)):
        return bad_value(v)
    if isinstance(v, Mapping):
        return "map[" + " ".join(f"{k}:{_go_sprint(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_sprint(x) for x in v) + "]"
    return str(v)
