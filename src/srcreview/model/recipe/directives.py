"""`# srcreview: gpu="NVIDIA GeForce RTX 5090" compute_capability=12.0`: what a launch file cannot say.

A `vllm serve` line, a vLLM config or a compose service names no GPU, and a script names no
vLLM release. One comment line anywhere in the file (any format that has `#` comments) gives
them: `gpu`, `compute_capability`, `name`, `version`, `revision`, as shell-quoted
`key=value` words. Unknown keys are refused, so a typo is not silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from srcreview.core.errors import DataError
from srcreview.core.records import RecordError
from srcreview.model.recipe.model import Hardware, RuntimePin

KEYS = ("name", "gpu", "compute_capability", "version", "revision")
_DIRECTIVE = re.compile(r"^\s*#\s*srcreview:(?P<body>.*)$")


@dataclass
class Directives:
    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str | None:
        return self.values.get("name")

    @property
    def pin_line(self) -> int | None:
        return self.lines.get("revision") or self.lines.get("version")

    def hardware(self, shown: str, base: dict | None = None) -> Hardware:
        data = {**(base or {}), **{k: self.values[k] for k in ("gpu", "compute_capability") if k in self.values}}
        try:
            return Hardware.model_validate(data)
        except RecordError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0]) if err["loc"] else "hardware"
            raise DataError(f"{shown}:{self.lines.get(key, 1)}: srcreview {key}: "
                            f"{err['msg'].removeprefix('Value error, ')}") from None

    def runtime(self, runtime: RuntimePin, shown: str = "") -> RuntimePin:
        update = {k: self.values[k] for k in ("version", "revision") if k in self.values}
        if not update:
            return runtime
        try:
            return RuntimePin.model_validate({**runtime.model_dump(), **update})
        except RecordError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0])
            raise DataError(f"{shown}:{self.lines.get(key, 1)}: srcreview {key}: "
                            f"{err['msg'].removeprefix('Value error, ')}") from None


def read_directives(text: str, shown: str) -> Directives:
    from srcreview.model.recipe.shell import commands

    found = Directives()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _DIRECTIVE.match(line)
        if not match:
            continue
        for words in commands(match["body"], shown, number):
            for word in words:
                key, eq, value = word.text.partition("=")
                if not eq or key not in KEYS:
                    raise DataError(f"{shown}:{number}: srcreview comment: {word.text[:40]!r} is not one of "
                                    + ", ".join(f"{k}=…" for k in KEYS))
                if key in found.values:
                    raise DataError(f"{shown}:{number}: srcreview comment: {key} is given twice")
                found.values[key] = value
                found.lines[key] = number
    return found
