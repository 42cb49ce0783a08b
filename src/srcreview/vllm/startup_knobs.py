"""What the engine's config construction does to the recipe's own values, as knob rows.

A post-init hook may store to a field the recipe sets (srcreview.vllm.construction.Rewrite):
`VllmConfig.__post_init__` sets the cudagraph mode to NONE under `enforce_eager`,
`ModelConfig.__post_init__` replaces `max_model_len = -1` by the model's own length. A row that
says `accepted` or `applied` for such a value would promise that the engine uses it. So the
row says `overridden` when the hook's store is decided and unconditional (anchored on the
store, saying what the field becomes), and `undecided` when the store depends on what the walk
does not decide (what the engine keeps is then not known from the source).

A raise on the start-up path that the recipe does not decide (Construction.open_raises) and
whose conditions read a knob's value (the undecided ones, and the decided tests that steer the
path into it), directly or through a field a hook stored from it (`runner_type` from `runner`,
Construction.derived), leaves that knob `undecided` too: vLLM may refuse to start with it, so neither
`accepted` nor `applied` can be promised (`open_raise_rows`). A certain raise makes the values it
reads `invalid-value` (`rejected_rows`).
"""

from __future__ import annotations

from srcreview.model.findings import Knob


def recipe_key(ctx, path: tuple[str, ...]) -> str | None:
    """The recipe key that sets a config path: the engine key create_engine_config puts there, or
    the dotted path itself (a bare name: a top-level key), when the recipe sets it."""
    from srcreview.vllm.runtime import engine_paths

    dotted = ".".join(path)
    where = engine_paths(ctx.index).get(dotted)
    return next((key for key in ((where.key,) if where is not None else ()) + (dotted,)
                 if ctx.recipe.setting(key) is not None), None)


def keys_read(ctx, reads, derived=()) -> list[str]:
    """The recipe keys among what an open raise's conditions read (RaiseEvent.reads), and what
    the fields they read were stored from while the config was built (Construction.derived,
    followed to its end: `runner_type` read is `runner` read)."""
    sources = dict(derived)
    seen: list = []
    todo = list(reads)
    while todo:
        read = tuple(todo.pop(0))
        if read in seen:
            continue
        seen.append(read)
        todo.extend(sources.get(read, ()))
    return list(dict.fromkeys(key for read in seen if (key := recipe_key(ctx, read)) is not None))


def open_raise_rows(ctx, construction) -> list[Knob]:
    """An `undecided` row for each recipe key an open raise's conditions read, anchored on the
    first such raise (by file and line), saying what it depends on."""
    from srcreview.vllm.construction import depends_on, open_order, open_site, raise_symbol, site_text

    if construction is None or not (construction.open_raises or construction.unreached):
        return []
    first: dict = {}  # recipe key -> the first open raise (a construction.Rejection) reading it
    for rejection in sorted(construction.open_raises, key=open_order) + sorted(construction.unreached,
                                                                                key=open_order):
        for key in keys_read(ctx, rejection.raise_event.reads + rejection.raise_event.guard_reads,
                             construction.derived):
            first.setdefault(key, rejection)
    rows = []
    for key, rejection in sorted(first.items()):
        event = rejection.raise_event
        path, line, end = open_site(rejection)
        hook = ".".join(rejection.function.split(".")[-2:])
        exc = event.text.split("(", 1)[0]
        setting = ctx.recipe.setting(key)
        anchor = ctx.anchor(path, line, end, raise_symbol(site_text(rejection)),
                            f"gating: may raise {exc} here while the engine builds its config")
        after = " once the refused field is fixed (pydantic stops there first)" \
            if rejection in construction.unreached else ""
        rows.append(Knob(key=key, value=setting.value, scope="engine", recipe_line=setting.line, status="undecided",
                         evidence=(anchor,), tags=("startup-open",),
                         note=f"start-up: {hook} may raise {exc} ({path}:{line}) reading it{after}, if "
                              f"{depends_on(event)}"))
    return rows


def rejected_rows(ctx, construction) -> list[Knob]:
    """An `invalid-value` row for each recipe key a certain raise reads (its own test and the
    decided tests that steer the path into it, RaiseEvent.guard_reads): vLLM refuses the recipe
    there, so none of those values is `accepted`. Anchored on the first such raise."""
    from srcreview.vllm.construction import open_order, open_site, raise_symbol, site_text

    if construction is None or not construction.rejections:
        return []
    first: dict = {}  # recipe key -> the first certain raise reading it
    for rejection in sorted(construction.rejections, key=open_order):
        event = rejection.raise_event
        for key in keys_read(ctx, event.reads + event.guard_reads):  # as it reads them: the value refused
            first.setdefault(key, rejection)
    rows = []
    for key, rejection in sorted(first.items()):
        path, line, end = open_site(rejection)
        hook = ".".join(rejection.function.split(".")[-2:])
        exc = site_text(rejection).split("(", 1)[0]
        setting = ctx.recipe.setting(key)
        together = sorted(k for k, r in first.items() if r is rejection and k != key)
        anchor = ctx.anchor(path, line, end, raise_symbol(site_text(rejection)),
                            f"refuses: raises {exc} here while the engine builds its config")
        rows.append(Knob(key=key, value=setting.value, scope="engine", recipe_line=setting.line,
                         status="invalid-value", evidence=(anchor,),
                         note=f"start-up: {hook} raises {exc} ({path}:{line}) with this value"
                              + (f" and those of {', '.join(together)}" if together else "")))
    return rows


def rewrite_rows(ctx, construction) -> list[Knob]:
    """One row per (recipe key, scope) a rewrite reaches: the engine- and target-scope rows of the
    key whose config path the hook stores to."""
    if construction is None or not construction.rewrites:
        return []
    rows = []
    for rewrite in construction.rewrites:
        dotted = ".".join(rewrite.path)
        key = recipe_key(ctx, rewrite.path)
        setting = ctx.recipe.setting(key) if key is not None else None
        if key is None or setting is None or _same(rewrite.value, setting.value) and rewrite.overrides:
            continue
        fn = rewrite.function.split(".")
        hook = ".".join(fn[-2:])
        anchor = ctx.anchor(rewrite.file, rewrite.lines[0], rewrite.lines[1], rewrite.path[-1],
                            f"replaces: stores {rewrite.path[-1]} while the engine builds its config")
        if rewrite.overrides:
            shown = _shown(rewrite.value)
            rows.append(Knob(key=key, value=setting.value, scope="engine", recipe_line=setting.line,
                             status="overridden", evidence=(anchor,), effective=shown,
                             note=f"{hook} sets {dotted} to {shown} (line {rewrite.lines[0]}): the engine runs with "
                                  "that, not with the recipe's value"))
        elif rewrite.conditional:
            to = f" to {_shown(rewrite.value)}" if rewrite.decided else ""
            rows.append(Knob(key=key, value=setting.value, scope="engine", recipe_line=setting.line,
                             status="undecided", evidence=(anchor,),
                             note=f"{hook} sets {dotted}{to} (line {rewrite.lines[0]}) if {rewrite.condition}: "
                                  "the recipe's value holds only where that is false"))
        else:
            rows.append(Knob(key=key, value=setting.value, scope="engine", recipe_line=setting.line,
                             status="undecided", evidence=(anchor,),
                             note=f"{hook} replaces {dotted} (line {rewrite.lines[0]}) by a value computed from the "
                                  "recipe's that the source does not decide: what the engine keeps is not known"))
    return rows


def _same(stored, recipe_value) -> bool:
    """A store of what the recipe set, as the engine spells it (an enum member of that name)."""
    name = getattr(stored, "name", None)
    if name is not None and isinstance(recipe_value, str):
        return name.lower() == recipe_value.lower()
    return stored == recipe_value


def _shown(value) -> str:
    name = getattr(value, "name", None)
    enum = getattr(value, "enum", None)
    return f"{enum.rsplit('.', 1)[-1]}.{name}" if name is not None and enum else repr(value)
