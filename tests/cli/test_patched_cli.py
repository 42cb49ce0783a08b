"""--patch/--overlay and `[runtime] patches` through the commands, on a fixture tree committed to git in the test.

The source is a real git repository made here (`--source REPO --rev SHA`), the patch is what
`git diff` writes for a change we make to its loader; every output is checked against the
patch file and the repository, not against text written into the test.
"""

from __future__ import annotations

import json

import pytest
from fixture_repos import fixture_repo
from recipe_support import DEMO_RECIPE

RECIPE = DEMO_RECIPE.read_text()
LOADER = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"
KNOB = ("speculative_config.attention_backend", "draft")


@pytest.fixture
def setup(make_git_repo, tmp_path, cache_dir, monkeypatch):
    """A fixture repo at SHA, a recipe pinned to it that names the patch, and the patch itself."""
    repo = fixture_repo(make_git_repo, name="vllm")
    sha = repo.git("rev-parse", "HEAD")
    loader = repo.path / LOADER
    text = loader.read_text()
    loader.write_text(text.replace("    eagle_model = get_model(",
                                   "    if speculative_config.attention_backend is not None:\n"
                                   "        vllm_config = replace(vllm_config, attention_config=replace(\n"
                                   "            vllm_config.attention_config, backend=speculative_config.attention_backend))\n"
                                   "    eagle_model = get_model("))
    work = tmp_path / "work"
    (work / "recipes" / "patches").mkdir(parents=True)
    patch = work / "recipes" / "patches" / "nested-backend.diff"
    patch.write_text(repo.git("diff") + "\n")
    repo.git("checkout", "--quiet", "--", ".")
    plain = work / "recipes" / "plain.toml"
    plain.write_text(RECIPE.replace("[hardware]", f'[runtime]\nrevision = "{sha}"\n\n[hardware]'))
    patched = work / "recipes" / "patched.toml"
    patched.write_text(RECIPE.replace("[hardware]", f'[runtime]\nrevision = "{sha}"\n'
                                                    'patches = ["patches/nested-backend.diff"]\n\n[hardware]'))
    monkeypatch.chdir(work)
    return {"repo": repo, "sha": sha, "patch": patch, "plain": plain, "patched": patched}


def knob(review: dict, key=KNOB) -> dict:
    return next(k for k in review["knobs"] if (k["key"], k["scope"]) == key)


def test_check_with_patch_option_and_recipe_patches(setup, cli, monkeypatch):
    src = str(setup["repo"].path)
    plain = json.loads(cli("check", "recipes/plain.toml", "--source", src, "--format", "json").out)["reviews"][0]
    by_option = cli("check", "recipes/plain.toml", "--source", src, "--patch", "recipes/patches/nested-backend.diff",
                    "--format", "json")
    by_recipe = cli("check", "recipes/patched.toml", "--source", src, "--format", "json")
    assert knob(plain)["status"] == "ignored" and plain["patches"] == []
    for result in (by_option, by_recipe):
        review = json.loads(result.out)["reviews"][0]
        assert knob(review)["status"] == "applied"
        [layer] = review["patches"]
        assert layer["file"] == "recipes/patches/nested-backend.diff" and layer["touched"] == [LOADER]
        patched = [a for a in knob(review)["evidence"] if a.get("origin", {}).get("kind") == "patched"]
        assert patched and all(a["url"].startswith("recipes/patches/nested-backend.diff#L") for a in patched)
        lines = setup["patch"].read_text().splitlines()
        assert all("attention_backend" in "\n".join(lines[a["origin"]["start_line"] - 1:a["origin"]["end_line"]])
                   for a in patched)
    monkeypatch.setenv("COLUMNS", "200")
    text = cli("check", "recipes/patched.toml", "--source", src, "--color", "never", "-v").out
    assert "patched with patch recipes/patches/nested-backend.diff" in text and "(patched)" in text


def test_recipe_patch_that_is_missing_is_invalid_data(setup, cli):
    broken = setup["patched"].parent / "broken.toml"
    broken.write_text(setup["patched"].read_text().replace("nested-backend.diff", "gone.diff"))
    result = cli("check", "recipes/broken.toml", "--source", str(setup["repo"].path))
    assert result.code == 65 and "gone.diff" in result.err and "relative to the recipe" in result.err


def test_show_and_graph_read_the_patched_source(setup, cli):
    src, sha = str(setup["repo"].path), setup["sha"]
    patch = "recipes/patches/nested-backend.diff"
    shown = cli("show", LOADER, "--rev", sha, "--source", src, "--patch", patch)
    assert shown.code == 0 and "speculative_config.attention_backend is not None" in shown.out
    assert shown.out.rstrip().splitlines()[-1] == f"{patch}  (patched)"  # the whole file: the patch made it
    line = next(n for n, text in enumerate(shown.out.splitlines(), 1) if "attention_backend is not None" in text)
    one = cli("show", f"{LOADER}:{line}", "--rev", sha, "--source", src, "--patch", patch)
    assert one.out.rstrip().endswith("(patched)") and f"{patch}#L" in one.out
    upstream = cli("show", f"{LOADER}:1-2", "--rev", sha, "--source", src, "--patch", patch)
    assert "(patched)" not in upstream.out and f"/blob/{sha}/{LOADER}#L1-L2" in upstream.out
    # with the recipe bound: unset, speculative_config is what the engine passes (None), which the loader refuses
    graph = cli("graph", "--rev", sha, "--source", src, "--from", "load_eagle_model", "--to", "get_model",
                "--reads", "SpeculativeConfig.attention_backend", "--format", "json", "--patch", patch,
                "--recipe", "recipes/plain.toml")
    reads = json.loads(graph.out)["field_reads"]
    assert reads["reads"] and all(r["anchor"]["url"].startswith(f"{patch}#L") for r in reads["reads"])


def test_diff_shows_what_the_patch_changes(setup, cli):
    src, sha = str(setup["repo"].path), setup["sha"]
    same = cli("diff", "recipes/plain.toml", "--rev", sha, "--rev", sha, "--source", src)
    assert same.code == 64 and "--patch" in same.err
    result = cli("diff", "recipes/plain.toml", "--rev", sha, "--rev", sha, "--source", src,
                 "--patch", "recipes/patches/nested-backend.diff", "--format", "json")
    assert result.code == 1
    diff = json.loads(result.out)
    assert diff["patches_before"] == [] and [p["file"] for p in diff["patches_after"]] == ["recipes/patches/nested-backend.diff"]
    change = next(k for k in diff["knobs"] if (k["key"], k["scope"]) == KNOB)
    assert (change["before"]["status"], change["after"]["status"]) == ("ignored", "applied")
    assert any(a["url"].startswith("recipes/patches/nested-backend.diff#L") for a in change["only_after"])
    # the recipe's own patches are on the new side too
    recipe_side = cli("diff", "recipes/patched.toml", "--rev", sha, "--rev", sha, "--source", src, "--color", "never")
    assert recipe_side.code == 1 and "+ recipes/patches/nested-backend.diff" in recipe_side.out


def test_explain_a_saved_patched_review_needs_the_same_patch(setup, cli, tmp_path):
    src = str(setup["repo"].path)
    saved = tmp_path / "review.json"
    saved.write_text(cli("check", "recipes/patched.toml", "--source", src, "--format", "json").out)
    fingerprint = next(f["fingerprint"] for f in json.loads(saved.read_text())["reviews"][0]["findings"]
                       if f["rule"] == "spec-draft-attention-backend-ignored")
    without = cli("explain", fingerprint, "--review", str(saved), "--source", src)
    assert without.code == 64 and "nested-backend.diff" in without.err
    explained = cli("explain", fingerprint, "--review", str(saved), "--source", src, "--color", "never",
                    "--patch", "recipes/patches/nested-backend.diff")
    assert explained.code == 0 and "(patched)" in explained.out
    assert "speculative_config.attention_backend is not None" in explained.out  # the excerpt is the patched source
    fresh = cli("explain", fingerprint, "recipes/patched.toml", "--source", src, "--color", "never")
    assert fresh.code == 0 and "(patched)" in fresh.out


def test_sarif_and_review_formats_cite_the_patch(setup, cli, tmp_path):
    src = str(setup["repo"].path)
    sarif = tmp_path / "out.sarif"
    review = cli("check", "recipes/patched.toml", "--source", src, "--format", "review", "--sarif", str(sarif))
    doc = json.loads(review.out)
    pinned = doc["artifacts"]["pinned_runtime"]
    assert [p["file"] for p in pinned["patches"]] == ["recipes/patches/nested-backend.diff"]
    assert all(u["url"].startswith("https://") for u in pinned["source_urls"])  # upstream sources only
    run = json.loads(sarif.read_text())["runs"][0]
    locations = [loc["physicalLocation"] for result in run["results"] for loc in result.get("relatedLocations", ())]
    on_patch = [loc for loc in locations if loc["artifactLocation"]["uri"] == "recipes/patches/nested-backend.diff"]
    # with the patch the draft backend is applied: that finding is a fact, listed with its evidence, not an alert
    facts = [url for fact in run["properties"].get("facts", ()) for url in fact["evidenceUrls"]]
    assert on_patch or any(url.startswith("recipes/patches/nested-backend.diff#L") for url in facts)
    lines = setup["patch"].read_text().splitlines()
    for loc in on_patch:
        region = loc["region"]
        assert any("attention_backend" in line for line in lines[region["startLine"] - 1:region["endLine"]])
