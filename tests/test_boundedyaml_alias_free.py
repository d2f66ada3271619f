"""boundedyaml skips the alias-expansion walk for a text with no ``*``: that walk could find nothing there.

Without an alias the composed graph is a tree the event scan (``check_depth``) has bounded already:
each node is decoded once and a collection's depth is its nesting in the events. These tests show the
walk finds nothing in such texts (every fixture file of the corpus, texts at and past the bound, block
and flow), that a text past the bound is still refused with the same message, and that a text with
aliases is still walked (an alias bomb is refused).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fakeapi.harness.loader import FixtureYamlLoader
from fakeapi.machinery import boundedyaml

ROOT = Path(__file__).resolve().parent.parent
MAX = boundedyaml.MAX_DEPTH


def _block(depth: int) -> str:
    """A block mapping nested ``depth`` levels, a block sequence in the middle."""
    lines = []
    for i in range(depth):
        lines.append("  " * i + ("- " if i == depth // 2 else "") + f"k{i}:")
    return "\n".join(lines) + " leaf\n"


def _flow(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth + "\n"


def _alias_free_texts() -> list[tuple[str, str]]:
    texts = [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))
             for p in sorted((ROOT / "fixtures").rglob("*.yaml"))]
    texts += [(f"block {d}", _block(d)) for d in (1, MAX - 1, MAX)]
    texts += [(f"flow {d}", _flow(d)) for d in (1, MAX - 1, MAX)]
    texts += [("anchors, no alias", "a: &x {b: [1, 2]}\nc: &y [3]\n"), ("merge key", "a:\n  <<: {b: 1}\n  c: 2\n")]
    return [(name, text) for name, text in texts if "*" not in text]


@pytest.mark.parametrize(("name", "text"), _alias_free_texts())
def test_the_walk_finds_nothing_in_an_alias_free_text(name: str, text: str) -> None:
    anchors = boundedyaml.check_depth(text, FixtureYamlLoader)
    nodes = [n for n in yaml.compose_all(text, Loader=FixtureYamlLoader) if n is not None]
    assert nodes, name
    for node in nodes:
        boundedyaml.check_expansion(node, MAX, anchors)  # (never raises: what the skip relies on)
    assert len(list(boundedyaml.compose_all(text, FixtureYamlLoader))) >= len(nodes)


@pytest.mark.parametrize("text", [_block(MAX + 1), _flow(MAX + 1)])
def test_an_alias_free_text_past_the_bound_is_still_refused(text: str) -> None:
    with pytest.raises(boundedyaml.YAMLBoundError, match=f"yaml: exceeded max depth of {MAX}"):
        list(boundedyaml.compose_all(text, FixtureYamlLoader))
    with pytest.raises(boundedyaml.YAMLBoundError, match=f"yaml: exceeded max depth of {MAX}"):
        boundedyaml.load(text)


def test_a_text_with_aliases_is_still_walked() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        bomb += f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]\n"
    with pytest.raises(boundedyaml.YAMLBoundError, match="excessive aliasing"):
        list(boundedyaml.compose_all(bomb, FixtureYamlLoader))
    with pytest.raises(boundedyaml.YAMLBoundError, match="contains itself"):
        boundedyaml.load("a: &a [*a]\n")
    assert boundedyaml.load(b"a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
