"""Regenerate ``k8s_protos.binpb``: the descriptors of the upstream ``generated.proto`` files.

::

    python -m fakeapi.http.protobuf_generate --api DIR --apimachinery DIR --aggregator DIR

Each ``DIR`` is a checkout (or a bare git directory, read at ``HEAD``) of
kubernetes/api, kubernetes/apimachinery and kubernetes/kube-aggregator. The
``generated.proto`` files of :data:`API_GROUPS` and their apimachinery imports
are laid out under their import paths (``k8s.io/api/core/v1/...``) and
compiled by ``protoc`` (``grpcio-tools``) into one FileDescriptorSet,
``--include_imports``, which :mod:`fakeapi.http.protobuf` loads with the
``protobuf`` runtime. Nothing is hand-written: the message layouts are the
upstream ones, with their comments dropped.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: kubernetes/api packages served in protobuf (the groups of fakeapi's built-in kinds and subresources).
API_GROUPS = ("core/v1", "apps/v1", "batch/v1", "coordination/v1", "rbac/v1", "networking/v1", "policy/v1",
              "certificates/v1", "storage/v1", "authentication/v1", "authorization/v1", "autoscaling/v1")
APIMACHINERY = ("pkg/api/resource", "pkg/apis/meta/v1", "pkg/runtime", "pkg/runtime/schema", "pkg/util/intstr")
AGGREGATOR = ("pkg/apis/apiregistration/v1",)
OUTPUT = Path(__file__).with_name("k8s_protos.binpb")


def _read(repo: Path, path: str) -> bytes:
    """A file of a checkout, or of a bare git directory at HEAD."""
    if (repo / path).is_file():
        return (repo / path).read_bytes()
    return subprocess.run(["git", f"--git-dir={repo}", "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def generate(api: Path, apimachinery: Path, aggregator: Path, out: Path = OUTPUT) -> Path:
    """Write the descriptor set to ``out`` and return it."""
    from grpc_tools import protoc

    repos = {"k8s.io/api/": api, "k8s.io/apimachinery/": apimachinery, "k8s.io/kube-aggregator/": aggregator}
    todo = [f"k8s.io/api/{g}/generated.proto" for g in API_GROUPS]
    todo += [f"k8s.io/apimachinery/{g}/generated.proto" for g in APIMACHINERY]
    todo += [f"k8s.io/kube-aggregator/{g}/generated.proto" for g in AGGREGATOR]
    with tempfile.TemporaryDirectory(prefix="fakeapi-proto-") as d:
        root = Path(d)
        files: list[str] = []
        while todo:  # (the files named, and every file they import, transitively)
            rel = todo.pop()
            if rel in files:
                continue
            prefix = next(p for p in repos if rel.startswith(p))
            data = _read(repos[prefix], rel[len(prefix):])
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            files.append(rel)
            todo.extend(m.decode() for m in re.findall(rb'^import "([^"]+)";', data, re.M))
        code = protoc.main(["protoc", f"-I{root}", f"--descriptor_set_out={out}", "--include_imports", *files])
        if code != 0:
            raise RuntimeError(f"protoc failed ({code})")
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--api", type=Path, required=True)
    p.add_argument("--apimachinery", type=Path, required=True)
    p.add_argument("--aggregator", type=Path, required=True)
    p.add_argument("--out", type=Path, default=OUTPUT)
    args = p.parse_args(argv)
    print(generate(args.api, args.apimachinery, args.aggregator, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
