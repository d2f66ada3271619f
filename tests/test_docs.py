"""The documentation is executable: every code block of README.md, docs/ and fixtures/README.md is run.

The convention (docs/README.md "Code blocks"), by a block's info string:

- ``python``: executed; the blocks of one page run in order in one namespace
  (a later block may use what an earlier one defined), in a scratch folder;
- ``yaml``: parsed; each document that is a fixture case is loaded (validated)
  and run, robustness variants included, and must pass (the ``greeter``
  bundle of examples/greeter and ``arc`` are available);
  ``yaml fragment``: parsed only (a part of a case, shown on its own);
- ``sh``: run with bash (``set -e``) in a scratch copy of the repository's
  fixtures and examples, ``fakeapi`` and ``pytest`` being this checkout's;
  ``sh no-run``: syntax-checked only (it installs software);
- ``python fragment``: an excerpt of a file of the repository, which an HTML
  comment ``<!-- from <path> -->`` right before the block names: the test
  checks the block is a verbatim part of that file (so an excerpt cannot
  drift from the code it shows); any block may carry such a comment;
- ``toml`` and ``json``: parsed; ``text``: output, listings and pictures, not run.

Any other info string fails, so a new block cannot slip past unrun. Also here:
the fixture format reference documents every key of the JSON Schema, and no
page, package file or schema refers to the developers' ``shared/`` folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import with_bytecode_cache

from fakeapi.harness import load_text, plan_variants, render_failure, run_case
from fakeapi.harness.formatschema import ASSERTIONS, CORE_OPERATIONS, MARKERS, build_schema
from fakeapi.harness.plugins import load_plugin

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", REPO / "fixtures" / "README.md", *(REPO / "docs").glob("*.md")])
KINDS = {"python", "python fragment", "yaml", "yaml fragment", "sh", "sh no-run", "toml", "json", "text"}
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One fenced code block."""

    page: Path
    line: int
    info: str
    text: str
    #: The file an excerpt comes from (``<!-- from <path> -->`` right before the block), or "".
    source: str = ""

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rpartition("\n")[2]
        src = re.fullmatch(r"<!-- from (\S+) -->", before.strip())
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2),
                         src.group(1) if src else ""))
    return out


ALL = [b for p in PAGES for b in blocks(p)]


def _bundles() -> None:
    sys.path.insert(0, str(REPO / "examples" / "greeter")) if str(REPO / "examples" / "greeter") not in sys.path \
        else None
    load_plugin("greeter.bundle")
    load_plugin("reconcilers.bundle")


def test_the_pages_have_code_blocks_and_only_known_kinds() -> None:
    assert len(ALL) > 40
    unknown = [f"{b.id} ```{b.info}" for b in ALL if b.info not in KINDS]
    assert not unknown, f"code blocks of no known kind (see this module's docstring): {unknown}"


# ------------------------------------------------------------------------------ python


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.info == "python" for b in blocks(p))],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    _bundles()
    _scratch_copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for b in blocks(page):
        if b.info != "python":
            continue
        code = compile("\n" * (b.line) + b.text, str(page), "exec")
        try:
            exec(code, namespace)
        except Exception as e:
            raise AssertionError(f"{b.id}: the block raised {type(e).__name__}: {e}") from e
    capsys.readouterr()


@pytest.mark.parametrize("block", [b for b in ALL if b.source or b.info == "python fragment"], ids=lambda b: b.id)
def test_excerpts_are_verbatim_parts_of_their_files(block: Block) -> None:
    assert block.source, f"{block.id}: a python fragment needs <!-- from <path> --> right before it"
    source = (REPO / block.source).read_text(encoding="utf-8")
    assert block.text in source, f"{block.id} is not an excerpt of {block.source} any more"


# ------------------------------------------------------------------------------ yaml


def _is_case(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("name"), str) and bool(
        set(doc) & {"given", "steps", "expect", "bundles", "robustness"})


@pytest.mark.parametrize("block", [b for b in ALL if b.info.startswith("yaml")], ids=lambda b: b.id)
def test_yaml_blocks_parse_and_cases_pass(block: Block) -> None:
    docs = list(yaml.safe_load_all(block.text))
    assert docs, f"{block.id}: an empty block"
    if block.info == "yaml fragment" or not any(_is_case(d) for d in docs):
        return
    _bundles()
    for case in load_text(block.text, block.id):
        result = run_case(case)
        assert result.passed, render_failure(result)
        plan = plan_variants(case, result)
        assert not plan.error, plan.error
        for v in plan.variants:
            vr = run_case(case, v)
            assert vr.passed, render_failure(vr)


# ------------------------------------------------------------------------------ sh


def _scratch_copy(root: Path) -> Path:
    for name in ("fixtures", "examples"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    for name in ("pyproject.toml", "conftest.py", "tests/bytecode_cache.py"):  # (pyproject's -p bytecode_cache)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    return root


def _shims(bindir: Path) -> None:
    bindir.mkdir()
    # (scripts, not symlinks: a link to a venv's python outside the venv's bin/ runs the base
    # interpreter, without the venv's packages)
    scripts = {"fakeapi": " -m fakeapi.cli", "pytest": " -m pytest", "python": "", "python3": ""}
    for name, args in scripts.items():
        shim = bindir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}"{args} "$@"\n')
        shim.chmod(0o755)


def _sh_env(bindir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    if not any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")):
        env["PYTEST_PLUGINS"] = "fakeapi.harness.plugin"
    if not any(ep.name == "arc" for ep in entry_points(group="fakeapi.bundles")):
        env["FAKEAPI_PLUGINS"] = "reconcilers.bundle"
    # (bytecode in the cache folder outside the checkout and the scratch copy, not none: each block
    # starts several interpreters)
    return with_bytecode_cache(env)


@pytest.mark.parametrize("block", [b for b in ALL if b.info.startswith("sh")], ids=lambda b: b.id)
def test_shell_blocks_run(block: Block, tmp_path: Path) -> None:
    if block.info == "sh no-run":
        r = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True, check=False)
        assert r.returncode == 0, f"{block.id}: {r.stderr}"
        return
    # never install anything from a test: such a block must say `sh no-run`
    assert not re.search(r"\bpip\b|apt-get|\bsudo\b", block.text), f"{block.id} installs software: mark it sh no-run"
    root = _scratch_copy(tmp_path / "repo")
    _shims(tmp_path / "bin")
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=root, env=_sh_env(tmp_path / "bin"),
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, f"{block.id} exited {r.returncode}:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"


# ------------------------------------------------------------------------------ toml, json


@pytest.mark.parametrize("block", [b for b in ALL if b.info in ("toml", "json")], ids=lambda b: b.id)
def test_toml_and_json_blocks_parse(block: Block) -> None:
    if block.info == "toml":
        tomllib.loads(block.text)
    else:
        json.loads(block.text)


# ------------------------------------------------------------------------------ the reference is complete


def _schema_keys(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for k, v in (node.get("properties") or {}).items():
            out.add(k)
            _schema_keys(v, out)
        for k, v in node.items():
            if k != "properties":
                _schema_keys(v, out)
    elif isinstance(node, list):
        for v in node:
            _schema_keys(v, out)


def _enum_values(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for v in node.get("enum") or []:
            if isinstance(v, str):
                out.add(v)
        for v in node.values():
            _enum_values(v, out)
    elif isinstance(node, list):
        for v in node:
            _enum_values(v, out)


def test_the_format_reference_documents_every_key_of_the_schema() -> None:
    text = (REPO / "docs" / "FIXTURES.md").read_text(encoding="utf-8")
    schema = build_schema()
    keys: set[str] = set()
    _schema_keys(schema, keys)
    values: set[str] = set()
    _enum_values(schema, values)
    names = keys | values | set(CORE_OPERATIONS) | set(ASSERTIONS) | set(MARKERS)
    assert {"given_settle", "until_idle", "max", "crash_after_each_write", "$regex", "kubelet.exit"} <= names
    missing = sorted(n for n in names if f"`{n}" not in text and f"{{{n}:" not in text)
    assert not missing, f"docs/FIXTURES.md does not document: {missing}"


def test_the_arc_page_documents_the_bundles_operations_invariants_and_settings() -> None:
    from reconcilers.bundle import bundle

    text = (REPO / "docs" / "ARC.md").read_text(encoding="utf-8")
    settings = set((bundle.settings_schema or {}).get("properties", {}))
    names = set(bundle.operations) | set(bundle.invariants) | set(bundle.controllers) | settings
    names |= set(bundle.services) | {c for calls in bundle.services.values() for c in calls}
    missing = sorted(n for n in names if f"`{n}" not in text)
    assert not missing, f"docs/ARC.md does not document: {missing}"


# ------------------------------------------------------------------------------ standing alone


def test_nothing_refers_to_the_developers_shared_folder() -> None:
    files = [*PAGES, REPO / "fakeapi" / "harness" / "format.schema.json", REPO / "pyproject.toml"]
    for package in ("fakeapi", "reconcilers", "examples"):
        files += [p for p in (REPO / package).rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".yaml",
                                                                                          ".md", ".toml")]
    found = [f"{p.relative_to(REPO)}:{i}" for p in files
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"(?<![\w./])shared/", line)]
    assert not found, f"references to shared/ (the docs/ pages say it instead): {found}"


def test_the_readme_starts_with_the_two_commands() -> None:
    first = blocks(REPO / "README.md")[0]
    lines = [line.split("#")[0].strip() for line in first.text.splitlines() if line.strip()]
    assert lines == ['python3 -m pip install -e . && fakeapi run fixtures/',
                     'python3 -m pip install -e ".[test]" && python3 -m pytest -n auto']
