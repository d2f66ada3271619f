"""The pytest plugin, used from a separate project directory through pytester."""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from support import with_bytecode_cache

from fakeapi.harness import gcpolicy
from fakeapi.harness.plugin import glob_to_regex

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
#: Load the plugin by module name unless the installed package already does it through its entry point.
PLUGIN = [] if any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")) else [
    "-p", "fakeapi.harness.plugin"]

CONFTEST = '''
"""A project of its own: one controller, bundled for its fixtures."""
from fakeapi.machinery.errors import ApiError, is_already_exists
from fakeapi.harness.bundles import Bundle, register_bundle


def reconcile(ctx, req):
    cm = ctx.client.get("ConfigMap", req.name, req.namespace)
    if req.name.endswith("-copy") or (cm.get("data") or {}).get("copied"):
        return None
    try:
        ctx.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": req.name + "-copy", "namespace": req.namespace},
                           "data": dict(cm.get("data") or {})})
    except ApiError as e:
        if not is_already_exists(e):
            raise
    ctx.client.patch("ConfigMap", req.name, {"data": {"copied": "yes"}}, namespace=req.namespace)
    return None


def install(host, settings):
    host.controller("copier").for_("ConfigMap", "v1").complete(reconcile)


register_bundle(Bundle(name="copier", install=install, controllers=("copier",)))
'''

GOOD = """\
name: a config map is copied
tags: [copy, slow-ish]
bundles: [copier]
given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: src, namespace: default}, data: {k: v}}
expect:
  - object: {kind: ConfigMap, metadata: {name: src-copy, namespace: default}, data: {k: v}}
---
name: the copy is wrong on purpose
bundles: [copier]
given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: src, namespace: default}, data: {k: v}}
expect:
  - object:
      kind: ConfigMap
      metadata: {name: src-copy, namespace: default}
      data: {k: w}
"""

ROBUST = """\
name: copies survive crashes
bundles: [copier]
robustness: {crash_after_each_write: true}
given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}, data: {k: v}}
expect:
  - object: {kind: ConfigMap, metadata: {name: a-copy, namespace: default}, data: {k: v}}
  - object: {kind: ConfigMap, metadata: {name: a, namespace: default}, data: {copied: "yes"}}
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A temporary project: its own conftest (a bundle), fixtures folder and ini option."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nfakeapi_fixtures = ["cases/**/*.yaml"]\n')
    (pytester.path / "cases" / "sub").mkdir(parents=True)
    (pytester.path / "cases" / "sub" / "copy.yaml").write_text(GOOD)
    (pytester.path / "elsewhere.yaml").write_text("not: a fixture\n")
    return pytester


#: Plugins of the environment that the inner runs do without. pytester forgets every module an
#: inner run imports, so a plugin that imports its package lazily (hypothesis, at the end of a
#: session) imports, and assertion-rewrites, all of it again in every run: about 0.6 s each.
#: (``-p no:NAME`` is harmless when the plugin is not installed.)
QUIET = ["-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:hypothesispytest", "-p", "no:anyio",
         "-p", "no:benchmark"]


def run(p: pytest.Pytester, *args: str) -> pytest.RunResult:
    return p.runpytest(*PLUGIN, *QUIET, *args)


def test_cases_are_items_named_by_case(project: pytest.Pytester) -> None:
    result = run(project, "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "cases/sub/copy.yaml::a config map is copied",
        "cases/sub/copy.yaml::the copy is wrong on purpose",
        "2 tests collected*",
    ])
    assert "elsewhere.yaml" not in result.stdout.str()


def test_pass_and_fail_with_the_report(project: pytest.Pytester) -> None:
    result = run(project)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*_ the copy is wrong on purpose _*",
        "case `the copy is wrong on purpose` failed (cases/sub/copy.yaml:9)",
        "final expectations:",
        '  cases/sub/copy.yaml:17  data.k  expected "w"  got "v"  (ConfigMap default/src-copy)',
        "trace (*entries):",
    ])
    assert "Traceback" not in out and "runtest" not in out


def test_k_selects_by_case_name_and_tags_are_markers(project: pytest.Pytester) -> None:
    run(project, "-k", "copied").assert_outcomes(passed=1, deselected=1)
    run(project, "--strict-markers", "-m", "copy").assert_outcomes(passed=1, deselected=1)
    run(project, "--strict-markers", "-m", "slow_ish").assert_outcomes(passed=1, deselected=1)
    run(project, "-m", "fakeapi and not copy").assert_outcomes(failed=1, deselected=1)


def test_a_yaml_file_named_on_the_command_line_is_collected(project: pytest.Pytester) -> None:
    (project.path / "one.yaml").write_text("name: alone\n")
    run(project, "one.yaml").assert_outcomes(passed=1)


BROKEN = {
    "unknown key": ("name: a\nexpct: []\n", "cases/bad.yaml:2:1: unknown key `expct` in the case (did you mean `expect`?)"),
    "wrong type": ("name: a\nseed: many\n", "cases/bad.yaml:2:7: `seed` must be an integer, got a string `many`"),
    "bad duration": ("name: a\nsteps:\n  - settle: {for: 5 min}\n",
                     "cases/bad.yaml:3:19: `5 min` is not a Go duration (write it like 500ms, 30s, 5m or 1h30m)"),
    "unknown kind": ("name: a\nexpect:\n  - absent: {kind: Podd}\n",
                     "cases/bad.yaml:3:20: unknown kind `Podd` in an `absent` expectation (did you mean `Pod`?)"),
    "unknown bundle": ("name: a\nbundles: [copyer]\n",
                       "cases/bad.yaml:2:11: unknown bundle `copyer` (did you mean `copier`?)"),
    "unknown operation": ("name: a\nsteps:\n  - do:\n      - delet: {kind: Pod, name: x}\n",
                          "cases/bad.yaml:4:9: unknown key `delet` in an operation (did you mean `delete`?)"),
    "duplicate case name": ("name: a\n---\nname: a\n", "cases/bad.yaml:3:7: duplicate case name `a` (first at line 1)"),
    "invalid yaml": ("name: a\nsteps: [\n", "cases/bad.yaml:3:1: invalid YAML: *"),
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_broken_fixture_is_a_collection_error_without_traceback(project: pytest.Pytester, kind: str) -> None:
    text, line = BROKEN[kind]
    (project.path / "cases" / "bad.yaml").write_text(text)
    result = run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting cases/bad.yaml*", line])
    run(project, "--continue-on-collection-errors").assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert "Traceback" not in out
    assert "raise " not in out and "loader.py" not in out


def test_robustness_variants_are_items_and_all_run(project: pytest.Pytester) -> None:
    (project.path / "cases" / "robust.yaml").write_text(ROBUST)
    result = run(project, "cases/robust.yaml", "-v")
    # the plain run writes: create a-copy, patch a, and (for the copy's own event) nothing
    result.stdout.fnmatch_lines([
        "*robust.yaml::copies survive crashes PASSED*",
        "*robust.yaml::copies survive crashes[[]crash@1[]] PASSED*",
        "*robust.yaml::copies survive crashes[[]crash@2[]] PASSED*",
    ])
    result.assert_outcomes(passed=3)
    run(project, "cases/robust.yaml", "--fakeapi-no-robustness").assert_outcomes(passed=1)


def test_parallel_under_xdist(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.path / "cases" / "robust.yaml").write_text(ROBUST)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    # (three interpreters, the controller and two workers: bytecode cached outside the checkout, not none)
    for name, value in with_bytecode_cache(dict(os.environ)).items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    result = project.runpytest_subprocess(*PLUGIN, *QUIET, "-n", "2")
    result.assert_outcomes(passed=4, failed=1)


def test_record_writes_the_end_state_into_expect(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "new.yaml"
    path.write_text("# drafted\nname: draft\nbundles: [copier]\ngiven:\n"
                    "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: default}, data: {x: y}}\n")
    result = run(project, "cases/new.yaml", "--fakeapi-record")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["fakeapi: recorded the end state of 1 case(s) into 1 file(s)"])
    text = path.read_text()
    assert text.startswith("# drafted\nname: draft\n")
    assert "name: d-copy" in text and "copied: 'yes'" in text
    run(project, "cases/new.yaml").assert_outcomes(passed=1)


def test_report_options(project: pytest.Pytester) -> None:
    result = run(project, "-k", "wrong", "--fakeapi-trace-tail", "2")
    result.stdout.fnmatch_lines(["trace (last 2 of * entries):"])


@pytest.mark.parametrize(("glob", "path", "ok"), [
    ("fixtures/**/*.yaml", "fixtures/a.yaml", True),
    ("fixtures/**/*.yaml", "fixtures/x/y/a.yaml", True),
    ("fixtures/**/*.yaml", "other/a.yaml", False),
    ("fixtures/*.yaml", "fixtures/x/a.yaml", False),
    ("**/case_?.yml", "deep/er/case_1.yml", True),
    ("cases/[ab]*.yaml", "cases/b1.yaml", True),
    ("cases/[!ab]*.yaml", "cases/b1.yaml", False),
])
def test_globs(glob: str, path: str, ok: bool) -> None:
    assert bool(glob_to_regex(glob).match(path)) is ok


def test_record_refuses_to_overwrite_a_failing_expect(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "sub" / "copy.yaml"
    result = run(project, "cases/sub/copy.yaml", "--fakeapi-record")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["fakeapi: not recording `the copy is wrong on purpose`: its final expect fails*"
                                 "--fakeapi-record=overwrite*"])
    assert "data: {k: w}" in path.read_text()  # the hand-written expectation is kept


def test_record_overwrite_replaces_a_failing_expect_and_prints_the_diff(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "sub" / "copy.yaml"
    result = run(project, "cases/sub/copy.yaml", "-k", "wrong", "--fakeapi-record=overwrite")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["--- a/*copy.yaml", "+++ b/*copy.yaml", "-      data: {k: w}"])
    assert "data: {k: w}" not in path.read_text()
    run(project, "cases/sub/copy.yaml").assert_outcomes(passed=2)


def test_record_of_an_unchanged_expect_says_so(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "new.yaml"
    path.write_text("name: draft\nbundles: [copier]\ngiven:\n"
                    "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: default}, data: {x: y}}\n")
    run(project, "cases/new.yaml", "--fakeapi-record").stdout.fnmatch_lines(["+expect:"])
    result = run(project, "cases/new.yaml", "--fakeapi-record")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["fakeapi: the recorded expectations equal what the files held; nothing changed"])


def test_record_with_a_path_after_the_option_is_a_clear_error(project: pytest.Pytester) -> None:
    result = run(project, "--fakeapi-record", "cases/sub/copy.yaml")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*'cases/sub/copy.yaml' is not a recording mode (only `overwrite`)*"])


def test_report_writes_a_page_per_failing_case(project: pytest.Pytester) -> None:
    result = run(project, "--fakeapi-report", "pages")
    result.assert_outcomes(passed=1, failed=1)
    pages = sorted(p.name for p in (project.path / "pages").iterdir())
    assert len(pages) == 1 and pages[0].startswith("copy-the-copy-is-wrong-on-purpose-")
    result.stdout.fnmatch_lines(["HTML report: */pages/copy-the-copy-is-wrong-on-purpose-*.html"])
    run(project, "--fakeapi-report", "all", "--fakeapi-report-all").assert_outcomes(passed=1, failed=1)
    assert len(list((project.path / "all").iterdir())) == 2


def test_collected_cases_are_frozen_out_of_the_collector_until_the_session_ends() -> None:
    """With fixture items collected, what is alive then leaves the GC's generations; the end gives it back."""
    import gc

    from fakeapi.harness import plugin

    class Config:
        pass

    class Session:
        def __init__(self, items: list[object], config: object = None) -> None:
            self.items = items
            self.stash = pytest.Stash()
            self.config = config or Config()

    outer = gc.get_freeze_count()  # (this session's own freeze, when it collected fixture cases)
    thresholds = gc.get_threshold()
    try:
        gc.unfreeze()
        none = Session([object()])
        plugin.pytest_collection_finish(none)  # type: ignore[arg-type]
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
        cases = Session([object.__new__(plugin.FixtureItem)])
        plugin.pytest_collection_finish(cases)  # type: ignore[arg-type]
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(thresholds, gcpolicy.RUNNING))
        plugin.pytest_sessionfinish(cases)  # type: ignore[arg-type]
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
        plugin.pytest_sessionfinish(none)  # type: ignore[arg-type]
        assert gc.get_freeze_count() == 0
        worker = Config()
        worker.workerinput = {"workerid": "gw0"}  # type: ignore[attr-defined]
        in_worker = Session([object.__new__(plugin.FixtureItem)], worker)
        plugin.pytest_collection_finish(in_worker)  # type: ignore[arg-type]
        plugin.pytest_sessionfinish(in_worker)  # type: ignore[arg-type]
        assert gc.get_freeze_count() > 0, "an xdist worker's session is its process's last: the freeze stays"
        assert gc.get_threshold() == thresholds
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        if outer:
            gc.freeze()


def test_full_collections_wait_while_fixture_files_are_collected() -> None:
    """The collector's thresholds: full collections held back while collecting, the young generations
    collected less often while cases run, and the session's own thresholds given back at its end; a
    collector switched off is left alone."""
    import gc

    class Session:
        def __init__(self) -> None:
            self.stash = pytest.Stash()

    thresholds = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        s = Session()
        gcpolicy.collecting(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == (700, 10, gcpolicy.COLLECTING_FULL)
        gcpolicy.collecting(s)  # type: ignore[arg-type]  # (each further file: the first saved thresholds stay)
        gcpolicy.running(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == gcpolicy.RUNNING
        gcpolicy.restore(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == (700, 10, 10)
        gcpolicy.restore(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(100_000, 5, 10)  # (larger thresholds set before are kept)
        s = Session()
        gcpolicy.running(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == (100_000, 20, 10)
        gcpolicy.restore(s)  # type: ignore[arg-type]
        assert gc.get_threshold() == (100_000, 5, 10)
        for off in ("disabled", "threshold 0"):
            gc.set_threshold(700, 10, 10)
            if off == "disabled":
                gc.disable()
            else:
                gc.set_threshold(0)
            before = gc.get_threshold()
            s = Session()
            gcpolicy.collecting(s)  # type: ignore[arg-type]
            gcpolicy.running(s)  # type: ignore[arg-type]
            assert gc.get_threshold() == before, off
            gcpolicy.restore(s)  # type: ignore[arg-type]
            assert gc.get_threshold() == before, off
            gc.enable()
    finally:
        gc.enable()
        gc.set_threshold(*thresholds)
