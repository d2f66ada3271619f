"""The pytest plugin: fixture cases as test items.

Registered through the ``pytest11`` entry point ``fakeapi``, so any project
that installs the package can use it. Which YAML files are fixtures is the
``fakeapi_fixtures`` ini option: globs relative to the rootdir (``**`` spans
directories)::

    [tool.pytest.ini_options]
    fakeapi_fixtures = ["fixtures/**/*.yaml"]

A YAML file named on the command line is collected too. Each case (YAML
document) becomes one item ``<file>::<case name>``; ``-k`` selects by case
name; each tag becomes a marker (``-`` turned into ``_``; every item also
carries the ``fakeapi`` marker). A case with ``robustness`` also yields one
item per controller write, ``<case>[crash@k]`` / ``<case>[conflict@k]``,
planned at collection time by running the plain case once (see
:mod:`fakeapi.harness.robustness`), so ``pytest -n auto`` spreads them; when
that run passed, the plain item takes its verdict rather than running the
case again. Under pytest-xdist the workers share those runs
(:mod:`fakeapi.harness.planshare`): each is made by one of them.

A broken file is a collection error naming file, line, what is wrong and the
nearest valid key, without a Python traceback. A failed case shows every
mismatch with its fixture line, then the tail of the trace.

Options: ``--fakeapi-record`` writes the actual end state of the selected
cases into their ``expect`` and prints the diff (a failing ``expect`` is kept
and the case fails, unless ``--fakeapi-record=overwrite``; see
:mod:`fakeapi.harness.record`);
``--fakeapi-report DIR`` writes an HTML timeline of each failing case
(``--fakeapi-report-all``: of every case; see :mod:`fakeapi.harness.htmlreport`);
``--fakeapi-trace-tail N`` sets how much trace a failure shows;
``--fakeapi-show-noise`` keeps server-owned metadata in rendered objects;
``--fakeapi-no-robustness`` collects no variants; ``--fakeapi-budget N``
sets the reconcile budget of ``settle: true``.

Items share no state, so they can run in any order on any xdist worker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fakeapi.harness import gcpolicy, planshare
from fakeapi.harness.settle import DEFAULT_BUDGET

if TYPE_CHECKING:
    from fakeapi.harness.loader import Case
    from fakeapi.harness.runner import Variant

# (what collects and runs cases (the loader, the runner and all they stand on) is imported when a file is
# collected: a pytest-xdist controller, which collects nothing, then loads none of it; issue 22)

INI_FIXTURES = "fakeapi_fixtures"
RECORD_KEY = "fakeapi_record"
_GLOBS = pytest.StashKey[list[re.Pattern[str]]]()
_MARKERS = pytest.StashKey[set[str]]()
_FROZEN = pytest.StashKey[bool]()


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a path glob: ``**`` spans directories, ``*`` and ``?`` stay within one."""
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out += re.escape(c)
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += f"[{body}]"
                i = j
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ini option and the command-line options of the plugin."""
    parser.addini(INI_FIXTURES, "globs (relative to the rootdir) of fakeapi YAML fixture files",
                  type="linelist", default=[])
    group = parser.getgroup("fakeapi", "fakeapi fixture cases")
    group.addoption("--fakeapi-record", nargs="?", const="new", default=None, type=_record_mode, metavar="overwrite",
                    help="run the selected cases and write their actual end state into their expect; a failing "
                         "expect is kept (the case fails) unless --fakeapi-record=overwrite")
    group.addoption("--fakeapi-report", default=None, metavar="DIR",
                    help="write an HTML timeline of each failing case into DIR")
    group.addoption("--fakeapi-report-all", action="store_true", default=False,
                    help="with --fakeapi-report: a page for every case, passed ones too")
    group.addoption("--fakeapi-trace-tail", type=int, default=40, metavar="N",
                    help="trace entries shown in a failure report (default 40)")
    group.addoption("--fakeapi-show-noise", action="store_true", default=False,
                    help="keep server-owned metadata (uid, resourceVersion, ...) in rendered objects")
    group.addoption("--fakeapi-no-robustness", action="store_true", default=False,
                    help="do not collect the robustness variants of cases")
    group.addoption("--fakeapi-budget", type=int, default=DEFAULT_BUDGET, metavar="N",
                    help=f"reconcile budget of settle: true before a hot loop is reported (default {DEFAULT_BUDGET})")


def _record_mode(value: str) -> str:
    """The value of ``--fakeapi-record=MODE`` (``overwrite``); a path after a bare option is a clear error."""
    from fakeapi.harness.record import RECORD_MODES

    if value in RECORD_MODES:
        return value
    import argparse

    raise argparse.ArgumentTypeError(
        f"{value!r} is not a recording mode (only `overwrite`); put paths before --fakeapi-record, "
        "or write --fakeapi-record=overwrite")


def pytest_plugin_registered(plugin: Any) -> None:
    """A module loaded with ``pytest -p MODULE`` (or a conftest) registers the bundles it holds."""
    from types import ModuleType

    from fakeapi.harness.plugins import register_module_bundles

    if isinstance(plugin, ModuleType):
        register_module_bundles(plugin)


def pytest_configure(config: pytest.Config) -> None:
    """Compile the fixture globs; register the ``fakeapi`` marker; load ``FAKEAPI_PLUGINS``."""
    from fakeapi.harness.plugins import PluginError, env_plugins, load_plugin

    for name in env_plugins():
        try:
            load_plugin(name)
        except PluginError as e:
            raise pytest.UsageError(f"FAKEAPI_PLUGINS: {e}") from None
    config.stash[_GLOBS] = [glob_to_regex(g) for g in config.getini(INI_FIXTURES)]
    config.stash[_MARKERS] = set()
    config.addinivalue_line("markers", "fakeapi: a fakeapi YAML fixture case")
    if config.getoption("--fakeapi-record") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(config), "fakeapi-recorder")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(pytest-xdist's hook, in the controller) The folder where the workers share robustness plans."""
    planshare.configure_node(node)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the folder of shared robustness plans (the controller made it)."""
    planshare.unconfigure(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Once fixture cases are collected, move what is alive then (modules, schemas, the cases, their source
    maps and robustness plans) out of the garbage collector's generations (:func:`gc.freeze`).

    Those objects live for the whole session, and each full collection would walk them again while
    the cases run (issue 22: about a tenth of the corpus's CPU). Garbage made before that is collected
    first; :func:`pytest_sessionfinish` gives the objects back, so the end of the session collects as before.
    A session run inside another that froze already (pytester's inline runs) leaves the freeze alone: its
    :func:`gc.unfreeze` would also give back the enclosing session's objects, for the rest of that session.
    While the cases run, the young generations are collected less often (:mod:`fakeapi.harness.gcpolicy`).
    """
    import gc

    if gc.get_freeze_count() or not any(isinstance(item, FixtureItem) for item in session.items):
        gcpolicy.restore(session)
        return
    gc.collect()
    gc.freeze()
    session.stash[_FROZEN] = True
    gcpolicy.running(session)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Undo :func:`pytest_collection_finish`'s freeze and thresholds, so what the session made garbage is
    collected as usual.

    An xdist worker keeps the freeze: its session is the last thing the process runs, and the full
    collections at its end (pytest's, a conftest's) would walk every collected case again only for the
    process to exit.
    """
    gcpolicy.restore(session)
    if session.stash.get(_FROZEN, False) and not hasattr(session.config, "workerinput"):
        import gc

        gc.unfreeze()
        session.stash[_FROZEN] = False


def is_fixture_file(config: pytest.Config, path: Path) -> bool:
    """Whether ``path`` matches one of the ``fakeapi_fixtures`` globs."""
    try:
        rel = path.relative_to(config.rootpath).as_posix()
    except ValueError:
        rel = path.as_posix()
    return any(p.match(rel) for p in config.stash[_GLOBS])


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> FixtureFile | None:
    """Collect YAML files that match the globs (or that were named on the command line)."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    config = parent.config
    if is_fixture_file(config, file_path) or parent.session.isinitpath(file_path):
        gcpolicy.collecting(parent.session)
        f: FixtureFile = FixtureFile.from_parent(parent, path=file_path)
        return f
    return None


class FixtureFailure(Exception):
    """A case failed; the message is the full report."""


class FixtureFile(pytest.File):
    """One fixture file: one item per case, plus robustness variants."""

    def _display(self) -> str:
        try:
            return self.path.relative_to(self.config.rootpath).as_posix()
        except ValueError:
            return str(self.path)

    def collect(self) -> Iterator[FixtureItem]:
        """Load and validate the file (a LoadError becomes a traceback-free collection error)."""
        from fakeapi.harness.loader import LoadError, load_file

        try:
            cases = load_file(self.path, self._display())
        except LoadError as e:
            raise self.CollectError(e.render()) from None
        record = self.config.getoption("--fakeapi-record")
        variants = not record and not self.config.getoption("--fakeapi-no-robustness")
        budget = self.config.getoption("--fakeapi-budget")
        robust = [case for case in cases if case.robustness] if variants else []
        plans = planshare.plans(self.config, robust, budget) if robust else {}
        for case in cases:
            yield self._item(case, None)
            if case.index in plans:
                plan = plans[case.index]
                for v in plan.variants:
                    yield self._item(case, v)
                if plan.error:
                    yield self._item(case, None, name=f"{case.name}[robustness]", error=plan.error)

    def _item(self, case: Case, variant: Variant | None, *, name: str | None = None,
              error: str = "") -> FixtureItem:
        item_name = name or (case.name if variant is None else f"{case.name}[{variant.name}]")
        item: FixtureItem = FixtureItem.from_parent(self, name=item_name, case=case, variant=variant,
                                                    plan_error=error)
        item.add_marker("fakeapi")
        registered = self.config.stash[_MARKERS]
        for tag in case.tags:
            marker = tag.replace("-", "_")
            if marker not in registered:
                self.config.addinivalue_line("markers", f"{marker}: fakeapi fixture tag `{tag}`")
                registered.add(marker)
            item.add_marker(marker)
        return item


class FixtureItem(pytest.Item):
    """One case (or one robustness variant of it)."""

    def __init__(self, *, case: Case, variant: Variant | None = None, plan_error: str = "", **kw: Any) -> None:
        super().__init__(**kw)
        self.case = case
        self.variant = variant
        self.plan_error = plan_error

    def runtest(self) -> None:
        """Run the case on a fresh server; raise FixtureFailure with the report when it fails."""
        from fakeapi.harness.report import render_failure
        from fakeapi.harness.robustness import take_plain
        from fakeapi.harness.runner import run_case

        if self.plan_error:
            raise FixtureFailure(f"case `{self.case.name}` ({self.case.location}): robustness variants not "
                                 f"planned: {self.plan_error}")
        config = self.config
        record = config.getoption("--fakeapi-record")
        report_dir = config.getoption("--fakeapi-report")
        budget = config.getoption("--fakeapi-budget")
        result = None
        if self.variant is None and not record and not report_dir:
            result = take_plain(self.case, budget)  # (this process ran it, checked, to plan its variants)
        if result is None:
            result = run_case(self.case, self.variant, budget=budget, record_objects=bool(report_dir))
        tail = config.getoption("--fakeapi-trace-tail")
        noise = config.getoption("--fakeapi-show-noise")
        page = ""
        if report_dir and (not result.passed or config.getoption("--fakeapi-report-all")):
            from fakeapi.harness.htmlreport import write_case_report

            written = write_case_report(Path(report_dir).resolve(), result)
            page = f"\nHTML report: {written}"
            self.user_properties.append(("fakeapi_report", str(written)))
        if record:
            from fakeapi.harness.record import recorded_expectations, refusal

            why = refusal(result, record)
            if why:
                raise FixtureFailure(f"fakeapi: not recording `{self.case.name}`: {why}\n"
                                     + render_failure(result, tail=tail, show_noise=noise))
            payload = {"file": str(self.path), "name": self.case.name, "expect": recorded_expectations(result)}
            self.user_properties.append((RECORD_KEY, json.dumps(payload)))
            return
        if not result.passed:
            raise FixtureFailure(render_failure(result, tail=tail, show_noise=noise) + page)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The case report, without a Python traceback."""
        if isinstance(excinfo.value, FixtureFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the case is: its file and the line of its name."""
        return self.path, self.case.line - 1, self.name


class Recorder:
    """Collects recorded end states (also from xdist workers, through the reports) and writes them at the end.

    Registered per session when ``--fakeapi-record`` is given; writes only in the main process.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the recorded expectations a passed item sent."""
        if report.when != "call" or not report.passed:
            return
        for key, value in report.user_properties:
            if key == RECORD_KEY:
                data = json.loads(str(value))
                self.records.setdefault(data["file"], {})[data["name"]] = data["expect"]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write the recorded expectations into their files."""
        if hasattr(self.config, "workerinput"):
            return
        from fakeapi.harness.loader import LoadError
        from fakeapi.harness.record import record_file

        written = 0
        errors: list[str] = []
        diffs: list[str] = []
        for file, by_case in sorted(self.records.items()):
            try:
                diffs.append(record_file(file, by_case))
                written += len(by_case)
            except (LoadError, ValueError, OSError) as e:
                errors.append(f"{file}: {e}")
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"fakeapi: recorded the end state of {written} case(s) into {len(self.records)} file(s)")
            changed = [d for d in diffs if d]
            if written and not changed:
                tr.write_line("fakeapi: the recorded expectations equal what the files held; nothing changed")
            for d in changed:
                for line in d.splitlines():
                    tr.write_line(line, green=line.startswith("+") and not line.startswith("+++"),
                                  red=line.startswith("-") and not line.startswith("---"))
            for err in errors:
                tr.write_line(f"fakeapi: could not record {err}", red=True)
