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


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A package directory in a source checkout (setup.py beside it)."""
    (tmp_path / "setup.py").write_text("")
    for sub in ("machinery", "codec", "server"):
        (tmp_path / "fakeapi" / sub).mkdir(parents=True)
    return tmp_path / "fakeapi"


def test_a_pure_package_has_no_compiled_modules(package: Path) -> None:
    _touch(package / "server" / "apiserver.py", 100)
    assert buildinfo.compiled_modules(package) == []
    assert buildinfo.stale_modules(package) == []


def test_extensions_are_the_compiled_modules_and_mypycs_runtime_libraries_are_not(package: Path) -> None:
    for name in ("machinery/patches", "codec/gomodel"):
        _touch(package / f"{name}.py", 100)
        _touch(package / f"{name}{SUFFIX}", 200)
        _touch(package / f"{name}__mypyc{SUFFIX}", 200)
    _touch(package / "server" / "apiserver.py", 100)
    assert buildinfo.compiled_modules(package) == ["fakeapi.codec.gomodel", "fakeapi.machinery.patches"]
    assert buildinfo.stale_modules(package) == []


def test_a_source_edited_after_its_build_is_stale(package: Path) -> None:
    _touch(package / "machinery" / f"patches{SUFFIX}", 200)
    _touch(package / "machinery" / "patches.py", 300)
    _touch(package / "codec" / f"gomodel{SUFFIX}", 200)
    _touch(package / "codec" / "gomodel.py", 100)
    assert buildinfo.stale_modules(package) == ["fakeapi.machinery.patches"]


def test_an_installed_package_is_never_stale_whatever_the_file_times(package: Path) -> None:
    (package.parent / "setup.py").unlink()  # (a wheel installed in site-packages: no setup.py beside it)
    _touch(package / "machinery" / f"patches{SUFFIX}", 200)
    _touch(package / "machinery" / "patches.py", 300)
    assert buildinfo.compiled_modules(package) == ["fakeapi.machinery.patches"]
    assert buildinfo.stale_modules(package) == []


def test_a_stale_build_warns_naming_the_modules_and_the_fix(package: Path) -> None:
    _touch(package / "machinery" / f"patches{SUFFIX}", 200)
    _touch(package / "machinery" / "patches.py", 300)
    with pytest.warns(RuntimeWarning, match=r"fakeapi\.machinery\.patches changed after .*\(FAKEAPI_MYPYC=1 pip install -e \."):
        buildinfo.warn_if_stale(package)


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
