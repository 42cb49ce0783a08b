"""The model's own config inside the interpreter: what a `ModelConfig`'s `hf_config` holds.

vLLM reads a model's Hugging Face config while it builds a `ModelConfig` (`get_config`, which
hands config.json to transformers and then applies the `hf_overrides` the ModelConfig was
built with), and chooses draft paths from it: `use_gemma4_mtp()` tests the draft config's
`model_type`, `SpeculativeConfig.hf_config_override` rewrites `qwen3_5` to `qwen3_5_mtp`.
transformers is outside the pinned tree, so that one step is the boundary: the config of the
model a ModelConfig names is the keys its config.json states (obtained by srcreview.hfconfig,
with the recipe's `[model]` values laid over them), and the `hf_overrides` function is then
walked on it like any in-tree code. A key config.json does not state reads as unknown (the
config class may default it); a model whose config was not obtained leaves every branch on
it open (`model-config-unknown`).

The configs reach the analysis as one binding (`MODELS_KEY`), a frozen value keyed by the
model reference as the recipe writes it (what vLLM receives as `model`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from srcreview.hfconfig.facts import MODEL_CONFIG_UNKNOWN
from srcreview.hfconfig.files import MISTRAL_PARAMS_FILE
from srcreview.interp.paths import KNOWN_DIRECTORIES, KnownDirectories, KnownTree
from srcreview.interp.values import (
    Const,
    Derived,
    DictVal,
    FuncRef,
    HfConfig,
    Obj,
    Partial,
    TupleVal,
    Unknown,
)
from srcreview.vllm.anchors import (  # noqa: F401
    CONFIG_DICT_CALLS,
    CONFIG_LOADER,
    CONFIG_REGISTRY,
    FILE_TEST,
    HF_CONFIG,
    MODEL_CONFIG,
)

MODELS_KEY = "@models"  # the binding holding ModelConfigs (no dot: never a config path)


@dataclass(frozen=True)
class ModelEntry:
    """One model reference's config: config.json as canonical JSON text (with the recipe's
    values laid over it), where its keys come from, and why it is not known (if it is not)."""

    ref: str
    config_json: str
    source: str
    unknown: str | None = None
    config_class: str = ""  # ConfigClass as JSON (srcreview.hfconfig.config_classes), when the version is given
    absent: tuple[str, ...] = ()  # optional model files (srcreview.hfconfig.files) known not to be there
    overridden: bool = False  # the recipe lays values over config.json (config_json is then not the file's)


@dataclass(frozen=True)
class ModelConfigs:
    entries: tuple[ModelEntry, ...] = ()

    def __repr__(self) -> str:  # short in `graph` output, whole in the digest (analyses are cached by repr)
        digest = hashlib.sha256(json.dumps([e.__dict__ for e in self.entries], sort_keys=True).encode()).hexdigest()
        return f"<model configs of {', '.join(e.ref for e in self.entries)} ({digest[:16]})>"

    def get(self, ref: str) -> ModelEntry | None:
        return next((e for e in self.entries if e.ref == ref), None)


def model_configs(facts_by_ref) -> ModelConfigs:
    """The binding for a review from {model reference: srcreview.hfconfig.ModelFacts}."""
    entries = []
    for ref in sorted(facts_by_ref):
        facts = facts_by_ref[ref]
        source = _source(facts)
        classes = getattr(facts, "config_class", None)
        entries.append(ModelEntry(ref=ref, config_json=json.dumps(facts.config, sort_keys=True), source=source,
                                  unknown=facts.unknown_reason,
                                  config_class=json.dumps(classes.to_json() if hasattr(classes, "to_json") else
                                                          classes.model_dump(mode="json"), sort_keys=True)
                                  if classes is not None else "", absent=_absent_files(facts),
                                  overridden=bool(facts.overrides)))
    return ModelConfigs(tuple(entries))


def _absent_files(facts) -> tuple[str, ...]:
    """The optional files srcreview.hfconfig looked for and did not find (none when config.json
    itself was not obtained, or where the lookup could not say)."""
    from srcreview.hfconfig.files import OPTIONAL_FILES

    if not facts.known:
        return ()
    present = {f.path for f in facts.files}
    return tuple(name for name in OPTIONAL_FILES if name not in present and name not in facts.unresolved)


def model_bindings(recipe) -> dict:
    """What the analysis binds of a recipe's models: `model` (what vLLM receives as --model,
    when the recipe names it only in [recipe]) and the configs obtained for them."""
    out = {}
    if recipe.value("model") is None and recipe.info.model:
        out["model"] = recipe.info.model
    if recipe.models:
        out[MODELS_KEY] = model_configs({facts.ref: facts for facts in recipe.models if facts.ref})
        trees = tuple(KnownTree(facts.ref, facts.listing) for facts in sorted(recipe.models, key=lambda f: f.ref or "")
                      if facts.ref and facts.kind == "local" and facts.listing is not None)
        if trees:
            out[KNOWN_DIRECTORIES] = KnownDirectories(trees)
    return out


def _source(facts) -> str:
    where = f"the config.json of {facts.ref}" if facts.known else f"what the recipe states of {facts.ref}"
    if facts.known and facts.commit:
        where += f" (commit {facts.commit[:12]})"
    if facts.known and facts.overrides:
        where += " and the recipe's [model] values"
    return where


def hf_config(resolver, obj: Obj):
    """The value of `obj.hf_config` for a ModelConfig `obj`: its model's config with its
    `hf_overrides` applied, or Unknown saying why not."""
    interp = resolver.interp
    ref = interp.force(_field(resolver, obj, "model"))
    if not (isinstance(ref, Const) and isinstance(ref.value, str)):
        return Unknown(f"{MODEL_CONFIG_UNKNOWN}: which model the {MODEL_CONFIG} is built for is not known")
    configs = resolver.runtime.bindings.get(MODELS_KEY)
    entry = configs.get(ref.value) if isinstance(configs, ModelConfigs) else None
    if entry is None:
        return Unknown(f"{MODEL_CONFIG_UNKNOWN}: the model config of {ref.value} was not obtained")
    base = as_value(json.loads(entry.config_json), entry.source, entry.ref)
    base = _with_class(resolver, base, entry)
    if entry.unknown and not base.overrides:
        return Unknown(f"{MODEL_CONFIG_UNKNOWN}: {entry.unknown}")
    overrides = interp.force(_field(resolver, obj, "hf_overrides"))
    if isinstance(overrides, Const) and overrides.value in (None, {}):
        return base
    if isinstance(overrides, Const) and isinstance(overrides.value, dict):
        for key, value in sorted(overrides.value.items()):
            base = base.with_field(key, _const(value, entry.source, entry.ref, key))
        return base
    if isinstance(overrides, FuncRef):
        return interp.return_value(overrides, (base,), ())
    if isinstance(overrides, Partial):  # functools.partial(f, *args, **kwargs)
        return interp.return_value(overrides.func, overrides.args + (base,), overrides.kwargs)
    return Unknown(f"the hf_overrides the {MODEL_CONFIG} of {ref.value} is built with are not followed")


# the keywords with which transformers' get_config_dict reads something other than config.json
_OTHER_FILE_KEYWORDS = frozenset({"gguf_file", "_configuration_file", "subfolder"})


def external_call(analyzer, name: str, args: list, kwargs: list, forwards: bool):
    """transformers' `PreTrainedConfig.get_config_dict(model, **kw)` of a model whose config.json
    srcreview read (vLLM calls it to look for a speculators config, and to parse the config):
    (config.json's object, the keywords it hands back), as transformers' source at the runtime
    profile's version makes it (ConfigClass.dict_stores): a key that source may store is not known,
    every other key is config.json's. None for any other call, or when the version's source was
    not read as such, the recipe lays values over config.json, config.json names another file to
    read (`configuration_files`) or lacks a key that keeps unread code from running, or the call
    may ask for another file (a GGUF file, a subfolder) or hands keywords the walk does not see."""
    from srcreview.hfconfig.config_classes import ConfigClass

    if name not in CONFIG_DICT_CALLS or forwards or _OTHER_FILE_KEYWORDS & {k for k, _ in kwargs}:
        return None
    model = dict(kwargs).get("pretrained_model_name_or_path", args[0] if args else None)
    configs = analyzer.runtime.bindings.get(MODELS_KEY)
    if not (isinstance(model, Const) and isinstance(model.value, str) and isinstance(configs, ModelConfigs)):
        return None
    entry = configs.get(model.value)
    if entry is None or entry.unknown or entry.overridden or not entry.config_class:
        return None
    classes = ConfigClass.model_validate(json.loads(entry.config_class))
    config = json.loads(entry.config_json)
    if classes.unknown or classes.dict_stores is None or set(classes.dict_redirects) & set(config) \
            or not set(classes.dict_requires) <= set(config):
        return None
    passed = {k for k, _ in kwargs}
    adds = {key for key, guards in classes.dict_stores  # a store under a test known false here does not run
            if not any((kind == "absent" and k in config) or (kind == "kwarg" and k not in passed)
                       for kind, k in guards)}
    if not adds <= set(config):
        return None  # a key it may add: whether the dict has it is not known
    why = f"transformers {classes.version}'s get_config_dict may store it"
    items = tuple((key, Unknown(f"{key}: {why}") if key in adds else Const(value)) for key, value in config.items())
    table = DictVal(items) if adds else Const(config)
    return TupleVal((table, Unknown("the keyword arguments get_config_dict hands back")))


TRANSFORMERS_HINT = (" (the transformers version is not given: [runtime] packages = { transformers = \"X.Y.Z\" } "
                     "lets its config class decide)")


def _with_class(resolver, base: HfConfig, entry: ModelEntry) -> HfConfig:
    """The top-level config with its config class's facts (when the runtime profile gives the
    transformers version and vLLM does not build a class of its own for the model type), and
    the names vLLM's config loader may store on it beyond config.json."""
    from dataclasses import replace

    from srcreview.hfconfig.config_classes import ConfigClass

    if not entry.config_class:
        return replace(base, hint=TRANSFORMERS_HINT)
    classes = ConfigClass.model_validate(json.loads(entry.config_class))
    own, loader = _loader_facts(resolver.index)
    if own is None:
        classes = classes.model_copy(update={"unknown": f"{CONFIG_LOADER} could not be read"})
    elif classes.model_type in own:
        classes = classes.model_copy(update={"unknown": f"vLLM builds its own config class for model_type "
                                                        f"{classes.model_type!r} ({CONFIG_LOADER}: {CONFIG_REGISTRY})"})
    return replace(base, classes=classes, loader=loader, absent=frozenset(entry.absent))


_LOADER: dict = {}


def _loader_facts(index) -> tuple[frozenset | None, dict]:
    """(model types vLLM's own config registry names, {name: why}) read from the loader module:
    every string key or value of a dict literal there (`config.update({...})`, the remapped
    attributes' table, the kwargs tables it hands AutoConfig), every `setattr` name and every
    attribute stored (`x.name = ...`) may be a name the loader sets on the config, so none of
    them is decided absent or a default. (A name it only reads or subscripts is not set.)"""
    import ast

    key = getattr(index.tree, "revision", None)
    key = (getattr(key, "sha", None), id(index.tree))
    if key in _LOADER:
        return _LOADER[key]
    try:
        module = ast.parse(index.tree.read(CONFIG_LOADER).decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - a tree without the loader: nothing decided
        _LOADER[key] = (None, {})
        return _LOADER[key]
    own: set[str] = set()
    names: dict = {}
    tables = {t.id: stmt.value for stmt in module.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
              for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
              if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Dict)}
    gated: set[int] = set()  # tables read only by a loop that stores a value under `hasattr(x, key)`
    # tables every use of which in the tree is `TABLE["key"]` (an alias table: names to read)
    gated.update(id(table) for name, table in tables.items() if _lookup_only(index, name))
    parents = {id(child): node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(module):
        pairs = _gated_table(node, tables)
        if pairs is not None:
            gated.add(id(tables[node.iter.func.value.id]))  # type: ignore[attr-defined]
            line = getattr(node, "lineno", 0)
            for old, new in pairs:
                names.setdefault(new, (old, f"vLLM's config loader copies {old} to {new} "
                                            f"({CONFIG_LOADER}:{line}) when the config has {old}"))
    for node in ast.walk(module):
        if id(node) in gated:
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == CONFIG_REGISTRY
                                                for t in node.targets) or \
                isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == CONFIG_REGISTRY:
            value = node.value
            if isinstance(value, ast.Call):
                own.update(k.arg for k in value.keywords if k.arg)
            for sub in ast.walk(value) if value is not None else ():
                if isinstance(sub, ast.Dict):
                    own.update(k.value for k in sub.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
        literals: list = []
        if isinstance(node, ast.Dict):  # tables and `.update({...})`: keys and values may be set names
            literals = [*node.keys, *node.values]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            literals = node.args[1:2]
        for lit in literals:
            if isinstance(lit, ast.Constant) and isinstance(lit.value, str) and lit.value.isidentifier() \
                    and not isinstance(names.get(lit.value), str):  # a gated entry (a tuple) is open again
                names[lit.value] = f"vLLM's config loader ({CONFIG_LOADER}:{lit.lineno}) names it in a table or " \
                                   "store and may set it"
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            why = f"vLLM's config loader stores it ({CONFIG_LOADER}:{node.lineno})"
            gate = _file_gate(node, parents)
            known = names.get(node.attr)
            if gate is not None and (known is None or isinstance(known, tuple) and known[0] == "file"):
                # ... or the model is in Mistral's format, whose adapter may add it to the dict read
                names[node.attr] = ("file", (gate, MISTRAL_PARAMS_FILE),
                                    f"{why} when config.json states it, or the model has {gate} or "
                                    f"{MISTRAL_PARAMS_FILE}")
            else:
                names[node.attr] = why
    _LOADER[key] = (frozenset(own), names)
    return _LOADER[key]


def _lookup_only(index, name: str) -> bool:
    """Whether every use of the loader's module table `name` in the package is a
    subscript with a constant key (`CONFIG_FIELD_ALIASES["num_experts"]`): its keys are looked up,
    never iterated, so none is a name the loader sets. Imported under another name, reached as an
    attribute, iterated, passed on or changed: not."""
    import ast

    for path in index.grep_re(rf"\b{re.escape(name)}\b", literal=name):  # the package's modules: what runs
        try:
            module = ast.parse(index.tree.read(path).decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - a file that does not parse: its uses are not known
            return False
        keyed = {id(node.value) for node in ast.walk(module) if isinstance(node, ast.Subscript)
                 and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant)
                 and isinstance(node.ctx, ast.Load)}
        defined = {id(t) for node in module.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                   for t in (node.targets if isinstance(node, ast.Assign) else [node.target])} \
            if path == CONFIG_LOADER else set()
        for node in ast.walk(module):
            if isinstance(node, ast.alias) and node.name == name and node.asname not in (None, name):
                return False
            if isinstance(node, ast.Attribute) and node.attr == name:
                return False
            if isinstance(node, ast.Name) and node.id == name and id(node) not in keyed | defined:
                return False
    return True


def _file_gate(store, parents) -> str | None:
    """F when the store `x.A = V` runs only under `if V is not None:` and every assignment of V
    in its function is `V = d.get("A"[, None])` (config.json's own key A) or one under
    `if V is None and file_or_path_exists(model, "F", ...):`: the loader stores A only when
    config.json states it or the model has the file F."""
    import ast

    assign, test = parents.get(id(store)), None
    block = parents.get(id(assign)) if isinstance(assign, ast.Assign) and len(assign.targets) == 1 else None
    if not (isinstance(block, ast.If) and assign in block.body and isinstance(assign.value, ast.Name)):
        return None
    var, test = assign.value.id, block.test
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == var
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
        return None
    fn = block
    while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        fn = parents.get(id(fn))
    if fn is None:
        return None
    files = set()
    for node in ast.walk(fn):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                isinstance(t, ast.Name) and t.id == var for t in (node.targets if isinstance(node, ast.Assign)
                                                                 else [node.target]))):
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
                and value.args and isinstance(value.args[0], ast.Constant) and value.args[0].value == store.attr \
                and (len(value.args) == 1 or isinstance(value.args[1], ast.Constant) and value.args[1].value is None):
            continue
        guard = parents.get(id(node))
        tested = _file_tested(guard.test, var) if isinstance(guard, ast.If) and node in guard.body else None
        if tested is None:
            return None
        files.add(tested)
    return files.pop() if len(files) == 1 else None


def _file_tested(test, var: str) -> str | None:
    """F of `V is None and file_or_path_exists(model, "F", ...)`."""
    import ast

    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2):
        return None
    first, call = test.values
    if not (isinstance(first, ast.Compare) and isinstance(first.left, ast.Name) and first.left.id == var
            and isinstance(first.ops[0], ast.Is) and isinstance(first.comparators[0], ast.Constant)
            and first.comparators[0].value is None):
        return None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == FILE_TEST \
            and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
        return call.args[1].value
    return None


def _gated_table(node, tables) -> list[tuple[str, str]] | None:
    """(key, value) pairs of a module table iterated as `for old, new in TABLE.items():` whose
    whole body is `if hasattr(x, old): ...` (the remap of one attribute name to another)."""
    import ast

    if not (isinstance(node, ast.For) and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2
            and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Attribute)
            and node.iter.func.attr == "items" and isinstance(node.iter.func.value, ast.Name)
            and node.iter.func.value.id in tables and len(node.body) == 1 and isinstance(node.body[0], ast.If)
            and not node.body[0].orelse):
        return None
    old = node.target.elts[0]
    test = node.body[0].test
    if not (isinstance(old, ast.Name) and isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr" and len(test.args) == 2 and isinstance(test.args[1], ast.Name)
            and test.args[1].id == old.id):
        return None
    table = tables[node.iter.func.value.id]
    pairs = []
    for k, v in zip(table.keys, table.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
                and isinstance(v.value, str)):
            return None
        pairs.append((k.value, v.value))
    return pairs


def _field(resolver, obj: Obj, name: str):
    if isinstance(obj, Derived):
        known = obj.override(name)
        if known is not None:
            return known
        if obj.path is None:  # built here without it: the declared default
            return _declared_default(resolver, obj, name)
    return resolver.attribute(obj, name)


def _declared_default(resolver, obj: Derived, name: str):
    from srcreview.vllm.runtime import UNDECIDED, static_default

    cls = resolver.canonical(obj.cls) if isinstance(obj.cls, str) else None
    info = resolver.index._class_info_abs(cls) if cls else None
    field = info.field(name) if info is not None else None
    if obj.opaque or field is None:
        return Unknown(f"{name} of a {MODEL_CONFIG} built with arguments the analysis does not see")
    value = static_default(resolver.index, info, field)
    return Unknown(f"the default of {MODEL_CONFIG}.{name}") if value is UNDECIDED else Const(value)


def as_value(document: dict, source: str, ref: str = "", prefix: str = "") -> HfConfig:
    """An HfConfig whose attributes are the keys of `document` (nested objects too)."""
    fields = tuple((key, _const(value, source, ref, f"{prefix}{key}")) for key, value in sorted(document.items()))
    return HfConfig(cls=None, nonnull=True, origin=source, overrides=fields, source=source, ref=ref, prefix=prefix)


def _const(value, source: str, ref: str, key: str):
    if isinstance(value, dict):
        return as_value(value, source, ref, f"{key}.")
    if isinstance(value, list):
        if any(isinstance(v, (dict, list)) for v in value):
            return Unknown(f"a nested list in {source}")
        return Const(tuple(value))
    return Const(value)
