"""Fact extraction and index queries on the hand-written pattern trees (fixtures/vllm_snippets/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.index import UNKNOWN, Index, ir
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
SHA = "1234567890abcdef1234567890abcdef12345678"


def index_of(name: str, cache_dir=None) -> Index:
    return Index(DirectoryTree(FIXTURES / name, Revision(requested="fixture", sha=SHA)), cache_dir=cache_dir)


def mark(name: str, path: str, label: str) -> int:
    """The line of `# mark: label` in a fixture file: expectations live beside the code they describe."""
    lines = (FIXTURES / name / path).read_text().splitlines()
    found = [n for n, line in enumerate(lines, 1) if line.rstrip().endswith(f"# mark: {label}")]
    assert len(found) == 1, (path, label, found)
    return found[0]


def line_of(name: str, path: str, text: str) -> int:
    lines = (FIXTURES / name / path).read_text().splitlines()
    found = [n for n, line in enumerate(lines, 1) if text in line]
    assert len(found) == 1, (path, text, found)
    return found[0]


def test_imports_absolute_relative_aliased_and_local():
    index = index_of("relative_imports")
    facts = index.module("vllm.spec.entry")
    assert {(i.local, i.target, i.is_module) for i in facts.imports} == {
        ("loader_mod", "vllm.loader", True),
        ("helpers", "vllm.spec.helpers", False),
        ("VllmConfig", "vllm.config.VllmConfig", False),
        ("prep", "vllm.spec.helpers.prepare", False),
    }
    local = facts.functions["run"].imports
    assert [(i.local, i.target, i.scope, i.line) for i in local] == [
        ("late_step", "vllm.spec.late.late_step", "run", mark("relative_imports", "vllm/spec/entry.py", "local-import"))]
    assert facts.import_map("run")["late_step"] == "vllm.spec.late.late_step"
    assert "late_step" not in facts.import_map()


def test_module_by_path_and_by_name_are_the_same_facts():
    index = index_of("aliasing")
    assert index.module("vllm/spec/loader.py") is index.module("vllm.spec.loader")
    with pytest.raises(SourceUnavailable):
        index.module("vllm.nope")


def test_fields_with_annotation_default_and_docstring():
    index = index_of("aliasing")
    info = index.class_info("SpeculativeConfig")
    field = info.field("kv_cache_dtype")
    assert field.annotation == "CacheDType | None"
    assert field.default == "None"
    assert field.value is None
    assert field.docstring == "Draft KV cache dtype; inherits the target's when None."
    path = "vllm/config/speculative.py"
    assert (field.start_line, field.end_line) == (line_of("aliasing", path, "kv_cache_dtype: CacheDType"),
                                                  line_of("aliasing", path, "inherits the target's"))
    assert [f.name for f in info.fields] == ["method", "num_speculative_tokens", "attention_backend", "kv_cache_dtype"]
    assert info.field("num_speculative_tokens").value == 1
    assert info.field("num_speculative_tokens").docstring is None


def test_literal_values_through_aliases_imports_and_enums():
    index = index_of("aliasing")
    assert index.literal_values("CacheDType | None", "vllm.config.speculative") == ("auto", "fp8", "fp8_per_token_head")
    assert index.literal_values("SpeculativeMethod | None", "vllm.config.speculative") == ("mtp", "eagle", "draft_model")
    assert index.literal_values("AttentionBackendEnum | None", "vllm.config.speculative") == ("FLASH_ATTN", "TRITON_ATTN")
    assert index.literal_values('Literal["a", "b"] | Optional[Literal["c"]]', "vllm.config.speculative") == ("a", "b", "c")
    assert index.literal_values("int", "vllm.config.speculative") is None
    assert index.literal_values("str | CacheDType", "vllm.config.speculative") is None
    assert index.enum_members("AttentionBackendEnum") == (
        ("FLASH_ATTN", "vllm.attention.flash.FlashBackend"), ("TRITON_ATTN", "vllm.attention.triton.TritonBackend"))


def test_mro_inside_the_tree_with_out_of_tree_bases_kept_as_written():
    index = index_of("mro_overrides")
    info = index.class_info("MTPProposer")
    assert info.mro == ("vllm.spec.mtp.MTPProposer", "vllm.spec.base.DraftProposer", "vllm.spec.base.BaseProposer", "ABC")
    assert info.methods["load_draft_model"].qualname == "vllm.spec.mtp.MTPProposer.load_draft_model"
    assert info.methods["post_load"].qualname == "vllm.spec.base.DraftProposer.post_load"
    assert info.methods["load_model"].qualname == "vllm.spec.base.BaseProposer.load_model"
    assert index.function("MTPProposer.load_model").qualname == "vllm.spec.base.BaseProposer.load_model"
    assert index.function("MTPProposer.nothing") is None


def test_properties_and_instance_attributes():
    index = index_of("properties")
    info = index.class_info("VllmConfig")
    assert info.properties == ("use_v2_model_runner",)
    assert [f.name for f in info.fields] == ["cache_config", "speculative_config"]
    drafter = index_of("aliasing").class_info("Drafter")
    assert [(a.attr, a.method) for a in drafter.facts.instance_attrs] == [("vllm_config", "Drafter.__init__")]


def test_module_constants_including_tuples_of_tuples():
    index = index_of("getattr_table")
    table = index.constant("_DRAFT_OVERRIDES")
    assert table.value == (("kv_cache_dtype", "cache_dtype"), ("method", "method"))
    path = "vllm/spec/overrides.py"
    assert table.start_line == line_of("getattr_table", path, "_DRAFT_OVERRIDES = (")
    assert table.end_line == table.start_line + 3
    assert index.constant("vllm.spec.overrides._COUNTS").value == ("num_speculative_tokens",)


def test_conditional_and_type_checking_constants_have_no_static_value():
    index = index_of("properties")
    envs = index.module("vllm.envs")
    assert envs.constants["VLLM_USE_V2_MODEL_RUNNER"].guard == "TYPE_CHECKING"
    table = envs.constants["environment_variables"]
    assert list(table.value) == ["VLLM_USE_V2_MODEL_RUNNER"] and table.value["VLLM_USE_V2_MODEL_RUNNER"] is UNKNOWN


def test_find_by_qualified_name_suffix():
    index = index_of("mro_overrides")
    [symbol] = index.find("MTPProposer.load_draft_model")
    assert (symbol.qualname, symbol.kind, symbol.path) == (
        "vllm.spec.mtp.MTPProposer.load_draft_model", "function", "vllm/spec/mtp.py")
    assert symbol.start_line == line_of("mro_overrides", "vllm/spec/mtp.py", "def load_draft_model")
    assert [s.qualname for s in index.find("post_load", "function")] == [
        "vllm.spec.base.BaseProposer.post_load", "vllm.spec.base.DraftProposer.post_load"]
    with pytest.raises(DataError, match="ambiguous"):
        index.find_one("post_load", "function")
    [field] = index.find("SpeculativeConfig.attention_backend", "field")
    assert field.qualname == "vllm.config.speculative.SpeculativeConfig.attention_backend"
    assert index.find("Nope.nothing") == []


def test_grep_is_a_raw_text_prefilter_that_parses_nothing():
    index = index_of("aliasing")
    assert index.grep("kv_cache_dtype") == ["vllm/config/speculative.py", "vllm/spec/loader.py"]
    assert index.parsed == []


def test_function_bodies_in_the_typed_ir():
    name, path = "config_dispatch", "vllm/spec/__init__.py"
    fn = index_of(name).function("init_speculator").facts
    found = [s for s in ir.iter_statements(fn.body) if isinstance(s, ir.If)]
    assert [(b.text, b.line, isinstance(b.body[-1], ir.Return)) for b in found] == [
        ('spec.method == "eagle"', mark(name, path, "branch-eagle"), True),
        ("spec.is_special_mtp()", mark(name, path, "branch-special"), True),
        ('spec.method == "mtp"', mark(name, path, "branch-mtp"), True),
    ]
    assert [(ir.text(r.exc), r.line) for r in ir.iter_statements(fn.body) if isinstance(r, ir.Raise)] == [
        ("NotImplementedError(spec.method)", mark(name, path, "raise"))]
    assert ("spec.is_special_mtp", mark(name, path, "branch-special")) in [
        (ir.dotted(c.func), c.line) for c in ir.iter_calls(fn.body)]
    reads = [(ir.text(e.value), e.attr) for e in ir.iter_exprs(fn.body) if isinstance(e, ir.Attr)]
    assert ("vllm_config", "speculative_config") in reads and ("spec", "method") in reads
    [call] = ir.iter_calls(index_of("dynamic_access").function("read_named").facts.body)
    assert (ir.dotted(call.func), [ir.text(a) for a in call.args]) == ("getattr", ["spec", "name"])


def test_a_syntax_error_is_a_fact_not_a_crash(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "broken.py").write_text("def f(:\n    pass\n")
    index = Index(DirectoryTree(tmp_path, Revision(requested="fixture", sha=SHA)))
    facts = index.module("vllm.broken", allow_unparsable=True)
    assert facts.parse_error and not facts.functions
    # a question that needs the module stays open: never "absent" or "empty"
    from srcreview.index import UnreadableSource

    with pytest.raises(UnreadableSource, match=r"vllm/broken\.py: does not parse") as raised:
        index.module("vllm.broken")
    assert raised.value.tag == "unparsable-source" and index.unreadable == {"vllm/broken.py": facts.parse_error}


def test_a_modules_own_code_is_kept_as_a_function_of_what_runs_at_import(tmp_path):
    """Registration at import, decorators applied, a `__main__` guard: the module's statements
    are one function (MODULE_CODE), the same from both front ends; a `def` or `class` binds its
    name and each decorator is applied to it, innermost first; imports stay the module's facts,
    and the module's code is no definition a name search finds."""
    from srcreview.index.builder.ast_front import extract
    from srcreview.index.builder.cst_front import extract as extract_cst
    from srcreview.index.facts import MODULE_CODE

    source = (b"import os\nfrom r import register, outer, inner\n\n\n@outer\n@inner(1)\ndef f():\n    return os.sep\n\n\n"
              b"@register\nclass C:\n    x = 1\n\n\nregister('f', f)\nif __name__ == '__main__':\n    f()\n")
    lazy, eager = extract(source, "m", "m.py", "b"), extract_cst(source, "m", "m.py", "b")
    assert lazy.functions[MODULE_CODE].body == eager.functions[MODULE_CODE].body
    code = lazy.functions[MODULE_CODE]
    assert (code.start_line, code.end_line, code.params) == (1, 18, ())
    kinds = [(type(s).__name__, s.line) for s in code.body]
    assert kinds == [("Def", 7), ("Assign", 6), ("Assign", 5), ("Def", 12), ("Assign", 11), ("ExprStmt", 16),
                     ("If", 17)], "imports are not statements of the module's code"
    inner, outer = code.body[1], code.body[2]
    assert isinstance(inner.value, ir.Call) and isinstance(inner.value.func, ir.Call), "inner(1) applied to f"
    assert isinstance(outer.value, ir.Call) and outer.value.func == ir.Name(5, 5, "outer")
    assert outer.value.args == (ir.Name(5, 5, "f"),)
    assert {i.local for i in lazy.imports} == {"os", "register", "outer", "inner"}
    assert set(lazy.functions) == {"f", MODULE_CODE}

    (tmp_path / "m.py").write_bytes(source)
    index = Index(DirectoryTree(tmp_path, Revision(requested="fixture", sha=SHA)), package="")
    assert MODULE_CODE not in {s.local for s in index.symbols(index.module("m"))}
    with pytest.raises(DataError, match="not a dotted Python name"):
        index.find(MODULE_CODE)
    info = index.function(f"m.{MODULE_CODE}")
    assert info is not None and info.facts.body == code.body and info.symbol.path == "m.py"
    with pytest.raises(DataError, match="not a dotted Python name"):
        index.function(f"nowhere.{MODULE_CODE}")  # no such module: the name is no function's
