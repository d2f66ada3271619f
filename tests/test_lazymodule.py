"""fakeapi.machinery.lazymodule: a module-level stand-in replaced by its module on first use."""

from __future__ import annotations

import sys
import threading
import types

from fakeapi.machinery.lazymodule import LazyModule, lazy_module


def _owner(name: str) -> types.ModuleType:
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    return mod


def test_the_first_read_imports_the_module_and_replaces_the_stand_in() -> None:
    owner = _owner("h22cold_lazy_owner_a")
    try:
        owner.textwrap_alias = lazy_module(owner.__name__, "textwrap", "textwrap_alias")
        assert isinstance(owner.textwrap_alias, LazyModule)
        assert "imported on first use" in repr(owner.textwrap_alias)
        assert owner.textwrap_alias.dedent("  x") == "x"
        import textwrap

        assert owner.textwrap_alias is textwrap
    finally:
        del sys.modules["h22cold_lazy_owner_a"]


def test_the_default_name_is_the_targets_last_part() -> None:
    owner = _owner("h22cold_lazy_owner_b")
    try:
        owner.parse = lazy_module(owner.__name__, "urllib.parse")
        assert owner.parse.quote("a b") == "a%20b"
        import urllib.parse

        assert owner.parse is urllib.parse
    finally:
        del sys.modules["h22cold_lazy_owner_b"]


def test_a_name_rebound_meanwhile_is_left_alone() -> None:
    owner = _owner("h22cold_lazy_owner_c")
    try:
        stand_in = lazy_module(owner.__name__, "json")
        owner.json = "something else"
        assert stand_in.dumps([1]) == "[1]"
        assert owner.json == "something else"
    finally:
        del sys.modules["h22cold_lazy_owner_c"]


def test_threads_reading_at_once_all_see_the_whole_module() -> None:
    """The import is the import system's, under its module lock: no thread sees a half-loaded module."""
    owner = _owner("h22cold_lazy_owner_d")
    try:
        owner.pickletools = lazy_module(owner.__name__, "pickletools")  # (a module the run has no other use for)
        start = threading.Barrier(8)
        seen: list[object] = []

        def read() -> None:
            start.wait()
            seen.append(owner.pickletools.dis)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8 and len(set(map(id, seen))) == 1
    finally:
        del sys.modules["h22cold_lazy_owner_d"]
