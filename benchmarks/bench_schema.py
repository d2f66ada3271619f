"""Per-call cost of the schema and Go-codec work done on every API write.

Run: ``python benchmarks/bench_schema.py``. Prints microseconds per call of
``CompiledSchema.prepare`` + ``validate``, ``go_roundtrip``, and, for scale, a
``json.dumps`` + ``json.loads`` round trip of the same object.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samples import POD

from fakeapi.codec.gomodel import builtin_go_type, go_roundtrip, go_type_from_structural
from fakeapi.machinery import openapi
from fakeapi.schema.compiled import CompiledSchema

CR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "githubConfigUrl": {"type": "string"},
                "githubConfigSecret": {"type": "string"},
                "runnerScaleSetId": {"type": "integer"},
                "proxy": {"type": "object", "properties": {"http": {"type": "object", "properties": {
                    "url": {"type": "string"}}}}},
                "metadata": {"type": "object", "properties": {
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}},
                "spec": openapi.structural_from_definition("io.k8s.api.core.v1.PodSpec"),
            },
        },
        "status": {"type": "object", "properties": {
            "phase": {"type": "string"}, "ready": {"type": "boolean"}, "failures": {
                "type": "object", "additionalProperties": {"type": "string", "format": "date-time"}}}},
    },
}

CR: dict[str, Any] = {
    "apiVersion": "actions.github.com/v1alpha1",
    "kind": "EphemeralRunner",
    "metadata": {"name": "r", "namespace": "arc-runners", "labels": {"a": "b"}},
    "spec": {
        "githubConfigUrl": "https://github.com/org/repo",
        "githubConfigSecret": "secret",
        "runnerScaleSetId": 1,
        "metadata": {"labels": {"x": "y"}},
        "spec": POD["spec"],
    },
    "status": {"phase": "Running", "ready": True},
}


def per_call_us(fns: dict[str, Callable[[], object]], n: int = 300, rounds: int = 25) -> dict[str, float]:
    """Microseconds per call of each function: the best of ``rounds`` interleaved runs of ``n`` calls.

    Interleaving and taking the minimum keeps the ratios stable on a busy machine.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: t / n * 1e6 for name, t in best.items()}


def bench(name: str, obj: dict[str, Any], compiled: CompiledSchema, go_type: Any) -> None:
    """Print the costs for one object."""
    text = json.dumps(obj)

    def prepare_validate() -> object:
        o = json.loads(text)
        compiled.prepare(o)
        return compiled.validate(o)

    us = per_call_us({
        "json": lambda: json.loads(json.dumps(obj)),
        "decode": lambda: json.loads(text),
        "prepare_validate": prepare_validate,
        "roundtrip": lambda: go_roundtrip(obj, go_type),
    })
    base = us["json"]
    pv = us["prepare_validate"] - us["decode"]
    rt = us["roundtrip"]
    print(f"{name}:")
    print(f"  json.dumps+loads round trip      {base:8.1f} µs")
    print(f"  CompiledSchema.prepare+validate  {pv:8.1f} µs  ({pv / base:.1f}x)")
    print(f"  go_roundtrip                     {rt:8.1f} µs  ({rt / base:.1f}x)")


def main() -> None:
    """Run the benchmarks."""
    pod_schema = CompiledSchema(openapi.builtin_schema("Pod", "v1"), structural=False)
    bench("Pod", POD, pod_schema, builtin_go_type("Pod"))
    cr_schema = CompiledSchema(CR_SCHEMA, structural=True)
    cr_type = go_type_from_structural(CR_SCHEMA, overrides={
        "spec.spec": (builtin_go_type("io.k8s.api.core.v1.PodSpec"), "struct")})
    bench("custom resource with a pod template", CR, cr_schema, cr_type)


if __name__ == "__main__":
    main()
