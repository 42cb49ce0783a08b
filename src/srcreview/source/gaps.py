"""What a source tree cannot show, so that a review of it is never taken for a complete one.

A rule is *stale* when the symbols it starts from do not exist at the revision: vLLM renamed
or removed them, and the rule no longer applies as written (the gate fails on it unless the
user accepts stale rules). That conclusion is sound only when the tree could have shown them.
It could not when

- a module the anchor names is absent altogether (`model_loader.get_model` in a tree without
  any `model_loader` module: a gutted or partial `--source`, not a rename), or
- entries that may hold modules cannot be read (a `*.py` that is a directory or a FIFO, a
  symlink leaving the tree or dangling, a symlinked directory, a submodule): the symbol may
  be there.

Such a rule cannot be evaluated: the review is incomplete (exit 2), never stale and never a
pass. A hidden *directory* makes the review incomplete even when no rule went stale: the
modules under it are missing where Python imports them, and the analysis would resolve imports
into them wrongly (a symlinked `vllm/config` turned a confirmed finding into a refuted one).
So does a cached file found changed since its cache entry was written: what the review read
around it is not what was verified.
"""

from __future__ import annotations

import re

from srcreview.vllm.anchors import PACKAGE

_MODULE = re.compile(r"[a-z_][a-z0-9_]*")  # a module qualifier; classes are CapWords
_IN_MODULE = re.compile(r"(?P<symbol>.+?) \((?P<module>[a-z_]\w*(?:\.[a-z_]\w*)+)\)")  # `Cls.__init__ (vllm.a.b)`
SHOWN = 3  # unreadable entries named in one message


def split_stale(tree, stale: dict[str, set[str]]) -> tuple[dict[str, set[str]], list[str]]:
    """(the rules that are really stale, the reasons the review is incomplete) for the rules
    whose anchors are missing (`stale`: rule id -> missing anchors) on `tree`."""
    gaps = tree.unreadable_entries()
    incomplete = [f"source tree: {path}: {gap.why}" for path, gap in gaps.items() if gap.blocking]
    kept = {}
    for rule, missing in sorted(stale.items()):
        reason = unevaluable(tree, missing, gaps)
        if reason:
            incomplete.append(f"{rule}: {reason}")
        else:
            kept[rule] = missing
    return kept, incomplete


def unevaluable(tree, missing, gaps=None) -> str:
    """Why a rule whose anchors `missing` are absent cannot be evaluated on `tree` (empty when
    the tree could have shown them: the rule is stale)."""
    reasons = []
    absent = absent_modules(tree, missing)
    if absent:
        needing = sorted(a for a in missing if set(_qualifiers(a)) & set(absent))
        reasons.append(f"the tree has no module {', '.join(absent)} (for {', '.join(needing)})")
    gaps = tree.unreadable_entries() if gaps is None else gaps
    if gaps:
        named = "; ".join(f"{path}: {gap.why}" for path, gap in list(gaps.items())[:SHOWN])
        more = f"; and {len(gaps) - SHOWN} more" if len(gaps) > SHOWN else ""
        entries = "1 entry" if len(gaps) == 1 else f"{len(gaps)} entries"
        them = "it" if len(missing) == 1 else "them"
        reasons.append(f"missing {', '.join(sorted(missing))}, and {entries} of the tree that may define "
                       f"{them} cannot be read ({named}{more})")
    return "cannot be evaluated: " + "; ".join(reasons) if reasons else ""


def absent_modules(tree, missing) -> list[str]:
    """The module qualifiers of the missing anchors that no Python file of the tree is, or is in."""
    wanted = sorted({q for anchor in missing for q in _qualifiers(anchor)})
    if not wanted:
        return []
    present: set[str] = set()
    for path in [*tree.files(PACKAGE), *getattr(tree, "symlinks", list)()]:
        if path.endswith(".py"):
            present.update(path[:-3].split("/"))
    return [q for q in wanted if q not in present]


def _qualifiers(anchor: str) -> list[str]:
    named = _IN_MODULE.fullmatch(anchor)  # a symbol and the module it is looked for in
    if named:
        return named["module"].split(".") + _qualifiers(named["symbol"])
    return [part for part in anchor.split(".")[:-1] if _MODULE.fullmatch(part)]
