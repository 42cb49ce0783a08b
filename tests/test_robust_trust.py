"""Data loss and security (issue 26): srcreview removes only what it wrote, and reads only
inside what the command line lets it read.

Every case runs the real CLI on real files made in the test.
"""

from __future__ import annotations

from pathlib import Path

from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source

from srcreview.core.cachedir import MARKER


def _hostile_home(home: Path) -> dict[str, bytes]:
    """What a `$HOME` or `~/.cache` holds before srcreview is pointed at it: other programs'
    files, some under the very names srcreview uses (facts/, reviews/, .tmp/, registry/)."""
    files = {".ssh/id_rsa": b"PRIVATE KEY\n", "pip/http/abc": b"cached wheel", "notes.txt": b"mine\n",
             "facts/v1/ab/old.pickle": b"x" * 30, "reviews/v1/aa/r": b"not a review",
             ".tmp/download.part": b"half", "registry/thing/manifest.json": b"{}",
             "releases/vllm-9.9.9.json": b"{}", "facts/v999/x": b"newer?"}
    for name, data in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(data)
    return files


def test_cache_clean_never_removes_what_srcreview_did_not_create(tmp_path, monkeypatch, cli):
    home = tmp_path / "home"
    home.mkdir()
    files = _hostile_home(home)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(home))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1
    written = sorted(p.parent.relative_to(home).as_posix() for p in home.rglob(MARKER))
    assert "facts/v1" not in written and "facts" not in written and "facts/v999" not in written
    assert any(w.startswith("facts/v") for w in written) and not (home / MARKER).exists(), written

    info = cli("cache", "info")
    assert info.code == 0 and "not srcreview's" in info.out and ".ssh" in info.out
    for args in (("--unused",), ("--facts",), ("--reviews",), ("--sources",), ()):
        result = cli("cache", "clean", *args)
        assert result.code == 0, result.err
        for name, data in files.items():
            assert (home / name).read_bytes() == data, f"clean {args} removed {name}"
    assert "kept" in result.out and ".ssh" in result.out and "did not create" in result.out
    assert not [p for p in home.rglob("*.pickle") if "v1" not in p.parts], "srcreview's own facts were removed"
    # what srcreview wrote is gone, but for its reviews: they went into reviews/v1, which existed
    # (the current schema's name): a directory srcreview did not create is never emptied
    left = [p.relative_to(home).parts[:2] for p in home.rglob("*") if p.is_file() and p.name != MARKER
            and p.relative_to(home).as_posix() not in files]
    assert left and set(left) == {("reviews", "v1")}


def test_a_cache_srcreview_created_is_cleaned_whole(tmp_path, monkeypatch, cli):
    cache = tmp_path / "fresh"
    monkeypatch.setenv("SRCREVIEW_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1
    assert (cache / MARKER).is_file()
    (cache / "dropped.txt").write_text("inside srcreview's own directory")
    result = cli("cache", "clean")
    assert result.code == 0 and "kept" not in result.out
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        p.name for p in cache.iterdir() if p.name == MARKER or (p / MARKER).is_file())
    assert not (cache / "dropped.txt").exists()


def test_a_symlinked_top_directory_is_not_srcreview_s(tmp_path, monkeypatch, cli):
    """A marked directory elsewhere, linked into an unmarked cache, is not followed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / MARKER).touch()
    (elsewhere / "precious").write_text("keep")
    home = tmp_path / "home"
    home.mkdir()
    (home / "facts").symlink_to(elsewhere)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(home))
    assert cli("cache", "clean").code == 0
    assert (elsewhere / "precious").read_text() == "keep" and (home / "facts").is_symlink()
