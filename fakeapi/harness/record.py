"""Recording: write a case's actual end state into its ``expect``, for review before committing.

``pytest --fakeapi-record`` (or :func:`record_file`) runs the selected cases,
takes every object the case touched after ``given``
was stored (created, changed or deleted by a step, a controller or a
simulator), and writes one expectation per object into the case's final
``expect``: ``object:`` with what a reader cares about (no uid,
resourceVersion, generation, creationTimestamp or managedFields; owner
references without uids) or ``absent:`` for an object that is gone.

Only the lines of the top-level ``expect`` block are replaced (or a new
block is appended to the document); every other line of the file, comments
included, stays as it was. Step expectations are left alone.

Recording never hides a failure (:func:`refusal`): a case whose final
``expect`` fails is not recorded unless ``--fakeapi-record=overwrite`` asks
for it, and a case failing elsewhere is reported as failed. What a recording
changed is printed as a unified diff.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml

from fakeapi.harness.loader import Case, load_text
from fakeapi.harness.runner import CaseResult
from fakeapi.harness.targets import StateReader

Obj = dict[str, Any]

#: Kinds never recorded (noise, or set up rather than produced).
SKIP_KINDS = frozenset({"Event", "CustomResourceDefinition"})
_META_KEEP = ("name", "namespace", "labels", "annotations", "finalizers", "ownerReferences", "deletionTimestamp")
_OWNER_KEEP = ("apiVersion", "kind", "name", "controller", "blockOwnerDeletion")


def clean_object(obj: Obj) -> Obj:
    """An object as a reader wants it in an expectation: no server-owned metadata."""
    out: Obj = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
    meta = obj.get("metadata") or {}
    m: Obj = {}
    for k in _META_KEEP:
        if k not in meta or meta[k] in (None, [], {}, ""):
            continue
        v = meta[k]
        if k == "ownerReferences":
            v = [{rk: r[rk] for rk in _OWNER_KEEP if rk in r} for r in v if isinstance(r, dict)]
        if k == "labels" and obj.get("kind") == "Namespace":
            v = {lk: lv for lk, lv in v.items() if lk != "kubernetes.io/metadata.name"}
            if not v:
                continue
        m[k] = v
    out["metadata"] = m
    for k, v in obj.items():
        if k not in ("apiVersion", "kind", "metadata"):
            out[k] = v
    return out


def recorded_expectations(result: CaseResult) -> list[Obj]:
    """One expectation per object the case touched after ``given``, in the order first touched."""
    api = result.api
    if api is None:
        return []
    reader = StateReader(api)
    touched: list[tuple[str, str, str]] = []
    for c in api.trace.calls_since(result.case_mark):
        key = (c.kind, c.namespace, c.name)
        if c.wrote and c.kind not in SKIP_KINDS and c.name and key not in touched:
            touched.append(key)
    out: list[Obj] = []
    for kind, ns, name in touched:
        k = reader.kind(kind)
        if k is None:
            continue
        obj = reader.get(k, ns or None, name)
        if obj is None:
            target: Obj = {"kind": k.kind}
            if ns:
                target["namespace"] = ns
            target["name"] = name
            out.append({"absent": target})
        else:
            out.append({"object": clean_object(obj)})
    return out


# ------------------------------------------------------------------------------ YAML out


class _FlowMap(dict[str, Any]):
    """A mapping dumped in flow style (``{name: x, namespace: y}``)."""


class _Dumper(yaml.SafeDumper):
    """Block style with indented sequences; small flat maps in flow style; no aliases."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_flow(dumper: yaml.SafeDumper, data: _FlowMap) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False)


_Dumper.add_representer(_FlowMap, _represent_flow)
_Dumper.add_representer(dict, _represent_dict)


def _styled(value: Any) -> Any:
    if isinstance(value, list):
        return [_styled(v) for v in value]
    if not isinstance(value, dict):
        return value
    flat = all(not isinstance(v, (dict, list)) for v in value.values())
    if value and flat and len(value) <= 4 and sum(len(str(k)) + len(str(v)) + 4 for k, v in value.items()) <= 70:
        return _FlowMap(value)
    return {k: _styled(v) for k, v in value.items()}


def render_expect(items: list[Obj], indent: int = 0) -> list[str]:
    """The lines of an ``expect:`` block holding ``items`` (indented by ``indent`` spaces)."""
    if not items:
        text = "expect: []\n"
    else:
        text = yaml.dump({"expect": [_styled(i) for i in items]}, Dumper=_Dumper, sort_keys=False,
                         allow_unicode=True, width=110, default_flow_style=False)
    pad = " " * indent
    return [pad + line if line else line for line in text.splitlines()]


def splice(text: str, records: dict[str, list[Obj]], file: str = "<string>") -> str:
    """``text`` with the final ``expect`` of each named case replaced by the recorded expectations."""
    cases = [c for c in load_text(text, file) if c.name in records]
    lines = text.splitlines()
    for case in sorted(cases, key=lambda c: c.line, reverse=True):
        if case.flow:
            raise ValueError(f"{file}:{case.line}: cannot record into a flow-style document")
        key = case.source.pos(("name",), key=True)
        indent = key.column - 1 if key else 0
        block = render_expect(records[case.name], indent)
        if case.expect_lines is not None:
            start, end = case.expect_lines
            lines[start:end + 1] = block
        else:
            at = case.last_line + 1
            lines[at:at] = block
    return "\n".join(lines) + "\n"


def record_file(path: str | Path, records: dict[str, list[Obj]]) -> str:
    """Rewrite a fixture file's final ``expect`` blocks from ``records`` (case name -> expectations).

    Returns the unified diff of what changed (``""`` when nothing did), so
    that the recorder can show it: a recording is reviewed, never trusted blind.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    out = splice(text, records, str(path))
    if out == text:
        return ""
    p.write_text(out, encoding="utf-8")
    return "".join(difflib.unified_diff(text.splitlines(keepends=True), out.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


#: ``--fakeapi-record`` modes: ``new`` (the default) refuses to replace a failing ``expect``.
RECORD_MODES = ("new", "overwrite")


def refusal(result: CaseResult, mode: str) -> str:
    """Why a run must not be recorded (``""`` when it may): recording never hides a failure.

    A failure anywhere but the final expectations (a step's expectations, an
    operation that failed, a hot loop) is always a failure. A failing final
    ``expect`` is replaced only in ``overwrite`` mode: it may be a hand-written
    expectation that caught a real bug.
    """
    if result.aborted:
        return "the case stopped early"
    others = [f for f in result.failures if f.phase != "final expectations"]
    if others:
        return "the case fails before its final expect (recording writes only the final expect)"
    if result.failures and mode != "overwrite":
        return ("its final expect fails: the expectation may be right and the code wrong; fix one of them, or "
                "rerun with --fakeapi-record=overwrite to replace the expect with what happened")
    return ""


def record_case(case: Case, result: CaseResult) -> dict[str, list[Obj]]:
    """``{case name: recorded expectations}`` for one run."""
    return {case.name: recorded_expectations(result)}
