"""The gate must never pass by accident: a review that could not look is never a pass.

Each case runs the real CLI (`srcreview.cli.main.main` in this process) on a copy of the
`rules_spec_decode` fixture given as `--source` (an unpacked sdist, or a git checkout made in
the test), damaged one way:

- gutted: only `vllm/_version.py` is left. Rules that start from a module the tree lacks
  (the model runners the draft rules start from) cannot be evaluated: the review is
  incomplete (exit 2).
- a module that cannot be read: `vllm/config/speculative.py` a directory, a FIFO, a symlink
  leaving the tree (sdist directory and git checkout), or `vllm/config` a symlinked directory
  (inside and outside the tree). The rule whose anchor went missing is not stale but
  unevaluable: exit 2, the entry named.
- a rule whose anchor is really gone at the revision (the field renamed; the module present):
  stale, never refuted, and it fails the gate (exit 1) unless `--allow-stale`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from recipe_support import DEMO_RECIPE

from srcreview.core.cachedir import MARKER

FIXTURE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets" / "rules_spec_decode"
RECIPE = DEMO_RECIPE.read_text()
REV = "1234567ab"
SPEC = "vllm/config/speculative.py"
RULE = "spec-draft-attention-backend-ignored"  # anchors: the runners, SpeculativeConfig.attention_backend (set)
RUNNERS = ("GPUModelRunner.__init__ (vllm.v1.worker.gpu.model_runner), "
           "GPUModelRunner.__init__ (vllm.v1.worker.gpu_model_runner)")


def _version(root: Path) -> None:
    (root / "vllm" / "_version.py").write_text(f"__version__ = version = '0.0.0'\n"
                                               f"__commit_id__ = commit_id = 'g{REV}'\n")
    (root / "PKG-INFO").write_text("Name: vllm\nVersion: 0.0.0\n")  # an sdist's metadata, naming the release


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    shutil.copytree(FIXTURE, tmp_path / "tree")
    _version(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(RECIPE)
    return tmp_path


def check(cli, source: str = "tree", *args: str, rev: str = REV):
    result = cli("check", "demo.toml", "--source", source, "--rev", rev, "--format", "json", *args)
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    return result.code, json.loads(result.out)["reviews"][0] if result.out else None  # the one recipe's review


def test_the_intact_tree_passes_with_fail_on_none(cli, work):
    code, doc = check(cli, "tree", "--fail-on", "none")
    assert (code, doc["incomplete"], doc["stale_rules"]) == (0, [], [])


def test_a_gutted_source_tree_is_incomplete_never_a_pass(cli, work):
    """Fixed: nine rules went stale, every knob `accepted`, "No findings", exit 0."""
    shutil.rmtree(work / "tree")
    (work / "tree" / "vllm").mkdir(parents=True)
    _version(work / "tree")
    for policy in ("confirmed:high", "none"):
        code, doc = check(cli, "tree", "--fail-on", policy)
        assert code == 2 and doc["gate"]["status"] == "incomplete"
        assert f"{RULE}: cannot be evaluated: the tree has no module gpu, gpu_model_runner, model_runner, v1, " \
            f"worker (for {RUNNERS})" in doc["incomplete"]
        assert not [f for f in doc["findings"] if f["classification"] in ("confirmed", "refuted")]
    # the text report says so
    text = cli("check", "demo.toml", "--source", "tree", "--rev", REV)
    assert text.code == 2 and "Review incomplete:" in text.out and "No findings." not in text.out


def _directory(path: Path, outside: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "__init__.py").write_text("")


def _fifo(path: Path, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _symlink_leaving(path: Path, outside: Path) -> None:
    shutil.move(path, outside / path.name)  # intact: read, it would give the clean review
    path.symlink_to(outside / path.name)


def _config_symlinked_inside(path: Path, outside: Path) -> None:
    config = path.parent
    config.rename(config.with_name("config_real"))
    config.symlink_to("config_real", target_is_directory=True)


def _config_symlinked_outside(path: Path, outside: Path) -> None:
    config = path.parent
    shutil.move(config, outside / "config")
    config.symlink_to(outside / "config", target_is_directory=True)


DAMAGE = {
    "directory": (_directory, f"{SPEC}: a directory, not a module file"),
    "fifo": (_fifo, f"{SPEC}: a FIFO, not a regular file"),
    # listed, but never read: the questions that read it are open (test_robust_source_tree.py)
    "symlink-leaving-the-tree": (_symlink_leaving, f"{SPEC}: cannot be read ({SPEC}: symlink leaves the source tree)"),
    "config-symlinked-directory-inside": (_config_symlinked_inside, "vllm/config: a symlinked directory (not analysed)"
                                          ": the modules under it cannot be read"),
    "config-symlinked-directory-outside": (_config_symlinked_outside, "vllm/config: a symlink leaving the source tree"
                                           ": the modules under it cannot be read"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_an_unreadable_required_module_makes_the_review_incomplete(cli, work, damage):
    """Fixed: the module was invisible, its rule went stale, every knob `accepted`, exit 0."""
    outside = work / "outside"
    outside.mkdir()
    breaks, named = DAMAGE[damage]
    breaks(work / "tree" / SPEC, outside)
    code, doc = check(cli, "tree", "--fail-on", "none")
    assert code == 2 and doc["stale_rules"] == [], doc["stale_rules"]
    if damage.startswith("config-"):  # a hidden directory: incomplete whatever the rules ask
        # (fixed: inside the tree, its modules were read under the target's name, and a
        # confirmed finding came out refuted)
        assert f"source tree: {named}" in doc["incomplete"]
    else:
        assert any(r.startswith(f"{RULE}: ") and named in r for r in doc["incomplete"]), doc["incomplete"]
    assert str(work) not in json.dumps(doc)


def _git_checkout(make_git_repo, work: Path, change) -> tuple[str, str]:
    repo = make_git_repo("repo")
    shutil.copytree(work / "tree", repo.path, dirs_exist_ok=True)
    change(repo.path)
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "tree")
    return str(repo.path), repo.git("rev-parse", "HEAD")


@pytest.mark.parametrize("link", ["module", "config-directory"])
def test_a_symlink_out_of_a_git_checkout_makes_the_review_incomplete(cli, work, make_git_repo, link):
    outside = work / "outside"
    outside.mkdir()

    def change(root: Path) -> None:
        target = root / SPEC if link == "module" else (root / SPEC).parent
        shutil.copytree(target, outside / target.name) if target.is_dir() else shutil.copy(target, outside)
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        target.symlink_to(outside / target.name)

    repo, commit = _git_checkout(make_git_repo, work, change)
    code, doc = check(cli, repo, "--fail-on", "none", rev=commit)
    assert code == 2 and doc["stale_rules"] == []
    where = SPEC if link == "module" else "vllm/config"
    assert any(r.startswith(f"{RULE}: cannot be evaluated: ") and
               f"{where}: a symlink that does not resolve to a regular file inside the tree" in r
               for r in doc["incomplete"]), doc["incomplete"]
    assert str(outside) not in json.dumps(doc)


def _rename_the_field(work: Path) -> None:
    spec = work / "tree" / SPEC
    text = spec.read_text()
    assert "    attention_backend: AttentionBackendEnum | None = None\n" in text
    spec.write_text(text.replace("    attention_backend: AttentionBackendEnum | None = None\n",
                                 "    draft_attention_backend: AttentionBackendEnum | None = None\n"))


def test_a_stale_rule_fails_the_gate_unless_allowed(cli, work):
    _rename_the_field(work)
    code, doc = check(cli, "tree", "--fail-on", "none")
    assert code == 1 and doc["incomplete"] == []
    assert doc["stale_rules"] == [{"rule": RULE, "missing": ["SpeculativeConfig.attention_backend"]}]
    assert doc["gate"]["status"] == "failed" and doc["gate"]["stale"] == [RULE]
    assert not [f for f in doc["findings"] if f["rule"] == RULE]  # stale: never refuted (nor anything else)
    text = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--fail-on", "none")
    assert text.code == 1
    assert "Stale rules at this revision: 1 (they fail the gate: update the rules, or accept them with " \
           "--allow-stale)" in " ".join(text.out.split())  # wrapped at the terminal's width
    assert text.out.endswith("gate: failed (--fail-on none; 1 stale rule; 1 problem; 3 open questions; 2 facts; "
                             "start-up rejected)\n")
    code, doc = check(cli, "tree", "--fail-on", "none", "--allow-stale")
    assert code == 0 and doc["gate"]["status"] == "passed" and doc["gate"]["stale"] == []
    assert doc["stale_rules"] == [{"rule": RULE, "missing": ["SpeculativeConfig.attention_backend"]}]
    # the default policy: the stale rule fails the gate beside any finding
    code, doc = check(cli, "tree")
    assert code == 1 and doc["gate"]["stale"] == [RULE]
    run = json.loads(cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json").out)["gate"]
    assert run["stale_rules"] == 1 and "; 1 stale rule; " in run["summary"]
    concise = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--fail-on", "none", "--format", "concise")
    assert f"demo.toml: stale rule {RULE}: missing SpeculativeConfig.attention_backend [fails the gate]\n" \
           in concise.out
    allowed = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--fail-on", "none", "--allow-stale",
                  "--format", "concise")
    assert allowed.code == 0 and f"stale rule {RULE}: missing SpeculativeConfig.attention_backend\n" in allowed.out
    assert allowed.out.endswith("gate: passed (--fail-on none; 1 stale rule accepted by --allow-stale; 1 problem; "
                                "3 open questions; 2 facts; start-up rejected)\n")


def test_stale_rules_in_sarif_and_markdown(cli, work):
    _rename_the_field(work)
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--fail-on", "none", "--format", "sarif")
    run = json.loads(result.out)["runs"][0]
    (note,) = run["invocations"][0]["toolConfigurationNotifications"]
    assert note["level"] == "error" and note["descriptor"]["id"] == RULE
    assert run["properties"]["gate"]["staleRulesFailing"] == 1
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--fail-on", "none", "--format", "markdown")
    assert "`--fail-on none` · 1 recipe · --fail-on none; 1 stale rule; 1 problem; 3 open questions; 2 facts; " \
           "start-up rejected · stale rules fail the gate (`--allow-stale` accepts them)" in result.out
    assert f"- stale rule `{RULE}` at this revision: missing `SpeculativeConfig.attention_backend` " \
           "(**fails the gate**)" in result.out


# --------------------------------------------------------------------- corrupt cache content

def _archive(root: Path, target: Path) -> None:
    import tarfile

    with tarfile.open(target, "w:gz") as tar:
        tar.add(root, arcname="vllm-0.0.0")


def test_a_same_size_edit_of_a_cached_source_file_is_refused_and_rebuilt(cli, work, monkeypatch):
    """A --source archive is extracted once into the cache, with a manifest of every file's
    sha256; later runs read the cached tree. Fixed: a same-size edit of a cached file passed the
    quick (size) check and changed the verdicts; now every file read is checked against the
    sha256 recorded when the entry was written. The review stored for the entry's manifest
    stays the review of what was hashed: the edit changes nothing until a review reads the tree
    (here: once the stored reviews are cleaned)."""
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "test secret")  # stored reviews are served only under a key
    _archive(work / "tree", work / "vllm-0.0.0.tar.gz")
    clean = check(cli, "vllm-0.0.0.tar.gz")
    assert clean[0] == 1 and clean[1]["incomplete"] == []
    [entry] = [p for p in (work / "cache" / "local").iterdir() if p.name != MARKER]
    cached = entry / "tree" / "vllm-0.0.0" / SPEC
    if not cached.exists():
        cached = entry / "tree" / SPEC
    text = cached.read_text()
    cached.write_text(text.replace("attention_backend", "attention_backenx"))  # same size
    assert check(cli, "vllm-0.0.0.tar.gz") == clean  # the stored review: the tree is not read
    assert cli("cache", "clean", "--reviews").code == 0
    code, doc = check(cli, "vllm-0.0.0.tar.gz")
    assert code == 2
    assert f"source tree: {SPEC}: differs from what was hashed when the cache entry was written (the entry is " \
           "damaged; the next run rebuilds it)" in doc["incomplete"]
    # the damaged entry was dropped: the next run extracts the archive again and agrees with the first
    assert check(cli, "vllm-0.0.0.tar.gz") == clean
    assert cached.read_text() == text


def test_a_same_size_edit_of_a_cached_patched_tree_is_rebuilt(cli, work):
    """`--patch` trees are kept in the cache (kind "patched") with a manifest: a blob edited in
    place at the same size is not trusted; the patch is applied again and the entry rebuilt."""
    import difflib

    spec = work / "tree" / SPEC
    before = spec.read_text()
    after = before.replace("class SpeculativeConfig", "# patched\nclass SpeculativeConfig", 1)
    (work / "p.diff").write_text("".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{SPEC}", f"b/{SPEC}")))
    first = check(cli, "tree", "--patch", "p.diff")
    assert first[0] == 1 and first[1]["incomplete"] == []
    [entry] = [p for p in (work / "cache" / "patched").iterdir() if p.name != MARKER]
    [blob] = [p for p in (entry / "tree").iterdir() if "# patched" in p.read_text()]
    blob.write_text(blob.read_text().replace("attention_backend", "attention_backenx"))  # same size
    assert check(cli, "tree", "--patch", "p.diff") == first  # fixed: the edit changed the verdicts
    assert "attention_backenx" not in blob.read_text()  # rebuilt
