"""The ARC CRD manifests: the generated ``manifests.json`` against its YAML sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconcilers import crds
from reconcilers.crds import __main__ as crds_main
from reconcilers.crds import expand


def test_generated_manifests_are_current() -> None:
    # the checked-in file is exactly what the expansion of the YAML sources renders
    current = crds.GENERATED.read_text(encoding="utf-8")
    assert current == expand.generated_text(), "stale: run python -m reconcilers.crds --write"


def test_crd_manifests_are_the_expanded_sources() -> None:
    assert crds.crd_manifests() == expand.expanded_manifests()
    assert [m["spec"]["names"]["kind"] for m in crds.crd_manifests()] == [
        "AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"]


def test_crd_manifests_are_fresh_copies() -> None:
    expect = json.dumps(json.loads(crds.GENERATED.read_text(encoding="utf-8"))["manifests"])
    calls = [crds.crd_manifests() for _ in range(4)]
    every = [_containers(got, []) for got in calls]
    ids = {id(c) for containers in every for c in containers}
    assert len(ids) == sum(len(containers) for containers in every)  # nothing shared, within or across calls
    for got in calls:
        assert json.dumps(got) == expect
        got[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].clear()
        got[1]["metadata"]["name"] = "changed"
    assert json.dumps(crds.crd_manifests()) == expect


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, (dict, list)):
        out.append(value)
        for v in value.values() if isinstance(value, dict) else value:
            _containers(v, out)
    return out


def test_object_schema_is_a_fresh_copy() -> None:
    schema = crds.object_schema("EphemeralRunner")
    assert schema["properties"]["spec"]["properties"]["spec"]["properties"]["containers"]["type"] == "array"
    schema.clear()
    assert crds.object_schema("EphemeralRunner")
    with pytest.raises(KeyError):
        crds.object_schema("Nope")


def test_pod_templates_keep_embedded_metadata() -> None:
    schema = crds.object_schema("AutoscalingRunnerSet")
    template = schema["properties"]["spec"]["properties"]["template"]
    assert template["properties"]["metadata"] == expand.embedded_object_meta()
    assert "x-reconcilers-definition" not in crds.GENERATED.read_text(encoding="utf-8")


def test_check_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert crds_main.main(["--check"]) == 0
    stale = tmp_path / "manifests.json"
    stale.write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(crds_main, "GENERATED", stale)
    assert crds_main.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert crds_main.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == crds.GENERATED.read_text(encoding="utf-8")
    assert crds_main.main(["--check"]) == 0
