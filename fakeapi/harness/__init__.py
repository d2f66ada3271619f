"""The fixture harness: YAML cases (docs/FIXTURES.md) run on a fresh server and host.

Modules, one job each:

- :mod:`~fakeapi.harness.loader`: YAML with positions, validation (closed schema + case checks) -> :class:`Case`
- :mod:`~fakeapi.harness.formatschema`: the JSON Schema of the format (shipped as ``format.schema.json``)
- :mod:`~fakeapi.harness.runner`: running a case -> :class:`CaseResult`
- :mod:`~fakeapi.harness.targets`: resolving targets by reading the store (untraced)
- :mod:`~fakeapi.harness.matcher`: partial matching with Go semantics, merge-key lists, markers
- :mod:`~fakeapi.harness.report`: failure reports
- :mod:`~fakeapi.harness.robustness`: crash/conflict variants per controller write
- :mod:`~fakeapi.harness.record`: writing the actual end state into ``expect``
- :mod:`~fakeapi.harness.plugin`: the pytest plugin (entry point ``pytest11: fakeapi``)
- :mod:`~fakeapi.harness.bundles`: bundles of controllers, simulators, operations and invariants

Use from Python::

    from fakeapi.harness import load_file, run_case, render_failure

    for case in load_file("fixtures/demo.yaml"):
        result = run_case(case)
        if not result.passed:
            print(render_failure(result))

May import: every layer below it (:mod:`fakeapi.host`, :mod:`fakeapi.http`,
:mod:`fakeapi.controllers`, :mod:`fakeapi.server` and what they stand on), never
:mod:`fakeapi.cli` or the package's top level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.machinery.lazymodule import lazy_exports

__all__ = [
    "ABSENT",
    "Bundle",
    "Case",
    "CaseResult",
    "Failure",
    "LoadError",
    "Mismatch",
    "OpContext",
    "Plan",
    "Problem",
    "Shape",
    "SourceMap",
    "StateReader",
    "Step",
    "TargetError",
    "Variant",
    "available_bundles",
    "build_schema",
    "controller_writes",
    "get_bundle",
    "kind_shape",
    "load_file",
    "load_text",
    "match",
    "matches",
    "plan_variants",
    "record_file",
    "recorded_expectations",
    "register_bundle",
    "render_failure",
    "resolve",
    "run_case",
    "schema_text",
    "strip_noise",
    "summary_line",
    "validate",
]

if TYPE_CHECKING:
    from fakeapi.harness.bundles import Bundle, OpContext, available_bundles, get_bundle, register_bundle
    from fakeapi.harness.formatschema import build_schema, schema_text
    from fakeapi.harness.loader import (
        Case,
        LoadError,
        Problem,
        SourceMap,
        Step,
        load_file,
        load_text,
        validate,
    )
    from fakeapi.harness.matcher import ABSENT, Mismatch, Shape, kind_shape, match, matches
    from fakeapi.harness.record import record_file, recorded_expectations
    from fakeapi.harness.report import render_failure, strip_noise, summary_line
    from fakeapi.harness.robustness import Plan, controller_writes, plan_variants
    from fakeapi.harness.runner import CaseResult, Failure, Variant, run_case
    from fakeapi.harness.targets import StateReader, TargetError, resolve

#: Where each public name lives (imported on first use: :func:`__getattr__`).
_HOMES = {
    **dict.fromkeys(["Bundle", "OpContext", "available_bundles", "get_bundle", "register_bundle"], "fakeapi.harness.bundles"),
    **dict.fromkeys(["build_schema", "schema_text"], "fakeapi.harness.formatschema"),
    **dict.fromkeys(["Case", "LoadError", "Problem", "SourceMap", "Step", "load_file", "load_text", "validate"], "fakeapi.harness.loader"),
    **dict.fromkeys(["ABSENT", "Mismatch", "Shape", "kind_shape", "match", "matches"], "fakeapi.harness.matcher"),
    **dict.fromkeys(["record_file", "recorded_expectations"], "fakeapi.harness.record"),
    **dict.fromkeys(["render_failure", "strip_noise", "summary_line"], "fakeapi.harness.report"),
    **dict.fromkeys(["Plan", "controller_writes", "plan_variants"], "fakeapi.harness.robustness"),
    **dict.fromkeys(["CaseResult", "Failure", "Variant", "run_case"], "fakeapi.harness.runner"),
    **dict.fromkeys(["StateReader", "TargetError", "resolve"], "fakeapi.harness.targets"),
}


# (issue 22: a process that needs one corner of the package, such as the pytest plugin's options in a
# pytest-xdist controller, which runs no case, does not load the rest)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
