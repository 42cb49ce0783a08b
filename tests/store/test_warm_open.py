"""Opening a cached tree is one stat pass: the listing comes from the verified manifest, and
building the command line imports nothing heavy (every warm `check` pays for both)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from srcreview.model.revision import resolve_rev
from srcreview.source.base import DirectoryTree
from srcreview.source.cache import Cache


def _build(cache: Cache) -> None:
    with cache.entry("trees", "k") as entry:
        tree = entry.staging()
        (tree / "pkg" / "sub").mkdir(parents=True)
        (tree / "pkg" / "__init__.py").write_bytes(b"")
        (tree / "pkg" / "sub" / "mod.py").write_bytes(b"x = 1\n")
        (tree / "top.txt").write_bytes(b"t")
        os.symlink("sub/mod.py", tree / "pkg" / "alias.py")  # a link to a file: in symlinks()
        os.symlink("sub", tree / "pkg" / "linked_dir")  # a link to a directory: in neither
        os.symlink("../missing.py", tree / "pkg" / "dangling.py")  # listed, refused when read
        entry.commit({"built": True})


def test_listing_from_the_manifest_equals_walking_the_tree(tmp_path):
    cache = Cache(tmp_path / "c")
    _build(cache)
    data = cache.lookup_manifest("trees", "k")
    assert data is not None and data["meta"] == {"built": True}
    rev = resolve_rev("0.29.0")
    walked = DirectoryTree(cache.tree_path("trees", "k"), rev)
    listed = DirectoryTree(cache.tree_path("trees", "k"), rev, manifest=data["files"])
    assert listed.files() == walked.files() == ["pkg/__init__.py", "pkg/sub/mod.py", "top.txt"]
    assert listed.symlinks() == walked.symlinks() == ["pkg/alias.py", "pkg/dangling.py"]
    assert listed.files("pkg/sub") == ["pkg/sub/mod.py"]
    with cache.entry("trees", "k") as entry:  # the locked path hands out the same listing
        assert entry.ready and entry.files == data["files"]


@pytest.mark.parametrize("damage", ["truncate", "delete", "add", "retarget"])
def test_a_damaged_tree_yields_no_manifest_listing(tmp_path, damage):
    cache = Cache(tmp_path / "c")
    _build(cache)
    tree = cache.tree_path("trees", "k")
    if damage == "truncate":
        (tree / "pkg" / "sub" / "mod.py").write_bytes(b"x")
    elif damage == "delete":
        (tree / "pkg" / "alias.py").unlink()
    elif damage == "add":
        (tree / "pkg" / "sub" / "planted.py").write_bytes(b"")
    else:  # a link replaced by a regular file of another size
        (tree / "pkg" / "alias.py").unlink()
        (tree / "pkg" / "alias.py").write_bytes(b"y = 2\n")
    assert cache.lookup_manifest("trees", "k") is None
    with cache.entry("trees", "k") as entry:
        assert not entry.ready and entry.files is None


def test_building_the_parser_imports_neither_the_gate_nor_pydantic():
    code = ("import sys\nfrom srcreview.cli.main import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in ('srcreview.gate.policy', 'srcreview.model.findings', 'pydantic', 'networkx') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_parsers_default_fail_on_is_the_gates():
    from srcreview.cli.commands._gate_args import DEFAULT_FAIL_ON_TEXT
    from srcreview.cli.main import build_parser
    from srcreview.gate.policy import DEFAULT_FAIL_ON, parse_fail_on

    assert DEFAULT_FAIL_ON_TEXT == DEFAULT_FAIL_ON
    args = build_parser().parse_args(["check", "recipe.toml"])
    assert args.fail_on == parse_fail_on(DEFAULT_FAIL_ON)
