"""A small path-splitting evaluator for gate functions (capability-gate's second opinion).

It runs a function's statement IR with its arguments bound, splitting at every branch it
cannot decide, and knows what a recipe says about the platform: `current_platform.is_cuda()`
for an NVIDIA GPU, `has_device_capability`, `is_device_capability`,
`is_device_capability_family`. Everything else it cannot compute is undecided, and `and` /
`or` are three-valued, so a result is decided only if it holds for every unknown value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from srcreview.checks._ir import UNDECIDED, call_name, dotted

MAX_PATHS = 512
_OTHER_PLATFORMS = ("is_rocm", "is_xpu", "is_cpu", "is_tpu", "is_out_of_tree", "is_neuron", "is_hpu")


@dataclass
class Path_:
    env: dict[str, Any]
    certain: bool = True  # no undecided branch was taken on this path
    decisions: list[tuple[int, str, Any]] = field(default_factory=list)  # (line, test text, value)


@dataclass(frozen=True)
class Terminal:
    kind: str  # "return" | "raise" | "end"
    value: Any
    line: int
    end_line: int
    certain: bool
    decisions: tuple[tuple[int, str, Any], ...]


class GateEvaluator:
    def __init__(self, capability: tuple[int, int] | None, platform: str | None):
        self.capability = capability
        self.platform = platform  # "cuda" or None (unknown)
        self.paths = 0

    # -- expressions ---------------------------------------------------------------------------
    def value(self, expr, env) -> Any:
        kind = expr[0]
        if kind == "const":
            return expr[3]
        if kind in ("name", "attr"):
            name = dotted(expr)
            if name is not None and name in env:
                return env[name]
            return UNDECIDED
        if kind in ("tuple", "list", "set"):
            items = [self.value(e, env) for e in expr[3]]
            return UNDECIDED if any(i is UNDECIDED for i in items) else tuple(items)
        if kind == "not":
            v = self.value(expr[3], env)
            return UNDECIDED if v is UNDECIDED else (not v)
        if kind == "boolop":
            values = [self.value(v, env) for v in expr[4]]
            if expr[3] == "and":
                if any(v is not UNDECIDED and not v for v in values):
                    return False
                return UNDECIDED if any(v is UNDECIDED for v in values) else values[-1]
            if any(v is not UNDECIDED and v for v in values):
                return next(v for v in values if v is not UNDECIDED and v)
            return UNDECIDED if any(v is UNDECIDED for v in values) else values[-1]
        if kind == "compare" and len(expr[4]) == 1:
            left, right = self.value(expr[3], env), self.value(expr[5][0], env)
            if left is UNDECIDED or right is UNDECIDED:
                return UNDECIDED
            try:
                return {"==": lambda: left == right, "!=": lambda: left != right, "is": lambda: left is right,
                        "is not": lambda: left is not right, "in": lambda: left in right,
                        "not in": lambda: left not in right, "<": lambda: left < right,
                        "<=": lambda: left <= right, ">": lambda: left > right, ">=": lambda: left >= right}[expr[4][0]]()
            except (KeyError, TypeError):
                return UNDECIDED
        if kind == "call":
            return self.call(expr, env)
        return UNDECIDED

    def call(self, expr, env) -> Any:
        func = expr[3]
        name = call_name(expr) or ""
        method = name.rsplit(".", 1)[-1]
        receiver = name.rsplit(".", 1)[0] if "." in name else ""
        args = [self.value(a, env) for a in expr[4]]
        if receiver.endswith("platform"):
            return self.platform_call(method, args)
        if func[0] == "attr" and method in ("startswith", "endswith") and len(args) == 1:
            target = self.value(func[3], env)
            if isinstance(target, str) and isinstance(args[0], (str, tuple)):
                return getattr(target, method)(args[0])
        return UNDECIDED

    def platform_call(self, method: str, args) -> Any:
        if method == "is_cuda" or method == "is_cuda_alike":
            return True if self.platform == "cuda" else UNDECIDED
        if method in _OTHER_PLATFORMS:
            return False if self.platform == "cuda" else UNDECIDED
        cap = self.capability
        if cap is None or len(args) < 1 or args[0] is UNDECIDED:
            return UNDECIDED
        as_int = cap[0] * 10 + cap[1]
        wanted = args[0]
        if method == "has_device_capability":
            return cap >= tuple(wanted) if isinstance(wanted, tuple) else as_int >= wanted
        if method == "is_device_capability":
            return cap == tuple(wanted) if isinstance(wanted, tuple) else as_int == wanted
        if method == "is_device_capability_family" and isinstance(wanted, int):
            return as_int // 10 == wanted // 10
        return UNDECIDED

    # -- statements ----------------------------------------------------------------------------
    def run(self, body, env: dict) -> list[Terminal]:
        return self._block(list(body), Path_(dict(env)))

    def _block(self, stmts, path: Path_) -> list[Terminal]:
        if not stmts:
            return [Terminal("end", None, 0, 0, path.certain, tuple(path.decisions))]
        self.paths += 1
        if self.paths > MAX_PATHS:
            return [Terminal("end", UNDECIDED, 0, 0, False, tuple(path.decisions))]
        stmt, rest = stmts[0], stmts[1:]
        kind = stmt[0]
        if kind == "return":
            value = self.value(stmt[3], path.env) if stmt[3] is not None else None
            return [Terminal("return", value, stmt[1], stmt[2], path.certain, tuple(path.decisions))]
        if kind == "raise":
            return [Terminal("raise", None, stmt[1], stmt[2], path.certain, tuple(path.decisions))]
        if kind == "assign":
            value = self.value(stmt[4], path.env)
            for target in stmt[3]:
                name = dotted(target)
                if name:
                    path.env[name] = value
            return self._block(rest, path)
        if kind == "if":
            test = self.value(stmt[3], path.env)
            out = []
            sides = [(True, stmt[4]), (False, stmt[5])] if test is UNDECIDED else [(bool(test), stmt[4] if test else stmt[5])]
            for truth, side in sides:
                branch = Path_(dict(path.env), path.certain and test is not UNDECIDED,
                               path.decisions + [(stmt[1], stmt[6], test)])
                for term in self._block(list(side), branch):
                    if term.kind == "end":
                        cont = Path_(dict(branch.env), term.certain, list(term.decisions))
                        out += self._block(rest, cont)
                    else:
                        out.append(term)
            return out
        if kind in ("with", "try"):
            inner = stmt[4] if kind == "with" else stmt[3]
            return self._block(list(inner) + rest, path)
        if kind in ("for", "while"):
            # the body may run or not: both, and a return/raise in it is only possible
            inner = stmt[5] if kind == "for" else stmt[4]
            out = self._block(rest, Path_(dict(path.env), path.certain, list(path.decisions)))
            for term in self._block(list(inner), Path_(dict(path.env), False, list(path.decisions))):
                if term.kind != "end":
                    out.append(term)
            return out
        return self._block(rest, path)


def platform_of(recipe) -> str | None:
    """`cuda` when the recipe names an NVIDIA GPU; unknown otherwise."""
    gpu = (recipe.hardware.gpu or "").lower()
    if any(word in gpu for word in ("nvidia", "geforce", "rtx", "tesla")):
        return "cuda"
    return None


def bind_args(fn_facts, args: dict) -> dict:
    """Parameters bound from `args`, and `self.p` for every parameter `p` stored on self as is."""
    env = {}
    names = {p.name for p in fn_facts.params}
    for name, value in args.items():
        if name in names:
            env[name] = value
    return env
