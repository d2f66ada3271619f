"""go_decode: what a Go controller holds after reading (json.Unmarshal), as opposed to what it sends."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.godecode import go_decode
from fakeapi.gomodel import builtin_go_type, go_roundtrip
from fakeapi.semantic import semantic_equal

POD_SPEC = builtin_go_type("io.k8s.api.core.v1.PodSpec")


def spec(**container: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "x", **container}]}


@pytest.mark.parametrize(
    ("name", "written", "field", "decoded"),
    [
        ("empty env stays an empty slice", spec(env=[]), "env", []),
        ("empty securityContext stays", spec(securityContext={}), "securityContext", {}),
        ("null env is nil", spec(env=None), "env", None),
        ("quantity keeps its text", spec(resources={"limits": {"cpu": "1000m"}}), "resources",
         {"limits": {"cpu": "1000m"}}),
    ],
)
def test_decode_keeps_what_unmarshal_keeps(name: str, written: dict[str, Any], field: str, decoded: Any) -> None:
    got = go_decode(written, POD_SPEC)["containers"][0]
    assert got.get(field) == decoded


def test_decode_drops_unknown_fields_and_does_not_mutate() -> None:
    written = spec(env=[], bogus=1)
    got = go_decode(written, POD_SPEC)
    assert "bogus" not in got["containers"][0]
    assert written["containers"][0]["bogus"] == 1


def test_the_seed_drift_read_vs_written() -> None:
    """A template read with env: [] against the same template after a Go write: strict differs, semantic not."""
    read = go_decode(spec(env=[], nodeSelector={}, tolerations=[]), POD_SPEC)
    written = go_roundtrip(read, POD_SPEC)
    assert read != written
    assert semantic_equal(read, written, POD_SPEC)


def test_encoding_after_decoding_is_the_roundtrip() -> None:
    written = spec(env=[], resources={"limits": {"cpu": "1000m"}})
    assert go_roundtrip(go_decode(written, POD_SPEC), POD_SPEC) == go_roundtrip(written, POD_SPEC)
