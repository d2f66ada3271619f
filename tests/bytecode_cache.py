"""Where bytecode may not be written beside the sources, this repository's test runs keep it in a cache folder.

Loaded by pytest as the plugin ``-p bytecode_cache`` (pyproject.toml's ``addopts``, with ``tests`` on
``pythonpath``): such plugins load before the plugins of installed packages, so this runs before
fakeapi's own pytest plugin (the ``pytest11`` entry point of an installed fakeapi) imports the
package. When the environment asks for no bytecode beside the sources (``PYTHONDONTWRITEBYTECODE=1``
or ``python -B``) and names no ``PYTHONPYCACHEPREFIX``, the process keeps its bytecode, and pytest its
rewritten modules (pytest rewrites the asserts of every module of a package that ships a plugin), in
:data:`PREFIX` (``<user cache dir>/fakeapi/pycache``, laid out as Python's ``PYTHONPYCACHEPREFIX`` lays
it out). Set later (from the root conftest, as before), every pytest process, each xdist worker
included, compiled and rewrote fakeapi's modules again: about 0.25 s of CPU per process, 0.5 s of the
fixture corpus's 5 s wall time on 2 workers. Python checks a cached file against its source's size
and time as always, so an edit is compiled again; nothing is written to the checkout.

Tests make temporary folders (pytest's ``tmp_path``, copies of the project for the compiled build)
whose modules land in that folder too, and pytest deletes those folders later: at a run's end the
root conftest prunes their bytecode (:func:`prune_stale_bytecode`); without it a run of the suite left
about 1.7 MB there.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

#: The cache folder (tests that start interpreters give it to them: ``with_bytecode_cache`` in support.py).
PREFIX = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fakeapi" / "pycache")

if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = PREFIX
    sys.dont_write_bytecode = False


def prune_stale_bytecode(cache: Path, under: Path) -> int:
    """Remove from ``cache`` the bytecode folders of source folders under ``under`` that no longer exist.

    Returns how many folders were removed. Only folders whose source is gone are touched: a run in
    progress elsewhere keeps its folders, and its bytecode is made again if needed."""
    under = under.resolve()
    mirror = cache / under.relative_to(under.anchor)
    if not mirror.is_dir():
        return 0
    removed = 0
    for dirpath, dirnames, _ in os.walk(mirror):
        keep = []
        for d in dirnames:
            cached = Path(dirpath, d)
            if (Path(under.anchor) / cached.relative_to(cache)).is_dir():
                keep.append(d)
            else:
                shutil.rmtree(cached, ignore_errors=True)
                removed += 1
        dirnames[:] = keep
    return removed
