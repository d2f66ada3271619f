"""managedFields over the whole fixture corpus: the server's computation against the reference one.

The server computes each write's managedFields eagerly, with shortcuts: the changes under a
top-level field are memoised by the content of its two sides (:class:`fakeapi.machinery.typedfields.Memo`,
shared by the objects made from one template), and entries nothing changed are reused as stored.
The reference run computes every write's changes afresh (no memo). Each fixture file is run both
ways, and everything a client can observe is compared: every answer of every request (the body,
or the error's status), every event in every watch log (what each watch delivers is drawn from
them), the final store, and the case's verdict. One differing managedFields entry fails the test
(:func:`test_the_comparison_catches_one_differing_managed_fields_entry` shows it does).

This is the harness for any other way of computing managedFields (on demand, incrementally):
give :func:`record` another ``configure``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from fakeapi.harness import loader
from fakeapi.harness.runner import run_case
from fakeapi.machinery import fieldmanager, serverapply
from fakeapi.machinery.errors import ApiError
from fakeapi.server import pipeline
from fakeapi.server.apiserver import APIServer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "fixtures").rglob("*.yaml"))

Configure = Callable[[APIServer], None]


def _text(value: Any) -> str:
    """An answer as a client would read it: its JSON, keys in the server's order (the order is observable)."""
    return orjson.dumps(value, default=lambda v: f"<{type(v).__name__}>").decode()


def _reference(api: APIServer) -> None:
    """The reference computation: every write's changes walked afresh, every re-apply pruned."""
    api._changes_memo = None  # type: ignore[assignment]
    api._eager_prune = True


def _as_served(api: APIServer) -> None:
    """The server as it runs (nothing changed)."""


@contextmanager
def _recording(configure: Configure, answers: dict[int, list[str]]) -> Iterator[None]:
    """Every server made inside is configured with ``configure`` and records each request's answer, in
    ``answers`` by the server's ``id`` (scratch servers, such as the one a bundle's CRDs are first
    registered on once per process, keep theirs apart)."""
    real_init = APIServer.__init__
    real_run = pipeline.Pipeline._run

    def init(self: APIServer, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        configure(self)

    def run(self: pipeline.Pipeline, verb: str, kind: Any, namespace: str, name: str, subresource: str, actor: str,
            fn: Any, patch_type: str = "", shared: bool = False) -> Any:
        mine = answers.setdefault(id(self), [])
        head = f"{verb} {kind.api_version}/{kind.kind} {namespace}/{name} {subresource} {actor} {patch_type}"
        try:
            out = real_run(self, verb, kind, namespace, name, subresource, actor, fn, patch_type, shared)
        except ApiError as e:
            mine.append(f"{head} -> {_text(e.status)}")
            raise
        except Exception as e:
            mine.append(f"{head} -> {type(e).__name__}")
            raise
        mine.append(f"{head} -> {_text(out) if isinstance(out, dict) else type(out).__name__}")
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(APIServer, "__init__", init)
        mp.setattr(pipeline.Pipeline, "_run", run)
        yield


def record(file: str, configure: Configure) -> dict[str, list[str]]:
    """Run every case of a fixture file with servers set up by ``configure``: what a client could observe, by case."""
    out: dict[str, list[str]] = {}
    for case in loader.load_file(ROOT / file):
        answers: dict[int, list[str]] = {}
        with _recording(configure, answers):
            result = run_case(case)
        api = result.api
        seen = [f"verdict passed={result.passed} aborted={result.aborted!r}",
                *(f"failure {f.phase}: {f.mismatch}" for f in result.failures), *answers.get(id(api), [])]
        for (group, plural), log in sorted(api._logs.items()):
            seen.extend(f"event {group}/{plural} {ev.rv} {ev.type} {_text(ev.obj)}" for ev in log.events)
        for (group, plural), table in sorted(api.store.tables.items()):
            seen.extend(f"stored {group}/{plural} {key} {_text(e.obj)}" for key, e in sorted(table.entries.items()))
        out[case.name] = seen
    return out


def first_difference(a: dict[str, list[str]], b: dict[str, list[str]]) -> str:
    """The first observation that differs between two recordings ("" when none does)."""
    if list(a) != list(b):
        return f"cases differ: {list(a)} != {list(b)}"
    for case in a:
        x, y = a[case], b[case]
        for i, (u, v) in enumerate(zip(x, y)):
            if u != v:
                return f"{case}, observation {i}:\n  served:    {u[:2000]}\n  reference: {v[:2000]}"
        if len(x) != len(y):
            return f"{case}: {len(x)} observations served, {len(y)} in the reference run"
    return ""


@pytest.mark.parametrize("file", FIXTURES)
def test_every_answer_of_the_corpus_is_the_reference_computations(file: str) -> None:
    """Each fixture file run as served and with the reference managedFields: identical, managedFields included."""
    served = record(file, _as_served)
    reference = record(file, _reference)
    assert sum(len(v) for v in served.values()) > 0
    assert first_difference(served, reference) == ""


def test_the_corpus_keeps_managed_fields() -> None:
    """The comparison has managedFields to compare: the ARC bundle's objects carry them."""
    file = next(f for f in FIXTURES if f.startswith("fixtures/arc/"))
    seen = record(file, _as_served)
    assert any('"managedFields"' in line for lines in seen.values() for line in lines)


def test_the_comparison_catches_one_differing_managed_fields_entry() -> None:
    """A computation that gets one entry's time wrong, once, is caught."""
    file = next(f for f in FIXTURES if f.startswith("fixtures/arc/"))
    served = record(file, _as_served)
    real = pipeline.Pipeline._set_managed
    done: list[bool] = []

    def off_by_one(self: pipeline.Pipeline, meta: dict[str, Any], managed: Any, stored: Any) -> None:
        real(self, meta, managed, stored)
        entries = meta.get("managedFields")
        if entries and not done:
            done.append(True)
            meta["managedFields"] = [{**entries[0], "time": "1999-01-01T00:00:00Z"}, *entries[1:]]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline.Pipeline, "_set_managed", off_by_one)
        wrong = record(file, _as_served)
    assert done
    assert "managedFields" in first_difference(served, wrong)



def test_the_corpus_reapplies_the_same_fields() -> None:
    """The comparison covers the skipped prune: applies of the corpus re-apply every field their manager
    applied before (the server skips their prune; the reference run prunes them)."""
    real_prune, real_apply = serverapply._prune, serverapply.apply
    pruned: list[bool] = []
    skipped: list[str] = []

    def counting(merged: dict[str, Any], managers: Any, last: Any, t: Any) -> dict[str, Any]:
        pruned.append(True)
        return real_prune(merged, managers, last, t)

    def watching(*args: Any, **kwargs: Any) -> Any:
        before = len(pruned)
        out = real_apply(*args, **kwargs)
        last = args[0].get((kwargs["manager"], fieldmanager.APPLY, "", kwargs["subresource"]))
        if last is not None and last.fields and len(pruned) == before:
            skipped.append(kwargs["manager"])
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(serverapply, "_prune", counting)
        mp.setattr(serverapply, "apply", watching)
        for file in FIXTURES:
            if "apply" in file:
                record(file, _as_served)
    assert skipped
