"""Faults in the facts cache: the review must be the clean run's, byte for byte, and never crash.

A clean `srcreview check --format json` on a fixture tree fills a private cache; every entry is
then damaged the same way (truncated, corrupt, emptied, replaced by a directory, swapped with
another blob's facts, rewritten with an older schema number, the name index garbled) and the
review is run again through the real CLI. A read-only cache (as root too: the child drops the
capability that ignores permissions) must serve what it holds and compute the rest.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import permission_bound
from recipe_support import DEMO_RECIPE

from srcreview.index.cache import _FactsUnpickler, facts_dir, seal, unseal
from srcreview.index.facts import SCHEMA_VERSION

FIXTURE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets" / "rules_spec_decode"
REV = "1234567ab"
RECIPE = DEMO_RECIPE.read_text()


@pytest.fixture
def setup(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURE, root)
    (root / "vllm" / "_version.py").write_text(f"__commit_id__ = commit_id = 'g{REV}'\n")
    recipe = tmp_path / "demo.toml"
    recipe.write_text(RECIPE)
    cache = tmp_path / "cache"
    return root, recipe, cache


def _run(setup, bound: bool = False) -> tuple[int, str, str]:
    root, recipe, cache = setup
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cache.parent), "SRCREVIEW_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-m", "srcreview", "check", str(recipe), "--source", str(root),
                           "--rev", REV, "--format", "json"], capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL, **(permission_bound() if bound else {}))
    return done.returncode, done.stdout, done.stderr


def _entries(cache: Path) -> list[Path]:
    return sorted(facts_dir(cache).glob("*/*.pickle"))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _directory(path: Path) -> None:
    path.unlink()
    (path / "x").mkdir(parents=True)


def _load(path: Path):
    return _FactsUnpickler(io.BytesIO(unseal(path.read_bytes()))).load()


def _older_schema(path: Path) -> None:
    """The same facts as an older srcreview wrote them: a valid (sealed) pickle, schema one lower."""
    path.write_bytes(seal(pickle.dumps(dataclasses.replace(_load(path), schema=SCHEMA_VERSION - 1))))


def _not_facts(path: Path) -> None:
    path.write_bytes(seal(pickle.dumps({"module": "vllm.config", "classes": {}})))


def _emptied_in_place(path: Path) -> None:
    """Well-formed facts of the same blob with every definition dropped, its seal left as it was:
    it loads as the right ModuleFacts, but its content is not what was written."""
    data = path.read_bytes()
    sealed = len(data) - len(unseal(data))
    facts = _load(path)
    emptied = dataclasses.replace(facts, classes={}, functions={}, constants={})
    path.write_bytes(data[:sealed] + pickle.dumps(emptied, protocol=pickle.HIGHEST_PROTOCOL))


def _byte_flipped(path: Path) -> None:
    """One byte of the payload changed (same size), the seal left as it was."""
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01
    path.write_bytes(bytes(data))


DAMAGES = {f.__name__.strip("_"): f for f in (_truncate, _corrupt, _empty, _directory, _older_schema, _not_facts,
                                               _emptied_in_place, _byte_flipped)}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_facts_entries_give_the_clean_review(setup, damage):
    clean = _run(setup)
    assert clean[0] == 1 and '"incomplete": []' in clean[1], clean[2]
    entries = _entries(setup[2])
    assert len(entries) > 10
    for path in entries:
        DAMAGES[damage](path)
    assert _run(setup) == clean
    # and the damage was repaired, not kept (a directory cannot be replaced: it costs a parse
    # each run, and is never trusted)
    for path in _entries(setup[2]):
        if damage == "directory":
            assert path.is_dir()
            continue
        assert _load(path).schema == SCHEMA_VERSION
    assert _run(setup) == clean


def test_swapped_entries_are_not_taken_for_other_content(setup):
    clean = _run(setup)
    entries = _entries(setup[2])
    payloads = [p.read_bytes() for p in entries]
    for path, data in zip(entries, payloads[1:] + payloads[:1], strict=True):
        path.write_bytes(data)
    assert _run(setup) == clean


def test_an_older_schema_directory_is_never_read(setup):
    """Entries of another schema live under facts/v<N>: a copy of garbage there changes nothing."""
    clean = _run(setup)
    current = facts_dir(setup[2])
    older = current.parent / f"v{SCHEMA_VERSION - 1}"
    shutil.copytree(current, older)
    for path in older.glob("*/*.pickle"):
        path.write_bytes(b"\x80\x05garbage")
    shutil.rmtree(current)
    assert _run(setup) == clean


@pytest.mark.parametrize("garble", [b"", b"{", b"[]", b'{"key": "x", "paths": [], "names": {"a": [5]}}',
                                    b"[" * 100_000 + b"]" * 100_000],
                         ids=["empty", "truncated", "wrong-shape", "bad-index", "nested-100000-deep"])
def test_a_garbled_name_index_gives_the_clean_review(setup, garble):
    clean = _run(setup)
    names = sorted((facts_dir(setup[2]) / "names").glob("*.json"))
    assert names
    for path in names:
        path.write_bytes(garble)
    assert _run(setup) == clean


def _point_at_the_last_file(data: dict) -> None:
    data["names"] = {name: [-1] * len(indices) for name, indices in data["names"].items()}


def _swap_two_files(data: dict) -> None:
    data["paths"][0], data["paths"][-1] = data["paths"][-1], data["paths"][0]


@pytest.mark.parametrize("edit", [_point_at_the_last_file, _swap_two_files], ids=["all-minus-one", "swapped-paths"])
def test_a_well_formed_but_edited_name_index_gives_the_clean_review(setup, edit):
    """Fixed: entries all -1 (Python's last element) sent every lookup to one file: nine rules
    went stale and the gate passed (exit 0 instead of 1). The index carries the sha256 of its
    content, recorded when written: an edit, even one that keeps it valid, is not trusted."""
    import json

    clean = _run(setup)
    names = sorted((facts_dir(setup[2]) / "names").glob("*.json"))
    assert names
    for path in names:
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))
    assert _run(setup) == clean


def _make_read_only(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def _make_writable(root: Path) -> None:
    for dirpath, _, _ in os.walk(root):
        os.chmod(dirpath, 0o755)


@pytest.mark.parametrize("filled", [True, False], ids=["warm", "empty"])
def test_a_read_only_facts_cache_gives_the_clean_review(setup, filled):
    """Warm: served from the cache; empty: everything parsed, nothing written, same answer."""
    clean = _run(setup)
    cache = setup[2]
    if not filled:
        shutil.rmtree(facts_dir(cache))
        facts_dir(cache).mkdir(parents=True)
    before = sorted(p.relative_to(cache) for p in cache.rglob("*"))
    _make_read_only(facts_dir(cache))
    try:
        probe = subprocess.run([sys.executable, "-c", f"open({str(facts_dir(cache) / 'probe')!r}, 'w')"],
                               capture_output=True, text=True, **permission_bound())
        assert probe.returncode != 0 and "PermissionError" in probe.stderr, "not read-only for the child"
        assert _run(setup, bound=True) == clean
        assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == before
    finally:
        _make_writable(facts_dir(cache))
