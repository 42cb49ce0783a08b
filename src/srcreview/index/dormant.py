"""Module containers that only an uncalled registrar fills.

A registry such as `_HANDLERS: dict = {}` that a decorator factory fills (`_HANDLERS[name] =
inst` inside `register_handler`) holds more than its literal only if something runs that
factory. Where every store into the container lies in module-level functions that no code of
the tree names (no call, decorator, import, attribute, or string that is not documentation;
comments are not code), only code from outside the tree can fill it: under a runtime with no plugins,
the container is what its literal says. Anything this module cannot read keeps it open.
"""

from __future__ import annotations

import ast
import re

MUTATORS = frozenset({"update", "setdefault", "append", "extend", "insert", "add", "pop", "popitem", "remove",
                      "discard", "clear", "__setitem__", "__delitem__"})


def storing_functions(text: bytes, name: str) -> set[str] | None:
    """The module-level functions of a file whose bodies store into, mutate or rebind `name`;
    None when such a site is anywhere else (module level, a class body) or the file does not parse."""
    tree = _parse(text)
    if tree is None:
        return None
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and all(
                _is_name(t, name) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            continue  # the module's own binding of it (a second one is a rebinding, seen by the index)
        sites = [n for n in ast.walk(node) if _changes(n, name)]
        if not sites:
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        found.add(node.name)
    return found


def named_outside(text: bytes, function: str, own_file: bool) -> bool:
    """Whether code of a file names `function` (a name, attribute, import, decorator or a string
    that is not a docstring), apart from its own definition and body when `own_file`."""
    tree = _parse(text)
    if tree is None:
        return True
    docstrings = _docstrings(tree)
    word = re.compile(rf"\b{re.escape(function)}\b")
    skip: set[int] = set()
    if own_file:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
                skip |= {id(n) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in docstrings:
            continue
        if isinstance(node, ast.Name) and node.id == function:
            return True
        if isinstance(node, ast.Attribute) and node.attr == function:
            return True
        if isinstance(node, ast.alias) and function in (node.name.rsplit(".", 1)[-1], node.asname):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == function:
            return True  # a second definition of the name: which one runs is not this module's question
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and word.search(node.value):
            return True
    return False


def _changes(node, name: str) -> bool:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return any(_is_name(t, name) or (isinstance(t, ast.Subscript) and _is_name(t.value, name)) for t in targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
        return _is_name(node.func.value, name)
    if isinstance(node, ast.Global):
        return name in node.names
    return False


def _is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _docstrings(tree) -> set[int]:
    """Strings that are statements of their own: docstrings, and the attribute docstrings after
    a field (documentation, never a reference that runs)."""
    return {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def _parse(text: bytes):
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None
