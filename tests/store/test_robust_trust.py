"""Data loss and security (issue 26): srcreview removes only what it wrote, and reads only
inside what the command line lets it read.

Every case runs the real CLI on real files made in the test.
"""

from __future__ import annotations

import json
import os
import shutil
import time
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
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "test secret")  # so that reviews are stored too
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


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def test_a_root_like_cache_directory_loses_nothing(tmp_path, monkeypatch, cli):
    """`SRCREVIEW_CACHE=/`: a directory shaped like a file system's root (etc/, home/ with a
    user's keys and that user's own srcreview cache three levels down, usr/, a `srcreview`
    directory srcreview did not make): `cache clean` with every option removes nothing."""
    root = tmp_path / "root"
    files = {"etc/passwd": b"root:x:0:0\n", "home/u/.ssh/id_rsa": b"PRIVATE KEY\n", "usr/lib/libc.so": b"ELF",
             "srcreview/notes.txt": b"mine", "tmp/.tmp/x": b"y", "facts/v1/k": b"z"}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(root / "home" / "u" / ".cache" / "srcreview"))
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1  # a real cache, deep down
    before = _snapshot(root)
    assert any(name.startswith("home/u/.cache/srcreview/facts/") for name in before)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(root))
    for args in (("--unused",), ("--facts",), ("--reviews",), ("--sources",), ("--rev", FIXTURE_REV), ()):
        result = cli("cache", "clean", *args)
        assert result.code == 0 and "removed 0 parts" in result.out, (args, result.out, result.err)
        assert _snapshot(root) == before, f"clean {args} removed something"
    assert "etc" in result.out and "home" in result.out  # named as kept


def test_a_default_location_that_is_a_symlink_is_srcreview_s_only_if_marked(tmp_path, monkeypatch, cli):
    """`~/.cache/srcreview` linked to `~` (or to `~/.cache`) is not srcreview's by its name:
    nothing of `$HOME` is removed (fixed: `cache clean` removed `.ssh/id_rsa`); linked to a
    cache srcreview made (on another disk), it is cleaned as srcreview's."""
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    files = _hostile_home(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SRCREVIEW_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    link = home / ".cache" / "srcreview"
    for target in (home, home / ".cache"):
        link.symlink_to(target, target_is_directory=True)
        for args in (("--dry-run",), ("--unused",), ()):
            result = cli("cache", "clean", *args)
            assert result.code == 0 and "0 parts" in result.out, (target, args, result.out)
            assert all((home / name).read_bytes() == data for name, data in files.items()), (target, args)
        link.unlink()
    elsewhere = tmp_path / "disk" / "srcreview"
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(elsewhere))
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1
    monkeypatch.delenv("SRCREVIEW_CACHE")
    link.symlink_to(elsewhere, target_is_directory=True)
    result = cli("cache", "clean")
    assert result.code == 0 and "kept" not in result.out and "removed 0 parts" not in result.out, result.out
    assert not [p for p in elsewhere.rglob("*") if p.is_file() and p.name != MARKER]
    assert all((home / name).read_bytes() == data for name, data in files.items())


def _recipe_naming(path: Path, patches: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEMO_RECIPE.read_text().replace("[hardware]", f"[runtime]\npatches = {patches}\n\n[hardware]"))
    return path


def test_recipe_patches_stay_inside_the_recipe_s_repository(tmp_path, monkeypatch, cli, make_git_repo):
    """`[runtime] patches` naming a host directory, `../` out of the repository, or a symlink
    leaving it is refused before anything is read: no file name of the host reaches a report."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    host = tmp_path / "host" / ".ssh"
    (host / "vllm").mkdir(parents=True)
    (host / "vllm" / "id_rsa").write_text("PRIVATE KEY")
    (host / "id_rsa").write_text("PRIVATE KEY")
    repo = tmp_path / "work"
    (repo / ".git").mkdir(parents=True)  # a git work tree's root (what the check looks for)
    (repo / "recipes" / "linked").parent.mkdir(parents=True)
    (repo / "recipes" / "linked").symlink_to(host)
    fixture_source(tmp_path / "tree")
    monkeypatch.chdir(repo)
    for n, patches in enumerate((f'["{host}"]', '["../../host/.ssh"]', '["linked"]', '["linked/id_rsa"]',
                                 f'["{host / "id_rsa"}"]', '["/"]')):
        recipe = _recipe_naming(repo / "recipes" / f"r{n}.toml", patches)
        result = cli("check", str(recipe.relative_to(repo)), "--source", str(tmp_path / "tree"),
                     "--rev", FIXTURE_REV, "--format", "json")
        assert result.code == 65, (patches, result.err)
        assert result.out == "" and len(result.err.splitlines()) == 1 and "outside the recipe's repository" in result.err
        assert "id_rsa" not in result.err.replace(json.loads(patches)[0], ""), "only what the recipe wrote is echoed"
    # the command line may allow a place; inside the repository is always fine
    allowed = cli("check", "recipes/r0.toml", "--source", str(tmp_path / "tree"), "--rev", FIXTURE_REV,
                  "--format", "json", "--allow-outside", str(host))
    assert allowed.code in (0, 1) and "id_rsa" in allowed.out  # the overlay's file, listed as touched
    (repo / "recipes" / "overlay" / "vllm").mkdir(parents=True)
    (repo / "recipes" / "overlay" / "vllm" / "extra.py").write_text("X = 1\n")
    inside = _recipe_naming(repo / "recipes" / "ok.toml", '["overlay"]')
    ok = cli("check", str(inside.relative_to(repo)), "--source", str(tmp_path / "tree"), "--rev", FIXTURE_REV,
             "--format", "json")
    assert ok.code in (0, 1), ok.err


def test_without_git_the_recipe_s_directory_bounds_its_paths(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    fixture_source(tmp_path / "tree")
    (tmp_path / "a" / "sibling" / "vllm").mkdir(parents=True)
    (tmp_path / "a" / "sibling" / "vllm" / "x.py").write_text("X = 1\n")
    recipe = _recipe_naming(tmp_path / "a" / "recipes" / "r.toml", '["../sibling"]')
    monkeypatch.chdir(tmp_path)
    result = cli("check", str(recipe.relative_to(tmp_path)), "--source", "tree", "--rev", FIXTURE_REV)
    assert result.code == 65 and "outside the recipe's repository" in result.err


def test_links_inside_srcreview_s_own_cache_are_removed_never_followed(tmp_path, monkeypatch, cli):
    """A cache srcreview made, into which links to `$HOME` were dropped (a file link, a
    directory link, one in each kind of part): `clean` removes the links, never what they
    point at."""
    home = tmp_path / "home"
    home.mkdir()
    files = _hostile_home(home)
    cache = tmp_path / "cache"
    monkeypatch.setenv("SRCREVIEW_CACHE", str(cache))
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "test secret")
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1
    parts = [p for p in cache.iterdir() if p.is_dir() and p.name != ".locks"]
    assert parts
    for n, part in enumerate(parts):
        (part / f"home{n}").symlink_to(home, target_is_directory=True)
        (part / f"key{n}").symlink_to(home / ".ssh" / "id_rsa")
    (cache / "toplink").symlink_to(home, target_is_directory=True)
    for args in (("--facts",), ("--reviews",), ("--unused",), ()):
        assert cli("cache", "clean", *args).code == 0
        assert all((home / name).read_bytes() == data for name, data in files.items()), args
    assert not [p for p in cache.rglob("*") if p.is_symlink()]


def test_every_command_that_reads_a_recipe_s_patches_confines_them(tmp_path, monkeypatch, cli):
    """A host directory named by a recipe's `[runtime] patches` (an overlay: its file names
    would be listed) is refused the same way by a directory run, `diff`, `explain` and
    `graph`, before anything is read; `--allow-outside` is the command line's to give."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    host = tmp_path / "host" / ".ssh"
    (host / "vllm").mkdir(parents=True)
    (host / "vllm" / "id_rsa.py").write_text("KEY = 1\n")
    repo = tmp_path / "work"
    (repo / ".git").mkdir(parents=True)
    fixture_source(tmp_path / "tree")
    monkeypatch.chdir(repo)
    (repo / "recipes" / "ok").mkdir(parents=True)
    (repo / "recipes" / "ok" / "fine.toml").write_text(DEMO_RECIPE.read_text().replace("demo-mtp3", "fine"))
    for patches in (f'["{host}"]', '["../../../host/.ssh"]'):
        _recipe_naming(repo / "recipes" / "sub" / "r.toml", patches)
        source = ("--source", str(tmp_path / "tree"))
        runs = {"check": ("check", "recipes", *source, "--rev", FIXTURE_REV),
                "diff": ("diff", "recipes/sub/r.toml", *source, "--rev", FIXTURE_REV, "--rev", FIXTURE_REV),
                "explain": ("explain", "spec-draft-attention-backend-ignored", "recipes/sub/r.toml", *source,
                            "--rev", FIXTURE_REV),
                "graph": ("graph", "--recipe", "recipes/sub/r.toml", "--from", "vllm.config.SpeculativeConfig",
                          *source, "--rev", FIXTURE_REV)}
        for name, args in runs.items():
            result = cli(*args)
            assert result.code == 65 and result.out == "", (name, patches, result.out[-500:], result.err)
            assert result.err.splitlines() == [result.err.strip()], (name, result.err)
            assert "recipes/sub/r.toml: [runtime] patches:" in result.err and "outside the recipe's" in result.err
            assert "id_rsa" not in result.err, name
    allowed = cli("check", "recipes", "--source", str(tmp_path / "tree"), "--rev", FIXTURE_REV, "--format", "json",
                  "--allow-outside", str(tmp_path / "host"))
    assert allowed.code in (0, 1) and "id_rsa" in allowed.out, allowed.err


def test_a_recipe_patch_that_is_no_file_is_refused_unopened(tmp_path, monkeypatch, cli):
    """`[runtime] patches` naming a FIFO or a dangling link inside the recipe's directory, or
    a link to /dev/zero: one line, never opened (a FIFO would wait for a writer)."""
    import os

    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    fixture_source(tmp_path / "tree")
    os.mkfifo(tmp_path / "fifo.diff")
    (tmp_path / "dangling.diff").symlink_to(tmp_path / "gone.diff")
    (tmp_path / "zero.diff").symlink_to("/dev/zero")
    monkeypatch.chdir(tmp_path)
    for name, why in (("fifo.diff", "not a regular file or a directory"),
                      ("dangling.diff", "not a regular file or a directory"),
                      ("zero.diff", "outside the recipe's repository")):
        recipe = _recipe_naming(tmp_path / f"r-{name}.toml", f'["{name}"]')
        result = cli("check", recipe.name, "--source", "tree", "--rev", FIXTURE_REV)
        assert result.code == 65 and result.out == "", (name, result.err)
        assert result.err.splitlines() == [result.err.strip()], result.err
        assert result.err.startswith(f"srcreview: error: {recipe.name}: [runtime] patches: {name}: {why}")


def _new_file_patch(path: str) -> str:
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            "@@ -0,0 +1 @@\n+X = 1\n")


def test_layers_that_contradict_the_tree_s_shape_are_refused(tmp_path, monkeypatch, cli):
    """A file where the tree has a directory, a file inside a file, a symlinked directory in an
    overlay: refused with one line (exit 65), never skipped or half applied (docs/patches.md)."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    for n, path in enumerate(("vllm/config", "vllm/envs.py/inner.py", "vllm")):
        (tmp_path / f"p{n}.diff").write_text(_new_file_patch(path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "speculative.py").write_text("X = 1\n")
    (tmp_path / "o0" / "vllm").mkdir(parents=True)
    (tmp_path / "o0" / "vllm" / "config").write_text("X = 1\n")  # a file where vllm/config/ is
    (tmp_path / "o1" / "vllm").mkdir(parents=True)
    (tmp_path / "o1" / "vllm" / "linked").symlink_to(elsewhere, target_is_directory=True)
    (tmp_path / "o2" / "vllm" / "envs.py").mkdir(parents=True)
    (tmp_path / "o2" / "vllm" / "envs.py" / "x.py").write_text("X = 1\n")  # inside a file
    (tmp_path / "o3" / "vllm" / "a" / "b").mkdir(parents=True)  # a symlinked directory deep down
    (tmp_path / "o3" / "vllm" / "a" / "b" / "deep").symlink_to(elsewhere, target_is_directory=True)
    (tmp_path / "p4.diff").write_text("diff --git a/vllm/envs.py b/vllm/config\nsimilarity index 100%\n"
                                      "rename from vllm/envs.py\nrename to vllm/config\n")
    (tmp_path / "p5.diff").write_text("diff --git a/vllm/lnk.py b/vllm/lnk.py\nnew file mode 120000\n--- /dev/null\n"
                                      "+++ b/vllm/lnk.py\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n")
    (tmp_path / "p6.diff").write_text("diff --git a/vllm/envs.py b/vllm/envs.py\nold mode 100644\nnew mode 120000\n")
    (tmp_path / "p7.diff").write_text("diff --git a/vllm/sub b/vllm/sub\nnew file mode 160000\n--- /dev/null\n"
                                      "+++ b/vllm/sub\n@@ -0,0 +1 @@\n+Subproject commit " + "a" * 40 + "\n")
    cases = {("--patch", "p0.diff"): "p0.diff:1: writes the file vllm/config, where the tree has a directory",
             ("--patch", "p1.diff"): "p1.diff:1: writes vllm/envs.py/inner.py inside vllm/envs.py, a file",
             ("--patch", "p2.diff"): "p2.diff:1: writes the file vllm, where the tree has a directory",
             ("--overlay", "o0"): "o0/vllm/config: writes the file vllm/config, where the tree has a directory",
             ("--overlay", "o1"): "o1/vllm/linked: an overlay holds regular files only (a symlinked directory)",
             ("--overlay", "o2"): "o2/vllm/envs.py/x.py: writes vllm/envs.py/x.py inside vllm/envs.py, a file",
             ("--overlay", "o3"): "o3/vllm/a/b/deep: an overlay holds regular files only (a symlinked directory)",
             ("--patch", "p4.diff"): "p4.diff:1: writes the file vllm/config, where the tree has a directory",
             ("--patch", "p5.diff"): "p5.diff:2: makes vllm/lnk.py a symlink: srcreview lays regular files only",
             ("--patch", "p6.diff"): "p6.diff:3: makes vllm/envs.py a symlink",
             ("--patch", "p7.diff"): "p7.diff:2: makes vllm/sub a submodule"}
    for (option, value), message in cases.items():
        result = cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV, option, value)
        assert result.code == 65 and result.out == "", (value, result.err)
        assert result.err.splitlines() == [result.err.strip()] and message in result.err, (value, result.err)
    (tmp_path / "p3.diff").write_text(_new_file_patch("vllm/config/new_module.py"))  # a new file in the directory
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV, "--patch", "p3.diff").code in (0, 1)
    (tmp_path / "p8.diff").write_text("diff --git a/vllm/envs.py b/vllm/envs.py\nold mode 100644\nnew mode 100755\n")
    assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV, "--patch", "p8.diff").code in (0, 1)


def test_a_huge_sparse_file_in_an_overlay_is_refused_before_it_is_read(tmp_path, monkeypatch, cli):
    import resource
    import time

    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    (tmp_path / "overlay" / "vllm").mkdir(parents=True)
    with open(tmp_path / "overlay" / "vllm" / "huge.py", "wb") as handle:
        handle.truncate(6 << 30)  # 6 GB of holes: nothing on disk, all of it if read
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    result = cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV, "--overlay", "overlay")
    assert result.code == 65 and "over 200000000 bytes (vllm/huge.py)" in result.err
    assert time.monotonic() - start < 30
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kB: nothing was read


def test_an_unmarked_directory_at_the_default_location_is_not_srcreview_s(tmp_path, monkeypatch, cli):
    """`XDG_CACHE_HOME=~` (or `~/.cache`) with a `srcreview` directory srcreview did not create
    (the user's own checkout, say): the default location's name proves nothing, so `cache clean`
    keeps every file of it and says so (fixed: it was srcreview's by its name and emptied); what
    a run then writes there is marked and cleaned, the user's files still kept."""
    home = tmp_path / "home"
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SRCREVIEW_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    for xdg in (home, home / ".cache"):
        mine = xdg / "srcreview"
        mine.mkdir(parents=True)
        files = _hostile_home(mine)
        (mine / "README.md").write_text("my project called srcreview\n")
        files["README.md"] = b"my project called srcreview\n"
        monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
        for args in (("--dry-run",), ("--unused",), ("--facts",), ("--reviews",), ("--sources",),
                     ("--rev", FIXTURE_REV), ()):
            result = cli("cache", "clean", *args)
            assert result.code == 0 and "0 parts" in result.out, (xdg, args, result.out, result.err)
            assert _snapshot(mine) == files, (xdg, args)
        assert "kept" in result.out and "did not create" in result.out and "README.md" in result.out
        info = cli("cache", "info")
        assert info.code == 0 and "not srcreview's" in info.out
        assert cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV).code == 1
        assert not (mine / MARKER).exists() and any(p.parent != mine for p in mine.rglob(MARKER))
        result = cli("cache", "clean")
        assert result.code == 0 and "removed 0 parts" not in result.out and "kept" in result.out, result.out
        assert {k: v for k, v in _snapshot(mine).items() if not k.endswith(MARKER)} == files, xdg
        shutil.rmtree(mine)


def test_scratch_space_never_sweeps_another_program_s_tmp(tmp_path, monkeypatch, cli, refused_url):
    """`SRCREVIEW_CACHE=~` whose `~/.tmp` holds another program's files over an hour old: a
    download's scratch directory goes there, and its sweep of dead runs' leftovers removed them
    (fixed: it sweeps a `.tmp` srcreview created only)."""
    home = tmp_path / "home"
    (home / ".tmp" / "old").mkdir(parents=True)
    (home / ".tmp" / "old" / "file").write_text("keep")
    (home / ".tmp" / "notes.txt").write_text("keep")
    (home / "github" / ".trash.x").mkdir(parents=True)
    for path in (home / ".tmp" / "old", home / ".tmp" / "notes.txt", home / "github" / ".trash.x"):
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    monkeypatch.setenv("SRCREVIEW_CACHE", str(home))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", refused_url + "/archive")
    monkeypatch.setenv("SRCREVIEW_HTTP_DEADLINE", "1")
    result = cli("fetch", "--rev", "98dff2a81d747d1dba01a47f939f48c3526d4206", "--provider", "github")
    assert result.code == 2 and "cannot reach GitHub" in result.err
    assert (home / ".tmp" / "old" / "file").read_text() == "keep" and (home / ".tmp" / "notes.txt").is_file()
    assert (home / "github" / ".trash.x").is_dir()
    assert sorted(p.name for p in (home / ".tmp").iterdir()) == ["notes.txt", "old"]  # its own scratch is gone
