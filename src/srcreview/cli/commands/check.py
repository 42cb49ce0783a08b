"""`srcreview check RECIPE... --rev REV`: review recipes against the pinned vLLM source.

Prints the knob table, findings and gate decision (text), one line per finding (concise),
the JSON contract (json), the independent-review document (review), SARIF, Markdown, or the
vLLM sources the review relied on as source-registry entries (registry; --registry FILE merges
them into a registry the campaign keeps, touching no entry srcreview did not write); RECIPE
may be a directory (its recipes are found by content); the exit code is the gate's:
0 passed, 1 failed (--fail-on, default confirmed:high; or a rule stale at the revision,
unless --allow-stale), 2 review incomplete, 64 usage, 65 invalid recipe or rules.

The configs of the models the recipe names (`[recipe] model`, `speculative_config.model`: a
local directory or a Hugging Face Hub id) decide model-dependent branches, such as which MTP
speculator runs; `[model]` / `[draft_model]` tables state or override their config.json values,
and `--model-config` says where they are read from. A config that cannot be read is said once,
and what depends on it stays plausible.

Every output starts with the runtime profile the review assumes: the release's official container
on the recipe's GPU (or --gpu), its platform and the packages the release's requirement files
install for it, no plugins; `[runtime] platform` and `[runtime] packages = {triton = false}` in
the recipe change it (`{transformers = "5.16.1"}`: the model's config is read as that version's
config class builds it). Each VLLM_* variable the recipe sets is a knob row, decided by the revision's
vllm/envs.py. Defaults for --rev, --gpu, --model-config, --fail-on and a project waiver file come
from `[tool.srcreview]` in pyproject.toml or `[defaults]` in srcreview.toml (--show-config).

A review computed before from the same recipe, model configs, source entry, rules and srcreview
is printed again from the cache without the analysis (`srcreview cache clean --reviews` forgets them).

With several --rev (`--rev 0.29.0 --rev 0.33.0 -j 2`), every recipe is reviewed at every revision in
N processes (-j, default: the CPUs) and printed as JSON Lines as the cells finish, recipes sorted by
path, then the revisions in the order given: {"recipe", "rev", "exit_code", "report": what --format
json prints for that cell}, then {"matrix": {...}}; the exit code is the worst cell's (65, 64, 2, 1,
0). Other formats and report files (--sarif, --markdown, --json, --registry) are usage errors there.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


def add_parser(sub) -> None:
    from srcreview.cli.commands._common import (
        add_hardware_override_arg,
        add_model_config_arg,
        add_patch_args,
        add_source_args,
    )
    from srcreview.cli.commands._gate_args import add_gate_args
    from srcreview.report.formats import FORMATTERS

    p = sub.add_parser("check", help="review recipe(s) against the pinned vLLM source",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipes", nargs="*", metavar="RECIPE",
                   help="recipe file(s): srcreview TOML, a script or Dockerfile running `vllm serve`, a vLLM "
                        "YAML config, a compose file (one recipe per vLLM service) or a vllm-project/recipes "
                        "model YAML (one per variant); FILE#NAME one recipe of a file; or directories searched "
                        "for recipes (srcreview.toml waiver files are skipped); several give one result")
    add_source_args(p, rev_repeatable=True)
    p.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                   help="with several --rev: review in N processes (default: the number of CPUs)")
    add_model_config_arg(p)
    add_patch_args(p)
    p.add_argument("--gpu", metavar="NAME",
                   help="the GPU the runtime profile assumes, over the recipe's [hardware] gpu (e.g. \"NVIDIA H100\"): "
                        "its platform (CUDA for NVIDIA) and the release's requirements for it answer import-time "
                        "probes (HAS_TRITON, current_platform.is_cuda()); [runtime] platform and [runtime] "
                        "packages in the recipe change the rest")
    add_hardware_override_arg(p)
    p.add_argument("--format", choices=tuple(FORMATTERS),
                   help="output on stdout (default: text; with several --rev, JSON Lines: json only)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="text: every anchor with its URL and the full trace, hop by hop")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="text: colors (default: auto)")
    p.add_argument("--rules", metavar="DIR", help="rule directory (default: the rules shipped with srcreview)")
    p.add_argument("--registry", metavar="FILE",
                   help="also merge the sources the reviews relied on into the source registry FILE (created if "
                        "missing; entries srcreview did not write are left as they are)")
    add_gate_args(p)
    p.add_argument("--startup-log", metavar="FILE",
                   help="also read a vLLM start-up log against the review (as `srcreview verify` does; one recipe, "
                        "text, concise or markdown): its verdicts follow the review, and the exit code is the worse "
                        "of the gate's and the log's (65 a log of another revision or unreadable, 1 contradicted "
                        "or the gate failed, 2 evidence missing)")
    p.add_argument("--show-config", action="store_true",
                   help="print the defaults in effect (rev, gpu, model-config, fail-on, waivers) and where each "
                        "comes from: [tool.srcreview] in pyproject.toml or [defaults] in srcreview.toml, found "
                        "from the working directory up; a flag on the command line wins")
    p.set_defaults(run=run)


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes (1 or more)")
    return jobs


def run(args) -> int:
    from srcreview import api
    from srcreview.cli.commands._common import with_models, workspace
    from srcreview.cli.commands._gate_args import run_gate
    from srcreview.model.recipe.files import selected_recipes
    from srcreview.report import formats

    revs = list(args.rev or ())
    args.rev = revs[0] if len(revs) == 1 else None  # several: the matrix (cli.commands._matrix)
    if len(revs) > 1:
        from srcreview.cli.commands._matrix import refuse_unstreamable

        refuse_unstreamable(args)
    args.format = args.format or "text"
    config = _project_defaults(args)
    if args.show_config:
        sys.stdout.write(config)
        return 0
    if not args.recipes:
        from srcreview.core.errors import UsageError

        raise UsageError("check: give at least one RECIPE (or --show-config)")

    if args.startup_log and args.format not in STARTUP_LOG_FORMATS:
        from srcreview.core.errors import UsageError

        raise UsageError(f"check: --startup-log prints with --format {', '.join(STARTUP_LOG_FORMATS)}; for "
                         f"{args.format}, save the review and run `srcreview verify REVIEW.json LOG --format "
                         f"{args.format}`")
    # a matrix computes every cell (no stored reviews: their key is one revision's)
    stored = _stored_reviews(args) if len(revs) < 2 else None
    # the rules' summaries when these rule files were validated before, else the rules themselves
    rules = stored.cache.load_rules(stored.rules) if stored is not None else None
    if rules is None:
        rules = _load_rules(args, stored)
    loaded = [(with_models(_with_gpu(r, args), path, args), path)
              for r, path in selected_recipes(args.recipes, args.hardware_override)]
    if len(revs) > 1:
        from srcreview.cli.commands._matrix import run_matrix

        return run_matrix(args, revs, loaded, rules)
    recipes = [r for r, _ in loaded]  # a compose file gives one recipe per vLLM service
    if args.startup_log and len(recipes) != 1:
        from srcreview.core.errors import UsageError

        raise UsageError(f"check: --startup-log reads one start-up against one recipe ({len(recipes)} given)")
    files = [path for _, path in loaded]
    reviews = recalled_reviews(args, recipes, files, stored)
    missing = [n for n, found in enumerate(reviews) if found is None]
    if missing:
        from srcreview.rules.loader import Rule

        if not all(isinstance(r, Rule) for r in rules):  # summaries: the engine needs the rules themselves
            rules = _load_rules(args, stored)
        computed = api.review_recipes(workspace(args), [recipes[n] for n in missing], rules,
                                      files=[files[n] for n in missing])
        for n, (review, tree) in zip(missing, computed, strict=True):
            reviews[n] = review
            if stored is not None:
                stored.keep(args, recipes[n], files[n], review, tree)
    gate = run_gate(args, reviews, rules=rules, recipe_files=[(path, r.path) for r, path in loaded],
                    project_waivers=args.project_waivers)
    if args.registry:
        merge_registry(args.registry, gate)
    output = formats.chunks(args.format, run_of(gate, verbose=args.verbose, color=_color(args),
                                                width=_width() if args.format == "text" else 100))
    write = getattr(sys.stdout, "write_verbatim", sys.stdout.write) if args.format in formats.WORKFLOW_COMMANDS \
        else sys.stdout.write
    for chunk in output:
        write(chunk)
    if args.startup_log:
        return _with_startup_log(args, gate)
    return gate.result.exit_code


STARTUP_LOG_FORMATS = ("text", "concise", "markdown")  # a second document on stdout: not for json/sarif


def _with_startup_log(args, gate) -> int:
    """`--startup-log FILE`: the log read against the one review (srcreview verify), printed
    after it; the worse of the two exit codes (65, then 1, then 2, then 0)."""
    from srcreview.cli.commands.verify import verify_log
    from srcreview.report.verification import FORMATS

    result = verify_log(gate.reviews[0], args.startup_log, args)
    sys.stdout.write(("\n" if args.format != "concise" else "") + FORMATS[args.format](result))
    codes = {gate.result.exit_code, result.exit_code}
    return next(code for code in (65, 1, 2, 0) if code in codes)


def _project_defaults(args) -> str:
    """Fill the options the command line leaves unset from the project's defaults
    (srcreview.core.project); the defaults in effect, one per line, for --show-config."""
    from pathlib import Path

    from srcreview.cli.commands._gate_args import DEFAULT_FAIL_ON_TEXT, _fail_on
    from srcreview.core.errors import DataError
    from srcreview.core.project import find_defaults

    found = find_defaults(Path.cwd())
    shown = []
    for key, builtin in (("rev", "the recipe's pin"), ("gpu", "the recipe's [hardware] gpu"),
                         ("model-config", "hub"), ("fail-on", DEFAULT_FAIL_ON_TEXT), ("waivers", "none")):
        dest = key.replace("-", "_")
        explicit = key in ("rev", "gpu") or dest in getattr(args, "given", ())
        given = getattr(args, dest, None) if explicit and key != "waivers" else None
        default = found.get(key)
        if given is not None:
            shown.append(f"{key} = {_shown(given)}  (command line)")
            continue
        if default is None:
            shown.append(f"{key} = {builtin}  (built in)")
            continue
        shown.append(f"{key} = {default.value}  ({default.source})")
        if key == "fail-on":
            try:
                args.fail_on = _fail_on(default.value)
            except argparse.ArgumentTypeError as exc:
                raise DataError(f"{default.source}: fail-on: {exc}") from None
        elif key != "waivers":
            setattr(args, dest, default.value)
    args.project_waivers = found.path("waivers")
    head = f"project defaults: {found.shown}" if found.file is not None else "project defaults: none found"
    return "".join(f"{line}\n" for line in [head, *shown])


def _shown(value) -> str:
    return str(value) if isinstance(value, str) else getattr(value, "text", None) or str(value)


def _with_gpu(recipe, args):
    """The recipe with `--gpu` as its GPU (the runtime profile says it came from the command line)."""
    gpu = getattr(args, "gpu", None)
    if not gpu:
        return recipe
    return recipe.model_copy(update={"hardware": recipe.hardware.model_copy(update={"gpu": gpu, "gpu_from": "--gpu"})})


def _load_rules(args, stored):
    from srcreview.cli.commands._multirev import load_rules_arg

    rules = load_rules_arg(args)
    if stored is not None:
        stored.cache.store_rules(stored.rules, rules)
    return rules


class _StoredReviews:
    """The stored reviews of the user cache (srcreview.store.reviews) for this run's rule files."""

    def __init__(self, cache, rules: str):
        self.cache, self.rules = cache, rules
        self._expected: dict[tuple, dict | None] = {}  # one look at the source per revision and layers

    def key(self, args, recipe, recipe_file, identity_of) -> str | None:
        """The key of `recipe`'s review, with the source named by `identity_of(revision, layers)`
        (None when the source has no identity: it is not stored)."""
        from pathlib import Path

        from srcreview.cli.commands._common import (
            layers_from_args,
            resolve_release,
            rev_from_args,
        )

        revision = resolve_release(rev_from_args(args, recipe), local=bool(getattr(args, "source", None)))
        identity = identity_of(revision, layers_from_args(args, recipe, recipe_file))
        if identity is None:
            return None
        try:
            recipe_bytes = Path(recipe_file).read_bytes()
        except OSError:
            return None
        return self.cache.key(rules_digest=self.rules, recipe=recipe, recipe_bytes=recipe_bytes, revision=revision,
                              source=identity)

    def recall(self, args, recipe, recipe_file):
        """The stored review of `recipe` under these arguments, or None."""
        from srcreview.source.identity import expected

        def identity(revision, layers):
            memo = (repr(revision), tuple((layer.kind, layer.shown, layer.sha256) for layer in layers))
            if memo not in self._expected:  # (a --source directory is scanned once for all the recipes)
                self._expected[memo] = expected(revision, source=getattr(args, "source", None),
                                                provider=getattr(args, "provider", "auto"), layers=layers)
            return self._expected[memo]

        key = self.key(args, recipe, recipe_file, identity)
        return self.cache.load(key) if key is not None else None

    def keep(self, args, recipe, recipe_file, review, tree) -> None:
        """Store `review`, computed from `tree`, under the key of that tree's identity."""
        from srcreview.source.identity import of_tree

        key = self.key(args, recipe, recipe_file, lambda revision, layers: of_tree(tree))
        if key is not None:
            self.cache.store(key, review)


def _stored_reviews(args) -> _StoredReviews | None:
    """The stored reviews, or None when off ($SRCREVIEW_CACHE_KEY unset) or the rule files cannot
    be read (their loader says why)."""
    from pathlib import Path

    from srcreview.source.cache import default_root
    from srcreview.store.reviews import ReviewCache, cache_key, rules_digest

    key = cache_key()
    if key is None:
        return None  # no secret: a stored verdict could be anyone's, so none is served
    digest = rules_digest(Path(args.rules) if getattr(args, "rules", None) else None)
    return _StoredReviews(ReviewCache(default_root()[0], key=key), digest) if digest is not None else None


def recalled_reviews(args, recipes, files, stored) -> list:
    """The stored review of each recipe under these arguments, None where there is none."""
    if stored is None:
        return [None] * len(recipes)
    return [stored.recall(args, recipe, path) for recipe, path in zip(recipes, files, strict=True)]


def merge_registry(target: str, gate) -> None:
    """--registry FILE: read it (if it exists), merge this run's entries, write it back atomically."""
    import os
    import tempfile
    from pathlib import Path

    from srcreview.cli.commands._gate_args import shown_path, write_error
    from srcreview.core.userfile import read_user_file
    from srcreview.report import registry

    path, shown = Path(target), shown_path(target)
    date = observed_on(gate)
    if path.exists():
        doc = registry.load_registry(read_user_file(path, shown, "registry", registry.MAX_REGISTRY_BYTES), shown)
        text = registry.render_merged(registry.merge(doc, gate.reviews, date))
    else:
        text = registry.render(gate.reviews, date=date)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)  # a full disk leaves no half-written copy behind
        raise write_error(f"--registry: cannot write {shown}", exc) from None


def observed_on(gate) -> str:
    """The date registry entries are observed on: --date / SOURCE_DATE_EPOCH, else today (UTC)."""
    from srcreview.core.dates import today

    return gate.date or today().isoformat()


def run_of(gate, **options):
    """The srcreview.report.formats.Run of a gate run (`options`: verbose, color, width)."""
    from srcreview.report.formats import Run

    return Run(gate=gate.result, rules=gate.rules, date=gate.date, observed_on=observed_on(gate), **options)


def _width() -> int:
    """The terminal's width as rich sees it (COLUMNS, else the terminal, else 80)."""
    from rich.console import Console

    return Console(file=sys.stdout).width


def _color(args) -> bool:
    import os

    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()
