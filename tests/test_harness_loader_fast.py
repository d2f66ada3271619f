"""The loader's fast way of composing and building a fixture file gives what the bounded way gives.

Since issue 22 a fixture text is composed at once (``loader._composed``), without boundedyaml's event scan
first, when its composed graph is a tree no deeper than ``boundedyaml.MAX_DEPTH`` and its size cannot nest
deeper than the C composer handles; and such a tree with no ``<<`` merge key is built without the alias
guard and merge expansion (``_Builder.build_tree``). Anything else goes the bounded way. These tests load
every file of the corpus, and texts chosen for each way a text can leave the fast way, both ways
(the bounded way forced by making ``_composed`` answer None), and compare all a loaded case holds
(values in key order, every position, lines) or the error (its full rendering).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakeapi.harness import loader
from fakeapi.harness.loader import LoadError, load_text
from fakeapi.machinery import boundedyaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted((ROOT / "fixtures").glob("**/*.yaml"))
MAX = boundedyaml.MAX_DEPTH


def _outcome(text: str, file: str = "f.yaml") -> Any:
    """Everything a load of ``text`` gives: each case in full, or the error's rendering."""
    try:
        cases = load_text(text, file)
    except LoadError as e:
        return ("LoadError", e.render(), [(p.file, p.line, p.column, p.message, p.excerpt) for p in e.problems])
    return [(c.name, c.file, c.index, c.line, json.dumps(c.data), c.digest, c.expect_lines, c.last_line, c.flow,
             list(c.source.values.items()), list(c.source.keys.items()), c.source.lines) for c in cases]


def _both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = _outcome(text)
    with monkeypatch.context() as m:
        m.setattr(loader, "_composed", lambda text: None)
        slow = _outcome(text)
    return fast, slow


def _nested(depth: int, flow: bool = False) -> str:
    """A case whose ``given`` holds a value nested ``depth`` collections deep in all."""
    inner = "[" * (depth - 1) + "]" * (depth - 1) if flow else \
        "".join(" " * (2 * i + 2) + "a:\n" for i in range(depth - 2)) + " " * (2 * depth - 2) + "b: 1\n"
    if flow:
        return f"name: deep\ngiven: {inner}\n"
    return "name: deep\ngiven:\n" + inner


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_corpus_files_load_the_same_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8")
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


def test_the_corpus_takes_the_fast_way() -> None:
    """(so the comparison above compares two ways: every corpus file is a tree within the bounds)"""
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        assert loader._composed(text) is not None, path


TEXTS = {
    "plain": "name: a\ngiven: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n",
    "two documents": "name: a\n---\nname: b\ntags: [x]\n",
    "empty documents": "---\n---\nname: a\n---\n",
    "depth at the bound, block": _nested(MAX),
    "depth over the bound, block": _nested(MAX + 1),
    "depth at the bound, flow": _nested(MAX, flow=True),
    "depth over the bound, flow": _nested(MAX + 1, flow=True),
    "far too deep, flow": "name: a\ngiven: " + "[" * 3000 + "]" * 3000 + "\n",
    "deep in a second document": "name: a\n---\n" + _nested(MAX + 1),
    "a deep mapping key": "name: a\n? " + "[" * MAX + "]" * MAX + "\n: 1\n",
    "a star only in a string": "name: 'a * b'\ndescription: \"*\"\n",
    "an alias": "name: a\nx: &n {k: v}\ny: *n\n",
    "a scalar alias": "name: &n a\ndescription: *n\n",
    "a recursive alias": "name: a\nx: &n {b: *n}\n",
    "an alias bomb": "name: a\n" + "".join(
        f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9 if i else ["x"] * 9) + "]\n" for i in range(8)),
    "a merge key": "name: a\nbase: &b {k: v}\ngiven:\n  - <<: *b\n    kind: X\n",
    "an inline merge key": "name: a\ngiven:\n  - <<: {apiVersion: v1}\n    kind: Namespace\n    metadata: {name: n}\n",
    "a merge key text in a string": "name: '<<'\n",
    "a duplicate key": "name: a\nname: b\n",
    "a non-scalar key": "name: a\n[1]: 2\n",
    "an unsupported tag": "name: !!binary aGk=\n",
    "a syntax error in the second document": "name: a\n---\nname: [b\n",
    "a character YAML may not hold": "name: a\u0007\n",
    "not a mapping": "- a\n- b\n",
    "a schema problem": "name: a\nexpectt: []\n",
    "many collection characters": "name: a\ndescription: '" + ":" * (loader._COMPOSE_BOUND + 1) + "'\n",
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_texts_load_the_same_both_ways(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(TEXTS[name], monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("name, fast", [
    ("plain", True), ("two documents", True), ("depth at the bound, block", True),
    ("depth at the bound, flow", True), ("a star only in a string", True), ("an inline merge key", True),
    ("depth over the bound, block", False), ("depth over the bound, flow", False), ("far too deep, flow", False),
    ("deep in a second document", False), ("a deep mapping key", False), ("an alias", False),
    ("a scalar alias", False), ("a recursive alias", False), ("an alias bomb", False), ("a merge key", False),
    ("a syntax error in the second document", False), ("a character YAML may not hold", False),
    ("many collection characters", False),
])
def test_which_texts_take_the_fast_way(name: str, fast: bool) -> None:
    assert (loader._composed(TEXTS[name]) is not None) is fast


def test_deep_errors_name_the_bound_and_the_line() -> None:
    """(what the bounded way reports for a text the fast way leaves to it)"""
    with pytest.raises(LoadError, match=f"exceeded max depth of {MAX}"):
        load_text(_nested(MAX + 1))
    with pytest.raises(LoadError, match="exceeded max depth"):
        load_text(TEXTS["far too deep, flow"])
    with pytest.raises(LoadError) as e:  # (at the bound: loaded, then refused by the format, not for its depth)
        load_text(_nested(MAX))
    assert "`given` must be a list" in str(e.value) and "max depth" not in str(e.value)
