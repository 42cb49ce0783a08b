"""The cache: atomic entries, corrupt entries rebuilt, shared safely, clear when not writable."""

from __future__ import annotations

import json
import threading
import time

import pytest

from srcreview.core.cachedir import MARKER
from srcreview.core.errors import EXIT_INCOMPLETE
from srcreview.source.cache import (
    MANIFEST,
    Cache,
    CacheNotWritable,
    default_root,
    verified_manifest,
)


def build(cache: Cache, key: str = "k", content: bytes = b"hello", builds: list | None = None) -> tuple[dict, bool]:
    with cache.entry("trees", key) as entry:
        if not entry.ready:
            if builds is not None:
                builds.append(key)
            tree = entry.staging()
            (tree / "sub").mkdir()
            (tree / "sub" / "a.txt").write_bytes(content)
            (tree / "b.txt").write_bytes(b"b")
            entry.commit({"built": True})
        return entry.meta, entry.was_ready


def test_default_root_follows_srcreview_cache_then_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("SRCREVIEW_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == (tmp_path / "xdg" / "srcreview", "$XDG_CACHE_HOME/srcreview")
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "mine"))
    assert default_root() == (tmp_path / "mine", "$SRCREVIEW_CACHE")
    monkeypatch.delenv("SRCREVIEW_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_root()[0].parts[-2:] == (".cache", "srcreview")


def test_entry_is_built_once_then_reused(tmp_path):
    cache = Cache(tmp_path / "c")
    builds = []
    assert build(cache, builds=builds) == ({"built": True}, False)
    assert build(cache, builds=builds) == ({"built": True}, True)
    assert builds == ["k"]
    assert (cache.tree_path("trees", "k") / "sub" / "a.txt").read_bytes() == b"hello"
    assert not [p for p in cache.path_for("trees", "k").parent.iterdir() if p.name.startswith(".") and p.name != MARKER]


@pytest.mark.parametrize("damage", ["truncate", "delete", "add", "manifest", "no-manifest", "edit-manifest"])
def test_corrupt_entry_is_rebuilt_never_trusted(tmp_path, damage):
    cache = Cache(tmp_path / "c")
    build(cache)
    entry = cache.path_for("trees", "k")
    tree = entry / "tree"
    if damage == "truncate":
        (tree / "sub" / "a.txt").write_bytes(b"he")
    elif damage == "delete":
        (tree / "b.txt").unlink()
    elif damage == "add":
        (tree / "planted.py").write_bytes(b"x")
    elif damage == "manifest":
        (entry / MANIFEST).write_bytes(b"{not json")
    elif damage == "no-manifest":
        (entry / MANIFEST).unlink()
    else:
        data = json.loads((entry / MANIFEST).read_text())
        data["files"]["sub/a.txt"][0] = 2
        (entry / MANIFEST).write_text(json.dumps(data))
        (tree / "sub" / "a.txt").write_bytes(b"he")
    assert cache.lookup("trees", "k") is None
    builds = []
    assert build(cache, builds=builds) == ({"built": True}, False)
    assert builds == ["k"]
    assert (tree / "sub" / "a.txt").read_bytes() == b"hello"
    assert not (tree / "planted.py").exists()


def test_same_size_edit_is_caught_by_the_deep_check(tmp_path):
    cache = Cache(tmp_path / "c")
    build(cache)
    (cache.tree_path("trees", "k") / "sub" / "a.txt").write_bytes(b"HELLO")
    assert verified_manifest(cache.path_for("trees", "k")) is not None
    assert verified_manifest(cache.path_for("trees", "k"), deep=True) is None
    with cache.entry("trees", "k", deep=True) as entry:
        assert not entry.ready


def test_failed_build_leaves_nothing_behind(tmp_path):
    cache = Cache(tmp_path / "c")
    with pytest.raises(RuntimeError):
        with cache.entry("trees", "k") as entry:
            (entry.staging() / "half.txt").write_bytes(b"x")
            raise RuntimeError("download failed")
    assert [p.name for p in (tmp_path / "c" / "trees").iterdir()] == [MARKER]  # srcreview's, nothing else


def test_scratch_directories_of_live_runs_are_kept_and_of_dead_runs_removed(tmp_path):
    """A scratch directory is swept only once its owner's lock is free (the owner died)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cache = Cache(tmp_path / "c")
    tmp = tmp_path / "c" / ".tmp"
    # a dead run: a separate process that makes a scratch directory, writes into it and is killed
    code = ("import sys, time; from pathlib import Path; from srcreview.source.cache import Cache\n"
            "with Cache(Path(sys.argv[1])).scratch() as d:\n"
            "    (d / 'vllm.tar.gz').write_bytes(b'partial'); print(d.name, flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "c")], stdout=subprocess.PIPE, text=True)
    dead = tmp / child.stdout.readline().strip()
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    assert (dead / "vllm.tar.gz").read_bytes() == b"partial"
    with cache.scratch() as live:
        (live / "x").write_bytes(b"downloading")
        assert not dead.exists()  # the dead run's partial archive is gone
        with cache.scratch() as other:  # another run starting now keeps the live one
            assert (live / "x").exists() and other != live
        assert not other.exists()
    assert not live.exists() and [p.name for p in tmp.iterdir()] == [MARKER]
    # a directory without a lock (another layout) is kept for an hour, then removed
    old = tmp / "old"
    old.mkdir()
    with cache.scratch():
        assert old.exists()
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    with cache.scratch():
        assert not old.exists()


def test_concurrent_builders_share_one_build(tmp_path):
    builds = []
    results = []

    def worker():
        cache = Cache(tmp_path / "c")
        with cache.entry("trees", "k") as entry:
            if not entry.ready:
                builds.append(1)
                time.sleep(0.3)
                (entry.staging() / "a.txt").write_bytes(b"a")
                entry.commit({"n": 1})
            results.append(entry.was_ready)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert builds == [1]
    assert sorted(results) == [False, True, True]


def test_unwritable_cache_is_one_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    cache = Cache(blocker / "cache", "$SRCREVIEW_CACHE")
    with pytest.raises(CacheNotWritable, match=r"cache directory \(\$SRCREVIEW_CACHE\) is not writable") as info:
        build(cache)
    assert info.value.exit_code == EXIT_INCOMPLETE
    assert str(tmp_path) not in info.value.message


def test_existing_entries_are_served_when_the_cache_cannot_be_written(tmp_path):
    cache = Cache(tmp_path / "c")
    build(cache)
    (tmp_path / "c" / ".locks").rename(tmp_path / "old-locks")
    (tmp_path / "c" / ".locks").write_bytes(b"")  # locks cannot be created any more
    assert build(cache) == ({"built": True}, True)
    with pytest.raises(CacheNotWritable):
        build(cache, key="other")


READ_ONLY_BUILD = """
import sys
from srcreview.source.cache import Cache, CacheNotWritable
try:
    with Cache(sys.argv[1], "$SRCREVIEW_CACHE").entry("trees", "k") as entry:
        entry.staging()
except CacheNotWritable as exc:
    print(exc.message)
"""


def test_read_only_directory(tmp_path):
    """chmod 555, obeyed even when the tests run as root (the child drops the override capability)."""
    import subprocess
    import sys

    from conftest import permission_bound

    root = tmp_path / "c"
    root.mkdir()
    root.chmod(0o555)
    try:
        done = subprocess.run([sys.executable, "-c", READ_ONLY_BUILD, str(root)], capture_output=True, text=True,
                              **permission_bound())
    finally:
        root.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("cache directory ($SRCREVIEW_CACHE) is not writable; "
                           "set SRCREVIEW_CACHE to a writable directory\n")
    assert list(root.iterdir()) == []
