"""The closed sets the checks speak in: every tag has a meaning, every outcome belongs to its kind.

Tags and outcomes are plain strings in every output; `srcreview.core.tags.Tag` and
`srcreview.checks.Outcome` are the sets mypy holds the code to. These tests hold the sets to
their tables and to what the source writes (read from its syntax tree, so a new literal that
skips the set fails here even where mypy cannot see it), and to the real reviews' tags.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import get_args

import pytest
from real_reviews import RECIPES, review_of

from srcreview.checks import KINDS, Outcome
from srcreview.core.tags import TAG_MEANINGS, SiteKind, Tag

SRC = Path(__file__).resolve().parents[2] / "src" / "srcreview"
TAG_CALLS = ("Site", "DynamicEvent")  # their first argument, the kind, is a tag


def test_every_tag_has_a_meaning_and_every_meaning_a_tag():
    assert set(get_args(Tag)) == set(TAG_MEANINGS)
    assert len(get_args(Tag)) == len(set(get_args(Tag)))
    assert all(meaning.strip() and not meaning.endswith(".") for meaning in TAG_MEANINGS.values())
    assert set(get_args(SiteKind)) <= set(get_args(Tag))


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _values(node: ast.AST) -> list[str]:
    """The string literals an expression may evaluate to (not those it tests: `x if "a" in y else z`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _values(node.body) + _values(node.orelse)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _values(e)]
    if isinstance(node, ast.BoolOp):
        return [s for v in node.values for s in _values(v)]
    return []


def _written_tags(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, tag) of every literal the source writes as a tag."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        values: list[ast.AST] = []
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            values += [k.value for k in node.keywords if k.arg in ("tags", "tag")]
            if name in ("add", "update") and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id == "tags":
                values += node.args
            if name in TAG_CALLS and node.args:
                values.append(node.args[0])
            if name == "getattr" and len(node.args) == 3 and _strings(node.args[1]) == ["tag"]:
                values.append(node.args[2])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a parameter typed Tag: its default
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = [*zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True),
                     *((arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)]
            values += [d for arg, d in pairs if arg.annotation is not None and "Tag" in ast.unparse(arg.annotation)]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            typed = isinstance(node, ast.AnnAssign) and "Tag" in ast.unparse(node.annotation)
            if typed or any(isinstance(t, ast.Name) and t.id in ("tags", "MODEL_CONFIG_UNKNOWN") for t in targets):
                values.append(node.value)
        for value in values:
            found += [(node.lineno, s) for s in _values(value)]
    return found


def test_every_tag_the_source_writes_has_a_meaning():
    written: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "tags.py":
            continue
        for line, tag in _written_tags(ast.parse(path.read_text(), str(path))):
            written.setdefault(tag, []).append(f"{path.relative_to(SRC)}:{line}")
    unknown = {tag: where for tag, where in written.items() if tag not in TAG_MEANINGS}
    assert not unknown, f"tags without a meaning in srcreview.core.tags: {unknown}"
    # the scan sees the tags the checks and the engine write (it is not looking at nothing)
    assert {"model-config-unknown", "runtime-branch", "runner-undecided", "unresolved-call",
            "analysis-error", "unparsable-source", "dynamic-getattr"} <= set(written)


def test_the_outcome_set_is_the_union_of_the_kinds_outcomes():
    kinds = {kind: importlib.import_module(f"srcreview.checks.{module}") for kind, module in KINDS.items()}
    declared = set().union(*(set(m.OUTCOMES) for m in kinds.values()))
    assert declared | {"stale"} == set(get_args(Outcome))
    for kind, module in kinds.items():
        assert set(module.UNDECIDED_OUTCOMES) <= set(module.OUTCOMES), kind


def _result_outcomes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, outcome) of every literal outcome a module gives CheckResult."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "CheckResult":
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "outcome"), None)
            if first is not None:
                found += [(first.lineno, s) for s in _strings(first)]
    return found


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_check_kind_concludes_only_its_own_outcomes(kind):
    module = importlib.import_module(f"srcreview.checks.{KINDS[kind]}")
    path = SRC / "checks" / f"{KINDS[kind]}.py"
    written = _result_outcomes(ast.parse(path.read_text()))
    assert written, kind
    foreign = [(line, outcome) for line, outcome in written if outcome not in (*module.OUTCOMES, "stale")]
    assert not foreign, f"{kind} returns outcomes it does not declare: {foreign}"


@pytest.mark.network
def test_the_real_reviews_carry_only_tags_with_a_meaning(vllm_029):
    seen = set()
    for path in RECIPES:
        review = review_of(vllm_029, path)
        for item in (*review.findings, *review.knobs):
            seen |= set(item.tags)
    assert seen, "the example reviews carry tags (model-config-unknown, runtime-branch)"
    assert seen <= set(TAG_MEANINGS), seen - set(TAG_MEANINGS)
