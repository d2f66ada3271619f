"""Bounded inputs and atomic requests in the library and the fixture loader (issue 24).

Each test is named after the behaviour it pins: values JSON cannot hold are a
400 and change nothing, a failure after the commit rolls the write back (a
deletecollection too), alias bombs and deep nesting are clean errors with a
line, ``$regex`` and clock values are checked, a ``kind`` of the wrong type is
a 400, server-side apply of mistyped template labels is a 4xx.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from fakeapi.harness import loader
from fakeapi.machinery import bodycheck, boundedyaml
from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer
from tests.support import WIDGET_AV, assert_rejected, make_api, with_bytecode_cache

ROOT = Path(__file__).resolve().parent.parent


def laughs(levels: int, fanout: int = 9, indent: str = "") -> str:
    """Billion laughs: ``levels`` anchors, each holding ``fanout`` aliases of the one before."""
    text = f"{indent}a0: &a0 [" + ", ".join(["lol"] * fanout) + "]\n"
    for i in range(1, levels + 1):
        text += f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fanout) + "]\n"
    return text


def nested(depth: int) -> Any:
    """A value ``depth`` containers deep."""
    v: Any = "leaf"
    for _ in range(depth):
        v = {"k": v}
    return v


def widget(name: str, extra: Any) -> dict[str, Any]:
    """A Widget whose ``spec.extra`` preserves unknown fields (any value is kept as sent)."""
    return {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"extra": {"v": extra}}}


@pytest.mark.parametrize("value,message", [
    ({1, 2}, "json: unsupported type: set (at spec.extra.v)"),
    (b"bytes", "json: unsupported type: bytes (at spec.extra.v)"),
    (1j, "json: unsupported type: complex (at spec.extra.v)"),
    (Decimal("1.5"), "json: unsupported type: decimal.Decimal (at spec.extra.v)"),
    (datetime(2024, 1, 1), "json: unsupported type: datetime.datetime (at spec.extra.v)"),
    (float("nan"), "json: unsupported value: NaN (at spec.extra.v)"),
    (float("inf"), "json: unsupported value: +Inf (at spec.extra.v)"),
    (-float("inf"), "json: unsupported value: -Inf (at spec.extra.v)"),
    ("\ud800", "invalid Unicode: lone surrogate '\\ud800' in a string (at spec.extra.v)"),
    ({3: "x"}, "json: unsupported type: a map key of type int (at spec.extra.v)"),
    (nested(bodycheck.MAX_DEPTH), f"exceeded max depth of {bodycheck.MAX_DEPTH}"),
])
def test_a_value_json_cannot_hold_is_a_400_and_changes_nothing(value: Any, message: str) -> None:
    """Under a preserve-unknown field, with the snapshot guard off as a user runs it: rejected, nothing stored."""
    api = make_api()
    err = assert_rejected(api, lambda: api.create(widget("w", value)), 400, "BadRequest")
    assert err.message.startswith(message)
    assert_rejected(api, lambda: api.patch("Widget", "w", {"spec": {"extra": {"v": value}}}, namespace="ns"), 404)
    api.create(widget("w", "ok"))
    assert_rejected(api, lambda: api.patch("Widget", "w", {"spec": {"extra": {"v": value}}}, namespace="ns"), 400)


def test_deep_nesting_is_a_400_in_every_write_verb_never_a_recursion_error() -> None:
    """Past kube-apiserver's 10000 levels through create, update, merge, JSON and apply patches: 400 each time."""
    api = make_api()
    api.create(widget("w", "ok"))
    deep = nested(bodycheck.MAX_DEPTH)
    calls = [
        lambda: api.create(widget("d", deep)),
        lambda: api.update({**widget("w", deep)}),
        lambda: api.patch("Widget", "w", {"spec": {"extra": deep}}, namespace="ns"),
        lambda: api.patch("Widget", "w", json.dumps([{"op": "add", "path": "/spec/extra/d", "value": deep}]),
                          namespace="ns", patch_type="json"),
        lambda: api.patch("Widget", "w", json.dumps(widget("w", deep)), namespace="ns", patch_type="apply",
                          field_manager="m"),
    ]
    for call in calls:
        err = assert_rejected(api, call, 400, "BadRequest")
        assert "max depth" in err.message


@pytest.mark.parametrize("lists", [False, True])
def test_an_object_nested_near_the_bound_stays_writable_through_every_verb(lists: bool) -> None:
    """Its managedFields nest deeper than the object: they have room, so the object is never stuck."""
    def deep(n: int) -> Any:
        v: Any = "leaf"
        for i in range(n):
            v = [v] if lists and i % 2 == 0 else {"k": v}
        return v

    api = make_api()
    d = bodycheck.MAX_DEPTH - 4  # (object > spec > extra > v > ...)
    w = widget("w", deep(d))
    api.create(w)
    api.patch("Widget", "w", {"spec": {"extra": {"v2": deep(d - 1)}}}, namespace="ns")
    api.patch("Widget", "w", json.dumps([{"op": "add", "path": "/spec/extra/v3", "value": deep(d - 1)}]),
              namespace="ns", patch_type="json")
    api.patch("Widget", "w", json.dumps({**w, "spec": {"extra": {"v4": deep(d - 1)}}}), namespace="ns",
              patch_type="apply", field_manager="m")
    api.update({**api.get("Widget", "w", "ns"), "spec": {"extra": {"v": deep(d)}}})
    api.update({**api.get("Widget", "w", "ns"), "status": {"phase": "x"}}, subresource="status")
    assert len(api.list("Widget", "ns")["items"]) == 1
    api.delete("Widget", "w", "ns")


def test_a_kind_that_is_not_a_string_is_a_400() -> None:
    """A set, a list or a number as ``kind``: a 400, never a raw TypeError."""
    api = APIServer()
    for kind in ({"ConfigMap"}, ["ConfigMap"], 3):
        with pytest.raises(ApiError) as e:
            api.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "namespace": "default"}})
        assert e.value.code == 400


def test_a_failure_after_the_commit_rolls_the_write_back() -> None:
    """A listener that fails once the object is stored: 500, and store, counter, log and uid generator as before."""
    api = make_api()

    def listener(etype: str, kind: Any, obj: dict[str, Any], old: Any) -> None:
        if obj["metadata"]["name"].startswith("boom"):
            raise RuntimeError("after the commit")

    api.add_listener(listener)
    state = api._rng.getstate()
    assert_rejected(api, lambda: api.create(widget("boom", 1)), 500)
    assert api._rng.getstate() == state  # (the uid it drew is drawn again by the next create)
    created = api.create(widget("fine", 1))
    again = make_api()
    again.add_listener(listener)
    assert created["metadata"]["uid"] == again.create(widget("fine", 1))["metadata"]["uid"]


def test_a_deletecollection_that_fails_deletes_nothing() -> None:
    """The third deletion of a collection fails: 500, and the two before it are undone (events included)."""
    api = make_api()
    for name in ("a", "b", "c", "d"):
        api.create(widget(name, 1))
    seen: list[str] = []

    def listener(etype: str, kind: Any, obj: dict[str, Any], old: Any) -> None:
        seen.append(f"{etype} {obj['metadata']['name']}")
        if etype == "DELETED" and obj["metadata"]["name"] == "c":
            raise RuntimeError("third deletion fails")

    api.add_listener(listener)
    assert_rejected(api, lambda: api.delete_collection("Widget", "ns"), 500)
    assert sorted(w["metadata"]["name"] for w in api.list("Widget", "ns")["items"]) == ["a", "b", "c", "d"]


def test_the_namespaces_of_the_server_survive_a_rejected_deletecollection_over_rest() -> None:
    """``DELETE /api/v1/namespaces`` is 405 in the REST layer: nothing is Terminating afterwards."""
    from fakeapi.http.rest import Request, RestAPI

    api = APIServer()
    resp = RestAPI(api).handle(Request("DELETE", "/api/v1/namespaces"))
    assert getattr(resp, "code", None) == 405
    assert {n["metadata"]["name"]: n["status"]["phase"] for n in api.list("Namespace")["items"]} == {
        "default": "Active", "kube-system": "Active", "kube-public": "Active", "kube-node-lease": "Active"}


def test_the_library_refuses_a_deletecollection_of_namespaces_as_kube_apiserver_does() -> None:
    """``api.delete_collection("Namespace")``: 405 MethodNotAllowed, nothing changed (no namespace Terminating)."""
    api = APIServer()
    assert_rejected(api, lambda: api.delete_collection("Namespace"), 405, "MethodNotAllowed")


def test_server_side_apply_of_list_template_labels_is_a_500() -> None:
    """SSA over a stored StatefulSet with ``template.metadata.labels`` a list: structured-merge-diff
    types the configuration before anything decodes it (``mapValue``: ``expected map``), a 500 as
    kube-apiserver answers, not the Go decoder's 400."""
    api = APIServer()
    ss = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "x",
                   "template": {"metadata": {"labels": {"a": "b"}},
                                "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    api.patch("StatefulSet", "s", json.dumps(ss), namespace="default", patch_type="apply", field_manager="m")
    ss["spec"]["template"]["metadata"]["labels"] = ["a"]
    err = assert_rejected(api, lambda: api.patch("StatefulSet", "s", json.dumps(ss), namespace="default",
                                                 patch_type="apply", field_manager="m"), 500, "")
    assert err.message == ("failed to create typed patch object (default/s; apps/v1, Kind=StatefulSet): "
                           ".spec.template.metadata.labels: expected map, got &{[a]}")


def test_an_apply_body_that_is_an_alias_bomb_is_a_400() -> None:
    """Server-side apply reads YAML bounded, as go-yaml does."""
    api = APIServer()
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nbomb:\n" + laughs(9, indent="  ")
    err = assert_rejected(api, lambda: api.patch("ConfigMap", "x", body, namespace="default", patch_type="apply",
                                                 field_manager="m"), 400, "BadRequest")
    assert "yaml: document contains excessive aliasing" in err.message


# -------------------------------------------------------------------------------------------- YAML bounds


def test_alias_expansion_follows_go_yamls_ratio() -> None:
    """go-yaml's rule: over 1000 decodes, more than 99% of them from aliases is excessive aliasing."""
    assert boundedyaml.load(laughs(2, 10)) is not None  # (1110 alias decodes, 97% of them all: fine)
    for levels, fanout in ((4, 10), (9, 9)):
        with pytest.raises(boundedyaml.YAMLBoundError, match="yaml: document contains excessive aliasing"):
            boundedyaml.load(laughs(levels, fanout))


def test_an_anchor_inside_itself_is_an_error_naming_it() -> None:
    """``a: &x {b: *x}`` is go-yaml's ``anchor 'x' value contains itself``, with its line."""
    with pytest.raises(boundedyaml.YAMLBoundError) as e:
        boundedyaml.load("ok: 1\na: &x {b: *x}\n")
    assert e.value.text == "yaml: anchor 'x' value contains itself"
    assert e.value.problem_mark.line == 1


@pytest.mark.parametrize("text", ["[" * 100000, "x: " + "{a: " * 5000, "- " * 5000 + "x\n"])
def test_deep_yaml_is_an_error_at_its_line_before_it_is_composed(text: str) -> None:
    """A hundred thousand levels would crash the C composer: the event scan stops at the bound first
    (fakeapi's own YAML's, and go-yaml's 10000 that request bodies get)."""
    with pytest.raises(boundedyaml.YAMLBoundError, match=f"exceeded max depth of {boundedyaml.MAX_DEPTH} "):
        boundedyaml.load(text)
    if text.startswith("["):
        with pytest.raises(boundedyaml.YAMLBoundError, match=f"exceeded max depth of {bodycheck.MAX_DEPTH} "):
            boundedyaml.load(text, max_depth=bodycheck.MAX_DEPTH)


def fixture_problems(text: str) -> list[loader.Problem]:
    """The problems loading ``text`` as a fixture file reports (it must not load)."""
    with pytest.raises(loader.LoadError) as e:
        loader.load_text(text, "case.yaml")
    return e.value.problems


CASE = "name: a case\ngiven:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}\n"


@pytest.mark.parametrize("levels", [8, 9])
def test_an_alias_bomb_in_a_fixture_is_a_collection_error_with_file_and_line(levels: int) -> None:
    """8 levels used to hang collection, 9 to end pytest with INTERNALERROR: now a problem at a line."""
    problems = fixture_problems(CASE + "x:\n" + laughs(levels, indent="  "))
    assert [(p.file, p.line is not None) for p in problems] == [("case.yaml", True)]
    assert "document contains excessive aliasing" in problems[0].message


def test_deep_nesting_in_a_fixture_is_a_collection_error_with_file_and_line() -> None:
    """Five hundred levels: a problem at the line of the level past the bound, no RecursionError."""
    problems = fixture_problems(CASE + "x: " + "[" * 500 + "]" * 500 + "\n")
    assert problems[0].line == 4 and "exceeded max depth" in problems[0].message


def test_a_huge_regex_repetition_is_a_collection_error() -> None:
    """``$regex: a{99999999999}`` overflowed Python's compiler: a problem at its line."""
    text = CASE + ("expect:\n- object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default},"
                   " data: {$regex: 'a{99999999999}'}}\n")
    problems = fixture_problems(text)
    assert (problems[0].line, problems[0].message) == (
        5, "bad regular expression: repetition count 99999999999 is over 1000")


@pytest.mark.parametrize("clock,message", [
    ("2026-02-30T00:00:00Z", "is not a real date and time: day is out of range for month"),
    ("0001-01-01T00:00:00Z", "is out of range: a fixture time is in the years 1970 to 9999"),
])
def test_an_impossible_clock_is_a_collection_error(clock: str, message: str) -> None:
    """Schema-valid but impossible dates crashed the run: a problem at the clock's line."""
    problems = fixture_problems(f"clock: '{clock}'\n" + CASE)
    assert problems[0].line == 1 and message in problems[0].message


def test_fakeapi_run_on_a_deeply_nested_fixture_reports_it_and_does_not_crash(tmp_path: Path) -> None:
    """``fakeapi run`` on the broken file: a broken-file report with file:line, exit status 1, no traceback."""
    f = tmp_path / "deep.yaml"
    f.write_text(CASE + "x: " + "{a: " * 600 + "\n")
    out = subprocess.run([sys.executable, "-m", "fakeapi.cli", "run", str(f)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=with_bytecode_cache(dict(os.environ)))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert f"{f}:4:" in out.stdout and "exceeded max depth" in out.stdout
