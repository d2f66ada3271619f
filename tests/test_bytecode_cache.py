"""The bytecode cache folder is pruned of folders that are gone (tests/bytecode_cache.py)."""

from __future__ import annotations

from pathlib import Path

from tests.bytecode_cache import prune_stale_bytecode


def _mirror(cache: Path, src: Path) -> Path:
    out = cache / src.resolve().relative_to(src.resolve().anchor)
    out.mkdir(parents=True, exist_ok=True)
    (out / "m.cpython-311.pyc").write_bytes(b"x")
    return out


def test_only_the_bytecode_of_removed_folders_is_removed(tmp_path: Path) -> None:
    cache, under = tmp_path / "cache", tmp_path / "src"
    (under / "kept" / "deep").mkdir(parents=True)
    kept = _mirror(cache, under / "kept" / "deep")
    gone = _mirror(cache, under / "gone")
    gone_inside = _mirror(cache, under / "kept" / "gone" / "deeper")
    outside = _mirror(cache, tmp_path / "elsewhere")  # (not under `under`: never looked at)
    assert prune_stale_bytecode(cache, under) == 2
    assert (kept / "m.cpython-311.pyc").exists() and (outside / "m.cpython-311.pyc").exists()
    assert not gone.exists() and not gone_inside.exists() and gone_inside.parent.parent.exists()


def test_a_cache_without_that_folder_is_left_alone(tmp_path: Path) -> None:
    assert prune_stale_bytecode(tmp_path / "none", tmp_path) == 0
    assert not (tmp_path / "none").exists()
