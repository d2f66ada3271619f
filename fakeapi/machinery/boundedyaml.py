"""YAML loading with bounded nesting and bounded alias expansion.

A YAML document can be small and expand to something enormous: nine levels of
anchors, each alias repeated nine times ("billion laughs"), make 387 million
scalars out of a few hundred bytes, and a document nested a hundred thousand
levels deep crashes the C composer. kube-apiserver reads YAML with go-yaml,
which refuses both: ``yaml: document contains excessive aliasing`` once alias
expansion does most of the decoding work, and ``yaml: exceeded max depth of
10000``. This module applies the same two rules before anything is built:

* nesting: the event stream is scanned first (the parser is iterative, so this
  costs no stack) and a collection deeper than ``max_depth`` is an error at its
  line; then, on the composed node graph, the depth aliases expand to is
  checked too. The libyaml that PyYAML 6.0.4 and later bundle stops flow nesting at
  1000 on its own; a document between that and ``max_depth`` raises libyaml's bound
  (:func:`raise_libyaml_nest_level`) and is scanned again, so request bodies get
  go-yaml's 10000 whichever PyYAML is installed;
* aliases: go-yaml's rule (``allowedAliasRatio`` of gopkg.in/yaml.v2's
  decoder): counting every node decoded, and those decoded inside an alias
  expansion, a document with more than 100 alias-driven decodes out of more
  than 1000 fails when their share exceeds 99% (up to 400000 decodes), then a
  share falling linearly to 10% (at 4000000 decodes and over). The count walks
  the node graph the way the decoder would and stops at the first excess, so a
  bomb is refused in about a thousand steps. An alias inside its own anchor is
  ``yaml: anchor 'x' value contains itself``.

Errors are :class:`YAMLBoundError`, a ``yaml.MarkedYAMLError`` whose
``problem_mark`` gives the line and column, so callers that report PyYAML
errors report these the same way.

:class:`JSONCompatibleLoader` resolves scalars as sigs.k8s.io/yaml does when it
converts YAML to JSON (timestamps stay strings); :func:`load` and
:func:`load_all` read YAML that way, bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

#: The nesting bound of fakeapi's own YAML (fixture files): far below go-yaml's 10000, which request
#: bodies get (``max_depth=fakeapi.machinery.bodycheck.MAX_DEPTH``). A fixture nested this deep is a
#: mistake, reported at its line; real objects nest a few dozen levels.
MAX_DEPTH = 100

#: go-yaml's ``alias_ratio_range_low`` and ``alias_ratio_range_high`` (decodes).
ALIAS_RATIO_RANGE_LOW = 400_000
ALIAS_RATIO_RANGE_HIGH = 4_000_000
EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing"

_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class JSONCompatibleLoader(_Base):
    """PyYAML's safe loader (the C one where built) without the timestamp resolver: YAML as
    sigs.k8s.io/yaml reads it before converting it to JSON."""


JSONCompatibleLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class YAMLBoundError(yaml.MarkedYAMLError):
    """A document nested too deep or expanding too much through aliases; ``problem_mark`` says where."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.text = problem

    def __str__(self) -> str:
        m = self.problem_mark
        return f"{self.text} (line {m.line + 1}, column {m.column + 1})" if m is not None else self.text


def allowed_alias_ratio(decode_count: int) -> float:
    """go-yaml's ``allowedAliasRatio``: the share of decodes alias expansion may make."""
    if decode_count <= ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * ((decode_count - ALIAS_RATIO_RANGE_LOW) / span)


def check_depth(text: str | bytes, loader: type, max_depth: int = MAX_DEPTH) -> dict[tuple[int, int], str]:
    """Scan the events of ``text`` (every document): a collection nested deeper than ``max_depth`` is an error.

    Returns the anchors of collections by the (line, column) they start at (the node graph has no names).
    """
    anchors: dict[tuple[int, int], str] = {}
    depth = 0
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, starts):
                mark = event.start_mark
                if event.anchor is not None and mark is not None:
                    anchors[(mark.line, mark.column)] = event.anchor
                depth += 1
                if depth > max_depth:
                    raise YAMLBoundError(f"yaml: exceeded max depth of {max_depth}", event.start_mark)
            elif isinstance(event, ends):
                depth -= 1
    except YAMLBoundError:
        raise
    except yaml.MarkedYAMLError as e:
        # The libyaml that PyYAML 6.0.4 and later bundle bounds flow nesting in its scanner, which reads
        # a flow collection's brackets ahead of its events: that bound can fire before ours does.
        if not _c_scanner_bound(e):
            raise
        if max_depth > libyaml_nest_level() and raise_libyaml_nest_level(max_depth):
            return check_depth(text, loader, max_depth)  # (the C scanner now allows what ours does)
        raise YAMLBoundError(f"yaml: exceeded max depth of {min(max_depth, libyaml_nest_level())}",
                             e.problem_mark) from e
    return anchors


def _c_scanner_bound(e: yaml.MarkedYAMLError) -> bool:
    """Whether ``e`` is libyaml's own nesting bound (PyYAML 6.0.4 and later), not a YAML syntax error."""
    return "exceeded maximum nesting depth" in (e.problem or "")


def _libyaml() -> Any:
    """The C library of PyYAML's ``_yaml`` extension through ctypes, or None (no extension, no symbols)."""
    try:
        import ctypes

        from yaml import _yaml

        lib = ctypes.CDLL(_yaml.__file__)
        lib.yaml_get_max_nest_level.restype = ctypes.c_int
        lib.yaml_set_max_nest_level.argtypes = [ctypes.c_int]
        return lib
    except (ImportError, OSError, AttributeError):
        return None


def libyaml_nest_level() -> int:
    """libyaml's own nesting bound (``yaml_get_max_nest_level``; 1000 in the libyaml PyYAML 6.0.4
    bundles), or a very large number where PyYAML's C extension has none."""
    lib = _libyaml()
    return int(lib.yaml_get_max_nest_level()) if lib is not None else 2**31 - 1


def raise_libyaml_nest_level(depth: int) -> bool:
    """Raise libyaml's process-wide nesting bound to ``depth`` (go-yaml's 10000 for request bodies),
    through libyaml's public ``yaml_set_max_nest_level``, which PyYAML does not wrap. True when libyaml
    now allows ``depth`` (also where PyYAML's extension has no such bound to raise).

    Only ever raised, never lowered, and never past what :func:`check_depth`'s own event count
    allows: the scan of events runs before anything is composed, so libyaml's recursive composer
    still never sees a document deeper than the bound a caller asked for.
    """
    lib = _libyaml()
    if lib is None:
        return True
    if int(lib.yaml_get_max_nest_level()) < depth:
        lib.yaml_set_max_nest_level(depth)
    return int(lib.yaml_get_max_nest_level()) >= depth


def check_expansion(node: Node, max_depth: int = MAX_DEPTH, anchors: dict[tuple[int, int], str] | None = None) -> None:
    """Walk a composed document as go-yaml's decoder would, aliases expanded: excessive aliasing,
    an anchor containing itself, or a depth over ``max_depth`` after expansion is an error."""
    decode_count = 0
    alias_count = 0
    seen: set[int] = set()
    active: set[int] = set()
    # (node, depth, inside an alias expansion, leaving) in document order
    stack: list[tuple[Node, int, bool, bool]] = [(node, 0, False, False)]
    while stack:
        n, depth, in_alias, leaving = stack.pop()
        nid = id(n)
        if leaving:
            active.discard(nid)
            continue
        if nid in active:
            anchor = (anchors or {}).get((n.start_mark.line, n.start_mark.column), "?")
            raise YAMLBoundError(f"yaml: anchor '{anchor}' value contains itself", n.start_mark)
        alias = in_alias or nid in seen
        if alias and not in_alias:
            decode_count += 1  # (the alias node itself, which go-yaml counts before following it)
        decode_count += 1
        if alias:
            alias_count += 1
        if (alias_count > 100 and decode_count > 1000
                and alias_count / decode_count > allowed_alias_ratio(decode_count)):
            raise YAMLBoundError(EXCESSIVE_ALIASING, n.start_mark)
        seen.add(nid)
        if isinstance(n, (MappingNode, SequenceNode)):
            if depth >= max_depth:
                raise YAMLBoundError(f"yaml: exceeded max depth of {max_depth}", n.start_mark)
            active.add(nid)
            stack.append((n, depth, alias, True))
            children: list[Node] = []
            if isinstance(n, MappingNode):
                for k, v in n.value:
                    children.append(k)
                    children.append(v)
            else:
                children = list(n.value)
            for child in reversed(children):
                stack.append((child, depth + 1, alias, False))


def marked_reader_error(text: str | bytes, e: yaml.reader.ReaderError) -> yaml.MarkedYAMLError:
    """PyYAML's error for a character YAML may not hold has a position but no line: give it one."""
    pos = max(0, int(e.position))
    if isinstance(text, str):
        before = text[:pos]
        line = before.count("\n")
        column = pos - (before.rfind("\n") + 1)
    else:
        line, column = 0, pos
    mark = yaml.Mark("<input>", pos, line, column, None, None)  # type: ignore[arg-type]  # (no buffer: no excerpt)
    what = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
    return YAMLBoundError(f"unacceptable character {what}: {e.reason}", mark)


def compose_all(text: str | bytes, loader: type, max_depth: int = MAX_DEPTH) -> Iterator[Node]:
    """``yaml.compose_all`` with nesting and alias expansion bounded (each document checked as it comes).

    A character YAML may not hold is a ``MarkedYAMLError`` with its line too (:func:`marked_reader_error`).
    """
    try:
        anchors = check_depth(text, loader, max_depth)
    except yaml.reader.ReaderError as e:
        raise marked_reader_error(text, e) from None
    aliased = _may_alias(text)
    for node in yaml.compose_all(text, Loader=loader):
        if node is not None and aliased:
            check_expansion(node, max_depth, anchors)
        yield node


def _may_alias(text: str | bytes) -> bool:
    """Whether ``text`` may hold an alias (an alias token starts with ``*``; a UTF-16 ``*`` holds its byte too).

    Without one, the node graph is a tree that :func:`check_depth` has bounded already: every node is
    decoded once, and a collection's depth in it is its nesting in the events, so
    :func:`check_expansion` could find nothing and is skipped (issue 22: a sixth of loading a fixture file).
    """
    return (b"*" in text) if isinstance(text, bytes) else ("*" in text)


def load_all(text: str | bytes, loader: type = JSONCompatibleLoader, max_depth: int = MAX_DEPTH) -> list[Any]:
    """Every document of ``text`` as Python values, bounded (empty documents are None)."""
    out: list[Any] = []
    constructor = loader("")
    for node in compose_all(text, loader, max_depth):
        out.append(None if node is None else constructor.construct_document(node))
    return out


def load(text: str | bytes, loader: type = JSONCompatibleLoader, max_depth: int = MAX_DEPTH) -> Any:
    """The single document of ``text`` (None when empty), bounded; more than one document is an error."""
    anchors = check_depth(text, loader, max_depth)
    node = yaml.compose(text, Loader=loader)
    if node is None:
        return None
    if _may_alias(text):
        check_expansion(node, max_depth, anchors)
    return loader("").construct_document(node)
