"""The IR builder: a module's source -> ModuleFacts, one algorithm (core) over two parsers.

    extract_facts(data, module, path, blob) -> ModuleFacts   `ast` first, libcst for what it does not take
    convert_body(pending) -> tuple[Stmt, ...]                 a body left pending, converted when first read

core.Builder is the builder, written once over `ast`'s node classes; ast_front feeds it
`ast.parse`'s tree (function bodies left pending), cst_front libcst's tree converted into the
same classes (the fallback, and the reference tests compare the fast path with). Only
cst_front imports libcst, and only a module `ast` does not take imports cst_front.
"""

from srcreview.index.builder.extract import convert_body, extract_facts

__all__ = ["convert_body", "extract_facts"]
