"""The lazy fact index of one vLLM revision: what the rules and the call graph stand on.

Usage (all names below are the public API; everything else in the package is internal):

    from srcreview.index import Index
    index = Index(tree, cache_dir=None)           # tree: srcreview.source.SourceTree

    index.grep("attention_backend", prefix="vllm/") -> list[str]      raw-text prefilter, no parsing
    index.grep_re(r"regex", prefix="vllm/", literal=None) -> list[str]
    index.module("vllm.config.speculative")       -> ModuleFacts        (dotted name or tree path)
    index.find("MTPSpeculator.load_draft_model", kind="function", prefix="vllm/") -> list[Symbol]
        qualified-name suffix lookup over the whole tree; kind is "class" | "function" |
        "field" | "constant" | "any". Symbol: qualname ("vllm.v1....MTPSpeculator.load_draft_model"),
        kind, path, start_line, end_line, module, local (module-relative qualname).
        Only files whose raw text may define the name are parsed (candidate_files(suffix, kind)):
        a class or function needs a `class`/`def` line, and every qualifier of the suffix must
        be a package/module of the file's path or a class/function it defines.
    index.find_one(suffix, kind)                  -> Symbol | None; DataError when ambiguous
    index.resolve("vllm.config.VllmConfig")       -> Symbol | None  an absolute dotted name, through re-exports
    index.python_files(prefix)                    -> sorted .py paths
    index.class_info("SpeculativeConfig")         -> ClassInfo | None   (suffix or full qualname)
        bases, mro (in-tree qualnames; out-of-tree bases kept as written), fields (own and
        inherited, FieldFact: name, annotation, default, docstring, lines, value),
        methods (name -> Symbol, nearest in the MRO), properties, constants (class-level
        literal values, e.g. supported_kv_cache_dtypes), enum_members.
    index.function(qualname_or_suffix)            -> FunctionInfo | None
        the FunctionFacts plus where it lives; its body is typed IR (srcreview.index.ir), walked
        by ir.iter_statements(), ir.iter_exprs(), ir.iter_calls().
    index.literal_values("CacheDType | None", "vllm.config.cache") -> tuple[str, ...] | None
        the members admitted by a Literal[...] annotation, through type aliases and imports;
        for an Enum annotation, the member NAMES (vLLM parses backends by name).
    index.enum_members("AttentionBackendEnum")    -> tuple[(name, value), ...] | None
    index.constant("vllm.envs.environment_variables") -> ConstantFact | None  (suffix accepted)
    index.resolve_name(module, name, scope="")    -> str | None  absolute qualname a name refers to
    index.anchor(path, start, end, symbol="", role="") -> srcreview.model.findings.Anchor
    index.symbol_anchor(symbol, role="")          -> Anchor of a Symbol's whole definition
    index.parsed                                  -> paths parsed by this Index (cache misses)
    index.keep_converted()                        -> facts entries stored again with the bodies converted since
                                                     loaded (after a review: the next process unpickles them)
    index.unreadable                              -> {path: reason} of modules asked for that could not be read
                                                     or parsed

A module that cannot be read or parsed (a syntax libcst does not know, undecodable or NUL
bytes, over MAX_PARSE_BYTES, a symlink leaving the tree) raises UnreadableSource (a
SourceUnavailable carrying `path`, `reason` and a finding tag) from every call that needs
its facts; the engine turns that into a plausible finding and an incomplete review.

Module-level constants bound more than once or under an `if`/`try` keep their first site but
carry no value (ConstantFact.reassigned / .guard): a value the import decides at run time is
never taken for a static one. Class fields include plain class attributes (annotation None),
which is also how Enum members are read.

Facts are built by one builder (index/builder/core.py) from Python's `ast` (builder/ast_front.py);
libcst's tree, converted for the same builder (builder/cst_front.py), is the reference they are
tested equal to, and gives the facts of what `ast` does not take (syntax this Python
does not parse, a source that is not UTF-8). They are cached on disk under `cache_dir` (when
given), keyed by the git blob id of the file and SCHEMA_VERSION; a corrupt or foreign entry is
rebuilt, never trusted. Nothing is parsed until a question needs it, and a run whose facts are
all cached never imports libcst
(nor does a cold one, unless a module needs the fallback).
Raw-text answers (definition_files, grep, grep_re) are kept on disk per revision listing too.
srcreview.index.prefetch.start(index, names, walk) parses ahead on a second core (a forked
worker running `walk`, e.g. the same review in another order, to fill the facts cache); the
answers still come from this Index.
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
from srcreview.index.index import (
    MAX_PARSE_BYTES,
    ClassInfo,
    FunctionInfo,
    Index,
    Symbol,
    UnreadableSource,
)

__all__ = [
    "SCHEMA_VERSION", "UNKNOWN", "ClassFacts", "ClassInfo", "ConstantFact", "FieldFact",
    "FunctionFacts", "FunctionInfo", "ImportFact", "Index", "MAX_PARSE_BYTES", "ModuleFacts", "Param", "Symbol",
    "UnreadableSource",
]
