"""Which front end builds a module's facts: `ast` first, libcst for what it does not take."""

from __future__ import annotations

from srcreview.index import facts as facts_module
from srcreview.index import ir
from srcreview.index.builder import ast_front
from srcreview.index.facts import ModuleFacts, PendingBody


def extract_facts(data: bytes, module: str, path: str, blob: str) -> ModuleFacts:
    """The facts of one module: through Python's `ast`, else through libcst (imported only then),
    the reference both give the same facts as."""
    try:
        return ast_front.extract(data, module, path, blob)
    except ast_front.NotTaken:
        from srcreview.index.builder import cst_front

        return cst_front.extract(data, module, path, blob)


def convert_body(pending: PendingBody) -> ir.Body:
    """The IR of a function body left pending: through `ast`; a body `ast` cannot take is
    libcst's, as its module would have been."""
    try:
        return ast_front.convert_body(pending)
    except (ast_front.NotTaken, SyntaxError, ValueError, RecursionError, MemoryError):
        from srcreview.index.builder import cst_front

        return cst_front.extract(pending.source, "_pending", "_pending.py", "").functions[pending.qualname].body


facts_module.BODY_LOADERS[PendingBody] = convert_body
