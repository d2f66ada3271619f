"""A cache of compiled builds (``FAKEAPI_MYPYC=1``), keyed by a hash of what the build reads.

tests/test_compiled_build.py checks a compiled copy of the checkout on every test run; the
mypyc build is most of that test's time and depends only on the sources it compiles (and the
types they import), setup.py, the interpreter and mypy. So the extensions a build makes are
kept in a cache folder outside the repository, one folder per key, and a run whose key is
there copies them instead of building. A checkout with different sources has another key and
builds again: a cached build never stands in for sources it was not built from.

The folder is ``$FAKEAPI_BUILD_CACHE`` or ``<user cache dir>/fakeapi/compiled``. The checks of
the compiled build are several tests, which ``pytest -n auto`` spreads over its workers; each
asks for the build, and a file lock of that key (:func:`lock_file`, in the cache folder) makes the
first one build while the others wait for it and then take its result: a key is built once. The
lock is the key's, not the folder's: a run whose build is cached does not wait while another
checkout on the same machine builds other sources. The build
itself happens in a temporary folder and is renamed into place, which is atomic, so a build
that dies leaves no half-written entry (and a process that does not take the lock, say an
older checkout, cannot make one either: the first complete rename wins).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from filelock import FileLock, Timeout

#: The packages whose sources a build reads (mypyc follows the imports of what it compiles).
PACKAGES = ("fakeapi",)
#: Files beside the packages that decide what is built and how.
BUILD_FILES = ("setup.py", "pyproject.toml")
#: Complete builds kept in the cache (the newest by use, about 9 MiB each); older ones are removed
#: once unused for :data:`IDLE` seconds (another checkout, or another test run, may be reading one).
KEEP = 8
IDLE = 3600
#: Written last into a cached build: a folder without it is not a build.
MANIFEST = "MANIFEST"
#: How a key's lock file in the cache folder is named (``<key>.lock``), held while that key is built.
LOCK_SUFFIX = ".lock"


def cache_root() -> Path:
    """Where builds are cached: ``$FAKEAPI_BUILD_CACHE``, else the user's cache folder."""
    env = os.environ.get("FAKEAPI_BUILD_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fakeapi" / "compiled"


def build_key(root: Path, **env: str) -> str:
    """A hash of everything the build of ``root`` depends on: every source file of the compiled
    packages, the build files, the interpreter, the platform, mypy's version and ``env``."""
    h = hashlib.sha256()
    try:
        mypy_version = version("mypy")
    except PackageNotFoundError:
        mypy_version = "none"
    for part in (sys.version, sysconfig.get_platform(), mypy_version, repr(sorted(env.items()))):
        h.update(part.encode() + b"\0")
    files = [root / f for f in BUILD_FILES if (root / f).is_file()]
    for pkg in PACKAGES:
        files += sorted(p for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts)
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:32]


def lock_file(root: Path, key: str) -> Path:
    """The lock file of ``key`` in the cache folder ``root``: whoever holds it builds that key."""
    return root / f"{key}{LOCK_SUFFIX}"


def _extensions(tree: Path) -> list[Path]:
    """The extension modules a build left in the packages of ``tree`` (relative paths)."""
    out = []
    for pkg in PACKAGES:
        for p in (tree / pkg).rglob("*"):
            if p.is_file() and any(p.name.endswith(s) for s in EXTENSION_SUFFIXES):
                out.append(p.relative_to(tree))
    return sorted(out)


def _prune(root: Path, keep: Path) -> None:
    """Remove all but the newest :data:`KEEP` complete builds (never ``keep``, nor one used in the
    last :data:`IDLE` seconds, nor one whose lock another process holds: it is being used now), and
    leftovers of builds that died (temporary folders a day old). The lock files stay (they are
    empty, and removing one that a process is about to take would let two hold it)."""
    now = (keep / MANIFEST).stat().st_mtime
    builds = sorted((p for p in root.iterdir() if (p / MANIFEST).is_file()),
                    key=lambda p: (p / MANIFEST).stat().st_mtime, reverse=True)
    for old in builds[KEEP:]:
        if old == keep:
            continue
        try:
            with FileLock(lock_file(root, old.name), timeout=0):
                if now - (old / MANIFEST).stat().st_mtime > IDLE:  # (read again, under its lock)
                    shutil.rmtree(old, ignore_errors=True)
        except (Timeout, OSError):
            continue
    for tmp in root.glob("tmp-*"):
        try:
            if tmp.stat().st_mtime < now - 86400:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            continue


def compiled_build(source: Path, build: Callable[[Path], subprocess.CompletedProcess[str]],
                   **env: str) -> tuple[Path, bool]:
    """The folder of extensions built from ``source`` (a pure copy of the checkout), and whether
    this call built it (False: it was cached).

    ``build(tree)`` builds the extensions in place in ``tree``, a copy of ``source`` (it is handed
    a copy, so ``source`` stays pure); ``env`` is what it sets that changes the result (it is
    part of the key). A failed build raises AssertionError with the build's output.
    """
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    key = build_key(source, **env)
    final = root / key
    with FileLock(lock_file(root, key)):  # (one build of a key at a time: who waited here then finds it cached)
        if (final / MANIFEST).is_file():
            os.utime(final / MANIFEST)  # (in use: the newest, kept by pruning)
            return final, False
        return _build(root, final, source, build), True


def _build(root: Path, final: Path, source: Path,
           build: Callable[[Path], subprocess.CompletedProcess[str]]) -> Path:
    """Build a copy of ``source`` in a temporary folder of ``root`` and rename its extensions to
    ``final`` (the caller holds its key's lock)."""
    tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=root))
    try:
        tree = tmp / "tree"
        shutil.copytree(source, tree, symlinks=True)
        done = build(tree)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out = tmp / "out"
        names = _extensions(tree)
        assert names, "the build made no extension module"
        for rel in names:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(tree / rel, out / rel)
        (out / MANIFEST).write_text("".join(f"{rel.as_posix()}\n" for rel in names))
        try:
            os.rename(out, final)
        except OSError:  # another worker renamed its build of the same key first: use that one
            if not (final / MANIFEST).is_file():
                raise
        _prune(root, final)
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install_build(build: Path, tree: Path) -> list[str]:
    """Copy a cached build's extensions into ``tree`` (a pure copy of the same sources) and name
    them. Each copy is new, so it is newer than its source (``fakeapi`` warns of an extension
    older than its source, which a copy with the cached file's time could be)."""
    names = (build / MANIFEST).read_text().split()
    for rel in names:
        shutil.copyfile(build / rel, tree / rel)
    return names
