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
  checked too;
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
        # PyYAML 6.0.4 and later bound flow nesting in the scanner, which reads a flow collection's
        # brackets ahead of its events: that bound can fire before the event count passes ours.
        if "exceeded maximum nesting depth" not in (e.problem or ""):
            raise
        raise YAMLBoundError(f"yaml: exceeded max depth of {max_depth}", e.problem_mark) from e
    return anchors


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
    for node in yaml.compose_all(text, Loader=loader):
        if node is not None:
            check_expansion(node, max_depth, anchors)
        yield node


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
    check_expansion(node, max_depth, anchors)
    return loader("").construct_document(node)
