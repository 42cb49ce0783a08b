"""`vllm serve --config x.yaml`: the YAML's keys are engine arguments of the command.

vLLM's parser (`FlexibleArgumentParser._pull_args_from_config` at 0.29.0 and 0.33.0) loads
the file named by the word after `--config` and inserts its keys as flags right after the
model, before the rest of the command line, so a flag on the command line wins over the file
and the file over the defaults. srcreview does the same: the file's flags come first (the
flag mapping keeps the last occurrence), each anchored on the recipe line that names the file
and carrying the file's own line (`RawFlag.origin`). A file that cannot be read, or that
leaves the recipe's directory tree, is an open question (OpenItem), never a silent pass.
"""

from __future__ import annotations

from srcreview.core.errors import DataError
from srcreview.model.recipe.model import OpenItem, Recipe
from srcreview.model.recipe.named_files import FileAccess, read_named
from srcreview.model.recipe.shell_values import UnknownValue
from srcreview.vllm.anchors import CONFIG_FLAG


def with_config_file(recipe: Recipe, access: FileAccess, shown: str) -> Recipe:
    """`recipe` with the flags of the config file its `--config` names merged in (see module doc)."""
    named = [f for f in recipe.flags if f.flag == CONFIG_FLAG]
    if not named:
        return recipe
    if len(named) > 1:
        raise DataError(f"{shown}:{named[1].line}: {CONFIG_FLAG} is given {len(named)} times; vLLM reads one config "
                        "file (it stops with 'More than one config file specified!')")
    flag = named[0]  # stays among the flags: the revision's table maps it (a server option) and its file name
    open_items = list(recipe.open)
    if flag.value is not None:  # `--config=x.yaml`
        open_items.append(OpenItem(what=f"{CONFIG_FLAG}={flag.value}", line=flag.line, incomplete=True, reason=(
            f"the config file is not read: vLLM's parser pulls a config file from `{CONFIG_FLAG} FILE` (two words); "
            "whether this revision reads the `=` form is not settled")))
        return recipe.model_copy(update={"open": tuple(open_items)})
    if not flag.following:
        raise DataError(f"{shown}:{flag.line}: {CONFIG_FLAG} expects a file (vLLM stops with 'No config file "
                        "specified!')")
    name = flag.following[0]
    if isinstance(name, UnknownValue):
        open_items.append(OpenItem(what=f"{CONFIG_FLAG} {name}", line=flag.line, incomplete=True,
                                   reason=f"the config file is not read: {name.reason}"))
        return recipe.model_copy(update={"open": tuple(open_items)})
    found = read_named(name, access, "config file")
    if found.text is None:
        open_items.append(OpenItem(what=f"{CONFIG_FLAG} {name}", line=flag.line, reason=found.reason, incomplete=True))
        return recipe.model_copy(update={"open": tuple(open_items)})
    if not found.shown.endswith((".yaml", ".yml")):
        raise DataError(f"{shown}:{flag.line}: {CONFIG_FLAG} {name}: vLLM reads YAML config files only (.yaml or .yml)")
    from srcreview.model.recipe import yaml_doc
    from srcreview.model.recipe.vllm_yaml import config_flags

    model, flags = config_flags(yaml_doc.parse(found.text, found.shown), found.shown, origin=found.shown)
    placed = [f.model_copy(update={"line": flag.line, "column": flag.column}) for f in flags]
    info = recipe.info
    if info.model is None and model is not None:
        info = info.model_copy(update={"model": model})
    return recipe.model_copy(update={"flags": tuple(placed) + recipe.flags, "info": info,
                                     "files": recipe.files + (found.shown,)})
