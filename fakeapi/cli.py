"""The ``fakeapi`` command: run fixture cases without pytest, write the fixture schema.

``fakeapi run [paths...] [-k EXPR] [-x] [--lf] [-p MODULE] [--junit-xml PATH] [--report DIR]``
runs fixture files or folders (default: ``fixtures/``) and reports like
pytest (:mod:`fakeapi.harness.session`): progress characters on a
terminal, results grouped by file with robustness variants folded
(``crash@1..7: 7 passed``), the failures in full, a summary by folder and
the totals (``12 passed, 1 failed in 0.31s``). The exit status is 1 when a
case fails or a file is broken, 5 when no case was selected, 4 for a bad
``-k`` or plugin, else 0. ``--timeline CASE`` (a case name, or part of one)
prints that case's whole story instead: each step and operation, each
reconcile with the API calls it made and their results, each object's
``status.phase`` changes, all on the virtual clock. ``--report DIR`` writes
an HTML timeline of each failing case (:mod:`fakeapi.harness.htmlreport`).

``fakeapi schema [-o PATH] [--bundles]`` writes the JSON Schema of the
fixture format. Editors that speak the YAML language server protocol (VS
Code's YAML extension, yamlls in Neovim, Helix, ...) then complete keys and
flag mistakes when a fixture's first line points at it::

    # yaml-language-server: $schema=../fixture.schema.json

(the path is relative to the YAML file). ``--bundles`` adds the operations,
services and invariants of every installed bundle.

Subcommands are registered in :data:`SUBCOMMANDS` (name -> (add_arguments,
handler, help)); :func:`register_subcommand` adds one.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

AddArguments = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Subcommand:
    """One ``fakeapi`` subcommand."""

    add_arguments: AddArguments
    handler: Handler
    help: str = ""


#: Subcommands by name.
SUBCOMMANDS: dict[str, Subcommand] = {}


def register_subcommand(name: str, add_arguments: AddArguments, handler: Handler, help: str = "") -> None:
    """Add (or replace) a subcommand of the ``fakeapi`` command."""
    SUBCOMMANDS[name] = Subcommand(add_arguments, handler, help)


# ------------------------------------------------------------------------------ -k expressions


class KeywordError(ValueError):
    """A malformed ``-k`` expression."""


def keyword_matcher(expr: str) -> Callable[[str], bool]:
    """A predicate for ``-k``: words match case-insensitive substrings; ``and``, ``or``, ``not``, parentheses."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expr)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        return tok

    def parse_or() -> Callable[[str], bool]:
        left = parse_and()
        while peek() == "or":
            take()
            right = parse_and()
            left = (lambda a, b: lambda s: a(s) or b(s))(left, right)
        return left

    def parse_and() -> Callable[[str], bool]:
        left = parse_not()
        while peek() == "and":
            take()
            right = parse_not()
            left = (lambda a, b: lambda s: a(s) and b(s))(left, right)
        return left

    def parse_not() -> Callable[[str], bool]:
        if peek() == "not":
            take()
            inner = parse_not()
            return lambda s: not inner(s)
        return parse_atom()

    def parse_atom() -> Callable[[str], bool]:
        tok = peek()
        if tok is None:
            raise KeywordError(f"-k {expr!r}: unexpected end of expression")
        if tok == "(":
            take()
            inner = parse_or()
            if peek() != ")":
                raise KeywordError(f"-k {expr!r}: missing )")
            take()
            return inner
        if tok in (")", "and", "or"):
            raise KeywordError(f"-k {expr!r}: unexpected {tok!r}")
        word = take().lower()
        return lambda s: word in s.lower()

    if not expr.strip():
        return lambda s: True
    fn = parse_or()
    if pos != len(tokens):
        raise KeywordError(f"-k {expr!r}: unexpected {tokens[pos]!r}")
    return fn


# ------------------------------------------------------------------------------ run


def fixture_files(paths: Iterable[str]) -> list[Path]:
    """YAML files named, or found under the folders named, in a stable order."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = [f for f in path.rglob("*") if f.suffix in (".yaml", ".yml") and f.is_file()
                     and not any(part.startswith(".") for part in f.relative_to(path).parts)]
            out.extend(sorted(found))
        else:
            out.append(path)
    return out


def _add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", help="fixture files or folders (default: fixtures/)")
    p.add_argument("-p", "--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                   help="import MODULE and register the bundles it defines (as pytest's -p); repeatable")
    p.add_argument("-k", dest="keyword", default="", metavar="EXPR",
                   help="only cases whose name matches (words, and, or, not, parentheses)")
    p.add_argument("--timeline", metavar="CASE", default=None,
                   help="print the timeline of the case with this name (or part of it)")
    p.add_argument("--no-robustness", action="store_true", help="skip robustness variants")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("--lf", "--last-failed", dest="lf", action="store_true",
                   help="run only the cases that failed last time (all when none did)")
    p.add_argument("--cache-dir", default=".fakeapi_cache", metavar="DIR",
                   help="where --lf keeps the last failures (default: .fakeapi_cache)")
    p.add_argument("--junit-xml", metavar="PATH", default=None, help="write a JUnit XML report for CI")
    p.add_argument("--report", metavar="DIR", default=None,
                   help="write an HTML timeline of each failing case into DIR (all cases with --report-all)")
    p.add_argument("--report-all", action="store_true", help="with --report: a page for every case")
    p.add_argument("-v", "--verbose", action="store_true", help="list every case even when showing progress")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="one character per case while running (default: when the output is a terminal)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress characters")
    p.add_argument("--max-repeated-errors", type=int, default=None, metavar="N",
                   help="end a case when a reconcile fails N times in a row with the same error "
                        "(default: the case's max_repeated_errors, else 5; 0: never)")
    p.add_argument("--trace-tail", type=int, default=40, metavar="N", help="trace entries in a failure report")
    p.add_argument("--show-noise", action="store_true", help="keep server-owned metadata in rendered objects")


def _indent(text: str, pad: str = "    ") -> str:
    return "\n".join(pad + line if line else line for line in text.splitlines())


def run_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``fakeapi run``: run the cases (see :mod:`fakeapi.harness.session` for the output); the exit status."""
    from fakeapi.harness.loader import LoadError, load_file
    from fakeapi.harness.report import render_failure
    from fakeapi.harness.robustness import plan_variants
    from fakeapi.harness.runner import run_case
    from fakeapi.harness.session import Outcome, Session, read_last_failed, write_junit, write_last_failed

    out = out or sys.stdout
    from fakeapi.harness.plugins import PluginError, env_plugins, load_plugin

    try:
        for name in [*env_plugins(), *args.plugins]:
            load_plugin(name)
    except PluginError as e:
        print(f"error: {e}", file=out)
        return 4
    paths = args.paths or (["fixtures"] if Path("fixtures").is_dir() else ["."])
    try:
        selected = keyword_matcher(args.keyword)
    except KeywordError as e:
        print(f"error: {e}", file=out)
        return 4
    if args.timeline is not None:
        return _timeline(paths, args.timeline, out)
    cache_dir = Path(args.cache_dir)
    last_failed = read_last_failed(cache_dir)
    only = last_failed if args.lf and last_failed else None
    if args.lf:
        print(f"run-last-failure: rerun the {len(last_failed)} case(s) that failed last time" if only
              else "run-last-failure: no failures recorded; running everything", file=out)
    tty = args.progress if args.progress is not None else out.isatty()
    session = Session(out, progress=tty, verbose=args.verbose)
    report_dir = Path(args.report) if args.report else None

    def report(result: Any) -> str:
        return render_failure(result, tail=args.trace_tail, show_noise=args.show_noise)

    def record(o: Outcome) -> bool:
        session.add(o)
        if report_dir is not None and o.result is not None and (args.report_all or not o.passed):
            from fakeapi.harness.htmlreport import write_case_report

            write_case_report(report_dir, o.result)
        return not o.passed and args.exitfirst

    stop = False
    for f in fixture_files(paths):
        if stop:
            break
        try:
            cases = load_file(f)
        except LoadError as e:
            stop = record(Outcome(str(f), "", report=e.render()))
            continue
        for case in cases:
            if stop:
                break
            if not selected(case.name) or (only is not None and f"{case.file}::{case.name}" not in only):
                continue
            t0 = time.perf_counter()
            result = run_case(case, max_repeated_errors=args.max_repeated_errors, record_objects=bool(args.report))
            wall = time.perf_counter() - t0
            stop = record(Outcome(case.file, case.name, "", result.passed, result, wall,
                                  "" if result.passed else report(result)))
            if stop or args.no_robustness or not case.robustness:
                continue
            plan = plan_variants(case, result)
            if plan.error:
                stop = record(Outcome(case.file, case.name, "robustness", False, None, 0.0,
                                      f"robustness variants not planned: {plan.error}"))
            for v in plan.variants:
                if stop:
                    break
                if not selected(f"{case.name}[{v.name}]"):
                    continue
                t0 = time.perf_counter()
                vr = run_case(case, v, max_repeated_errors=args.max_repeated_errors,
                              record_objects=bool(args.report))
                stop = record(Outcome(case.file, case.name, v.name, vr.passed, vr, time.perf_counter() - t0,
                                      "" if vr.passed else report(vr)))
    session.finish(stopped_early=stop)
    write_last_failed(cache_dir, last_failed, session.outcomes)
    if args.junit_xml:
        write_junit(Path(args.junit_xml), session.outcomes, time.perf_counter() - session.started)
    if report_dir is not None and report_dir.is_dir():
        print(f"reports: {report_dir}", file=out)
    if session.failed:
        return 1
    return 0 if session.outcomes else 5


def _timeline(paths: list[str], wanted: str, out: TextIO) -> int:
    from fakeapi.harness.loader import LoadError, load_file
    from fakeapi.harness.report import render_failure, summary_line
    from fakeapi.harness.runner import run_case

    matches = []
    for f in fixture_files(paths):
        try:
            cases = load_file(f)
        except LoadError:
            continue
        exact = [c for c in cases if c.name == wanted]
        matches.extend(exact or [c for c in cases if wanted.lower() in c.name.lower()])
    if not matches:
        print(f"no case named {wanted!r} under {', '.join(paths)}", file=out)
        return 5
    status = 0
    for case in matches:
        t0 = time.perf_counter()
        result = run_case(case, timeline=True)
        wall = time.perf_counter() - t0
        print(f"== {case.name} ({case.location})", file=out)
        if result.host is not None:
            print(result.host.render_trace(), file=out)
        print(summary_line(result, wall), file=out)
        if not result.passed:
            status = 1
            print(_indent(render_failure(result, tail=0)), file=out)
    return status


# ------------------------------------------------------------------------------ schema


def _add_schema_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", default="-", metavar="PATH", help="where to write it (default: stdout)")
    p.add_argument("--bundles", action="store_true",
                   help="include the operations, services and invariants of the installed bundles")


def schema_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``fakeapi schema``: write the fixture JSON Schema."""
    from fakeapi.harness.formatschema import schema_text

    text = schema_text(bundles=args.bundles)
    if args.output == "-":
        (out or sys.stdout).write(text)
    else:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}; start a fixture with: # yaml-language-server: $schema=<relative path to it>",
              file=out or sys.stdout)
    return 0


register_subcommand("run", _add_run_arguments, run_command, "run fixture cases without pytest")
register_subcommand("schema", _add_schema_arguments, schema_command, "write the JSON Schema of the fixture format")

# `fakeapi serve` (issue 7, fakeapi over HTTP): defined in fakeapi/serve_cmd.py.
from fakeapi import serve_cmd as _serve_cmd  # noqa: E402

register_subcommand("serve", _serve_cmd.add_arguments, _serve_cmd.run, _serve_cmd.SERVE_HELP)


# ------------------------------------------------------------------------------ main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="fakeapi",
        description="A faithful in-memory Kubernetes API server, a controller host and a YAML fixture harness.",
        epilog="Editor support: `fakeapi schema -o fixtures/fixture.schema.json`, then start each fixture with "
               "`# yaml-language-server: $schema=fixture.schema.json` (path relative to the YAML file).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, cmd in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(handler=cmd.handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fakeapi`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
