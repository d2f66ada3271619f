"""docs/INTERNALS.md stays true to the code: the modules it names exist, every module is named.

The page maps fakeapi's packages and modules for a newcomer (issue 19): a module moved or added
without the page following would send the next reader to the wrong place.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "INTERNALS.md"
PACKAGE = ROOT / "fakeapi"


def _fakeapi_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## fakeapi (knows nothing about ARC)")
    return text[start:text.index("\n## ", start + 1)]


def _named_paths(text: str) -> set[str]:
    """The ``.py`` paths in backticks (relative to fakeapi/, ``<group>`` standing for any package)."""
    return {m for m in re.findall(r"`([A-Za-z0-9_<>/.]+\.py)`", text)}


def _modules() -> list[str]:
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def test_every_module_the_page_names_exists() -> None:
    modules = _modules()
    missing = [p for p in _named_paths(_fakeapi_section())
               if "/" in p and not (ROOT / p).exists()  # (a path of the repository: tools/, tests/)
               and not any(fnmatch.fnmatch(m, p.replace("<group>", "*")) for m in modules)]
    assert missing == []


def test_every_module_is_on_the_page() -> None:
    section = _fakeapi_section()
    named = _named_paths(section)
    patterns = [p.replace("<group>", "*") for p in named]
    unnamed = []
    for m in _modules():
        folder, _, base = m.rpartition("/")
        if any(fnmatch.fnmatch(m, p) for p in patterns):
            continue
        # a package's row may name its modules by file name (``http/``: ``server.py``, ``rest.py``)
        if folder and f"`{folder}/`" in section and f"`{base}`" in section:
            continue
        unnamed.append(m)
    assert unnamed == []


def test_the_docs_stand_alone() -> None:
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert "shared/" not in page.read_text(encoding="utf-8"), page.name
