"""Environment variables as knobs: what the pinned release makes of each `VLLM_*` the recipe sets.

vLLM reads its environment through one table, `vllm/envs.py`'s `environment_variables`: name
-> a function that parses the process's value (`lambda: maybe_convert_bool(os.getenv(...))`,
or `env_with_choices(name, default, choices)`, which refuses a value outside its choices). A
variable that table does not name is read by nothing; vLLM only warns ("Unknown vLLM environment
variable detected"). Each row is decided by evaluating that revision's own entry with the
interpreter under the recipe's value: never from a list kept here.
"""

from __future__ import annotations

import re

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.index import ir
from srcreview.interp.values import Const as _Const
from srcreview.model.findings import Knob
from srcreview.vllm.runtime import ENV_TABLE

ENVS_MODULE = "vllm.envs"
PREFIX = "VLLM_"  # the variables vLLM owns; others (CUDA_VISIBLE_DEVICES, HF_HOME) are not its knobs
UNKNOWN_WARNING = b"Unknown vLLM environment variable detected"


def env_knobs(index, recipe, bindings: dict) -> list[Knob]:
    """One row per `VLLM_*` variable the recipe sets, anchored on its envs.py entry."""
    names = [e for e in recipe.env if e.name.startswith(PREFIX)]
    if not names:
        return []
    try:
        module = index.module(ENVS_MODULE)
    except (DataError, SourceUnavailable):
        module = None
    table = module.constants.get(ENV_TABLE) if module is not None else None
    if table is None or not isinstance(table.expr, ir.Dict):
        return [Knob(key=f"env.{e.name}", value=e.value, recipe_line=e.line, status="undecided",
                     note=f"{ENVS_MODULE} has no {ENV_TABLE} table at this revision: what reads the variable "
                          "is not known") for e in names]
    entries = {k.value: v for k, v in zip(table.expr.keys, table.expr.values, strict=True)
               if isinstance(k, ir.Constant) and isinstance(k.value, str)}
    from srcreview.interp.interpreter import analyzer

    an = analyzer(index, bindings)
    return [_row(index, an, module, table, entries.get(e.name), e) for e in names]


def _row(index, an, module, table, entry, env) -> Knob:
    key = f"env.{env.name}"
    if entry is None:
        elsewhere = [path for path in index.grep(env.name) if path != module.path]
        if elsewhere:  # read around the table (os.environ["VLLM_X"]): not modelled, so not unknown
            return Knob(key=key, value=env.value, recipe_line=env.line, status="undecided",
                        note=f"{module.path} does not define {env.name}, but {', '.join(elsewhere[:3])} "
                             f"{'names' if len(elsewhere) == 1 else 'name'} it: what reads it is not modelled")
        evidence = [index.anchor(module.path, table.start_line, table.start_line, ENV_TABLE,
                                 f"declares: the variables vLLM reads at this revision; {env.name} is not one")]
        line = _warning_line(index, module.path)
        if line is not None:
            evidence.append(index.anchor(module.path, line, line, "", "inspected: vLLM warns of a VLLM_ variable "
                                                                      "it does not define"))
        return Knob(key=key, value=env.value, recipe_line=env.line, status="unknown-knob", evidence=tuple(evidence),
                    note=f"{module.path} at this revision does not define {env.name}, and no other file of the "
                         "package names it: nothing reads it")
    reads = index.anchor(module.path, entry.line, entry.end_line, env.name,
                         f"reads: the {ENV_TABLE} entry that parses {env.name}")
    value, raises, parser = _parse(index, an, module, entry)
    evidence = (reads,) + ((parser,) if parser is not None else ())
    if raises == "always":
        return Knob(key=key, value=env.value, recipe_line=env.line, status="invalid-value", evidence=evidence,
                    note=f"{env.name}={env.value!r}: the parser refuses it at this revision")
    if isinstance(value, _Const) and not raises:
        return Knob(key=key, value=env.value, recipe_line=env.line, status="accepted", evidence=evidence,
                    note=f"read by {module.path}: parsed as {value.value!r}")
    why = (_decided_elsewhere(env.value) or raises or getattr(value, "reason", "")
           or "its parser's result is not decided")
    return Knob(key=key, value=env.value, recipe_line=env.line, status="undecided", evidence=evidence,
                note=f"read by {module.path}; the parsed value is undecided: {why}")


_EXPANSION = re.compile(r"\$(?:\{(\w+)(?::?-([^}]*))?\}|(\w+)|\()")


def _decided_elsewhere(value: str) -> str:
    """Why a value holding `${V:-1}`, `$V` or `$(cmd)` is not the recipe's to decide (compose and
    the shell substitute it where the recipe runs), with the default it names; "" otherwise."""
    found = _EXPANSION.search(value)
    if found is None:
        return ""
    name, default = found.group(1) or found.group(3), found.group(2)
    what = f"{found.group(0)}...)" if name is None else found.group(0)
    note = f"; it is {default!r} when {name} is unset" if name and default is not None else ""
    return f"{what} is substituted where the recipe runs (by the shell, or by compose from its environment){note}"


def _parse(index, an, module, entry):
    """(value, raises, parser anchor) of an entry under the recipe's value: a lambda's body, or
    the function a factory call returns (`env_with_choices(...)`), walked for its returns and
    raises. `raises` is "always" when every path raises, a reason when a raise may be reached."""
    from srcreview.interp.interpreter import Frame
    from srcreview.interp.values import FuncRef

    if isinstance(entry, ir.Lambda):
        return an.env_attribute(module, entry.body), "", None
    made = an.force(an.evaluate(module, entry))
    if not isinstance(made, FuncRef):
        return made, "", None
    symbol = index.resolve(made.qualname)
    if symbol is None or symbol.kind != "function":
        return made, "", None
    info = index.function_at(symbol)
    frame = Frame(an, info.module, info.facts, symbol, None, dict(made.closure)).run()
    parser = index.anchor(symbol.path, symbol.start_line, symbol.end_line, symbol.qualname,
                          "inspected: the function the entry calls, walked under the recipe's value")
    if frame.raises and not frame.returns:
        return None, "always", parser
    values = [an.force(r.value) for r in frame.returns]
    value = values[0] if values and all(isinstance(v, _Const) and v == values[0] for v in values) else None
    raises = ""
    if frame.raises:
        conditions = [c.text for r in frame.raises for c in r.conditions]
        raises = "it raises when " + "; ".join(dict.fromkeys(conditions)) if conditions else "it may raise"
    return value, raises, parser


def _warning_line(index, path: str) -> int | None:
    for number, line in enumerate(index._raw_text(path).splitlines(), 1):
        if UNKNOWN_WARNING in line:
            return number
    return None

