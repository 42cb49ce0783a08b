"""`srcreview cache info|clean` on a private cache filled by the real commands (issue 13.8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import (
    DEMO_RECIPE,
    FAKE_SHA,
    FIXTURE_REV,
    fixture_source,
    make_tar,
    sdist_files,
)

REV = FIXTURE_REV


def _on_disk(path: Path) -> int:
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(path) for f in files)


@pytest.fixture
def filled(tmp_path, monkeypatch, cli, cache_dir):
    """A cache holding a source entry (an sdist archive fetched with --source), the facts of a
    review and the review itself (of a fixture tree archived: a source with a manifest), an
    older facts schema, a newer one, and what a killed run left in .tmp."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "test secret")  # stored reviews are kept only under a key
    archive = tmp_path / "vllm-0.0.1.tar.gz"
    archive.write_bytes(make_tar(sdist_files(FAKE_SHA)))
    fetched = cli("fetch", "--rev", FAKE_SHA, "--source", str(archive))
    assert fetched.code == 0, fetched.err
    tree = fixture_source(tmp_path / "tree")
    (tmp_path / "tree.tar.gz").write_bytes(make_tar({p.relative_to(tree).as_posix(): p.read_bytes()
                                                     for p in tree.rglob("*") if p.is_file()}))
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    assert cli("check", "demo.toml", "--source", "tree.tar.gz", "--rev", REV).code == 1
    for name, size in (("facts/v1/ab/old.pickle", 300), ("facts/v999/ab/new.pickle", 200), (".tmp/partial.tar.gz", 50)):
        (cache_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (cache_dir / name).write_bytes(b"x" * size)
    return cache_dir


def _info(cli) -> dict:
    result = cli("cache", "info", "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_info_lists_each_part_with_its_size(filled, cli, tmp_path):
    info = _info(cli)
    kinds = {}
    for part in info["parts"]:
        kinds.setdefault(part["kind"], []).append(part["name"])
        assert part["bytes"] == _on_disk(filled / part["name"])
    assert [n.split("/")[0] for n in kinds["source"]] == ["local", "local"]
    assert kinds["unused"] == [".locks", ".tmp", "facts/v1"] and kinds["other"] == ["facts/v999"]
    assert len(kinds["facts"]) == 1 and _on_disk(filled / kinds["facts"][0]) > 0
    assert kinds["reviews"] == ["reviews/v1"] and _on_disk(filled / "reviews" / "v1") > 0
    assert info["bytes"] == _on_disk(filled) and info["cache"] == "$SRCREVIEW_CACHE"
    text = cli("cache", "info").out
    assert text.startswith("cache $SRCREVIEW_CACHE: ") and str(tmp_path) not in text
    assert "sources: 2 parts, " in text and "unused: 3 parts, " in text and "reviews: 1 part, " in text


def test_clean_removes_what_the_options_name(filled, cli):
    unused = cli("cache", "clean", "--unused", "--dry-run")
    assert unused.code == 0 and (filled / "facts" / "v1").exists(), "a dry run removes nothing"
    assert unused.out.splitlines()[-1] == "cache $SRCREVIEW_CACHE: would remove 3 parts, 350 B"
    assert cli("cache", "clean", "--unused").code == 0
    assert not (filled / "facts" / "v1").exists() and not (filled / ".tmp").exists()
    assert (filled / "facts" / "v999").exists(), "a newer srcreview's facts are not ours to call unused"
    sources = [p["name"] for p in _info(cli)["parts"] if p["kind"] == "source"]
    assert cli("cache", "clean", "--rev", "0123456").code == 0 and (filled / sources[0]).exists(), "another revision"
    removed = json.loads(cli("cache", "clean", "--rev", FAKE_SHA[:9], "--format", "json").out)["removed"]
    assert len(removed) == 1 and removed[0] in sources and not (filled / removed[0]).exists()
    assert cli("cache", "clean", "--rev", REV).code == 0
    assert cli("cache", "clean", "--facts").code == 0
    assert [p["kind"] for p in _info(cli)["parts"]] == ["unused", "other", "reviews"], "locks, facts/v999, reviews"
    assert cli("cache", "clean", "--reviews").code == 0 and not (filled / "reviews" / "v1").exists()
    assert [p["kind"] for p in _info(cli)["parts"]] == ["unused", "other"], "the lock files, facts/v999"
    assert cli("cache", "clean").code == 0 and _info(cli) == {"cache": "$SRCREVIEW_CACHE", "bytes": 0, "stored_reviews": "on", "parts": []}


def test_a_cleaned_cache_is_filled_again_by_the_next_review(filled, cli):
    assert cli("cache", "clean").code == 0
    assert cli("check", "demo.toml", "--source", "tree", "--rev", REV).code == 1
    assert any(p["kind"] == "facts" for p in _info(cli)["parts"])


def test_the_stat_index_of_a_source_directory_counts_with_the_facts(filled, cli):
    """`--source DIR` keeps DIR's stat index (srcreview.source.statindex): derived from files like
    the facts, counted and cleaned with them."""
    assert cli("check", "demo.toml", "--source", "tree", "--rev", REV).code == 1
    facts = [p["name"] for p in _info(cli)["parts"] if p["kind"] == "facts"]
    assert len(facts) == 2 and facts[0].startswith("facts/v") and facts[1] == "statindex/v1"
    assert cli("cache", "clean", "--facts").code == 0 and not (filled / "statindex" / "v1").exists()


def test_usage_errors(cli, cache_dir):
    assert cli("cache", "info", "--facts").code == 64
    assert cli("cache", "clean", "--rev", "HEAD").code == 64
    assert cli("cache", "tidy").code == 64
