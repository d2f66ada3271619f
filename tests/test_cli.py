"""The ``fakeapi`` command: run, timeline, -k, schema, exit codes."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from test_harness_bundle import PREAMBLE

from fakeapi.cli import (
    SUBCOMMANDS,
    KeywordError,
    build_parser,
    fixture_files,
    keyword_matcher,
    main,
    register_subcommand,
)
from fakeapi.harness.formatschema import build_schema, schema_text

PASSING = "name: widgets scale\n" + PREAMBLE + """\
  - {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 2}}
steps:
  - name: scale to three
    do:
      - toy.scale: {name: w, namespace: ns, replicas: 3}
  - do:
      - advance: 2m
expect:
  - count: {kind: ConfigMap, namespace: ns, equals: 3}
---
name: nothing happens
"""

FAILING = "name: a failing case\n" + PREAMBLE + "expect:\n  - count: {kind: ConfigMap, namespace: ns, equals: 9}\n"

ROBUST = "name: robust widget\nrobustness: {crash_after_each_write: true}\n" + PREAMBLE + """\
  - {apiVersion: toy.example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {replicas: 1}}
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the --lf cache (.fakeapi_cache) is written in the working folder
    (tmp_path / "fx" / "deep").mkdir(parents=True)
    (tmp_path / "fx" / "ok.yaml").write_text(PASSING)
    (tmp_path / "fx" / "deep" / "robust.yml").write_text(ROBUST)
    (tmp_path / "fx" / ".hidden").mkdir()
    (tmp_path / "fx" / ".hidden" / "x.yaml").write_text("broken: [")
    return tmp_path


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    ns = build_parser().parse_args(list(args))
    code = ns.handler(ns, out)
    return code, out.getvalue()


def test_run_prints_results_by_file_with_variants_folded_and_a_summary(tree: Path) -> None:
    code, out = cli("run", str(tree / "fx"))
    lines = out.splitlines()
    assert code == 0, out
    assert lines[0].endswith("fx/deep/robust.yml")
    assert lines[1].startswith("  PASS  robust widget  (")
    assert lines[2] == "        crash@1..2: 2 passed"
    assert lines[3].endswith("fx/ok.yaml")
    assert lines[4].startswith("  PASS  widgets scale  (4 reconciles, ")
    assert ", 2m0s virtual, " in lines[4] and lines[4].endswith(" ms)")
    assert lines[5].startswith("  PASS  nothing happens  (0 reconciles, ")
    assert " summary by folder " in out
    assert any(line.endswith("fx/deep  3 passed") for line in lines)
    assert any(line.endswith("fx       2 passed") for line in lines)
    assert lines[-1].startswith("5 passed, 0 failed in ")
    assert all(len(line) <= 200 for line in lines)


def test_run_shows_one_character_per_case_when_asked_or_on_a_terminal(tree: Path) -> None:
    (tree / "fx" / "bad.yaml").write_text(FAILING)
    code, out = cli("run", str(tree / "fx"), "--progress")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].endswith("fx/bad.yaml F")
    assert lines[1].endswith("fx/deep/robust.yml ...")
    assert lines[2].endswith("fx/ok.yaml ..")
    assert "  PASS  " not in out  # the progress replaces the result lines (-v shows both)
    assert "  PASS  widgets scale" in cli("run", str(tree / "fx"), "--progress", "-v")[1]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_run_shows_progress_on_a_terminal_by_itself(tree: Path) -> None:
    ns = build_parser().parse_args(["run", str(tree / "fx" / "ok.yaml")])
    out = _Terminal()
    assert ns.handler(ns, out) == 0
    first = out.getvalue().splitlines()[0]
    assert first.endswith("fx/ok.yaml ..") and "  PASS  " not in out.getvalue()


def test_run_fails_with_the_report_at_the_end_and_exit_status_1(tree: Path) -> None:
    (tree / "fx" / "bad.yaml").write_text(FAILING)
    code, out = cli("run", str(tree / "fx" / "bad.yaml"), str(tree / "fx" / "ok.yaml"), "--no-robustness")
    assert code == 1
    assert "  FAIL  a failing case  (" in out
    failures = out[out.index(" failures "):]
    assert "bad.yaml::a failing case ___" in failures
    assert "final expectations:" in failures
    assert "bad.yaml:6  expected 9, got 0 of ConfigMap in ns" in failures
    assert out.splitlines()[-1].startswith("2 passed, 1 failed in ")


def test_x_stops_at_the_first_failure(tree: Path) -> None:
    (tree / "fx" / "a.yaml").write_text(FAILING)
    code, out = cli("run", str(tree / "fx"), "-x")
    assert code == 1
    assert "stopped after the first failure (-x)" in out
    assert out.splitlines()[-1].startswith("0 passed, 1 failed in ")


def test_lf_reruns_only_the_last_failures(tree: Path) -> None:
    (tree / "fx" / "bad.yaml").write_text(FAILING)
    code, out = cli("run", str(tree / "fx"))
    assert code == 1 and out.splitlines()[-1].startswith("5 passed, 1 failed")
    cache = json.loads((tree / ".fakeapi_cache" / "lastfailed.json").read_text())
    assert cache["failed"] == [f"{tree / 'fx' / 'bad.yaml'}::a failing case"]
    code, out = cli("run", str(tree / "fx"), "--lf")
    assert "run-last-failure: rerun the 1 case(s) that failed last time" in out
    assert out.splitlines()[-1].startswith("0 passed, 1 failed")
    (tree / "fx" / "bad.yaml").write_text(FAILING.replace("equals: 9", "equals: 0"))
    code, out = cli("run", str(tree / "fx"), "--lf")
    assert code == 0 and out.splitlines()[-1].startswith("1 passed, 0 failed")
    code, out = cli("run", str(tree / "fx"), "--lf")
    assert "no failures recorded; running everything" in out and out.splitlines()[-1].startswith("6 passed")


def test_lf_keeps_its_cache_where_asked(tree: Path) -> None:
    (tree / "fx" / "bad.yaml").write_text(FAILING)
    cli("run", str(tree / "fx" / "bad.yaml"), "--cache-dir", str(tree / "elsewhere"))
    assert (tree / "elsewhere" / "lastfailed.json").is_file()
    assert not (tree / ".fakeapi_cache").exists()


def test_junit_xml(tree: Path) -> None:
    import xml.etree.ElementTree as ET

    (tree / "fx" / "bad.yaml").write_text(FAILING)
    (tree / "fx" / "broken.yaml").write_text("name: x\nstepz: []\n")
    cli("run", str(tree / "fx"), "--junit-xml", str(tree / "out" / "junit.xml"))
    suite = ET.parse(tree / "out" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("7", "1", "1")
    cases = {(c.get("classname", "").rpartition("/")[2], c.get("name")): c for c in suite.iter("testcase")}
    assert ("robust.yml", "robust widget[crash@2]") in cases
    failure = cases[("bad.yaml", "a failing case")].find("failure")
    assert failure is not None and "expected 9, got 0" in (failure.text or "")
    assert cases[("broken.yaml", "(load)")].find("error") is not None


def test_p_loads_a_bundle_module_and_says_so_when_it_cannot(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "mybundle.py").write_text(
        "from fakeapi.harness import Bundle\n"
        "def install(host, settings):\n"
        "    host.controller('noop').for_('ConfigMap').complete(lambda ctx, req: None)\n"
        "bundle = Bundle('cli-test-noop', install, controllers=('noop',))\n")
    (tree / "fx" / "b.yaml").write_text("name: hosted\nbundles: [cli-test-noop]\n")
    monkeypatch.syspath_prepend(str(tree))
    code, out = cli("run", str(tree / "fx" / "b.yaml"), "-p", "mybundle")
    assert code == 0, out
    code, out = cli("run", str(tree / "fx" / "b.yaml"), "-p", "mybundel")
    assert code == 4 and "cannot import plugin module `mybundel`" in out


def test_run_reports_broken_files(tree: Path) -> None:
    (tree / "fx" / "broken.yaml").write_text("name: x\nstepz: []\n")
    code, out = cli("run", str(tree / "fx" / "broken.yaml"))
    assert code == 1
    assert "  ERROR  the file does not load (below)" in out
    assert "broken.yaml:2:1: unknown key `stepz` in the case (did you mean `steps`?)" in out
    assert out.splitlines()[-1].startswith("0 passed, 0 failed, 1 broken file in ")


def test_k_selects_cases(tree: Path) -> None:
    code, out = cli("run", str(tree / "fx"), "-k", "widget and not robust")
    assert code == 0
    assert "widgets scale" in out and "robust" not in out and "nothing happens" not in out
    code, out = cli("run", str(tree / "fx"), "-k", "(nothing or scale) and not widget")
    assert "nothing happens" in out and out.count("PASS  ") == 1
    code, out = cli("run", str(tree / "fx"), "-k", "nomatch")
    assert code == 5


@pytest.mark.parametrize("expr", ["a and", "(a", "a b", "and a", ")"])
def test_bad_keyword_expressions(expr: str) -> None:
    with pytest.raises(KeywordError):
        keyword_matcher(expr)


def test_keyword_matcher() -> None:
    m = keyword_matcher("Widget or (gadget and not broken)")
    assert m("the widgets") and m("a gadget") and not m("broken gadget") and not m("other")
    assert keyword_matcher("")("anything")


def test_timeline_shows_steps_reconciles_calls_and_phases(tree: Path) -> None:
    code, out = cli("run", str(tree / "fx"), "--timeline", "widgets scale")
    assert code == 0
    assert out.startswith("== widgets scale (")
    assert "harness: step 1 (scale to three) begins" in out
    assert "harness: do toy.scale" in out
    assert "reconcile #" in out and "widget ns/w -> done" in out
    assert "    2026-01-01T00:00:00Z #" in out and "widget: create ConfigMap ns/w-2 -> 201" in out
    assert "phase: Widget ns/w: (none) -> Ready" in out
    assert "harness: do advance 2m" in out
    assert out.splitlines()[-1].startswith("PASS  ")
    code, out = cli("run", str(tree / "fx"), "--timeline", "no such case")
    assert code == 5


def test_schema_command(tmp_path: Path) -> None:
    code, out = cli("schema")
    assert code == 0 and json.loads(out) == build_schema()
    target = tmp_path / "s" / "fixture.schema.json"
    code, out = cli("schema", "-o", str(target))
    assert target.read_text() == schema_text()
    assert "yaml-language-server: $schema=" in out
    code, out = cli("schema", "--bundles")
    assert "toy.scale" in json.loads(out)["$defs"]["operation"]["properties"]


def test_main_without_a_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "run" in capsys.readouterr().out


def test_main_runs_a_command(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tree / "fx" / "ok.yaml")]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_subcommands_are_pluggable() -> None:
    seen: list[str] = []

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("--port", type=int, default=1)

    def handle(ns: argparse.Namespace) -> int:
        seen.append(f"port={ns.port}")
        return 0

    register_subcommand("demo-serve", add, handle, "a test subcommand")
    try:
        assert main(["demo-serve", "--port", "8"]) == 0
        assert seen == ["port=8"]
    finally:
        del SUBCOMMANDS["demo-serve"]


def test_fixture_files_order_and_hidden(tree: Path) -> None:
    files = fixture_files([str(tree / "fx")])
    assert [f.name for f in files] == ["robust.yml", "ok.yaml"]


def test_report_writes_an_html_page_per_failing_case_or_per_case(tree: Path) -> None:
    (tree / "fx" / "bad.yaml").write_text(FAILING)
    code, out = cli("run", str(tree / "fx"), "--report", str(tree / "pages"))
    assert code == 1 and f"reports: {tree / 'pages'}" in out
    pages = list((tree / "pages").iterdir())
    assert [p.name.startswith("bad-a-failing-case-") for p in pages] == [True]
    assert "a failing case" in pages[0].read_text(encoding="utf-8")
    cli("run", str(tree / "fx"), "--report", str(tree / "all"), "--report-all")
    assert len(list((tree / "all").iterdir())) == 6  # 3 cases, 2 crash variants, the failing case
