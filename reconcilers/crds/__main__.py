"""``python -m reconcilers.crds --write | --check``: regenerate, or check, ``manifests.json``."""

from __future__ import annotations

import argparse
import sys

from .expand import GENERATED, generated_text


def main(argv: list[str] | None = None) -> int:
    """Write the expanded manifests into ``manifests.json`` (``--write``) or check it is current (``--check``)."""
    parser = argparse.ArgumentParser(prog="python -m reconcilers.crds", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate manifests.json from the YAML sources")
    mode.add_argument("--check", action="store_true", help="exit 1 when manifests.json is not what they expand to")
    args = parser.parse_args(argv)
    text = generated_text()
    current = GENERATED.read_text(encoding="utf-8") if GENERATED.is_file() else None
    if args.write:
        if current != text:
            GENERATED.write_text(text, encoding="utf-8")
            print(f"wrote {GENERATED}")
        else:
            print(f"{GENERATED} is up to date")
        return 0
    if current != text:
        print(f"{GENERATED} is stale: run python -m reconcilers.crds --write", file=sys.stderr)
        return 1
    print(f"{GENERATED} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
