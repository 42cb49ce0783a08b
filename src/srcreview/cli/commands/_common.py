"""Options every command that reads vLLM source shares: --rev, --source, --provider, --patch, --overlay.

`add_source_args(parser)` declares the first three, `add_patch_args(parser)` the layers laid
over the source (`--patch FILE`, `--overlay DIR`, repeatable, applied in the order given,
after the recipe's own `[runtime] patches`); `tree_from_args(args, recipe)` resolves the rev
(the recipe's pin when --rev is absent), obtains the tree, drawing download progress on
stderr, and applies the layers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from srcreview.core.errors import DataError, UsageError

PROVIDER_CHOICES = ("auto", "local", "registry", "github", "git")


def add_source_args(parser, *, rev_required: bool = False, rev_repeatable: bool = False) -> None:
    """Add --rev, --source and --provider to a subcommand's parser (`rev_repeatable`: --rev
    may be given several times; args.rev is then a list)."""
    parser.add_argument("--rev", required=rev_required, action="append" if rev_repeatable else "store",
                        metavar="REV",
                        help="vLLM release (0.29.0) or commit (98dff2a)"
                        + ("" if rev_required else "; default: the recipe's pin")
                        + ("; repeatable: every recipe at every revision, as JSON Lines (--format json)"
                           if rev_repeatable else ""))
    parser.add_argument("--source", metavar="PATH",
                        help="local vLLM git checkout, unpacked sdist directory or sdist archive")
    parser.add_argument("--provider", default="auto", choices=PROVIDER_CHOICES,
                        help="where to obtain the source: auto (cheapest that works: --source, cache, "
                             "registry sdist, GitHub tarball, git) or one of them")


def add_model_config_arg(parser) -> None:
    """Add --model-config: where the configs of the recipe's models are read from."""
    from srcreview.cli.commands._gate_args import Given

    parser.add_argument("--model-config", choices=("hub", "cache", "off"), default="hub", action=Given,
                        help="the configs of the models the recipe names, which decide model-dependent "
                             "branches (MTP speculators, draft config rewrites): hub (default: a local "
                             "directory is read, a Hub id through huggingface_hub, honouring HF_ENDPOINT, "
                             "HF_HUB_OFFLINE and HF_HOME), cache (the huggingface_hub cache only) or off; "
                             "[model] / [draft_model] tables in the recipe state or override values")


def add_hardware_override_arg(parser) -> None:
    """Add --hardware-override: the hardware layers of a recipes-registry model file to review too."""
    parser.add_argument("--hardware-override", metavar="KEY",
                        help="recipes-registry model files: also each variant as the site composes it for this "
                             "hardware_overrides key (a generation such as hopper, or a GPU id), named "
                             "FILE#VARIANT@KEY; `all`: every key the file has (a key it does not have: exit 64)")


def with_models(recipe, recipe_file, args):
    """`recipe` with the configs of its models (srcreview.hfconfig.binding), read as --model-config says."""
    from srcreview.hfconfig.binding import with_model_configs

    base = Path(recipe_file).parent if recipe_file else None
    recipe = with_model_configs(recipe, base_dir=base, mode=getattr(args, "model_config", "hub"))
    if not recipe.models or not any(isinstance(v, str) for v in recipe.runtime.packages.values()):
        return recipe
    from srcreview.cli.progress import progress_reporter
    from srcreview.source.transformers_wheel import with_config_classes

    with progress_reporter(sys.stderr.isatty()) as report:
        return with_config_classes(recipe, progress=report)


class _LayerAction(argparse.Action):
    """--patch and --overlay append (kind, path) to one list, so their order is kept."""

    def __init__(self, *args, kind: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = kind

    def __call__(self, parser, namespace, value, option_string=None):
        layers = list(getattr(namespace, self.dest, None) or [])
        layers.append((self.kind, value))
        setattr(namespace, self.dest, layers)


def add_patch_args(parser, *, side: str = "") -> None:
    """Add --patch FILE and --overlay DIR (both repeatable) to a subcommand's parser."""
    parser.add_argument("--patch", dest="layers", action=_LayerAction, kind="patch", metavar="FILE",
                        help="apply a unified diff (git diff, git format-patch, a PR's .diff or .patch) to the "
                             "source before reviewing it" + side + "; repeatable, applied in order")
    parser.add_argument("--overlay", dest="layers", action=_LayerAction, kind="overlay", metavar="DIR",
                        help="lay the files under DIR over the source" + side + " (replacing or adding the same "
                             "tree-relative paths); repeatable, in order with --patch")
    parser.add_argument("--allow-outside", action="append", default=[], metavar="PATH",
                        help="let a recipe's [runtime] patches name paths under PATH (by default they must "
                             "stay inside the recipe's git work tree, else its directory); repeatable")


def layers_from_args(args, recipe=None, recipe_file: str | Path | None = None) -> list:
    """The layers to apply: the recipe's `[runtime] patches` (relative to the recipe), then
    --patch/--overlay in the order given. Each is read and parsed here (exit 64 when a file
    named on the command line is missing, 65 when a patch is malformed)."""
    runtime = getattr(recipe, "runtime", None)
    if not getattr(runtime, "patches", None) and not getattr(args, "layers", None):
        return []  # (without importing the patch reader)
    from srcreview.cli.commands._gate_args import shown_path
    from srcreview.core.userfile import inside, recipe_root
    from srcreview.source.patched import load_overlay, load_patch

    layers = []
    for written in getattr(runtime, "patches", ()) or ():
        base = Path(recipe_file).parent if recipe_file is not None else Path(".")
        target = base / written
        shown = shown_path(target)
        where = getattr(recipe, "path", "recipe")
        allowed = [recipe_root(recipe_file if recipe_file is not None else "recipe"),
                   *(getattr(args, "allow_outside", None) or ())]
        if not inside(target, allowed):
            raise DataError(f"{where}: [runtime] patches: {written}: outside the recipe's repository "
                            "(its git work tree, else its directory); --allow-outside PATH lets it read there")
        if target.is_dir():
            layers.append(load_overlay(target, shown))
        elif target.is_file():
            layers.append(load_patch(target, shown))
        elif target.exists() or target.is_symlink():  # a FIFO, a device, a dangling link: never opened
            raise DataError(f"{where}: [runtime] patches: {written}: not a regular file or a directory")
        else:
            raise DataError(f"{where}: [runtime] patches: {written}: no such file or directory "
                            "(paths are relative to the recipe)")
    for kind, value in getattr(args, "layers", None) or ():
        shown = shown_path(value)
        if kind == "overlay":
            layers.append(load_overlay(Path(value), shown))
        else:
            layers.append(load_patch(Path(value), shown))
    return layers


def rev_from_args(args, recipe=None) -> str:
    """The rev to review: --rev, else the recipe's pinned revision or version."""
    if getattr(args, "rev", None):
        return args.rev
    runtime = getattr(recipe, "runtime", None)
    pinned = getattr(runtime, "revision", None) or getattr(runtime, "version", None)
    if pinned:
        return str(pinned)
    raise UsageError("--rev is required" + (" (the recipe pins no vLLM revision)" if recipe is not None else ""))


def tree_from_args(args, recipe=None, *, progress: bool = True, verify: bool = False, layers=None,
                   rev: str | None = None):
    """The SourceTree the arguments (and the recipe's pin) ask for, or of `rev` when given, with
    `layers` applied (see `layers_from_args`; default: none)."""
    from srcreview.cli.progress import progress_reporter
    from srcreview.source.obtain import open_source
    from srcreview.source.patched import apply_layers

    source = getattr(args, "source", None)
    with progress_reporter(progress) as report:
        revision = resolve_release(rev or rev_from_args(args, recipe), report, local=bool(source))
        tree = open_source(revision, source=Path(source) if source else None,
                           provider=getattr(args, "provider", "auto") or "auto", progress=report, verify=verify)
    return apply_layers(tree, layers or ())


def workspace(args, *, progress: bool | None = None):
    """The srcreview.api.Workspace these options name: the rev (--rev, else each recipe's pin),
    the layers (the recipe's patches, then --patch/--overlay), the tree (drawing download progress
    when `progress`, default: on a terminal) and the user's facts cache."""
    import sys

    from srcreview.api import Workspace
    from srcreview.index.cache import default_cache_dir

    shown = sys.stderr.isatty() if progress is None else progress
    return Workspace(rev=lambda recipe: rev_from_args(args, recipe),
                     layers=lambda recipe, recipe_file: layers_from_args(args, recipe, recipe_file),
                     open_tree=lambda rev, recipe, layers: tree_from_args(args, recipe, progress=shown,
                                                                          layers=layers, rev=rev),
                     cache_dir=default_cache_dir())


def check_revs(revs, option: str = "--rev") -> None:
    """Usage errors in `revs` before any source is fetched: each a valid rev, and each release in
    pins/ or listed by the package index (one listing request, only when pins/ lacks one)."""
    from srcreview.model.revision import VERSION, load_pins, validate_rev

    normalized = [validate_rev(rev) for rev in revs]
    known = {p.version for p in load_pins()}
    missing = [v for v in normalized if VERSION.fullmatch(v) and v not in known]
    if not missing:
        return
    from srcreview.source.pipindex import index_url, redact_url
    from srcreview.source.registry import index_releases

    listed = {f.filename[len("vllm-"):-len(".tar.gz")] for f in index_releases()}
    for version in missing:
        if version not in listed:
            raise UsageError(f"{option}: release {version} is neither in pins/ nor on the package index "
                             f"{redact_url(index_url())}")


def resolve_release(rev: str, progress=None, *, local: bool = False):
    """The Revision of `rev`: pins/, else (for a release) the package index; with a local
    --source, pins/ only (pass the commit of a release pins/ does not know)."""
    from srcreview.model.revision import resolve_rev

    if local:
        return resolve_rev(rev)
    from srcreview.source.cache import Cache
    from srcreview.source.registry import discover_release

    return resolve_rev(rev, discover=lambda version: discover_release(version, Cache(), progress))
