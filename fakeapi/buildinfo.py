"""Which of fakeapi's modules this install runs compiled (``FAKEAPI_MYPYC=1`` builds; see setup.py).

A compiled build is an optimisation only: the same sources, compiled by mypyc. The benchmarks
print :func:`build_description` so a figure always says which build it measured, and
``fakeapi`` warns at import when an extension is older than its source (an editable install
edited since it was built runs the old code until it is built again).
"""

from __future__ import annotations

import os
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _extensions(directory: Path) -> dict[str, Path]:
    """Dotted module name (below the package) -> extension file, for every module of the package,
    in subpackages too, built as an extension."""
    out: dict[str, Path] = {}
    suffixes = tuple(EXTENSION_SUFFIXES)
    # (os.walk over plain strings: this runs at every ``import fakeapi``, and Path objects for each
    # of the package's files cost a millisecond of the cold start; issue 22. A zipped install has
    # no directory to walk: nothing compiled.)
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        parts = Path(dirpath).relative_to(directory).parts
        for name in sorted(filenames):
            if not name.endswith(suffixes):
                continue
            suffix = next(s for s in EXTENSION_SUFFIXES if name.endswith(s))
            stem = name[: -len(suffix)]
            if not stem.endswith("__mypyc"):  # (mypyc's runtime library beside each module)
                out[".".join((*parts, stem))] = Path(dirpath, name)
    return out


def compiled_modules(directory: Path = PACKAGE_DIR) -> list[str]:
    """The fakeapi modules imported from compiled extensions (empty for a pure-Python install)."""
    return sorted(f"fakeapi.{m}" for m in _extensions(directory))


def stale_modules(directory: Path = PACKAGE_DIR) -> list[str]:
    """Compiled modules whose source is newer than their extension (the extension still runs).

    Only in a source checkout (setup.py beside the package, as in an editable install): an
    installed wheel's files carry the times pip gave them, which say nothing about the build.
    """
    if not (directory.parent / "setup.py").is_file():
        return []
    out = []
    for name, ext in _extensions(directory).items():
        src = ext.with_name(name.rpartition(".")[2] + ".py")
        try:
            if src.stat().st_mtime > ext.stat().st_mtime:
                out.append(f"fakeapi.{name}")
        except OSError:
            continue
    return sorted(out)


def build_description() -> str:
    """One line for benchmark output: pure Python, or which modules are compiled."""
    mods = compiled_modules()
    if not mods:
        return "pure Python"
    return f"compiled with mypyc ({len(mods)} modules: FAKEAPI_MYPYC=1 build)"


def warn_if_stale(directory: Path = PACKAGE_DIR) -> None:
    """Warn when a compiled module's source changed after it was built: the old code would run."""
    stale = stale_modules(directory)
    if stale:
        warnings.warn(
            f"fakeapi: {', '.join(stale)} changed after they were compiled, and the compiled (old) code "
            "runs: build again (FAKEAPI_MYPYC=1 pip install -e .) or delete fakeapi/**/*.so for pure Python",
            RuntimeWarning, stacklevel=2)
