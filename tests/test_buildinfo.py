"""fakeapi.buildinfo: which modules run compiled, and the warning for a stale compiled build."""

from __future__ import annotations

import os
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from fakeapi import buildinfo

SUFFIX = EXTENSION_SUFFIXES[0]


def _touch(path: Path, mtime: float) -> None:
    path.write_text("")
    os.utime(path, (mtime, mtime))


def test_a_pure_package_has_no_compiled_modules(tmp_path: Path) -> None:
    _touch(tmp_path / "server.py", 100)
    assert buildinfo.compiled_modules(tmp_path) == []
    assert buildinfo.stale_modules(tmp_path) == []


def test_extensions_are_the_compiled_modules_and_mypycs_runtime_libraries_are_not(tmp_path: Path) -> None:
    for name in ("patches", "gomodel"):
        _touch(tmp_path / f"{name}.py", 100)
        _touch(tmp_path / f"{name}{SUFFIX}", 200)
        _touch(tmp_path / f"{name}__mypyc{SUFFIX}", 200)
    _touch(tmp_path / "server.py", 100)
    assert buildinfo.compiled_modules(tmp_path) == ["fakeapi.gomodel", "fakeapi.patches"]
    assert buildinfo.stale_modules(tmp_path) == []


def test_a_source_edited_after_its_build_is_stale(tmp_path: Path) -> None:
    _touch(tmp_path / f"patches{SUFFIX}", 200)
    _touch(tmp_path / "patches.py", 300)
    _touch(tmp_path / f"gomodel{SUFFIX}", 200)
    _touch(tmp_path / "gomodel.py", 100)
    assert buildinfo.stale_modules(tmp_path) == ["fakeapi.patches"]


def test_a_stale_build_warns_naming_the_modules_and_the_fix(tmp_path: Path) -> None:
    _touch(tmp_path / f"patches{SUFFIX}", 200)
    _touch(tmp_path / "patches.py", 300)
    with pytest.warns(RuntimeWarning, match=r"fakeapi\.patches changed after .*\(FAKEAPI_MYPYC=1 pip install -e \."):
        buildinfo.warn_if_stale(tmp_path)


def test_this_checkout_is_not_stale_and_says_which_build_it_is() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        buildinfo.warn_if_stale()
    mods = buildinfo.compiled_modules()
    desc = buildinfo.build_description()
    if mods:
        assert desc.startswith(f"compiled with mypyc ({len(mods)} modules")
    else:
        assert desc == "pure Python"
