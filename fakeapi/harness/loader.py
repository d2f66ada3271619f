"""Loading fixture files: YAML with positions, validated against the closed format schema.

A fixture file holds one case per YAML document. :func:`load_file` and
:func:`load_text` parse it keeping the line and column of every node (a
:class:`SourceMap` per case, keyed by JSON path), validate each case against
the shipped JSON Schema (``format.schema.json``) and then against what only
the case can tell (its bundles' operations and invariants, the kinds its
targets name, unique case names, well-formed markers). Every problem found
is reported at once in a :class:`LoadError` naming file, line, what is wrong
and, for a misspelt key, the nearest valid one (``did you mean `expect`?``).

The YAML dialect is YAML 1.2's core schema, as Kubernetes users expect:
only ``true``/``false`` are booleans (so ``on:`` in a fault rule is a key,
not ``True``), timestamps stay strings, and duplicate keys are errors.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from fakeapi.harness import formatschema as fs
from fakeapi.harness.casechecks import (  # (JsonPath, dotted: re-exported, they lived here)
    _TYPE_WORDS,
    JsonPath,
    _schema_problems,
    _type_of,
    _validators,
    check_case,
    dotted,
)
from fakeapi.harness.suggest import did_you_mean  # noqa: F401 (re-exported: it lived here)
from fakeapi.machinery import boundedyaml

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FixtureYamlLoader(_BaseLoader):
    """PyYAML loader with YAML 1.2 core scalar resolution (no yes/no/on/off booleans, no timestamps)."""

    yaml_implicit_resolvers: dict[Any, Any] = {}


def _resolver(tag: str, regexp: str, first: str) -> None:
    FixtureYamlLoader.add_implicit_resolver(tag, re.compile(regexp, re.X), list(first))


_resolver("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
_resolver("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789")
_resolver("tag:yaml.org,2002:float", r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$", "-+0123456789.")
FixtureYamlLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"),
                                        ["~", "n", "N", ""])
FixtureYamlLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])

_STR = "tag:yaml.org,2002:str"


def _fast_resolve(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
    """``Resolver.resolve`` without path resolvers, memoized for plain scalars."""
    if kind is ScalarNode:
        if implicit[0]:
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = _resolve_plain(value)
                if len(_RESOLVED) < 100_000:
                    _RESOLVED[value] = tag
            return tag
        return _STR
    return _SEQ if kind is SequenceNode else _MAP


def _resolve_plain(value: str) -> str:
    for tag, regexp in FixtureYamlLoader.yaml_implicit_resolvers.get(value[:1], ()):
        if regexp.match(value):
            return str(tag)
    return _STR


_RESOLVED: dict[str, str] = {}
FixtureYamlLoader.resolve = _fast_resolve
FixtureYamlLoader.descend_resolver = lambda self, parent, index: None
FixtureYamlLoader.ascend_resolver = lambda self: None
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


# ---------------------------------------------------------------------------- positions


@dataclass(frozen=True)
class Pos:
    """A position in a file: 1-based line and column."""

    line: int
    column: int


@dataclass
class SourceMap:
    """Where each node of one case came from: JSON path -> (line, column) of its value (and of its key)."""

    file: str
    lines: list[str] = field(default_factory=list, repr=False)
    values: dict[JsonPath, tuple[int, int]] = field(default_factory=dict, repr=False)
    keys: dict[JsonPath, tuple[int, int]] = field(default_factory=dict, repr=False)

    def pos(self, path: Iterable[str | int], *, key: bool = False) -> Pos | None:
        """The position of ``path`` (its key when ``key``), else of its nearest located ancestor."""
        p = tuple(path)
        while True:
            if key and p in self.keys:
                return Pos(*self.keys[p])
            if p in self.values:
                return Pos(*self.values[p])
            if not p:
                return None
            p = p[:-1]
            key = False

    def line(self, path: Iterable[str | int], *, key: bool = False) -> int | None:
        """The 1-based line of ``path`` (see :meth:`pos`)."""
        pos = self.pos(path, key=key)
        return pos.line if pos else None

    def excerpt(self, pos: Pos) -> str:
        """The source line at ``pos`` with a caret under the column."""
        if not (1 <= pos.line <= len(self.lines)):
            return ""
        text = self.lines[pos.line - 1].rstrip("\n")
        gutter = f"{pos.line:>6} | "
        return f"{gutter}{text}\n{' ' * (len(gutter) - 2)}| {' ' * (pos.column - 1)}^"


# ---------------------------------------------------------------------------- problems


@dataclass
class Problem:
    """One thing wrong with a fixture: where, and what."""

    file: str
    line: int | None
    column: int | None
    message: str
    excerpt: str = ""

    def render(self, *, excerpt: bool = True) -> str:
        """``file:line:col: message`` and, optionally, the source line."""
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: {self.message}"
        if excerpt and self.excerpt:
            text += "\n" + self.excerpt
        return text


class LoadError(Exception):
    """A fixture file that cannot be used; carries every problem found, in file order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.column or 0))
        super().__init__(self.render())

    def render(self, *, excerpt: bool = True, limit: int = 30) -> str:
        """Every problem, one block each."""
        shown = self.problems[:limit]
        text = "\n".join(p.render(excerpt=excerpt) for p in shown)
        if len(self.problems) > limit:
            text += f"\n... and {len(self.problems) - limit} more problems"
        return text


@dataclass
class Step:
    """One step of a case."""

    index: int
    name: str
    do: list[dict[str, Any]]
    settle: Any
    expect: list[dict[str, Any]]

    @property
    def title(self) -> str:
        """``step 2 (name)`` for reports."""
        return f"step {self.index + 1}" + (f" ({self.name})" if self.name else "")


@dataclass
class Case:
    """One case: one YAML document of a fixture file, validated."""

    name: str
    file: str
    index: int
    line: int
    data: dict[str, Any] = field(repr=False)
    source: SourceMap = field(repr=False)
    digest: str = ""
    path: Path | None = None
    #: Lines (0-based, inclusive) of the top-level ``expect`` key and its value, for recording.
    expect_lines: tuple[int, int] | None = None
    #: Last line (0-based) with content in this document.
    last_line: int = 0
    #: The document is written in flow style (``{name: ..., ...}``).
    flow: bool = False

    @property
    def description(self) -> str:
        """The free-text description."""
        return str(self.data.get("description") or "")

    @property
    def tags(self) -> list[str]:
        """Tags (pytest markers)."""
        return list(self.data.get("tags") or [])

    @property
    def bundles(self) -> list[str]:
        """Names of the bundles to host."""
        return list(self.data.get("bundles") or [])

    @property
    def clock(self) -> str | None:
        """Start of virtual time, or None for the default."""
        c = self.data.get("clock")
        return str(c) if c is not None else None

    @property
    def seed(self) -> int:
        """The seed of generated names and tie-breaks."""
        return int(self.data.get("seed") or 0)

    @property
    def services(self) -> dict[str, Any]:
        """Initial settings of each bundle's simulators."""
        return dict(self.data.get("services") or {})

    @property
    def given(self) -> list[dict[str, Any]]:
        """Objects stored before step 1."""
        return list(self.data.get("given") or [])

    @property
    def invariants(self) -> list[str]:
        """Names of the invariants checked after every reconcile."""
        return list(self.data.get("invariants") or [])

    @property
    def steps(self) -> list[Step]:
        """The steps, in order."""
        return [
            Step(i, str(s.get("name") or ""), list(s.get("do") or []), s.get("settle", True), list(s.get("expect") or []))
            for i, s in enumerate(self.data.get("steps") or [])
        ]

    @property
    def expect(self) -> list[dict[str, Any]]:
        """The final expectations."""
        return list(self.data.get("expect") or [])

    @property
    def robustness(self) -> dict[str, bool]:
        """Robustness settings (``crash_after_each_write``, ``conflict_on_each_write``)."""
        return dict(self.data.get("robustness") or {})

    def line_of(self, path: Iterable[str | int], *, key: bool = False) -> int | None:
        """The line of a node of this case."""
        return self.source.line(path, key=key)

    @property
    def location(self) -> str:
        """``file:line`` of the case."""
        return f"{self.file}:{self.line}"


# ---------------------------------------------------------------------------- YAML to values


class _YamlProblem(Exception):
    def __init__(self, node: Node | None, message: str, mark: Any = None) -> None:
        super().__init__(message)
        self.mark = mark if mark is not None else (node.start_mark if node is not None else None)
        self.message = message


def _pos(mark: Any) -> Pos:
    return Pos(mark.line + 1, mark.column + 1)


def _scalar(node: ScalarNode) -> Any:
    tag, v = node.tag, node.value
    if tag == _STR:
        return v
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return v.lower() == "true"
    if tag == _INT:
        s = v.replace("_", "")
        if s.startswith("0o"):
            return int(s[2:], 8)
        if s.startswith("0x"):
            return int(s[2:], 16)
        return int(s)
    if tag == _FLOAT:
        return float(v)
    raise _YamlProblem(node, f"unsupported YAML tag {tag!r} (fixtures are plain JSON-like YAML)")


def _end_line(node: Node) -> int:
    """The last line (0-based) a node's own text reaches (block scalars end before the next line)."""
    m = node.end_mark
    return m.line - 1 if m.column == 0 and m.line > node.start_mark.line else int(m.line)


def _last_line(node: Node) -> int:
    """The last line (0-based) with content of a node: follows the last child down."""
    last = node.start_mark.line
    while True:
        if isinstance(node, ScalarNode) or getattr(node, "flow_style", False) or not node.value:
            return max(last, _end_line(node))
        item = node.value[-1]
        if isinstance(item, tuple):
            last = max(last, _end_line(item[0]))
            node = item[1]
        else:
            node = item


class _Builder:
    """Builds JSON values from a composed YAML node, recording every node's position.

    :meth:`build_tree` builds a node graph the caller knows is a tree with no ``<<`` merge key.
    """

    def __init__(self, sm: SourceMap) -> None:
        self.values = sm.values
        self.keys = sm.keys
        self.active: set[int] = set()

    def build_tree(self, node: Node, path: JsonPath) -> Any:
        """:meth:`build` of a tree with no merge keys (no alias, no ``<<`` in its text): the same values and
        positions, without the recursion guard an alias needs and the merge expansion (issue 22: building
        was a third of loading a fixture file). tests/test_harness_loader_fast.py compares the two."""
        m = node.start_mark
        self.values[path] = (m.line + 1, m.column + 1)
        cls = type(node)
        if cls is ScalarNode:
            return _scalar(node)  # type: ignore[arg-type]
        if cls is SequenceNode:
            if node.tag != _SEQ:
                raise _YamlProblem(node, f"unsupported YAML tag {node.tag!r}")
            build = self.build_tree
            return [build(item, (*path, i)) for i, item in enumerate(node.value)]
        if cls is MappingNode:
            if node.tag != _MAP:
                raise _YamlProblem(node, f"unsupported YAML tag {node.tag!r}")
            out: dict[str, Any] = {}
            own: dict[str, Node] = {}
            keys = self.keys
            build = self.build_tree
            for k, v in node.value:
                if type(k) is not ScalarNode:
                    raise _YamlProblem(k, "a mapping key must be a plain scalar")
                key = k.value if k.tag == _STR else _key_text(_scalar(k))
                if key in own:
                    first = own[key].start_mark.line + 1
                    raise _YamlProblem(k, f"duplicate key `{key}` (first at line {first})")
                own[key] = k
                sub = (*path, key)
                m = k.start_mark
                keys[sub] = (m.line + 1, m.column + 1)
                out[key] = build(v, sub)
            return out
        raise _YamlProblem(node, "unsupported YAML node")

    def build(self, node: Node, path: JsonPath) -> Any:
        m = node.start_mark
        self.values[path] = (m.line + 1, m.column + 1)
        cls = type(node)
        if cls is ScalarNode:
            return _scalar(node)  # type: ignore[arg-type]
        nid = id(node)
        if nid in self.active:
            raise _YamlProblem(node, "recursive YAML alias")
        self.active.add(nid)
        try:
            if cls is SequenceNode:
                if node.tag != _SEQ:
                    raise _YamlProblem(node, f"unsupported YAML tag {node.tag!r}")
                build = self.build
                return [build(item, (*path, i)) for i, item in enumerate(node.value)]
            if cls is MappingNode:
                if node.tag != _MAP:
                    raise _YamlProblem(node, f"unsupported YAML tag {node.tag!r}")
                return self._mapping(node, path)  # type: ignore[arg-type]
        finally:
            self.active.discard(nid)
        raise _YamlProblem(node, "unsupported YAML node")

    def _pairs(self, node: MappingNode) -> list[tuple[Node, Node, bool]]:
        """The mapping's pairs with ``<<`` merges expanded (merged ones first, marked as merged)."""
        merged: list[tuple[Node, Node, bool]] = []
        own: list[tuple[Node, Node, bool]] = []
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.tag == _MERGE:
                sources = v.value if isinstance(v, SequenceNode) else [v]
                for src in sources:
                    if not isinstance(src, MappingNode):
                        raise _YamlProblem(src, "a `<<` merge needs a mapping (or a list of mappings)")
                    merged.extend((mk, mv, True) for mk, mv, _ in self._pairs(src))
            else:
                own.append((k, v, False))
        return merged + own

    def _mapping(self, node: MappingNode, path: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        own: dict[str, Node] = {}
        pairs = node.value
        if any(k.tag == _MERGE for k, _ in pairs):
            triples = self._pairs(node)
        else:
            triples = [(k, v, False) for k, v in pairs]
        keys = self.keys
        build = self.build
        for k, v, from_merge in triples:
            if type(k) is not ScalarNode:
                raise _YamlProblem(k, "a mapping key must be a plain scalar")
            key = k.value if k.tag == _STR else _key_text(_scalar(k))
            if not from_merge:
                if key in own:
                    first = own[key].start_mark.line + 1
                    raise _YamlProblem(k, f"duplicate key `{key}` (first at line {first})")
                own[key] = k
            sub = (*path, key)
            m = k.start_mark
            keys[sub] = (m.line + 1, m.column + 1)
            out[key] = build(v, sub)
        return out


def _key_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return "true" if v is True else "false" if v is False else "null" if v is None else str(v)


# ---------------------------------------------------------------------------- schema validation


def _problem(sm: SourceMap, path: JsonPath, at_key: bool, message: str) -> Problem:
    pos = sm.pos(path, key=at_key)
    return Problem(sm.file, pos.line if pos else None, pos.column if pos else None, message,
                   sm.excerpt(pos) if pos else "")


def _expect_lines(node: MappingNode) -> tuple[int, int] | None:
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.value == "expect":
            return k.start_mark.line, max(k.start_mark.line, _last_line(v))
    return None


#: Texts with more characters that can open a collection (``:``, ``-``, ``?``, ``[``, ``{``) than this are
#: composed through the event scan first (:func:`_composed`): fewer cannot nest deeper, and the C composer
#: (recursive) is known to handle this depth (libyaml bounds its own nesting at 1000 besides).
_COMPOSE_BOUND = 10_000


def _composed(text: str) -> list[Node] | None:
    """Every document of ``text`` composed at once, when that is what :func:`boundedyaml.compose_all` yields
    (issue 22: its event scan, made to bound nesting before the recursive C composer sees a text, parsed
    every fixture file twice, a fifth of loading one); else None, and the caller takes the bounded path.

    Taken only for a text that cannot nest deeper than the composer handles (:data:`_COMPOSE_BOUND`) and
    whose composed graph is a tree (no alias: no ``*`` in the text, or no node found twice), where the
    depths are the event scan's and the alias walk finds nothing; then every collection's depth is checked
    on that tree: one deeper than :data:`boundedyaml.MAX_DEPTH`, or any YAML error, goes the bounded way,
    which reports it as before (nothing was yielded yet).
    """
    if sum(map(text.count, ":-?[{")) > _COMPOSE_BOUND:
        return None
    try:
        nodes = list(yaml.compose_all(text, Loader=FixtureYamlLoader))
    except Exception:  # (a YAML error, a character YAML may not hold...: the bounded path raises its own)
        return None
    if "*" in text:  # (may hold an alias: taken only when no node is there twice, i.e. none was an alias)
        seen: set[int] = set()
        todo = [n for n in nodes if n is not None]
        while todo:
            node = todo.pop()
            if id(node) in seen:
                return None
            seen.add(id(node))
            if type(node) is MappingNode:
                for pair in node.value:
                    todo.extend(pair)
            elif type(node) is SequenceNode:
                todo.extend(node.value)
    limit = boundedyaml.MAX_DEPTH
    stack: list[tuple[Node, int]] = [(n, 1) for n in nodes if type(n) is not ScalarNode and n is not None]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return None
        below = depth + 1
        if type(node) is MappingNode:
            for k, v in node.value:
                if type(k) is not ScalarNode:
                    stack.append((k, below))
                if type(v) is not ScalarNode:
                    stack.append((v, below))
        else:
            stack.extend([(v, below) for v in node.value if type(v) is not ScalarNode])
    return nodes


def iter_documents(text: str, file: str) -> Iterator[tuple[Node, SourceMap, Any, int]]:
    """Compose each YAML document: ``(node, source map, value, last content line)``; raises LoadError."""
    lines = text.splitlines()
    try:
        composed = _composed(text)
        tree = composed is not None and "<<" not in text
        # (issue 24: nesting, aliases bounded)
        for node in composed if composed is not None else boundedyaml.compose_all(text, FixtureYamlLoader):
            if isinstance(node, ScalarNode) and node.tag == _NULL and node.value == "":
                continue
            sm = SourceMap(file, lines)
            b = _Builder(sm)
            try:
                value = b.build_tree(node, ()) if tree else b.build(node, ())
            except _YamlProblem as e:
                pos = _pos(e.mark) if e.mark is not None else None
                raise LoadError([Problem(file, pos.line if pos else None, pos.column if pos else None, e.message,
                                         sm.excerpt(pos) if pos else "")]) from None
            yield node, sm, value, _last_line(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        pos = _pos(mark) if mark is not None else None
        msg = "invalid YAML: " + " ".join(x for x in (e.context, e.problem) if x)
        sm = SourceMap(file, lines)
        raise LoadError([Problem(file, pos.line if pos else None, pos.column if pos else None, msg,
                                 sm.excerpt(pos) if pos else "")]) from None
    except yaml.YAMLError as e:
        raise LoadError([Problem(file, None, None, f"invalid YAML: {e}")]) from None


def load_text(text: str, file: str = "<string>", *, path: Path | None = None) -> list[Case]:
    """Parse and validate the cases of one fixture file; raises :class:`LoadError` listing every problem."""
    fast, slow = _validators()
    defs = fs.shipped_schema().get("$defs", {})
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cases: list[Case] = []
    problems: list[Problem] = []
    names: dict[str, int] = {}
    for index, (node, sm, value, last) in enumerate(iter_documents(text, file)):
        line = node.start_mark.line + 1
        if not isinstance(value, dict):
            problems.append(_problem(sm, (), False, f"a case must be a mapping, got {_TYPE_WORDS[_type_of(value)]}"))
            continue
        found: list[tuple[JsonPath, bool, str]] = []
        if fast is None or not fast.is_valid(value):
            found = _schema_problems(slow, value, defs)
        if not found:
            found = check_case(value)
        name = value.get("name")
        if isinstance(name, str):
            if name in names:
                found.append((("name",), False, f"duplicate case name `{name}` (first at line {names[name]})"))
            else:
                names[name] = sm.line(("name",)) or line
        problems.extend(_problem(sm, p, k, m) for p, k, m in found)
        if found:
            continue
        assert isinstance(node, MappingNode)
        cases.append(Case(
            name=str(value["name"]), file=file, index=index, line=sm.line(("name",)) or line, data=value, source=sm,
            digest=digest, path=path, expect_lines=_expect_lines(node), last_line=last, flow=bool(node.flow_style),
        ))
    if problems:
        raise LoadError(problems)
    return cases


def load_file(path: str | Path, display: str | None = None) -> list[Case]:
    """Load a fixture file (``display`` is the name used in messages; default the path as given)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LoadError([Problem(display or str(path), None, None, f"cannot read the file: {e}")]) from None
    return load_text(text, display or str(path), path=p)


def validate(value: dict[str, Any]) -> list[str]:
    """Messages for everything wrong with one case given as a plain dict (no positions)."""
    _, slow = _validators()
    found = _schema_problems(slow, value, fs.shipped_schema().get("$defs", {}))
    if not found:
        found = check_case(value)
    return [f"{dotted(p)}: {m}" if p else m for p, _, m in found]
