"""pathlib and os.path over a listed directory (srcreview.interp.paths), compared with what pathlib
itself answers on the same entries made on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from srcreview.hfconfig.local import list_directory
from srcreview.interp import paths
from srcreview.interp.values import Const, LocalPath, OneOf, TupleVal


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "model"
    (root / "original").mkdir(parents=True)
    for name in ("config.json", "original/params.json", "tokenizer.json"):
        (root / name).write_text("{}")
    monkeypatch.chdir(tmp_path)  # the review reads `./model` where the server runs it from
    return paths.KnownDirectories((paths.KnownTree("./model", list_directory(root)),))


@pytest.mark.parametrize("text", ["./model", "model", "model/", "./model/original", "model/config.json",
                                  "model/original/params.json", "model/absent.json", "model/original/x"])
@pytest.mark.parametrize("question", ["exists", "is_file", "is_dir"])
def test_a_path_in_the_listing_answers_as_pathlib_does(tree, text, question):
    path = tree.path(text)
    assert path is not None
    assert paths.test(path, question) == Const(getattr(Path(text), question)())


def test_paths_outside_every_listing_are_not_answered(tree):
    assert tree.path("other") is None
    assert tree.path("model/../other") is None
    assert tree.path("/model") is None  # absolute: another place
    assert tree.path("~/model") is None


def test_joining_spelling_and_listing(tree):
    root = tree.path("./model")
    config = paths.join(root, Const("config.json"))
    assert paths.text(config) == str(Path("./model") / "config.json")
    assert paths.join(root, Const("/etc/passwd")) is None
    assert paths.join(root, Const("../x")) is None
    either = paths.join(root, OneOf(("config.json", "tokenizer.json"), "names"))
    assert paths.test(either, "is_file") == Const(True)
    mixed = paths.join(root, OneOf(("config.json", "absent.json"), "names"))
    assert paths.test(mixed, "is_file") is None  # the names disagree: not decided


def test_rglob_and_relative_to_give_the_names_pathlib_gives(tree):
    root = tree.path("./model")
    below = paths.method(root, "rglob", [Const("*")], [])
    assert isinstance(below, TupleVal)
    names = sorted(paths.text(paths.method(p, "relative_to", [root], [])) for p in below.items
                   if paths.test(p, "is_file") == Const(True))
    assert names == sorted(str(p.relative_to("model")) for p in Path("model").rglob("*") if p.is_file())


def test_below_an_unlisted_directory_nothing_is_answered():
    tree = paths.KnownTree("./m", (("config.json", "file"), ("linked", "opaque")))
    linked = LocalPath("./m", "linked/x.bin", tree)
    assert paths.test(linked, "exists") is None
    assert paths.test(LocalPath("./m", "linked", tree), "is_dir") == Const(True)
    assert paths.method(LocalPath("./m", "", tree), "rglob", [Const("*")], []) is None
