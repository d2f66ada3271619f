"""Fuzzing the fixture loader: mutants of the fixture corpus get a clean error with file and line, or load.

Mutants are made deterministically (a seeded ``random.Random``) from the files
under ``fixtures/``: lines deleted, duplicated, swapped, re-indented or cut
short, characters inserted, and hostile fragments spliced in (alias bombs,
deep nesting, YAML tags, impossible dates, huge regex repetitions, lone
surrogates, NaN, tabs, control characters). Each mutant is bounded in size by
construction (a fragment is at most a few kilobytes), and every algorithm on
the load path is bounded (boundedyaml), so no mutant can hang the run.

For each one: loading either gives cases, which then run without an exception
escaping, or raises ``LoadError`` whose every problem names the file and a
line. Anything else (another exception, a problem without a line) fails.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import pytest

from fakeapi.harness import bundles, loader
from fakeapi.harness.runner import run_case

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "fixtures").rglob("*.yaml"))
SEED = 24
#: Mutants made (``FAKEAPI_FUZZ_MUTANTS`` sets another count for a longer run: the same seed, more mutants).
MUTANTS = int(os.environ.get("FAKEAPI_FUZZ_MUTANTS", "400"))
#: How many cases of loadable mutants are also run (bounded: they run a whole controller host).
RUN_LIMIT = 60


def _laughs(levels: int) -> str:
    out = "{a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"
    for i in range(1, levels + 1):
        out += f", a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]"
    return out + "}"


FRAGMENTS = [
    _laughs(9), _laughs(4), "&x [1, *x]", "[" * 600, "{a: " * 300, "- " * 300 + "x", "!!binary aGVsbG8=",
    "!!set {a, b}", "!!python/object:os.system ls", "2026-02-30T00:00:00Z", "0001-01-01T00:00:00Z",
    "{$regex: 'a{99999999999}'}", "{$regex: '(a+)+$'}", "{$regex: '['}", '"\\ud800"', ".nan", "-.inf", "1e999",
    "\t", "\x00", "\x07", "\ufeff", "*undefined", "&a", "? [a, b]\n: c", "<<: 5", "<<: *nowhere", "{}", "[]",
    "~", "null", "'", '"', "---", "...", "%YAML 1.1", "%TAG ! tag:x,2000:", "@x", "`x`",
    "{kind: [a], apiVersion: v1, metadata: {name: x}}", "{kind: 5}", "999999999999999999999999999999",
]


def mutate(text: str, rng: random.Random) -> str:
    """One mutant of ``text`` (one to three edits)."""
    lines = text.splitlines(keepends=True) or ["\n"]
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        i = rng.randrange(len(lines))
        if op == 0 and len(lines) > 1:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:
            lines[i] = " " * rng.randint(1, 3) + lines[i] if rng.random() < 0.5 else lines[i].lstrip(" ")
        elif op == 4:
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: rng.randrange(len(lines[-1]) + 1)]
        elif op == 5:
            line = lines[i]
            k = rng.randrange(len(line) + 1)
            lines[i] = line[:k] + rng.choice(FRAGMENTS) + line[k:]
        else:
            line = lines[i]
            k = line.find(": ")
            if k >= 0:  # replace a mapping value with a hostile one
                lines[i] = line[: k + 2] + rng.choice(FRAGMENTS) + "\n"
            else:
                lines[i] = line.rstrip("\n") + " " + rng.choice(FRAGMENTS) + "\n"
        if not lines:
            lines = ["\n"]
    return "".join(lines)


def mutants() -> list[tuple[str, str]]:
    """(display name, text) of every mutant, the same on every run."""
    rng = random.Random(SEED)
    texts = [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in CORPUS]
    out = []
    for n in range(MUTANTS):
        name, text = texts[n % len(texts)]
        out.append((f"{name}~mutant{n}", mutate(text, rng)))
    return out


@pytest.mark.skipif(not CORPUS, reason="no fixture corpus in this checkout")
def test_every_mutant_of_the_corpus_loads_or_gets_a_clean_error_with_file_and_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A few hundred seeded mutants: a clean error (file and line for each problem) or a valid case."""
    from reconcilers.bundle import bundle

    # (the ARC fixtures need their bundle, installed or not: the same mutants load either way)
    monkeypatch.setitem(bundles._REGISTRY, bundle.name, bundle)
    tally: Counter[str] = Counter()
    ran = 0
    for name, text in mutants():
        tally["tries"] += 1
        try:
            cases = loader.load_text(text, name)
        except loader.LoadError as e:
            assert e.problems, name
            for p in e.problems:
                assert p.file == name, (name, p.render())
                assert p.line is not None and p.line >= 1, (name, p.render())
            tally["clean errors"] += 1
            continue
        tally["valid"] += 1
        for case in cases:
            if ran >= RUN_LIMIT or case.bundles:
                continue
            ran += 1
            result = run_case(case)  # (pass or fail: never an exception out of the run)
            tally["ran, passed" if result.passed else "ran, failed"] += 1
            for f in result.failures:
                assert "Traceback" not in str(f), (name, f)
    print("\nfixture fuzz:", dict(sorted(tally.items())))
    assert tally["tries"] == MUTANTS == tally["clean errors"] + tally["valid"]
    assert tally["clean errors"] > 0 and tally["valid"] > 0
