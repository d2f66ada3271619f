"""jsonschema's validator of the fixture format (and of a bundle's schemas) is made when first asked for errors.

Loading fixture files checks each case with jsonschema-rs; jsonschema's errors, what the problem
messages are made from, are only needed for a case that check refuses. Since issue 22 jsonschema's
validator (``casechecks._Detailed``) is made, and jsonschema imported, on that first refusal: a pytest
process that collects a valid corpus does not import it. These tests check the messages are those an
eagerly made validator gives, and that collecting the corpus leaves jsonschema unimported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from fakeapi.harness import casechecks, loader
from fakeapi.harness import formatschema as fs
from fakeapi.harness.loader import LoadError, load_text

ROOT = Path(__file__).resolve().parents[1]

BROKEN = {
    "misspelt key": "name: a\nexpectt: []\n",
    "wrong type": "name: a\ngiven: {kind: X}\n",
    "bad step": "name: a\nsteps:\n  - do: [{creat: {kind: X}}]\n",
    "bad settle": "name: a\nsteps:\n  - settle: {fo: 1m}\n",
    "missing name": "tags: [x]\n",
    "bad services": "name: a\nbundles: [arc]\nservices: {arc: {actions: {runnerGroups: [{id: x}]}}}\n",
}


def test_detailed_errors_are_jsonschemas() -> None:
    schema = fs.shipped_schema()
    eager = jsonschema.Draft202012Validator(schema)
    detailed = casechecks._Detailed(schema)
    defs = schema.get("$defs", {})
    for value in [{"name": "a", "expectt": []}, {"name": 1}, {"given": "x"}, {"name": "a", "steps": [{"do": 1}]}]:
        assert [(e.message, list(e.absolute_path)) for e in detailed.iter_errors(value)] == \
            [(e.message, list(e.absolute_path)) for e in eager.iter_errors(value)]
        assert casechecks._schema_problems(detailed, value, defs) == casechecks._schema_problems(eager, value, defs)


def test_broken_cases_are_reported_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    deferred = {name: _rendered(text) for name, text in BROKEN.items()}
    fast, _ = casechecks._validators()
    eager = jsonschema.Draft202012Validator(fs.shipped_schema())
    monkeypatch.setattr(loader, "_validators", lambda: (fast, eager))  # (the format's validator, made eagerly)
    monkeypatch.setattr(casechecks, "_BUNDLE_VALIDATORS", {})  # (and a bundle's schemas')
    monkeypatch.setattr(casechecks, "_Detailed", jsonschema.Draft202012Validator)
    assert {name: _rendered(text) for name, text in BROKEN.items()} == deferred
    assert all("f.yaml:" in text for text in deferred.values())


def _rendered(text: str) -> str:
    try:
        load_text(text, "f.yaml")
    except LoadError as e:
        return e.render()
    raise AssertionError(f"loaded: {text!r}")


def test_collecting_the_corpus_does_not_import_jsonschema() -> None:
    child = (
        "import sys\n"
        "from pathlib import Path\n"
        "from fakeapi.harness.loader import load_file\n"
        "from fakeapi.harness.plugins import load_plugin\n"
        "load_plugin('reconcilers.bundle')\n"
        "files = sorted(Path('fixtures').glob('**/*.yaml'))\n"
        "n = sum(len(load_file(f)) for f in files)\n"
        "print(n, 'jsonschema' in sys.modules)\n"
        "from fakeapi.harness.loader import LoadError, load_text\n"
        "try:\n"
        "    load_text('name: a\\nexpectt: []\\n')\n"
        "except LoadError as e:\n"
        "    print('expect' in str(e), 'jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    first, second = out.stdout.split("\n")[:2]
    count, imported = first.split()
    assert int(count) > 300 and imported == "False"
    assert second == "True True"
