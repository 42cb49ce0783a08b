"""Patched trees: patches made with `git diff`/`git format-patch` on a fixture tree, applied in pure Python.

Every patch here is produced by git in the test from a copy of a hand-written fixture tree,
then applied by srcreview to the fixture as a SourceTree; the results are compared with what
git itself produced (the patched work tree), never with hard-coded text.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from fixture_repos import fixture_repo
from recipe_support import DEMO_RECIPE, fixture_tree

from srcreview.core.errors import DataError
from srcreview.engine.patched import mark_patched
from srcreview.engine.run import review
from srcreview.model.recipe import parse_recipe
from srcreview.source.cache import Cache
from srcreview.source.patched import PatchedTree, apply_layers, load_overlay, load_patch

RECIPE = DEMO_RECIPE.read_text()
LOADER = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"


def base_tree(root: Path):
    return fixture_tree(root)


def loader_applying_backend(text: str) -> str:
    """The fixture's loader, changed by us to replace attention_config before get_model."""
    marker = "    eagle_model = get_model("
    assert marker in text
    addition = ("    if speculative_config.attention_backend is not None:\n"
                "        vllm_config = replace(\n"
                "            vllm_config,\n"
                "            attention_config=replace(vllm_config.attention_config,\n"
                "                                     backend=speculative_config.attention_backend),\n"
                "        )\n")
    return text.replace(marker, addition + marker)


@pytest.fixture
def patched_fixture(make_git_repo, tmp_path, cache_dir):
    """(base tree, patched tree, patch file, the work tree git patched) for the loader change."""
    repo = fixture_repo(make_git_repo)
    target = repo.path / LOADER
    target.write_text(loader_applying_backend(target.read_text()))
    patch = tmp_path / "nested-backend.diff"
    patch.write_text(repo.git("diff") + "\n")
    after = target.read_text()
    repo.git("checkout", "--quiet", "--", ".")
    tree = apply_layers(base_tree(repo.path), [load_patch(patch, "patches/nested-backend.diff")])
    return repo, tree, patch, after


def test_git_diff_applies_like_git(patched_fixture):
    repo, tree, patch, after = patched_fixture
    assert isinstance(tree, PatchedTree)
    assert tree.read_text(LOADER) == after
    assert tree.files() == base_tree(repo.path).files()
    other = "vllm/config/speculative.py"  # untouched: the base's own bytes and blob id
    assert tree.read(other) == (repo.path / other).read_bytes()
    assert tree.blob_id(other) == base_tree(repo.path).blob_id(other)


def test_patched_loader_applies_the_backend_with_anchors_into_the_patch(patched_fixture):
    repo, tree, patch, _ = patched_fixture
    plain = review(parse_recipe(RECIPE, "recipes/demo.toml"), base_tree(repo.path))
    result = mark_patched(review(parse_recipe(RECIPE, "recipes/demo.toml"), tree), tree)
    key = ("speculative_config.attention_backend", "draft")
    assert {(k.key, k.scope): k.status for k in plain.knobs}[key] == "ignored"
    knob = next(k for k in result.knobs if (k.key, k.scope) == key)
    assert knob.status == "applied"
    patch_lines = patch.read_text().splitlines()
    patched = [a for a in knob.evidence if a.origin is not None and a.origin.kind == "patched"]
    assert patched, knob.evidence
    for anchor in patched:
        assert anchor.url.startswith("patches/nested-backend.diff#L")
        assert anchor.origin.file == "patches/nested-backend.diff"
        assert anchor.origin.sha256 == hashlib.sha256(patch.read_bytes()).hexdigest()
        shown = patch_lines[anchor.origin.start_line - 1:anchor.origin.end_line]
        assert all(line.startswith("+") for line in shown)  # lines the patch added
        assert any("attention_backend" in line for line in shown)
        # the anchor's own lines are those of the reviewed (patched) tree
        assert "attention_backend" in "\n".join(tree.read_text(anchor.path).splitlines()[anchor.start_line - 1:anchor.end_line])
    assert [(p.file, p.kind, p.touched) for p in result.patches] == [("patches/nested-backend.diff", "patch", (LOADER,))]


def test_unchanged_lines_point_at_upstream_lines(patched_fixture):
    repo, tree, _, _ = patched_fixture
    upstream = (repo.path / LOADER).read_text().splitlines()
    patched = tree.read_text(LOADER).splitlines()
    call = next(n for n, line in enumerate(patched, 1) if "eagle_model = get_model(" in line)
    origin = tree.provenance(LOADER, call, call)
    assert origin.kind == "upstream" and origin.start_line < call  # shifted by the insertion above it
    assert upstream[origin.start_line - 1] == patched[call - 1]
    assert tree.url(LOADER, call) == base_tree(repo.path).url(LOADER, origin.start_line, origin.start_line)
    assert "#L" in tree.url(LOADER, 1, len(patched)) and tree.provenance(LOADER, 1, len(patched)).kind == "patched"
    assert tree.url("vllm/config/speculative.py", 2, 3) == base_tree(repo.path).url("vllm/config/speculative.py", 2, 3)


def test_a_hunk_that_does_not_apply_names_patch_and_hunk(make_git_repo, tmp_path, cache_dir, cli):
    repo = fixture_repo(make_git_repo)
    target = repo.path / LOADER
    target.write_text(target.read_text().replace("assert speculative_config is not None", "assert speculative_config"))
    patch = tmp_path / "stale.diff"
    patch.write_text(repo.git("diff"))
    sha = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "--quiet", "--", ".")
    target.write_text(target.read_text().replace("assert speculative_config is not None", "assert True"))
    repo.git("commit", "--quiet", "-am", "upstream moved on")
    moved = repo.git("rev-parse", "HEAD")
    with pytest.raises(DataError) as raised:
        apply_layers(base_tree(repo.path), [load_patch(patch, "stale.diff")])
    assert "stale.diff:" in raised.value.message and "hunk #1" in raised.value.message
    assert LOADER in raised.value.message and "does not apply" in raised.value.message
    recipe = tmp_path / "demo.toml"
    recipe.write_text(RECIPE)
    ok = cli("check", str(recipe), "--source", str(repo.path), "--rev", sha, "--patch", str(patch), "--format", "json")
    assert ok.code in (0, 1), ok.err
    bad = cli("check", str(recipe), "--source", str(repo.path), "--rev", moved, "--patch", str(patch))
    assert bad.code == 65 and "hunk #1" in bad.err and "stale.diff" in bad.err and "Traceback" not in bad.err
    missing = cli("check", str(recipe), "--source", str(repo.path), "--rev", sha, "--patch", str(tmp_path / "nope.diff"))
    assert missing.code == 64 and "nope.diff" in missing.err


def test_format_patch_series_rename_new_and_deleted_files(make_git_repo, tmp_path, cache_dir):
    repo = fixture_repo(make_git_repo)
    base = repo.git("rev-parse", "HEAD")
    target = repo.path / LOADER
    target.write_text(loader_applying_backend(target.read_text()))
    repo.git("commit", "--quiet", "-am", "loader applies the nested backend")
    target.write_text(target.read_text().replace("eagle_model = get_model(", "draft = get_model(")
                      .replace("return eagle_model", "return draft"))
    (repo.path / "vllm/v1/worker/gpu/spec_decode/eagle/notes.py").write_text("NOTE = 1")  # no final newline
    repo.git("mv", "vllm/envs.py", "vllm/environment.py")
    repo.git("rm", "--quiet", "vllm/platforms/__init__.py")
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "rename, add, delete")
    series = repo.git("format-patch", "--stdout", "-M", f"{base}..HEAD")
    patch = tmp_path / "series.patch"
    patch.write_text(series + "\n")
    expected = {p: (repo.path / p).read_bytes() for p in repo.git("ls-files").splitlines()}
    repo.git("checkout", "--quiet", base)
    tree = apply_layers(base_tree(repo.path), [load_patch(patch, "series.patch")])
    assert {p: tree.read(p) for p in tree.files() if not p.startswith(".git/")} == expected
    assert not tree.exists("vllm/envs.py") and not tree.exists("vllm/platforms/__init__.py")
    assert tree.read("vllm/v1/worker/gpu/spec_decode/eagle/notes.py") == b"NOTE = 1"
    renamed = tree.provenance("vllm/environment.py", 1, 2)
    assert renamed.kind == "upstream" and renamed.file == "vllm/envs.py"  # moved whole: upstream has it at its old path
    assert tree.url("vllm/environment.py", 1, 2) == base_tree(repo.path).url("vllm/envs.py", 1, 2)


def test_overlay_replaces_and_adds_files(make_git_repo, tmp_path, cache_dir):
    repo = fixture_repo(make_git_repo)
    overlay = tmp_path / "overlay"
    replaced = overlay / LOADER
    replaced.parent.mkdir(parents=True)
    replaced.write_text(loader_applying_backend((repo.path / LOADER).read_text()))
    (overlay / "vllm/extra.py").write_text("EXTRA = True\n")
    (overlay / "__pycache__").mkdir()
    (overlay / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    tree = apply_layers(base_tree(repo.path), [load_overlay(overlay, "overlay")])
    assert tree.read(LOADER) == replaced.read_bytes()
    assert "vllm/extra.py" in tree.files() and not any("__pycache__" in p for p in tree.files())
    line = next(n for n, text in enumerate(replaced.read_text().splitlines(), 1) if "attention_backend" in text)
    assert tree.url(LOADER, line) == f"overlay/{LOADER}#L{line}"
    result = mark_patched(review(parse_recipe(RECIPE, "recipes/demo.toml"), tree), tree)
    knob = next(k for k in result.knobs if k.key == "speculative_config.attention_backend")
    assert knob.status == "applied" and any(a.url.startswith(f"overlay/{LOADER}#L") for a in knob.evidence)
    assert result.patches[0].kind == "overlay" and set(result.patches[0].touched) == {LOADER, "vllm/extra.py"}


def test_applied_trees_are_cached_by_revision_and_patch(patched_fixture):
    repo, tree, patch, after = patched_fixture
    cache = Cache()
    keys = cache.keys("patched")
    assert keys == [tree.variant]
    again = apply_layers(base_tree(repo.path), [load_patch(patch, "patches/nested-backend.diff")], cache=cache)
    assert again.read_text(LOADER) == after
    assert [again.provenance(LOADER, n, n) for n in range(1, 30)] == [tree.provenance(LOADER, n, n) for n in range(1, 30)]
    manifest = cache.path_for("patched", tree.variant) / "manifest.json"
    manifest.write_text("{}")  # a corrupt entry is rebuilt, never trusted
    rebuilt = apply_layers(base_tree(repo.path), [load_patch(patch, "patches/nested-backend.diff")], cache=cache)
    assert rebuilt.read_text(LOADER) == after


def test_raw_text_answers_are_not_shared_with_the_plain_tree(patched_fixture, tmp_path):
    """The index keeps raw-text answers per revision listing: a patched tree has its own."""
    from srcreview.index import Index

    repo, tree, _, _ = patched_fixture
    facts = tmp_path / "facts"
    plain = Index(base_tree(repo.path), cache_dir=facts)
    assert LOADER not in plain.grep("speculative_config.attention_backend")
    assert LOADER in Index(tree, cache_dir=facts).grep("speculative_config.attention_backend")


@pytest.mark.parametrize("text, message", [
    ("just prose\n", "not a unified diff"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n", "cut short"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\nprose\n", "ends early"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n+c\n", "more lines than its header says"),
    ("--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "not a path inside"),
    ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+b\n", "names no file"),
])
def test_malformed_patches_are_invalid_data(tmp_path, text, message):
    patch = tmp_path / "bad.diff"
    patch.write_text(text)
    with pytest.raises(DataError) as raised:
        load_patch(patch, "bad.diff")
    assert message in raised.value.message and raised.value.message.startswith("bad.diff")


def test_overlays_hold_regular_files_only(tmp_path, cli):
    overlay = tmp_path / "overlay"
    (overlay / "vllm").mkdir(parents=True)
    (overlay / "vllm" / "link.py").symlink_to("/etc/hostname")
    with pytest.raises(DataError) as raised:
        load_overlay(overlay, "overlay")
    assert "regular files only" in raised.value.message and "overlay/vllm/link.py" in raised.value.message
    result = cli("show", "--rev", "0.29.0", "x.py", "--overlay", str(tmp_path / "missing"))
    assert result.code == 64 and "no such directory" in result.err
