"""The facts cache: keyed by blob id and schema, warm runs parse nothing, corrupt entries are rebuilt."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from srcreview.index import SCHEMA_VERSION, Index
from srcreview.index.cache import FactsCache, seal
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
SHA = "1234567890abcdef1234567890abcdef12345678"


def index_of(name: str, cache_dir) -> Index:
    return Index(DirectoryTree(FIXTURES / name, Revision(requested="fixture", sha=SHA)), cache_dir=cache_dir)


def _entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "facts" / f"v{SCHEMA_VERSION}").rglob("*.pickle"))


def test_warm_run_loads_facts_without_parsing(tmp_path):
    cold = index_of("mro_overrides", tmp_path)
    info = cold.class_info("MTPProposer")
    assert cold.parsed  # parsed the first time
    warm = index_of("mro_overrides", tmp_path)
    again = warm.class_info("MTPProposer")
    assert warm.parsed == []
    assert again.mro == info.mro and again.fields == info.fields
    blob = cold.tree.blob_id("vllm/spec/mtp.py")
    assert (tmp_path / "facts" / f"v{SCHEMA_VERSION}" / blob[:2] / f"{blob}.pickle").is_file()


def test_corrupt_or_foreign_entries_are_rebuilt_never_trusted(tmp_path):
    index_of("aliasing", tmp_path).module("vllm.spec.loader")
    blob = index_of("aliasing", None).tree.blob_id("vllm/spec/loader.py")
    target = tmp_path / "facts" / f"v{SCHEMA_VERSION}" / blob[:2] / f"{blob}.pickle"
    assert target in _entries(tmp_path)

    target.write_bytes(seal(b"\x80\x05garbage"))
    index = index_of("aliasing", tmp_path)
    assert "Drafter" in index.module("vllm.spec.loader").classes
    assert index.parsed == ["vllm/spec/loader.py"]

    # a pickle that names any other global is refused, not executed (sealed: the unpickler refuses it)
    target.write_bytes(seal(pickle.dumps(subprocess.Popen)))
    index = index_of("aliasing", tmp_path)
    assert "Drafter" in index.module("vllm.spec.loader").classes
    assert index.parsed == ["vllm/spec/loader.py"]

    # facts stored for other content are not taken for this content
    other = index_of("aliasing", None).module("vllm.loader")
    target.write_bytes(seal(pickle.dumps(other)))
    index = index_of("aliasing", tmp_path)
    assert "Drafter" in index.module("vllm.spec.loader").classes


def test_cache_entry_is_keyed_by_content_not_by_path(tmp_path):
    facts = index_of("aliasing", None).module("vllm.loader")
    cache = FactsCache(tmp_path)
    cache.store(facts)
    assert cache.load(facts.blob_id, facts.module, facts.path) == facts
    assert cache.load("0" * 40, facts.module, facts.path) is None


def test_warm_analysis_does_not_import_libcst(tmp_path):
    script = f"""
import sys

import pytest
from pathlib import Path
from srcreview.index import Index
from srcreview.interp import trace, field_reads
from srcreview.interp.domain import install
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree
from srcreview.vllm.domain import VLLM
install(VLLM)
tree = DirectoryTree(Path({str(FIXTURES / "aliasing")!r}), Revision(requested="fixture", sha={SHA!r}))
index = Index(tree, cache_dir=Path({str(tmp_path)!r}))
t = trace(index, "Drafter.load", {{}}, sink="get_model")
reads = field_reads(index, t, "SpeculativeConfig.kv_cache_dtype")
print(len(reads.reads), len(index.parsed), "libcst" in sys.modules)
"""
    cold = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    # parsed through Python's ast: libcst is only the fallback of modules ast does not take
    assert cold.stdout.split()[0] == "1" and cold.stdout.split()[1] != "0" and cold.stdout.split()[2] == "False"
    warm = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert warm.stdout.split() == ["1", "0", "False"]


def test_name_prefilter_is_cached_and_a_corrupt_entry_is_rebuilt(tmp_path):
    cold = index_of("mro_overrides", tmp_path)
    assert [s.qualname for s in cold.find("MTPProposer")] == ["vllm.spec.mtp.MTPProposer"]
    [names_file] = sorted((tmp_path / "facts" / f"v{SCHEMA_VERSION}" / "names").glob("*.json"))

    warm = index_of("mro_overrides", tmp_path)
    assert [s.qualname for s in warm.find("MTPProposer")] == ["vllm.spec.mtp.MTPProposer"]
    assert warm._raw == {}  # answered from the cache: no file read

    names_file.write_text("{not json")
    again = index_of("mro_overrides", tmp_path)
    assert [s.qualname for s in again.find("MTPProposer")] == ["vllm.spec.mtp.MTPProposer"]
    assert again.definition_names().get("DraftProposer") == ["vllm/spec/base.py"]  # runner.py only imports it
    assert "nothing_by_that_name" not in again.definition_names()


def test_commands_give_the_index_the_cache_root_through_one_function():
    """`facts/` is added once, by the index (facts_dir): no caller passes `<root>/facts`."""
    import re

    from srcreview.index.cache import default_cache_dir, facts_dir
    from srcreview.source.cache import default_root

    assert default_cache_dir() == default_root()[0]
    assert facts_dir(Path("root")) == Path("root") / "facts" / f"v{SCHEMA_VERSION}"
    src = Path(__file__).resolve().parent.parent.parent / "src" / "srcreview"
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        for call in re.findall(r"Index\([^\n]*?cache_dir=([A-Za-z_.]+(?:\(\))?)", text):
            # the user cache through the one function, or a cache root handed through (engine.review)
            assert call in ("default_cache_dir()", "cache_dir", "None"), f"{path.name}: Index(cache_dir={call})"
        if path.name != "cache.py" or path.parent.name != "index":  # a path built with a "facts" part
            assert not re.search(r'/\s*"facts"|"facts"\s*/|Path\([^)\n]*"facts"|joinpath\([^)\n]*"facts"', text), \
                f"{path.name} builds a facts path itself"


def test_function_bodies_load_when_read_and_a_damaged_or_crafted_body_is_never_run(tmp_path):
    """Bodies stay pickled in the entry until read; a damaged one makes the entry absent (rebuilt),
    and a crafted one that passes its checksum is refused when read, never executed."""
    import dataclasses
    import zlib

    from srcreview.core.errors import SourceUnavailable

    facts = index_of("aliasing", None).module("vllm.spec.loader")
    qualname = next(q for q, fn in facts.functions.items() if fn.body)  # (converted: stored as IR)
    cache = FactsCache(tmp_path)
    cache.store(facts)
    loaded = cache.load(facts.blob_id, facts.module, facts.path)
    assert isinstance(loaded.functions[qualname].stored_body, bytes)
    assert loaded.functions[qualname].body == facts.functions[qualname].body

    def with_body(stored: bytes) -> None:
        fn = dataclasses.replace(facts.functions[qualname], stored_body=stored)
        target = _entries(tmp_path)[0]
        target.write_bytes(seal(pickle.dumps(dataclasses.replace(facts, functions={**facts.functions, qualname: fn}))))

    good = pickle.dumps(facts.functions[qualname].body)
    with_body(zlib.crc32(good).to_bytes(4, "big") + good[:-3] + b"\xff\xff\xff")
    assert cache.load(facts.blob_id, facts.module, facts.path) is None

    crafted = pickle.dumps(subprocess.Popen)
    with_body(zlib.crc32(crafted).to_bytes(4, "big") + crafted)
    loaded = cache.load(facts.blob_id, facts.module, facts.path)
    with pytest.raises(SourceUnavailable, match="do not load"):
        _ = loaded.functions[qualname].body


def test_a_body_no_review_read_is_stored_unconverted_and_converts_to_the_same_ir(tmp_path):
    """A cold review converts the bodies it reads only (srcreview.index.builder.convert_body):
    one left pending is cached with its module's source, once, and converts to what `extract`
    would have built, lines and columns included; the libcst extractor gives the same."""
    import dataclasses

    from srcreview.core.errors import SourceUnavailable
    from srcreview.index.builder.ast_front import extract
    from srcreview.index.builder.cst_front import extract as extract_cst
    from srcreview.index.facts import MODULE_CODE, PendingBody

    source = (b"import os\n\n\nclass A:\n    x: int = 1\n\n    @property\n    def f(self, a=(1,\n        2)):\n"
              b"        if a:\n            import sys\n            self.y: int = (a +\n                1)\n"
              b"        else:\n            def g():\n                return os.sep\n        return g\n\n\n"
              b"def top():\n    try:\n        return A().f\n    except Exception:\n        pass\n")
    pending = extract(source, "m", "m.py", "blob")
    eager = extract_cst(source, "m", "m.py", "blob")
    assert set(pending.functions) == set(eager.functions) == {"A.f", "A.f.<locals>.g", "top", MODULE_CODE}
    assert all(isinstance(fn.stored_body, PendingBody) for fn in pending.functions.values())
    assert pending.classes == eager.classes, "instance attributes are recorded without converting bodies"
    assert [i.local for i in pending.functions["A.f"].imports] == ["sys"]
    cache = FactsCache(tmp_path)
    cache.store(pending)
    entry = _entries(tmp_path)[0].read_bytes()
    assert entry.count(b"def top():") == 1, "the module's source is stored once, not once per function"
    loaded = cache.load("blob", "m", "m.py")
    for qualname, fn in eager.functions.items():
        assert isinstance(loaded.functions[qualname].stored_body, PendingBody)
        assert loaded.functions[qualname].body == fn.body, qualname
    assert pending == eager
    fresh = extract(source, "m", "m.py", "blob").functions["top"]
    broken = dataclasses.replace(fresh.stored_body, start=0)  # no `def` where it starts: libcst converts it
    assert dataclasses.replace(fresh, stored_body=broken).body == eager.functions["top"].body
    crafted = dataclasses.replace(fresh.stored_body, source=b"def top(:\n", qualname="top")
    with pytest.raises(SourceUnavailable, match="do not load"):
        _ = dataclasses.replace(fresh, stored_body=crafted).body


def test_bodies_a_review_converted_are_kept_in_their_entry_for_the_next_index(tmp_path, monkeypatch):
    """keep_converted stores a module's facts again, under the same blob id, once bodies were
    converted: the next Index unpickles them (the same IR) instead of parsing them again; with
    nothing new converted, or SRCREVIEW_REUSE=0, nothing is written."""
    from srcreview.index.facts import PendingBody

    path = "vllm/spec/base.py"
    first = index_of("mro_overrides", tmp_path)
    facts = first.module(path)
    assert len(facts.functions) > 1 and all(isinstance(fn.stored_body, PendingBody) for fn in facts.functions.values())
    assert first.keep_converted() == 0, "nothing converted yet"
    qualname = sorted(facts.functions)[0]
    body = facts.functions[qualname].body
    (entry,) = [e for e in _entries(tmp_path) if e.stem == first.tree.blob_id(path)]
    monkeypatch.setenv("SRCREVIEW_REUSE", "0")
    before = entry.read_bytes()
    assert first.keep_converted() == 0 and entry.read_bytes() == before
    monkeypatch.delenv("SRCREVIEW_REUSE")
    assert first.keep_converted() == 1
    assert first.keep_converted() == 0, "stored once per conversion, not once per call"

    second = index_of("mro_overrides", tmp_path)
    kept = second.module(path).functions
    assert isinstance(kept[qualname].stored_body, bytes)
    assert all(isinstance(fn.stored_body, PendingBody) for name, fn in kept.items() if name != qualname)
    assert kept[qualname].body == body and second.parsed == []
    assert second.keep_converted() == 0, "an unpickled body is no new conversion"
