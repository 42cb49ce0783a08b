"""The stat index of a `--source` directory (srcreview.source.statindex): its identity is the
manifest a cache entry would record for the same files, only files whose stat changed (or that
are racy) are hashed again, a same-size edit with its mtime restored is found, the index file is
refused when damaged, forged or another tree's, and a review reads the tree as its snapshot.

Directories and git repositories are made in the test. Times are set with os.utime, never waited
for: a file given an mtime in the future is racy whatever the clock says; `racy_ns=0` makes a file
written before a scan began trusted by the next one (its ctime is older than that moment).
"""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest
from conftest import sdist_files

from srcreview.core.errors import SourceUnavailable
from srcreview.core.sealed import seal, unseal
from srcreview.model.revision import Revision
from srcreview.source import statindex
from srcreview.source.base import git_blob_id
from srcreview.source.cache import file_digests
from srcreview.source.identity import expected, of_tree
from srcreview.source.obtain import open_local
from srcreview.source.statindex import SnapshotTree, content_digest, index_dir, snapshot

SHA = "123456789"
REV = Revision(requested=SHA, sha=SHA)
HOUR_NS = 3600 * 10**9


def write(root, files: dict[str, bytes]):
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


@pytest.fixture
def tree(tmp_path):
    return write(tmp_path / "tree", {**sdist_files(), "vllm/worker.py": b"import os\nBACKEND = 'triton'\n",
                                     "docs/notes.txt": b"notes\n"})


@pytest.fixture(autouse=True)
def _private_cache(cache_dir):
    """Whatever opens a tree with the default cache (open_local, expected) writes in the test's."""


def index_file(tree, cache):
    """Where the index of `tree` is kept (named by the digest of its real path)."""
    return index_dir(cache) / (hashlib.sha256(os.fsencode(os.path.realpath(tree))).hexdigest() + ".idx")


def edit_keeping_stat(path, data: bytes) -> None:
    """Rewrite `path` with `data` (the same size) and put its atime and mtime back."""
    before = path.stat()
    assert len(data) == before.st_size
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_identity_is_the_digest_of_the_manifest_a_cache_entry_would_record(tree, tmp_path):
    (tree / "vllm" / "alias.py").symlink_to("worker.py")
    snap = snapshot(tree, tmp_path / "cache")
    assert snap.files == file_digests(tree)  # the cache's own listing of the same files
    assert snap.digest == content_digest(file_digests(tree))
    assert snap.blobs["vllm/worker.py"] == git_blob_id((tree / "vllm" / "worker.py").read_bytes())
    assert "vllm/alias.py" not in snap.blobs and snap.files["vllm/alias.py"][0] == -1
    assert snap.hashed == tuple(sorted(p for p, (size, _) in snap.files.items() if size >= 0))  # no index yet


def test_an_unchanged_tree_is_not_read_again(tree, tmp_path):
    cache = tmp_path / "cache"
    first = snapshot(tree, cache, racy_ns=0)
    again = snapshot(tree, cache, racy_ns=0)
    assert again.hashed == () and again.digest == first.digest and again.files == first.files
    assert again.blobs == first.blobs


def test_only_what_changed_is_hashed_a_file_added_edited_removed_or_linked(tree, tmp_path):
    cache = tmp_path / "cache"
    digests = [snapshot(tree, cache, racy_ns=0).digest]

    def scan():
        snap = snapshot(tree, cache, racy_ns=0)
        assert snap.digest == content_digest(file_digests(tree)) and snap.digest not in digests
        digests.append(snap.digest)
        return snap.hashed

    write(tree, {"vllm/added.py": b"X = 1\n"})
    assert scan() == ("vllm/added.py",)
    (tree / "vllm" / "worker.py").write_bytes(b"import os\nBACKEND = 'flash'\n")
    assert scan() == ("vllm/worker.py",)
    (tree / "docs" / "notes.txt").unlink()
    assert scan() == ()
    (tree / "vllm" / "link.py").symlink_to("added.py")
    assert scan() == ()  # a link is its text, read on every scan
    (tree / "vllm" / "link.py").unlink()
    (tree / "vllm" / "link.py").symlink_to("worker.py")
    assert scan() == ()


def test_a_same_size_edit_with_its_mtime_restored_is_found(tree, tmp_path):
    """Its ctime moved (no ordinary tool sets it back): the stat differs, the file is hashed."""
    cache = tmp_path / "cache"
    before = snapshot(tree, cache, racy_ns=0)
    worker = tree / "vllm" / "worker.py"
    edit_keeping_stat(worker, worker.read_bytes().replace(b"triton", b"flashy"))
    after = snapshot(tree, cache, racy_ns=0)
    assert after.hashed == ("vllm/worker.py",)
    assert after.digest != before.digest and after.digest == content_digest(file_digests(tree))


def test_a_racy_entry_is_never_trusted_by_its_stat(tree, tmp_path):
    """A file whose mtime is not older than the moment the index was written (here: an hour
    ahead) is hashed on every scan, and an edit behind its restored stat is found."""
    cache = tmp_path / "cache"
    worker = tree / "vllm" / "worker.py"
    ahead = time.time_ns() + HOUR_NS
    os.utime(worker, ns=(ahead, ahead))
    snapshot(tree, cache, racy_ns=0)
    unchanged = snapshot(tree, cache, racy_ns=0)
    assert unchanged.hashed == ("vllm/worker.py",)  # same stat, still hashed
    edit_keeping_stat(worker, worker.read_bytes().replace(b"triton", b"flashy"))
    assert worker.stat().st_mtime_ns == ahead
    found = snapshot(tree, cache, racy_ns=0)
    assert "vllm/worker.py" in found.hashed and found.digest == content_digest(file_digests(tree))


def test_the_default_window_refuses_racy_entries_too(tree, tmp_path):
    cache = tmp_path / "cache"
    worker = tree / "vllm" / "worker.py"
    ahead = time.time_ns() + HOUR_NS
    os.utime(worker, ns=(ahead, ahead))
    snapshot(tree, cache)
    assert "vllm/worker.py" in snapshot(tree, cache).hashed


@pytest.mark.parametrize("make", ["fifo", "absolute link", "link leaving the tree", "link to a directory",
                                  "directory named .py", "name not UTF-8"])
def test_a_tree_a_manifest_cannot_stand_for_gets_no_snapshot_and_is_read_as_before(tree, tmp_path, make):
    outside = write(tmp_path / "outside", {"x.py": b"X = 1\n"})
    entry = tree / "vllm" / "odd.py"
    if make == "fifo":
        os.mkfifo(entry)
    elif make == "absolute link":
        entry.symlink_to(tree / "vllm" / "worker.py")
    elif make == "link leaving the tree":
        entry.symlink_to("../../outside/x.py")
    elif make == "link to a directory":
        (tree / "vllm" / "odd").symlink_to("config", target_is_directory=True)
    elif make == "directory named .py":
        entry.mkdir()
    else:
        (tree / "vllm").joinpath(os.fsdecode(b"caf\xe9.py")).write_bytes(b"X = 1\n")
    assert outside.is_dir() and snapshot(tree, tmp_path / "cache") is None
    opened = open_local(tree, REV, cache=None)
    assert type(opened) is not SnapshotTree and opened.provider == "local"
    assert expected(REV, source=tree) is None and of_tree(opened) is None


def _rewrite(path, edit, key=None, sealed_with=None):
    """Change an index file's payload with `edit(index)` and seal it again (unkeyed, or under
    `sealed_with`; `key`: what it was sealed under)."""
    index = json.loads(unseal(path.read_bytes(), statindex.MAGIC, key))
    edit(index)
    path.write_bytes(seal(json.dumps(index).encode(), statindex.MAGIC, sealed_with))


@pytest.mark.parametrize("damage", ["truncated", "not sealed", "not JSON", "another schema", "another tree",
                                    "entries not a mapping", "entry of another shape", "oversized"])
def test_a_damaged_or_malformed_index_is_rebuilt_never_trusted(tree, tmp_path, damage):
    cache = tmp_path / "cache"
    good = snapshot(tree, cache, racy_ns=0)
    path = index_file(tree, cache)
    files = len([p for p in good.files if good.files[p][0] >= 0])
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-10])
    elif damage == "not sealed":
        path.write_bytes(unseal(path.read_bytes(), statindex.MAGIC))
    elif damage == "not JSON":
        path.write_bytes(seal(b"{not json", statindex.MAGIC))
    elif damage == "another schema":
        _rewrite(path, lambda index: index.update(schema=statindex.SCHEMA + 1))
    elif damage == "another tree":
        _rewrite(path, lambda index: index.update(tree="0" * 64))
    elif damage == "entries not a mapping":
        _rewrite(path, lambda index: index.update(entries=[]))
    elif damage == "entry of another shape":
        _rewrite(path, lambda index: index["entries"].update({"vllm/worker.py": [1, 2, 3]}))
        files = 1
    else:
        path.write_bytes(b"\0" * (statindex.MAX_BYTES + 100))
    rebuilt = snapshot(tree, cache, racy_ns=0)
    assert len(rebuilt.hashed) == files and rebuilt.digest == good.digest
    assert snapshot(tree, cache, racy_ns=0).hashed == ()  # and written again, intact


def test_under_a_secret_an_index_sealed_without_it_is_not_trusted(tree, tmp_path, monkeypatch):
    """Whoever can write the cache could vouch for other content (an old sha256 behind a file's
    present stat), so under $SRCREVIEW_CACHE_KEY the index is sealed with it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "a secret")
    snapshot(tree, cache, racy_ns=0)
    path = index_file(tree, cache)
    key = statindex.secret_key(b"srcreview stat index\n")
    assert unseal(path.read_bytes(), statindex.MAGIC) is None and unseal(path.read_bytes(), statindex.MAGIC, key)
    worker = tree / "vllm" / "worker.py"
    lie = hashlib.sha256(b"other content").hexdigest()
    _rewrite(path, lambda index: index["entries"]["vllm/worker.py"].__setitem__(4, lie), key=key)
    snap = snapshot(tree, cache, racy_ns=0)
    assert "vllm/worker.py" in snap.hashed and snap.files["vllm/worker.py"][1] == hashlib.sha256(
        worker.read_bytes()).hexdigest()
    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "another secret")
    assert len(snapshot(tree, cache, racy_ns=0).hashed) == len(snap.blobs)


def test_the_indexes_kept_are_bounded(tmp_path):
    """Past MAX_INDEXES trees, the indexes used least recently go."""
    cache = tmp_path / "cache"
    trees = [write(tmp_path / f"t{n:02d}", {"a.py": b"A = %d\n" % n}) for n in range(statindex.MAX_INDEXES + 3)]
    for n, root in enumerate(trees):
        snapshot(root, cache)
        os.utime(index_file(root, cache), ns=(n * 10**9, n * 10**9))  # used in this order
    kept = {p.name for p in index_dir(cache).glob("*.idx")}
    assert kept == {index_file(root, cache).name for root in trees[3:]}


def test_a_review_reads_the_tree_as_its_snapshot(tree, cache_dir):
    """Listed from the snapshot, blob ids from it, and a file changed after the scan (its size
    kept) is refused, with a blocking gap; its index is dropped so the next scan hashes all."""
    cache = cache_dir
    opened = open_local(tree, REV)
    assert type(opened) is SnapshotTree and opened.origin == "sdist directory"
    assert opened.files() == sorted(opened.snapshot.blobs) and opened.symlinks() == []
    assert opened.blob_id("vllm/worker.py") == git_blob_id((tree / "vllm" / "worker.py").read_bytes())
    assert of_tree(opened) == expected(REV, source=tree) == {
        "provider": "local", "entry": "directory", "content": content_digest(file_digests(tree)), "layers": []}
    assert index_file(tree, cache).is_file()
    worker = tree / "vllm" / "worker.py"
    edit_keeping_stat(worker, worker.read_bytes().replace(b"triton", b"flashy"))
    with pytest.raises(SourceUnavailable, match="changed since the tree was scanned"):
        opened.read("vllm/worker.py")
    assert opened.unreadable_entries()["vllm/worker.py"].blocking
    assert not index_file(tree, cache).exists()
    assert of_tree(open_local(tree, REV)) != of_tree(opened)


def test_a_git_checkout_is_named_by_its_commit_and_tree_whatever_its_work_tree_holds(make_git_repo, cache_dir):
    """Its blobs are read at the commit (never the work tree), so a dirty work tree changes
    nothing that is read: the identity is the commit's tree id, with no stat index."""
    repo = make_git_repo()
    commit = repo.commit(dict(sdist_files()))
    rev = Revision(requested=commit[:9], sha=commit[:9])
    wanted = {"provider": "local", "entry": "git checkout", "commit": commit,
              "tree": repo.git("rev-parse", "HEAD^{tree}"), "layers": []}
    opened = open_local(repo.path, rev)
    assert expected(rev, source=repo.path) == of_tree(opened) == wanted
    (repo.path / "vllm" / "__init__.py").write_bytes(b"DIRTY = True\n")
    assert expected(rev, source=repo.path) == wanted and open_local(repo.path, rev).read("vllm/__init__.py") == b""
    assert not (cache_dir / "statindex").exists()
    later = repo.commit({"vllm/__init__.py": b"DIRTY = True\n"})
    assert expected(Revision(requested=later, sha=later), source=repo.path)["tree"] != wanted["tree"]
    assert expected(Revision(requested="0000000", sha="0000000"), source=repo.path) is None  # no such commit


def test_the_files_a_patch_gives_are_kept_by_the_directory_content_not_its_revision(tree, tmp_path):
    """A patch over `--source DIR`: DIR edited under the same revision gives other patched files
    (they were kept by revision and patch alone, so the old content's came back)."""
    import difflib

    from srcreview.source.patched import apply_layers, load_patch

    module = tree / "vllm" / "module.py"
    lines = [f"LINE_{n} = {n}\n" for n in range(10)]
    module.write_text("".join(lines), encoding="utf-8")
    patch = tmp_path / "p.diff"
    patch.write_text("".join(difflib.unified_diff(lines, lines + ["PATCHED = True\n"], "a/vllm/module.py",
                                                  "b/vllm/module.py")), encoding="utf-8")
    layer = load_patch(patch, "p.diff")
    first = apply_layers(open_local(tree, REV), [layer]).read("vllm/module.py")
    assert first == "".join(lines).encode() + b"PATCHED = True\n"
    module.write_text("LINE_0 = 'edited'\n" + "".join(lines[1:]), encoding="utf-8")
    again = apply_layers(open_local(tree, REV), [layer])
    assert again.read("vllm/module.py") == module.read_bytes() + b"PATCHED = True\n"
    assert of_tree(again)["layers"] == [["patch", "p.diff", layer.sha256]]
