"""Stored reviews (srcreview.store.reviews): a `check` already computed is answered from the cache,
byte for byte as the analysis answers it, without importing the analysis; any change to what
the review depends on computes it again; a damaged entry is never trusted; the store is bounded.

The source is a fixture tree packed as an sdist archive (`--source tree.tar.gz`: a cache entry
with a manifest, as a registry sdist is), and the real vLLM 0.29.0 for one end-to-end test.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source, make_tar

from srcreview.core.sealed import seal, unseal
from srcreview.store.reviews import cache_key

SECRET = "a secret from the CI secrets store"
KEY = cache_key({"SRCREVIEW_CACHE_KEY": SECRET})


@pytest.fixture(autouse=True)
def _stored_reviews_on(monkeypatch):
    """Stored reviews are served only under a secret key (issue 26): these tests set one."""
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", SECRET)

ROOT = Path(__file__).resolve().parent.parent.parent
FORMATS = (("text",), ("text", "-v"), ("concise",), ("json",), ("review",), ("sarif",), ("markdown",), ("registry",))
# what a review served from the cache must not import (the analysis and what only it needs)
ANALYSIS = ("libcst", "networkx", "pydantic", "srcreview.index", "srcreview.interp", "srcreview.vllm", "srcreview.checks",
            "srcreview.rules.loader",
            "srcreview.engine.run")
# vLLM's names (a leaf of strings the recipe readers and source providers read too) and the empty
# package init it sits in are not the analysis; any other module of srcreview.vllm still counts
NAMES_ONLY = ("srcreview.vllm", "srcreview.vllm.anchors")
_CHILD = """\
import json, sys
from srcreview.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
analysis, names_only = %r, %r
loaded = sorted(m for m in sys.modules if (m in analysis or m.split(".")[0] in analysis
                or any(m.startswith(a + ".") for a in analysis)) and m not in names_only)
sys.stderr.write("\\nLOADED " + json.dumps(loaded) + "\\n")
sys.exit(code)
""" % (ANALYSIS, NAMES_ONLY)  # noqa: UP031 - the child's code has braces of its own


def run_check(*args: str, cwd: Path, pythonpath: Path | None = None, env: dict | None = None):
    """`srcreview check ARGS` in a fresh process: (exit code, stdout, analysis modules it imported)."""
    environ = {**os.environ, "COLUMNS": "100", **(env or {})}
    if pythonpath is not None:
        environ["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run([sys.executable, "-c", _CHILD, "check", *args], capture_output=True, text=True, cwd=cwd,
                         env=environ, check=False)
    marker = [line for line in out.stderr.splitlines() if line.startswith("LOADED ")]
    assert marker, out.stderr[-2000:]
    return out.returncode, out.stdout, json.loads(marker[-1][len("LOADED "):])


def _archive(tmp_path: Path, name: str = "vllm-src.tar.gz", edit=None) -> Path:
    """The fixture tree as an sdist archive of FIXTURE_REV (`edit(files)` may change it first)."""
    tree = tmp_path / f"tree-{name}"
    shutil.rmtree(tree, ignore_errors=True)
    fixture_source(tree)
    files = {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}
    if edit is not None:
        edit(files)
    archive = tmp_path / name
    archive.write_bytes(make_tar(files))
    return archive


@pytest.fixture
def demo(tmp_path, monkeypatch, cache_dir):
    """A recipe and an archived fixture source in tmp_path (the working directory), a private cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    shutil.copy(DEMO_RECIPE, tmp_path / "demo.toml")
    _archive(tmp_path)
    return tmp_path


ARGS = ("demo.toml", "--source", "vllm-src.tar.gz", "--rev", FIXTURE_REV, "--date", "2026-01-02")


def review_entries(cache: Path) -> list[Path]:
    """The stored reviews (not the rules' entries) under a cache root."""
    found = []
    for path in sorted((cache / "reviews").rglob("*.json")):
        payload = unseal(path.read_bytes(), b"srcreview-review\n", KEY)
        if payload is not None and b'"recipe":' in payload:
            found.append(path)
    return found


@pytest.mark.parametrize("fmt", FORMATS, ids=" ".join)
def test_every_format_from_a_stored_review_is_the_computed_one(demo, cli, cache_dir, fmt):
    computed = cli("check", *ARGS, "--format", *fmt)
    assert computed.code == 1, computed.err
    assert len(review_entries(cache_dir)) == 1
    code, out, loaded = run_check(*ARGS, "--format", *fmt, cwd=demo)
    assert loaded == [], "served from the cache, the analysis is never imported"
    assert (code, out) == (computed.code, computed.out)


def test_the_real_vllm_review_is_the_same_from_the_cache(vllm_029, tmp_path, monkeypatch, cli):
    """The nested-Triton example at 0.29.0, every format: computed (facts from the user cache),
    then from a private store of reviews."""
    from srcreview.source.cache import default_root

    user = default_root()[0]
    cache = tmp_path / "cache"
    cache.mkdir()
    for part in ("registry", "facts"):  # the source and its parsed facts; the reviews are this test's
        os.symlink(user / part, cache / part)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(cache))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)
    recipe = "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
    shutil.copy(ROOT / "examples" / recipe, tmp_path / recipe)
    args = (recipe, "--rev", "0.29.0", "--date", "2026-01-02")
    for fmt in FORMATS:
        shutil.rmtree(cache / "reviews", ignore_errors=True)
        computed = cli("check", *args, "--format", *fmt)
        assert computed.code == 1, computed.err
        code, out, loaded = run_check(*args, "--format", *fmt, cwd=tmp_path)
        assert loaded == [] and (code, out) == (computed.code, computed.out), fmt


def test_each_part_of_the_key_computes_the_review_again(demo, cli, cache_dir, tmp_path):
    def analysed(*extra: str, **kwargs) -> bool:
        code, _, loaded = run_check(*ARGS, *extra, "--format", "json", cwd=demo, **kwargs)
        assert code == 1
        return loaded != []

    assert cli("check", *ARGS).code == 1
    assert not analysed()

    # the recipe as read: a comment added
    with open(demo / "demo.toml", "a", encoding="utf-8") as fh:
        fh.write("# reviewed again\n")
    assert analysed() and not analysed()

    # the rules: the same files elsewhere are the same rules; one changed word is not
    rules = demo / "my-rules"
    shutil.copytree(ROOT / "rules", rules)
    assert not analysed("--rules", str(rules))
    first = sorted(rules.glob("*.toml"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace('why = "', 'why = "Indeed, ', 1), encoding="utf-8")
    assert analysed("--rules", str(rules)) and not analysed("--rules", str(rules))

    # the pins and the repository anchors link to
    pins = demo / "pins.toml"
    pins.write_text((ROOT / "pins" / "vllm.toml").read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert analysed(env={"SRCREVIEW_PINS": str(pins)})
    assert analysed(env={"SRCREVIEW_REPO_URL": "https://github.com/example/vllm-fork"})
    assert not analysed()

    # a patch laid over the source, then the same patch edited
    module = next(p for p in sorted((demo / "tree-vllm-src.tar.gz").rglob("*.py")) if p.name != "_version.py")
    relative = module.relative_to(demo / "tree-vllm-src.tar.gz").as_posix()
    lines = module.read_text(encoding="utf-8").splitlines(keepends=True)
    for comment in ("# patched\n", "# patched again\n"):
        (demo / "p.diff").write_text("".join(difflib.unified_diff(lines, lines + [comment], f"a/{relative}",
                                                                  f"b/{relative}")), encoding="utf-8")
        assert analysed("--patch", "p.diff") and not analysed("--patch", "p.diff")

    # the source: another archive (one module edited) is another entry
    def edited(files):
        path = next(p for p in sorted(files) if p.endswith(".py") and p != "vllm/_version.py")
        files[path] += b"\n# edited\n"

    _archive(demo, "vllm-src.tar.gz", edit=edited)
    assert analysed() and not analysed()


def test_a_source_entry_rebuilt_with_other_content_is_reviewed_again(demo, cli, cache_dir):
    """The same cache entry (the same archive digest), its content replaced through the cache's
    own API: the manifest differs, so the stored review no longer stands for it."""
    from srcreview.source.cache import Cache, read_manifest

    assert cli("check", *ARGS).code == 1
    cache = Cache(cache_dir)
    (key,) = cache.keys("local")
    meta = read_manifest(cache.path_for("local", key))["meta"]
    old_tree = cache.tree_path("local", key)
    with cache.entry("local", key) as entry:
        staging = entry.staging()
        shutil.copytree(old_tree, staging, dirs_exist_ok=True)
        module = next(p for p in sorted(staging.rglob("*.py")) if p.name != "_version.py")
        module.write_text(module.read_text(encoding="utf-8") + "\n# rebuilt\n", encoding="utf-8")
        entry.invalidate()
        entry.commit(meta)
    code, _, loaded = run_check(*ARGS, cwd=demo)
    assert code == 1 and loaded != []


def test_a_source_directory_is_served_by_its_content_and_reviewed_again_when_edited(demo, cli, cache_dir):
    """`--source DIR` (an unpacked tree): stored under the digest of its stat index's snapshot, so a
    later run is served without the analysis; one module edited at the same size with its mtime
    put back computes it again (srcreview.source.statindex)."""
    tree = demo / "tree-vllm-src.tar.gz"  # the archive's tree, unpacked as it was packed
    args = ("demo.toml", "--source", tree.name, "--rev", FIXTURE_REV, "--date", "2026-01-02", "--format", "json")
    archived = cli("check", *ARGS, "--format", "json")
    computed = cli("check", *args)
    assert computed.code == archived.code == 1 and len(review_entries(cache_dir)) == 2
    code, out, loaded = run_check(*args, cwd=demo)
    assert loaded == [] and (code, out) == (computed.code, computed.out)
    module = next(p for p in sorted(tree.rglob("*.py")) if p.name != "_version.py" and b"class" in p.read_bytes())
    before = module.stat()
    module.write_bytes(module.read_bytes().replace(b"class", b"clasz", 1))
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    code, _, loaded = run_check(*args, cwd=demo)
    assert loaded != [] and code in (1, 2)
    assert run_check(*args, cwd=demo)[2] == []


def test_a_git_checkout_is_served_by_its_commit_dirty_or_not(cli, cache_dir, tmp_path, monkeypatch, make_git_repo):
    """`--source CHECKOUT`: read at the commit, so stored under the commit's tree id; an edit in the
    work tree changes nothing the review reads, and the stored review is still its answer."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    shutil.copy(DEMO_RECIPE, tmp_path / "demo.toml")
    repo = make_git_repo()
    fixture_source(tmp_path / "fixture")
    commit = repo.commit({p.relative_to(tmp_path / "fixture").as_posix(): p.read_bytes()
                          for p in sorted((tmp_path / "fixture").rglob("*")) if p.is_file()})
    args = ("demo.toml", "--source", "repo", "--rev", commit, "--date", "2026-01-02", "--format", "json")
    computed = cli("check", *args)
    assert computed.code == 1, computed.err
    code, out, loaded = run_check(*args, cwd=tmp_path)
    assert loaded == [] and (code, out) == (computed.code, computed.out)
    module = next(p for p in sorted((repo.path / "vllm").rglob("*.py")) if p.name != "_version.py")
    module.write_text("# edited, not committed\n", encoding="utf-8")
    code, out, loaded = run_check(*args, cwd=tmp_path)
    assert loaded == [] and (code, out) == (computed.code, computed.out)


def test_another_srcreview_computes_its_own_reviews(demo, cli, tmp_path):
    """The tool is part of the key by content: a copy of the package is the same tool, a copy
    with one module changed (a comment) is another one."""
    assert cli("check", *ARGS).code == 1
    for changed in (False, True):
        copy = tmp_path / f"copy-{changed}"
        shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
        for data in ("rules", "pins"):
            shutil.copytree(ROOT / data, copy / data)
        if changed:
            with open(copy / "src" / "srcreview" / "engine.py", "a", encoding="utf-8") as fh:
                fh.write("# another srcreview\n")
        code, _, loaded = run_check(*ARGS, cwd=demo, pythonpath=copy / "src")
        assert code == 1 and (loaded != []) == changed, loaded


def test_the_gate_waivers_and_baseline_still_run_on_a_stored_review(demo, cli):
    computed = json.loads(cli("check", *ARGS, "--format", "json").out)
    failing = computed["reviews"][0]["gate"]["failing"]
    assert failing
    waivers = "".join(f'[[waivers]]\nfingerprint = "{f}"\nreason = "accepted"\nexpires = 2026-06-30\n' for f in failing)
    (demo / "srcreview.toml").write_text(waivers, encoding="utf-8")
    code, out, loaded = run_check(*ARGS, "--format", "json", cwd=demo)
    assert loaded == [] and code == 0, "waived: the gate passes"
    assert all(f["waiver"] for f in json.loads(out)["reviews"][0]["findings"] if f["fingerprint"] in failing)
    code, _, loaded = run_check(*ARGS, "--date", "2026-07-01", cwd=demo)
    assert loaded == [] and code == 65, "the waivers expired (invalid data): the date is the gate's, not the review's"
    (demo / "srcreview.toml").unlink()
    (demo / "baseline.json").write_text(json.dumps(computed), encoding="utf-8")
    code, out, loaded = run_check(*ARGS, "--baseline", "baseline.json", "--format", "json", cwd=demo)
    assert loaded == [] and code == 0, "nothing new against the baseline"
    assert json.loads(out)["gate"]["baseline"] == "baseline.json"


@pytest.mark.parametrize("damage", ["byte", "truncated", "other-key", "resealed"])
def test_a_damaged_or_edited_entry_is_computed_again(demo, cli, cache_dir, damage):
    computed = cli("check", *ARGS, "--format", "json")
    (entry,) = review_entries(cache_dir)
    data = entry.read_bytes()
    if damage == "byte":  # one byte of the review changed, the seal left as it was
        at = data.index(b'"findings"') + 2
        entry.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:])
    elif damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "other-key":  # a valid entry of another key, copied here
        body = unseal(data, b"srcreview-review\n", KEY).split(b"\n", 1)[1]
        entry.write_bytes(seal(b"f" * 64 + b"\n" + body, b"srcreview-review\n", KEY))
    else:  # sealed again after an edit: the seal holds, the content is no Review
        key, body = unseal(data, b"srcreview-review\n", KEY).split(b"\n", 1)
        entry.write_bytes(seal(key + b"\n" + body.replace(b'"findings":[', b'"findings":[{"id": 1},', 1),
                               b"srcreview-review\n", KEY))
    code, out, loaded = run_check(*ARGS, "--format", "json", cwd=demo)
    assert loaded != [], "a damaged entry is never trusted"
    assert (code, out) == (computed.code, computed.out)
    code, out, loaded = run_check(*ARGS, "--format", "json", cwd=demo)
    assert loaded == [] and out == computed.out, "the entry was written again"


def _review(path: str, **fields):
    from srcreview.model.findings import RecipeRef, Review, RevisionInfo, ToolInfo

    return Review(tool=ToolInfo(version="0"), recipe=RecipeRef(path=path, name=path),
                  revision=RevisionInfo(sha="1234567"), **fields)


def test_the_store_keeps_the_reviews_used_last_within_its_bound(tmp_path):
    from srcreview.store.reviews import ReviewCache

    size = len(_review("r0.toml").model_dump_json()) + 200  # an entry, sealed, with its key
    store = ReviewCache(tmp_path, key=KEY, max_bytes=4 * size)
    keys = [f"{n:02d}" + "a" * 62 for n in range(6)]
    for n, key in enumerate(keys[:4]):
        assert store.store(key, _review(f"r{n}.toml"))
        os.utime(store._path(key), ns=(n * 10**9, n * 10**9))  # written in this order
    assert store.load(keys[0]).recipe.path == "r0.toml"  # used: now the most recent
    assert store.store(keys[4], _review("r4.toml")) and store.store(keys[5], _review("r5.toml"))
    kept = {key for key in keys if store.load(key) is not None}
    assert kept == {keys[0], keys[3], keys[4], keys[5]}


def test_only_reviews_that_read_back_as_themselves_are_stored(tmp_path):
    from srcreview.model.findings import Knob
    from srcreview.store.reviews import ReviewCache

    store = ReviewCache(tmp_path, key=KEY)
    assert not store.store("a" * 64, _review("r.toml", incomplete=("the source was unavailable",)))
    assert not store.store("b" * 64, _review("r.toml", knobs=(Knob(key="k", value=(1, 2), status="accepted"),)))
    assert store.store("c" * 64, _review("r.toml", knobs=(Knob(key="k", value=[1, 2.0, True], status="accepted"),)))
    assert store.load("a" * 64) is None and store.load("b" * 64) is None
    assert store.load("c" * 64).knobs[0].value == [1, 2.0, True]
