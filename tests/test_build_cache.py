"""The compiled build's cache (tests/build_cache.py): keyed by the sources, atomic, built once, never stale."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from build_cache import LOCK_SUFFIX, MANIFEST, build_key, compiled_build, install_build, lock_file
from filelock import FileLock, Timeout

SUFFIX = EXTENSION_SUFFIXES[0]


def _tree(root: Path, text: str = "X = 1\n") -> Path:
    (root / "fakeapi" / "sub").mkdir(parents=True)
    (root / "fakeapi" / "__init__.py").write_text("")
    (root / "fakeapi" / "sub" / "mod.py").write_text(text)
    (root / "setup.py").write_text("# setup\n")
    return root


def _fake_build(calls: list[Path]) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """A build that 'compiles' every module into an extension file beside it."""
    def build(tree: Path) -> subprocess.CompletedProcess[str]:
        calls.append(tree)
        for src in (tree / "fakeapi").rglob("*.py"):
            src.with_name(src.stem + SUFFIX).write_bytes(src.read_bytes())
        return subprocess.CompletedProcess([], 0, "", "")
    return build


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("FAKEAPI_BUILD_CACHE", str(d))
    return d


def test_a_second_build_of_the_same_sources_is_the_cached_one(tmp_path: Path) -> None:
    src = _tree(tmp_path / "a")
    calls: list[Path] = []
    first, built = compiled_build(src, _fake_build(calls), OPT="0")
    again, built_again = compiled_build(_tree(tmp_path / "b"), _fake_build(calls), OPT="0")
    assert built and not built_again and first == again and len(calls) == 1
    assert (first / MANIFEST).read_text().split() == [f"fakeapi/__init__{SUFFIX}", f"fakeapi/sub/mod{SUFFIX}"]
    assert not list(src.rglob("*" + SUFFIX))  # (the build ran on a copy: the source stays pure)


def test_any_change_to_the_sources_or_the_flags_builds_again(tmp_path: Path) -> None:
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b", "X = 2\n")
    assert build_key(a) != build_key(b)
    assert build_key(a, OPT="0") != build_key(a, OPT="3")
    (b / "fakeapi" / "sub" / "mod.py").write_text("X = 1\n")
    assert build_key(a) == build_key(b)
    (b / "fakeapi" / "new.py").write_text("")
    assert build_key(a) != build_key(b)


def test_installed_extensions_are_newer_than_their_sources(tmp_path: Path) -> None:
    src = _tree(tmp_path / "a")
    build, _ = compiled_build(src, _fake_build([]))
    dst = _tree(tmp_path / "dst")
    names = install_build(build, dst)
    for rel in names:
        ext = dst / rel
        assert ext.stat().st_mtime >= (dst / "fakeapi" / "sub" / "mod.py").stat().st_mtime


def _entries(cache_dir: Path) -> list[str]:
    """The cache folder's entries but its lock files."""
    return sorted(p.name for p in cache_dir.iterdir() if not p.name.endswith(LOCK_SUFFIX))


def test_a_build_someone_else_finished_first_is_used(tmp_path: Path, cache_dir: Path) -> None:
    src = _tree(tmp_path / "a")
    other: list[Path] = []

    def racing(tree: Path) -> subprocess.CompletedProcess[str]:
        # a process that does not take the lock (an older checkout) completes the same key meanwhile
        if not other:
            other.append(tree)
            key = build_key(src)
            done = cache_dir / key
            (done / "fakeapi").mkdir(parents=True)
            (done / "fakeapi" / f"__init__{SUFFIX}").write_bytes(b"")
            (done / MANIFEST).write_text(f"fakeapi/__init__{SUFFIX}\n")
        return _fake_build([])(tree)

    final, _ = compiled_build(src, racing)
    assert (final / MANIFEST).is_file() and _entries(cache_dir) == [final.name]  # (no temporary left)


def test_a_build_holds_the_lock_so_workers_asking_at_once_build_once(tmp_path: Path, cache_dir: Path) -> None:
    """Tests on several workers ask for the same build at once: while one builds it holds the
    key's lock, which the others wait for; then they find the build cached."""
    calls: list[Path] = []
    held: list[bool] = []

    def build(tree: Path) -> subprocess.CompletedProcess[str]:
        try:  # (another worker, meanwhile, cannot take the lock)
            FileLock(lock_file(cache_dir, build_key(tree)), timeout=0).acquire()
            held.append(False)
        except Timeout:
            held.append(True)
        return _fake_build(calls)(tree)

    first, built = compiled_build(_tree(tmp_path / "a"), build)
    again, built_again = compiled_build(_tree(tmp_path / "b"), build)
    assert held == [True] and len(calls) == 1 and built and not built_again and first == again


def test_pruning_keeps_the_newest_and_any_build_whose_lock_is_held(tmp_path: Path, cache_dir: Path) -> None:
    """Old builds beyond KEEP go, but not one another process holds the lock of (it is reading it now)."""
    import os

    from build_cache import IDLE, KEEP

    cache_dir.mkdir()
    old = []
    for i in range(KEEP + 2):
        d = cache_dir / f"{i:032x}"
        d.mkdir()
        (d / MANIFEST).write_text("")
        os.utime(d / MANIFEST, (1000.0 + i, 1000.0 + i))
        old.append(d.name)
    held = FileLock(lock_file(cache_dir, old[0]), timeout=0)
    with held:
        final, built = compiled_build(_tree(tmp_path / "a"), _fake_build([]))
    assert built and (final / MANIFEST).stat().st_mtime - 1000.0 > IDLE
    # the newest KEEP stay (the new build and KEEP - 1 old ones); of the rest only the held one is left
    assert _entries(cache_dir) == sorted([final.name, old[0], *old[-(KEEP - 1):]])


def test_a_failed_build_says_why_and_caches_nothing(tmp_path: Path, cache_dir: Path) -> None:
    def failing(tree: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], 1, "", "error: no compiler")

    with pytest.raises(AssertionError, match="no compiler"):
        compiled_build(_tree(tmp_path / "a"), failing)
    assert _entries(cache_dir) == []


def test_the_checkout_hashes_to_one_key() -> None:
    root = Path(__file__).resolve().parents[1]
    assert build_key(root) == build_key(root) != build_key(root, FAKEAPI_MYPYC_OPT="0")
