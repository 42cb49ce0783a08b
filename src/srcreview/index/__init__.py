"""The lazy fact index of one vLLM revision: what the rules and the call graph stand on.

Usage (all names below are the public API; everything else in the package is internal):

    from srcreview.index import Index
    index = Index(tree, cache_dir=None)           # tree: srcreview.source.SourceTree

    index.grep("attention_backend", prefix="vllm/") -> list[str]      raw-text prefilter, no parsing
    index.module("vllm.config.speculative")       -> ModuleFacts        (dotted name or tree path)
    index.find("MTPSpeculator.load_draft_model", kind="function") -> list[Symbol]
        qualified-name suffix lookup over the whole tree; kind is "class" | "function" |
        "field" | "constant" | "any". Symbol: qualname ("vllm.v1....MTPSpeculator.load_draft_model"),
        kind, path, start_line, end_line, module, local (module-relative qualname).
    index.class_info("SpeculativeConfig")         -> ClassInfo | None   (suffix or full qualname)
        bases, mro (in-tree qualnames; out-of-tree bases kept as written), fields (own and
        inherited, FieldFact: name, annotation, default, docstring, lines, value),
        methods (name -> Symbol, nearest in the MRO), properties, constants (class-level
        literal values, e.g. supported_kv_cache_dtypes), enum_members.
    index.function(qualname_or_suffix)            -> FunctionInfo | None
        the FunctionFacts plus where it lives; helpers in srcreview.index.query walk its body:
        calls(), attribute_reads(), getattr_sites(), branches() (if-statements with test text,
        lines, and whether each side raises / returns), raises().
    index.literal_values("CacheDType | None", "vllm.config.cache") -> tuple[str, ...] | None
        the members admitted by a Literal[...] annotation, through type aliases and imports;
        for an Enum annotation, the member NAMES (vLLM parses backends by name).
    index.enum_members("AttentionBackendEnum")    -> tuple[(name, value), ...] | None
    index.constant("vllm.envs.environment_variables") -> ConstantFact | None  (suffix accepted)
    index.resolve_name(module, name, scope="")    -> str | None  absolute qualname a name refers to
    index.anchor(symbol_or_path, start, end, symbol="", role="") -> srcreview.findings.Anchor

Facts are cached on disk under `cache_dir` (when given), keyed by the git blob id of the
file and SCHEMA_VERSION; a corrupt or foreign entry is rebuilt, never trusted. Nothing is
parsed until a question needs it, and a run whose facts are all cached never imports libcst.
"""

from srcreview.index.facts import (
    SCHEMA_VERSION,
    UNKNOWN,
    ClassFacts,
    ConstantFact,
    FieldFact,
    FunctionFacts,
    ImportFact,
    ModuleFacts,
    Param,
)
from srcreview.index.index import ClassInfo, FunctionInfo, Index, Symbol

__all__ = [
    "SCHEMA_VERSION", "UNKNOWN", "ClassFacts", "ClassInfo", "ConstantFact", "FieldFact",
    "FunctionFacts", "FunctionInfo", "ImportFact", "Index", "ModuleFacts", "Param", "Symbol",
]
