"""vLLM's names live in one place: no module of src/srcreview outside srcreview/vllm/ writes one
as a literal; it imports it from srcreview.vllm.anchors (the rules/ TOML files are data and name
what they check themselves).

Every string constant of every module is read with `ast` (f-string parts included); docstrings
are prose and are skipped. A literal is a vLLM name when it is
- one of the names srcreview.vllm.anchors defines (the values of its constants, inside their
  tuples and dicts too), or a dotted path starting with one (`speculative_config.model`),
  except the plain lowercase words listed under ORDINARY_WORDS;
- or it matches a shape only vLLM's names have here: a module or file path under the package
  (`vllm.config`, `vllm/`), an environment variable (`VLLM_USE_V2_MODEL_RUNNER`), a CamelCase
  class named like vLLM's config, argument, runner, backend, platform or speculator classes
  (`SpeculativeConfig`, `EngineArgs.add_cli_args`), a backend enum member (`TRITON_ATTN`).
The whole literal must be the name: a message that mentions one in prose has spaces and is not
counted (it shows a name to the reader, the code does not rely on it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from srcreview.vllm import anchors

PACKAGE = Path(__file__).resolve().parent.parent.parent / "src" / "srcreview"
OWN = ("vllm",)  # the package where vLLM's names belong

SHAPES = {
    "a module or file of the vllm package": re.compile(r"vllm[./][\w./]*"),
    "a vLLM environment variable": re.compile(r"VLLM_[A-Z0-9_]+"),
    "a vLLM class": re.compile(r"[A-Z][A-Za-z0-9]*(Config|Args|Runner|Backend|Platform|Speculator|Proposer)(\.\w*)*"),
    "an attention backend enum member": re.compile(r"[A-Z][A-Z0-9_]*(ATTN|ATTENTION|MLA|FLASHINFER)[A-Z0-9_]*"),
}
# Exclusions, each with its reason:
# plain lowercase words among the anchors' values are srcreview's own vocabulary too (a record's
# `model`, `method`, `dtype`, `host`, `port` fields, the runner labels `v1`/`v2`, the platform
# word `cpu`): an equal literal proves nothing. The package name and the GPU platforms' names
# name nothing but vLLM's things and stay counted.
ORDINARY_WORD = re.compile(r"[a-z]+[0-9]*")
VLLM_ONLY_WORDS = {anchors.PACKAGE, anchors.CUDA, "rocm", "xpu", "tpu"}
# srcreview's own files named after vLLM, which match the module shape: the git mirror's cache
# directory and the pins file (data/pins/vllm.toml)
OWN_FILE_NAMES = {"vllm.git", "vllm.toml"}
# a literal that equals an anchor but names srcreview's own thing: (module, literal) -> why
OWN_NAMES = {
    ("cli/commands/_common.py", "model_config"): "the argparse dest of srcreview's --model-config option",
    ("model/recipe/recipes_registry.py", "tpu"): "a hardware generation key of the recipes site's files",
    ("model/recipe/recipes_registry.py", "xpu"): "a hardware generation key of the recipes site's files",
}


def _values(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.items():
            yield from _values(item)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _values(item)


def anchor_names() -> frozenset[str]:
    """The values of every constant srcreview.vllm.anchors defines, but ordinary words."""
    found = {v for name, value in vars(anchors).items() if name.isupper() for v in _values(value)}
    return frozenset(v for v in found if v and (v in VLLM_ONLY_WORDS or not ORDINARY_WORD.fullmatch(v)))


NAMES = anchor_names()


def why_vllm(literal: str, names=NAMES) -> str | None:
    """Why a literal is a vLLM name (None: it is not one). A literal with whitespace is prose."""
    if literal in OWN_FILE_NAMES or not literal or any(c.isspace() for c in literal):
        return None
    if literal in names:
        return "an anchor"
    if "." in literal and literal.split(".", 1)[0] in names:
        return "a path under an anchor"
    for shape, pattern in SHAPES.items():
        if pattern.fullmatch(literal):
            return shape
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def literals(source: str):
    """(line, text) of every string constant of a module but its docstrings."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def vllm_literals(root: Path = PACKAGE, names=NAMES) -> list[tuple[str, int, str, str]]:
    """(module path, line, literal, why) of every vLLM name written outside srcreview/vllm/."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in OWN:
            continue
        for line, text in literals(path.read_text(encoding="utf-8")):
            why = why_vllm(text, names)
            if why is not None and (relative.as_posix(), text) not in OWN_NAMES:
                found.append((relative.as_posix(), line, text, why))
    return sorted(found)


def test_no_vllm_name_is_written_outside_the_vllm_package():
    found = vllm_literals()
    shown = "\n".join(f"  {path}:{line}: {text!r} ({why})" for path, line, text, why in found)
    assert found == [], (f"{len({t for _, _, t, _ in found})} vLLM names, {len(found)} uses outside srcreview/vllm/ "
                         f"(import them from srcreview.vllm.anchors):\n{shown}")


def test_the_scanner_sees_each_shape_and_skips_prose(tmp_path):
    """The scan can fail: a module writing vLLM's names is caught, its docstring and messages are not."""
    module = tmp_path / "checks" / "example.py"
    module.parent.mkdir()
    module.write_text('"""Reads VllmConfig."""\n'
                      'ROOT = "VllmConfig"\n'
                      'KEY = f"speculative_config.{1}"\n'
                      'PATH = ("vllm/config/speculative.py", "vllm.platforms.cuda")\n'
                      'ENV = "VLLM_USE_V2_MODEL_RUNNER"\n'
                      'ENUM = "TRITON_ATTN"\n'
                      'CLASS = "EagleProposer.propose"\n'
                      'def f():\n    """EngineArgs."""\n'
                      '    return "the VllmConfig is built", "VllmConfig.x is absent", "model", "vllm.toml"\n',
                      encoding="utf-8")
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "own.py").write_text('ROOT = "VllmConfig"\n', encoding="utf-8")
    found = [(line, text) for _, line, text, _ in vllm_literals(tmp_path)]
    assert found == [(2, "VllmConfig"), (3, "speculative_config."), (4, "vllm.platforms.cuda"),
                     (4, "vllm/config/speculative.py"), (5, "VLLM_USE_V2_MODEL_RUNNER"), (6, "TRITON_ATTN"),
                     (7, "EagleProposer.propose")]


def test_the_anchors_count_as_vllm_names():
    """An anchor is counted by its own value, inside tuples too (the ordinary words aside), so
    none can be written out again unnoticed."""
    assert {anchors.ROOT_CONFIG, anchors.ENGINE_PARSER, anchors.SPECULATIVE, anchors.PACKAGE_DIR,
            anchors.MODEL_LOADER, anchors.CUDA, *anchors.DRAFT_KEYS} <= NAMES
    assert "model" not in NAMES and "v1" not in NAMES


def test_every_exclusion_is_still_needed():
    """An exclusion whose literal is gone is removed, so none hides a name later."""
    written = {(path.relative_to(PACKAGE).as_posix(), text) for path in PACKAGE.rglob("*.py")
               if path.relative_to(PACKAGE).parts[0] not in OWN
               for _, text in literals(path.read_text(encoding="utf-8"))}
    assert set(OWN_NAMES) <= written
    assert OWN_FILE_NAMES <= {text for _, text in written}
    assert all(why_vllm(text, NAMES | OWN_FILE_NAMES) for _, text in OWN_NAMES)
