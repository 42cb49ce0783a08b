"""The vllm-project/recipes registry's model YAML (`models/<org>/<model>.yaml`) as recipes.

The registry's site composes the `vllm serve` command of a model in its JavaScript
(src/lib/command-synthesis.js, `resolveCommand`); this composes it from the same file in the
same order, for one node and the strategy the site recommends there: `model.base_args`, the
variant's `extra_args`, the strategy's tensor parallel size (`variants.<v>.tp`, else
`strategy_overrides.<strategy>.tp`), `strategy_overrides.<strategy>.extra_args`/`vllm_args`,
the hardware-override layers, then every feature that is not opt-in (a feature with `modes`
gives its default mode's args); a flag given twice keeps its last value, as the site's
`dedupeArgs` does. The env is `base_env`, the variant's `extra_env`, then the strategy's and
the hardware layers'.

Each variant is one recipe, `file.yaml#variant`; a hardware-override key the caller names
adds `file.yaml#variant@key` (the layers the site applies for that key: a generation such as
`hopper`, with the brand-wide `nvidia:` block as its fallback, or an exact GPU id). Every word
keeps the line it is written on in the YAML. What the file alone does not settle is said out
loud: a model served by another package (`omni:`, vllm-omni) is an incomplete recipe, a
strategy whose own file (strategies/<name>.yaml) adds arguments is an incomplete recipe, and a
tensor parallel size the site takes from the GPU count is an open row.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from srcreview.core.errors import DataError, UsageError
from srcreview.model.recipe.directives import read_directives
from srcreview.model.recipe.model import EnvVar, OpenItem, Recipe, RuntimePin
from srcreview.model.recipe.shell import Word, commands
from srcreview.model.recipe.yaml_doc import Located

ALL = "all"
TP_STRATEGY = "single_node_tp"  # the site's default strategy: its file adds no argument but the TP size
TP_FLAG = "--tensor-parallel-size"
# the site's hardware generations (taxonomy.yaml `generation:`), and those of the NVIDIA brand, whose
# `nvidia:` blocks are the fallback of a generation without a block of its own
GENERATIONS = frozenset({"ada", "amd", "blackwell", "cpu", "hopper", "npu", "tpu", "xpu", "nvidia"})
NVIDIA_GENERATIONS = frozenset({"ada", "blackwell", "hopper"})
_OTHER_RUNNER = "vllm-omni"


def looks_like_registry(doc: Located | None) -> bool:
    """The registry's required keys: a `model:` mapping (vLLM's own config has `model: NAME`)
    and `variants:`; the reader says what else is missing."""
    if doc is None or not isinstance(doc.value, dict):
        return False
    model = doc.value.get("model")
    return isinstance(model, Located) and isinstance(model.value, dict) and "variants" in doc.value


def override_keys(doc: Located) -> list[str]:
    """Every hardware-override key the file has (recipe, variant, strategy, feature and mode layers)."""
    keys: set[str] = set()

    def add(item: Located | None) -> None:
        if item is not None and isinstance(item.value, dict):
            keys.update(item.value)

    value = doc.value
    add(value.get("hardware_overrides"))
    for container in ("variants", "strategy_overrides", "features"):
        item = value.get(container)
        for entry in (item.value.values() if item is not None and isinstance(item.value, dict) else ()):
            if isinstance(entry.value, dict):
                add(entry.value.get("hardware_overrides"))
                modes = entry.value.get("modes")
                for mode in (modes.value.values() if modes is not None and isinstance(modes.value, dict) else ()):
                    if isinstance(mode.value, dict):
                        add(mode.value.get("hardware_overrides"))
    return sorted(keys)


def read_registry(doc: Located, text: str, shown: str, file: str, hardware_override: str | None = None) -> list[Recipe]:
    """One recipe per variant, and per variant and hardware-override key when one is asked for
    (`all`: every key the file has); a key the file does not have is a usage error."""
    reader = _Registry(doc, shown)
    keys = override_keys(doc)
    wanted: list[str] = []
    if hardware_override == ALL:
        wanted = keys
    elif hardware_override is not None:
        if hardware_override not in keys:
            has = ", ".join(keys) if keys else "none"
            raise UsageError(f"{shown}: no hardware override {hardware_override!r} (the file has: {has}; "
                             f"or {ALL})")
        wanted = [hardware_override]
    directives = read_directives(text, shown)
    recipes = []
    for variant in reader.variants:
        for key in (None, *wanted):
            recipes.append(reader.recipe(variant, key, file, directives))
    return recipes


class _Registry:
    def __init__(self, doc: Located, shown: str):
        self.doc = doc
        self.shown = shown
        self.model = self.mapping(doc.value["model"], "model")
        variants = doc.value["variants"]
        self.variants = self.mapping(variants, "variants")
        if not self.variants:
            raise DataError(f"{shown}:{variants.line}: variants: the registry names at least one variant")
        for name, item in self.variants.items():
            self.mapping(item, f"variants.{name}")
        self.features = self.mapping(doc.value.get("features"), "features")
        self.strategy = self._strategy()
        overrides = self.mapping(doc.value.get("strategy_overrides"), "strategy_overrides")
        self.strategy_override = self.mapping(overrides.get(self.strategy), f"strategy_overrides.{self.strategy}")

    # --- shapes -------------------------------------------------------------------------------

    def mapping(self, item: Located | None, what: str) -> dict[str, Located]:
        if item is None or item.value is None:
            return {}
        if not isinstance(item.value, dict):
            raise DataError(f"{self.shown}:{item.line}: {what} must be a mapping")
        return item.value

    def args(self, item: Located | None, what: str) -> list[Located]:
        """A list of argv words, as the site pushes them (empty values dropped, as `filter(Boolean)`)."""
        if item is None or item.value is None:
            return []
        if not isinstance(item.value, list):
            raise DataError(f"{self.shown}:{item.line}: {what} must be a list of arguments")
        out = []
        for word in item.value:
            if isinstance(word.value, (dict, list)):
                raise DataError(f"{self.shown}:{word.line}: {what}: an argument must be a string or a number")
            if word.value not in (None, "", 0, False):
                out.append(word)
        return out

    def names(self, item: Located | None, what: str) -> list[str]:
        if item is None or item.value is None:
            return []
        if not isinstance(item.value, list) or not all(isinstance(v.value, str) for v in item.value):
            raise DataError(f"{self.shown}:{item.line}: {what} must be a list of names")
        return [v.value for v in item.value]

    def env(self, item: Located | None, what: str) -> list[EnvVar]:
        out = []
        for name, value in self.mapping(item, what).items():
            if isinstance(value.value, (dict, list)) or value.value is None:
                raise DataError(f"{self.shown}:{value.line}: {what}.{name} must be a string or a number")
            out.append(EnvVar(name=name, value=_text(value.value), line=value.key_line or value.line))
        return out

    # --- the site's choices ------------------------------------------------------------------

    def _strategy(self) -> str:
        """`recommendStrategy` for one node: `default_strategy` when offered, else single_node_tp
        when offered, else the first offered (the listed ones, then `strategy_hardware` opt-ins)."""
        listed = self.names(self.doc.value.get("compatible_strategies"), "compatible_strategies")
        gates = self.mapping(self.doc.value.get("strategy_hardware"), "strategy_hardware")
        offered = listed + [name for name, gate in gates.items() if name not in listed and isinstance(gate.value, dict)
                            and any(v.value == "supported" for v in gate.value.values())]
        explicit = self.doc.value.get("default_strategy")
        if explicit is not None and explicit.value in offered:
            return str(explicit.value)
        if TP_STRATEGY in offered or not offered:
            return TP_STRATEGY
        return offered[0]

    def layers(self, owner: dict[str, Located], key: str | None, what: str) -> tuple[dict[str, Located] | None,
                                                                                    dict[str, Located] | None]:
        """(the generation layer, the exact-GPU layer) of `owner`'s hardware_overrides for `key`."""
        if key is None:
            return None, None
        overrides = self.mapping(owner.get("hardware_overrides"), f"{what}.hardware_overrides")
        generation = None
        if key in GENERATIONS:
            found = overrides.get(key) or (overrides.get("nvidia") if key in NVIDIA_GENERATIONS else None)
            generation = self.mapping(found, f"{what}.hardware_overrides.{key}") if found is not None else None
        exact = None
        if key not in GENERATIONS and key in overrides:
            exact = self.mapping(overrides[key], f"{what}.hardware_overrides.{key}")
        return generation, exact

    def keyed(self, item: Located | None, key: str | None) -> Located | None:
        """`hardwareKeyedValue`: a map's entry for the key (a generation, with NVIDIA's brand
        block as its fallback), else its `default`; a scalar is itself."""
        if item is None or not isinstance(item.value, dict):
            return item
        order = [key] if key is not None else []
        if key in NVIDIA_GENERATIONS:
            order.append("nvidia")
        for name in (*order, "default"):
            if name in item.value:
                return item.value[name]
        return None

    def default_features(self, variant: dict[str, Located], key: str | None) -> list[str]:
        """All features but the opt-in ones (and those opt-in on this GPU), plus those the
        variant turns on by naming a default mode, in the file's order."""
        opt_in = set(self.names(self.doc.value.get("opt_in_features"), "opt_in_features"))
        per_gpu = self.mapping(self.doc.value.get("hardware_opt_in_features"), "hardware_opt_in_features")
        if key is not None and key in per_gpu:
            opt_in |= set(self.names(per_gpu[key], f"hardware_opt_in_features.{key}"))
        forced = set(self.mapping(variant.get("default_modes"), "default_modes"))
        return [name for name in self.features if name in forced or name not in opt_in]

    # --- composition -------------------------------------------------------------------------

    def recipe(self, name: str, key: str | None, file: str, directives) -> Recipe:
        from srcreview.model.recipe.command_line import recipe_from_words

        variant = self.mapping(self.variants[name], f"variants.{name}")
        model_item = variant.get("model_id") or self.model.get("model_id")
        if model_item is None:
            raise DataError(f"{self.shown}:{self.doc.value['model'].line}: model: the registry names the model_id")
        if not isinstance(model_item.value, str) or not model_item.value:
            raise DataError(f"{self.shown}:{model_item.line}: model_id must be a model name")
        open_items: list[OpenItem] = []
        other = self._other_runner()
        words: list[Located] = []
        if other is not None:
            open_items.append(OpenItem(what=other[0], line=other[1], incomplete=True, reason=other[2]))
        else:
            words = self.words(name, variant, key, open_items)
        env = self.environment(variant, key)
        path = f"{file}#{name}" + (f"@{key}" if key is not None else "")
        argv = [Word(model_item.value, model_item.line, model_item.column, quoted=True)]
        argv += _as_printed(_dedupe(words), self.shown)
        recipe = recipe_from_words(argv, path=path, file=file, name=PurePosixPath(file).stem + f"#{name}"
                                   + (f"@{key}" if key is not None else ""), env=env, runtime=RuntimePin(),
                                   pin_line=None, directives=directives, fmt="recipes-registry", shown=self.shown,
                                   variables={}, where="the registry file")
        update: dict = {"open": tuple(open_items) + recipe.open}
        if key is not None:  # the override names the hardware: the runtime profile must not assume the default's
            label = f"NVIDIA {key}" if key in NVIDIA_GENERATIONS or key == "nvidia" else key
            update["hardware"] = recipe.hardware.model_copy(update={
                "gpu": label, "gpu_from": f"the registry file's hardware override {key!r}"})
        return recipe.model_copy(update=update)

    def _other_runner(self) -> tuple[str, int, str] | None:
        """(what, line, why) when the file serves the model with another package (vllm-omni)."""
        omni = self.doc.value.get("omni")
        if omni is not None:
            return ("omni", omni.key_line or omni.line,
                    f"the registry serves this model with {_OTHER_RUNNER} (`vllm serve --omni`), another package's "
                    "server: its arguments are not vLLM's engine arguments, and srcreview does not review them")
        install = self.model.get("install")
        for line, text in _strings(install):
            if _OTHER_RUNNER in text:
                return ("model.install", line, f"the registry installs {_OTHER_RUNNER} for this model: "
                        "it is served by another package, which srcreview does not review")
        return None

    def words(self, name: str, variant: dict[str, Located], key: str | None,
              open_items: list[OpenItem]) -> list[Located]:
        """The argv after the model, in the site's order, before the last-wins dedupe."""
        where = f"variants.{name}"
        so = self.strategy_override
        so_what = f"strategy_overrides.{self.strategy}"
        words = self.args(self.model.get("base_args"), "model.base_args")
        # 2. the variant, and its exact-GPU block
        words += self.args(variant.get("extra_args"), f"{where}.extra_args")
        _, variant_exact = self.layers(variant, key, where)
        if variant_exact:
            words += self.args(variant_exact.get("extra_args"), f"{where}.hardware_overrides.{key}.extra_args")
        # 3. the strategy's arguments and parallel size
        if self.strategy != TP_STRATEGY:
            named = self.doc.value.get("default_strategy") or self.doc.value.get("compatible_strategies")
            line = named.key_line or named.line if named is not None else 1
            open_items.append(OpenItem(what=f"strategy {self.strategy}", line=line, incomplete=True,
                                       reason=f"the site adds the arguments of strategies/{self.strategy}.yaml and "
                                       "the parallel size of the GPU count, which this file does not state"))
        else:
            tp = self.keyed(variant.get("tp"), key)
            if tp is None or not _positive(tp.value):
                tp = self.keyed(so.get("tp"), key)
            if tp is not None and _positive(tp.value):
                words += [Located(TP_FLAG, tp.key_line or tp.line, tp.key_column or tp.column, tp.line),
                          Located(str(tp.value), tp.line, tp.column, tp.line)]
            else:
                line = variant.get("vram_minimum_gb") or self.variants[name]
                open_items.append(OpenItem(what=TP_FLAG, line=line.key_line or line.line, reason=(
                    "the site sets the tensor parallel size from the hardware picked: 1 when "
                    "vram_minimum_gb fits one GPU, else the GPU count; this file does not state it")))
        # 4. the recipe's strategy overrides
        words += self.args(so.get("extra_args"), f"{so_what}.extra_args")
        words += self.args(so.get("vllm_args"), f"{so_what}.vllm_args")
        # 5. hardware: a strategy generation block replaces the recipe's and the variant's
        strategy_gen, strategy_exact = self.layers(so, key, so_what)
        if strategy_gen is not None:
            words += self.args(strategy_gen.get("extra_args"), f"{so_what}.hardware_overrides.{key}.extra_args")
        else:
            recipe_gen, _ = self.layers(self.doc.value, key, "")
            if recipe_gen:
                words += self.args(recipe_gen.get("extra_args"), f"hardware_overrides.{key}.extra_args")
            variant_gen, _ = self.layers(variant, key, where)
            if variant_gen:
                words += self.args(variant_gen.get("extra_args"), f"{where}.hardware_overrides.{key}.extra_args")
        if strategy_exact:
            words += self.args(strategy_exact.get("extra_args"), f"{so_what}.hardware_overrides.{key}.extra_args")
        # 7. features last
        for feature in self.default_features(variant, key):
            words += self.feature_args(feature, name, variant, key)
        return words

    def feature_args(self, feature: str, name: str, variant: dict[str, Located], key: str | None) -> list[Located]:
        what = f"features.{feature}"
        spec = self.mapping(self.features[feature], what)
        allowed = self.names(spec.get("strategies"), f"{what}.strategies")
        if allowed and self.strategy not in allowed:
            return []
        modes = self.mapping(spec.get("modes"), f"{what}.modes")
        if modes:
            mode_key = self.mode(feature, spec, modes, name, variant, key)
            if mode_key is None:
                return []
            mode = self.mapping(modes[mode_key], f"{what}.modes.{mode_key}")
            override = self.keyed(mode.get("hardware_overrides"), key)
            chosen = self.mapping(override, f"{what}.modes.{mode_key}.hardware_overrides") if override else {}
            args = chosen.get("args") or mode.get("args")
            return self.args(args, f"{what}.modes.{mode_key}.args")
        generation, _ = self.layers(spec, key, what)
        args = (generation or {}).get("args") or spec.get("args")
        return self.args(args, f"{what}.args")

    def mode(self, feature: str, spec: dict[str, Located], modes: dict[str, Located], name: str,
             variant: dict[str, Located], key: str | None) -> str | None:
        """`resolveModeKey` without a user's pick: the variant's default mode, the feature's, else
        the first mode allowed on this variant and hardware."""
        allowed = []
        for mode_key, item in modes.items():
            mode = self.mapping(item, f"features.{feature}.modes.{mode_key}")
            only = self.names(mode.get("variants"), f"features.{feature}.modes.{mode_key}.variants")
            gates = self.mapping(mode.get("hardware"), f"features.{feature}.modes.{mode_key}.hardware")
            if (not only or name in only) and (key is None or getattr(gates.get(key), "value", None) != "unsupported"):
                allowed.append(mode_key)
        preferred = self.mapping(variant.get("default_modes"), "default_modes").get(feature)
        for candidate in (preferred, spec.get("default_mode")):
            if candidate is not None and candidate.value in allowed:
                return str(candidate.value)
        return allowed[0] if allowed else None

    def environment(self, variant: dict[str, Located], key: str | None) -> list[EnvVar]:
        """`buildEnv`: later layers replace a variable an earlier one set."""
        so = self.strategy_override
        so_what = f"strategy_overrides.{self.strategy}"
        env = self.env(self.model.get("base_env"), "model.base_env")
        env += self.env(variant.get("extra_env"), "extra_env")
        generation, exact = self.layers(variant, key, "variant")
        if exact:
            env += self.env(exact.get("extra_env"), "extra_env")
        env += self.env(so.get("env"), f"{so_what}.env")
        env += self.env(so.get("extra_env"), f"{so_what}.extra_env")
        strategy_gen, strategy_exact = self.layers(so, key, so_what)
        if strategy_gen is not None:
            env += self.env(strategy_gen.get("extra_env"), "extra_env")
        else:
            recipe_gen, _ = self.layers(self.doc.value, key, "")
            if recipe_gen:
                env += self.env(recipe_gen.get("extra_env"), "extra_env")
            if generation:
                env += self.env(generation.get("extra_env"), "extra_env")
        if strategy_exact:
            env += self.env(strategy_exact.get("extra_env"), "extra_env")
        last: dict[str, EnvVar] = {}
        for item in env:
            last.pop(item.name, None)
            last[item.name] = item
        return list(last.values())


def _dedupe(words: list[Located]) -> list[Located]:
    """`dedupeArgs`: `--flag value` pairs (a value: the next word not starting with `-`), the
    last of each flag kept in its place; positional words all kept."""
    units: list[tuple[str | None, list[Located]]] = []
    i = 0
    while i < len(words):
        text = _text(words[i].value)
        if text.startswith("-"):
            following = _text(words[i + 1].value) if i + 1 < len(words) else None
            if following is not None and not (isinstance(words[i + 1].value, str) and following.startswith("-")):
                units.append((text, [words[i], words[i + 1]]))
                i += 2
                continue
            units.append((text, [words[i]]))
        else:
            units.append((None, [words[i]]))
        i += 1
    seen: set[str] = set()
    kept: list[list[Located]] = []
    for flag, unit in reversed(units):
        if flag is None or flag not in seen:
            if flag is not None:
                seen.add(flag)
            kept.append(unit)
    return [word for unit in reversed(kept) for word in unit]


def _as_printed(words: list[Located], shown: str) -> list[Word]:
    """The words of the command the site prints (`resolveCommand`'s lines): a flag's value (the
    next word not starting with `-`) shell-quoted, every other item as written, so the shell
    splits it: `"--max-model-len auto"` is two words, as the command people copy gives them."""
    out: list[Word] = []
    i = 0
    while i < len(words):
        word, text = words[i], _text(words[i].value)
        out += _shell_words(word, text, shown)
        following = words[i + 1] if i + 1 < len(words) else None
        if text.startswith("-") and following is not None and not _text(following.value).startswith("-"):
            out.append(Word(_text(following.value), following.line, following.column + _quote(following), quoted=True))
            i += 2
        else:
            i += 1
    return out


_SHELL_TEXT = frozenset(" \t\n$'\"\\`")  # what the shell reads in an unquoted word: splits, expansions, quotes


def _shell_words(word: Located, text: str, shown: str) -> list[Word]:
    """An item the site prints unquoted, as the shell reads it (one word when it holds nothing
    the shell acts on, or when it is not one simple command's words)."""
    column = word.column + _quote(word)
    if not _SHELL_TEXT.intersection(text):
        return [Word(text, word.line, column, quoted=True)]
    try:
        parsed = commands(text, shown, word.line, column)
    except DataError:
        parsed = []
    return parsed[0] if len(parsed) == 1 and parsed[0] else [Word(text, word.line, column, quoted=True)]


def _text(value: Any) -> str:
    """A YAML scalar as the site's JavaScript turns it into text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _quote(word: Located) -> int:
    """1 when the YAML scalar is quoted: its text starts one column after the quote."""
    return 1 if getattr(word.node, "style", None) in ("'", '"') else 0


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _strings(item: Located | None):
    if item is None:
        return
    if isinstance(item.value, str):
        yield item.line, item.value
    elif isinstance(item.value, dict):
        for value in item.value.values():
            yield from _strings(value)
    elif isinstance(item.value, list):
        for value in item.value:
            yield from _strings(value)
