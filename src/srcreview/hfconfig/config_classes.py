"""What transformers' config class of a `model_type` does with a config.json, read from its source.

vLLM hands config.json to transformers (`AutoConfig.from_pretrained`), which builds the config
class the `model_type` maps to. Since transformers 5 those classes are `@strict` dataclasses:
class annotations with defaults are fields, `__post_init__` (and what it calls) may store
more, `PreTrainedConfig.__post_init__` sets config.json's remaining keys with a
`setattr(self, key, value)` loop over its `**kwargs`, `attribute_map` renames, properties
compute. Which version runs is the runtime profile's (`[runtime] packages = { transformers =
"X.Y.Z" }`); its wheel gives these few files.

These files are read with plain `ast`, not srcreview.index: the index models one vLLM tree
(its module names, its symbol tables, its cache) and these are facts about another project's
classes, asked once per model type (a field's literal default, the names any construction-path
method stores on `self`). What this module decides, it decides by that reading only:

- a name config.json does not state is a field's literal default when no construction-path
  method of the class's MRO stores into it (a store under `if self.X is None:` does not fire
  for a default that is not None);
- it is absent when it is no field, property, method, class attribute or `attribute_map`
  name, no method stores it on `self` (by name, or through a `setattr` whose name is drawn
  from a literal table or from `**kwargs`, which holds config.json's own keys), and no class
  of the MRO defines `__getattr__`;
- anything else stays open, naming what keeps it open (the store and its line).

"Construction path": `__init__`, `__post_init__`, `validate_*` (what `@strict` runs) and every
method they reach through `self.m()` / `super().m()` or a store to a property (its setter).
Methods vLLM calls itself later (`update`) are vLLM's to account for.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from srcreview.core.records import Field, Record

CONFIG_UTILS = "transformers/configuration_utils.py"
AUTO_DIR = "transformers/models/auto/"
MAPPING_NAME = "CONFIG_MAPPING_NAMES"  # model_type -> config class name, in configuration_auto.py
SPECIAL_NAME = "SPECIAL_MODEL_TYPE_TO_MODULE_NAME"  # model_type -> module, where the two differ
TEXT_CONFIG = "get_text_config"
_ROOTS = ("__init__", "__post_init__")
_MUTATORS = frozenset({"setdefault", "update", "append", "extend", "insert", "pop", "popitem", "clear",
                       "remove", "add", "discard", "__setitem__", "__delitem__", "sort", "reverse"})
_NO_LITERAL = object()
# builtins that read an object without storing on it: passing `self` to them stores nothing
_READERS = frozenset({"getattr", "hasattr", "isinstance", "issubclass", "type", "id", "len", "str", "repr",
                      "super", "callable", "vars", "print", "hash", "bool", "iter", "copy", "deepcopy"})


def kept(path: str) -> bool:
    """Whether a wheel member is one of the files these facts are read from."""
    if not path.startswith("transformers/") or not path.endswith(".py"):
        return False
    name = path.rsplit("/", 1)[-1]
    return (name.startswith("configuration_") or path.startswith(AUTO_DIR)
            or path in ("transformers/modeling_rope_utils.py", "transformers/utils/hub.py")
            or path.startswith("transformers/integrations/heterogeneity/"))


class Site(Record):
    """One place in transformers' source: `Class.method (path:line)`."""

    where: str
    guarded: bool = Field(default=False, description="a store under `if self.X is None:` (only fires for None)")
    gate: str | None = Field(default=None, description="runs only when config.json states this key (a "
                                                       "`kwargs.pop(K)` value tested `is not None`)")
    converts: bool = Field(default=False, description="`self.X = SubConfig(**self.X)`: the stated dict, as a "
                                                      "config object (its keys kept)")


class ConfigClass(Record):
    """The facts of one model type's config class at one transformers version (JSON-serialisable)."""

    version: str = Field(description="the transformers version these facts were read from")
    model_type: str
    name: str = Field(default="", description="the config class, e.g. LlamaConfig")
    path: str = ""
    mro: tuple[str, ...] = Field(default=(), description="the class's MRO inside transformers, as Class (path)")
    defaults: dict[str, Any] = Field(default_factory=dict, description="fields with a literal default")
    fields: dict[str, str] = Field(default_factory=dict, description="every field: where it is declared")
    stores: dict[str, tuple[Site, ...]] = Field(default_factory=dict,
                                                description="names construction-path methods store on self")
    dynamic: tuple[Site, ...] = Field(default=(), description="stores on self whose name is not bounded")
    popped: dict[str, str] = Field(default_factory=dict, description="config.json keys popped from **kwargs")
    added: dict[str, str] = Field(default_factory=dict, description="keys a method adds to **kwargs (then as if "
                                                                    "config.json stated them)")
    members: dict[str, str] = Field(default_factory=dict,
                                    description="properties, methods and class attributes: where each is")
    presence: dict[str, str] = Field(default_factory=dict, description="properties that only test whether the "
                                     "instance has a name (`return hasattr(self, 'N')`): property -> N")
    attribute_map: dict[str, str] = Field(default_factory=dict)
    hooks: tuple[Site, ...] = Field(default=(), description="__getattr__ / __getattribute__ definitions that "
                                    "may answer or refuse any name")
    text_config_names: tuple[str, ...] | None = Field(
        default=None, description="the names get_text_config looks for, when its body was read")
    text_config_from: str = ""
    dict_stores: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None = Field(
        default=None, omit_none=True,
        description="the keys `get_config_dict` stores into config.json's object (the rest is config.json as "
                    "read), each with the tests it is stored under: (\"absent\", K) config.json lacks K, "
                    "(\"kwarg\", K) the call passes keyword K, (\"other\", text); None: not read as such")
    dict_redirects: tuple[str, ...] = Field(default=(), description="config.json keys that make "
                                            "`get_config_dict` read another file instead")
    dict_requires: tuple[str, ...] = Field(default=(), description="config.json keys whose absence lets "
                                           "`get_config_dict` hand the dict to code not read here")
    unknown: str | None = Field(default=None, description="why the class facts are not known")

    def label(self) -> str:
        return f"{self.name or self.model_type} of transformers {self.version}"


# ---------------------------------------------------------------------------------------------
# deciding a read


def decide(facts: ConfigClass, name: str, stated: bool, keys: frozenset = frozenset()) -> tuple[str, Any, str]:
    """("value", v, why) / ("absent", None, why) / ("open", None, why) for reading `name` on the
    config built from a config.json whose keys are `keys`, which states `name` (`stated`) or
    not; `value` for a stated key means config.json's own value."""
    label = facts.label()
    if facts.unknown:
        return "open", None, facts.unknown
    keys = frozenset(keys) | frozenset(facts.added)  # a key the class adds to **kwargs opens its gate too
    live = [h for h in facts.hooks if h.gate is None or h.gate in keys]
    if live:
        return "open", None, f"{label}: {live[0].where} may answer or refuse any name"
    dynamic = [d for d in facts.dynamic if d.gate is None or d.gate in keys]
    facts = facts.model_copy(update={"dynamic": tuple(dynamic), "stores": {
        k: tuple(v for v in sites if v.gate is None or v.gate in keys) for k, sites in facts.stores.items()}})
    if name in facts.attribute_map or name in facts.attribute_map.values():
        return "open", None, f"{label}: {name} is renamed through attribute_map"
    stores = facts.stores.get(name, ())
    if stated:
        if name in facts.popped:
            return "open", None, f"{label}: {facts.popped[name]} takes {name} out of the keys it sets"
        if name in facts.members and not _plain_member(facts, name):
            return "open", None, f"{label}: {name} is {facts.members[name]}"
        if stores:
            return "open", None, f"{label}: {stores[0].where} stores {name}"
        if "*" in facts.popped and name not in facts.fields:
            return "open", None, f"{label}: {facts.popped['*']} may take {name} out of the keys it sets"
        if facts.dynamic:
            return "open", None, f"{label}: {facts.dynamic[0].where} may store any name"
        return "value", None, f"config.json's value ({label} keeps it)"
    if name in facts.presence and name not in keys:
        tested = facts.presence[name]
        outcome, _, why = decide(facts, tested, tested in keys, keys)
        if outcome != "open":
            return "value", outcome == "value", f"{name} ({facts.members[name]}) tests for {tested}: {why}"
    if name in facts.members:
        return "open", None, f"{label}: {name} is {facts.members[name]}"
    if facts.dynamic:
        return "open", None, f"{label}: {facts.dynamic[0].where} may store any name"
    if name in facts.fields:
        if name not in facts.defaults:
            return "open", None, f"{label}: the default of {name} ({facts.fields[name]}) is not a literal"
        default = facts.defaults[name]
        firing = [s for s in stores if not (s.guarded and default is not None)]
        if firing:
            return "open", None, f"{label}: {firing[0].where} stores {name}"
        return "value", default, f"the default of {name} in {label} ({facts.fields[name]})"
    if stores:
        return "open", None, f"{label}: {stores[0].where} stores {name}"
    return "absent", None, f"{label}: no field, member or store of {name} in {facts.name}'s MRO"


def _plain_member(facts: ConfigClass, name: str) -> bool:
    """A class attribute (not a property or method) that config.json's key replaces on the instance."""
    return facts.members[name].startswith("a class attribute")


def decide_stated(facts: ConfigClass, name: str, value: Any, keys: frozenset = frozenset(),
                  nested: bool = False) -> tuple[str, Any, str]:
    """`decide` for a stated key whose value is known (`nested`: a JSON object): a store under
    `if self.X is None:` does not fire for a value that is not None, and one that builds the
    sub-config from the stated object (`self.X = SubConfig(**self.X)`) keeps its keys."""
    if (value is not None or nested) and not facts.unknown:
        stores = facts.stores.get(name, ())
        if stores and all(s.guarded or (nested and s.converts) for s in stores):
            trimmed = facts.model_copy(update={"stores": {k: v for k, v in facts.stores.items() if k != name}})
            return decide(trimmed, name, True, keys)
    return decide(facts, name, True, keys)


# ---------------------------------------------------------------------------------------------
# reading the source


class _Class:
    def __init__(self, path: str, node: ast.ClassDef):
        self.path, self.node, self.name = path, node, node.name
        self.bases = [_base_name(b) for b in node.bases]
        self.methods: dict[str, list[ast.FunctionDef]] = {}
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.methods.setdefault(stmt.name, []).append(stmt)  # type: ignore[arg-type]

    def where(self, node: ast.AST | None = None, method: str = "") -> str:
        line = node.lineno if node is not None else self.node.lineno  # type: ignore[attr-defined]
        return f"{self.name}{'.' + method if method else ''} ({self.path}:{line})"


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # Generic[T]
        return _base_name(node.value)
    return None


def config_class(files: dict[str, str], version: str, model_type: str) -> ConfigClass:
    """The facts of `model_type`'s config class in `files` (wheel path -> text)."""
    base = ConfigClass(version=version, model_type=model_type)
    mapping, special = _mappings(files)
    if not mapping:
        return base.model_copy(update={"unknown": f"transformers {version}: no literal {MAPPING_NAME} was read"})
    name = mapping.get(model_type)
    if name is None:
        return base.model_copy(update={"unknown": f"transformers {version} maps no config class to model_type "
                                                  f"{model_type!r}"})
    module = special.get(model_type, model_type.replace("-", "_"))
    classes = _classes(files)
    path = f"transformers/models/{module}/configuration_{module}.py"
    own = next((c for c in classes.get(name, []) if c.path == path), None)
    if own is None:
        return base.model_copy(update={"name": name, "unknown": f"transformers {version}: {name} is not defined "
                                                                f"in {path}"})
    mro, why = _mro(own, classes)
    if mro is None:
        return base.model_copy(update={"name": name, "path": path, "unknown": f"transformers {version}: {why}"})
    return _facts(base.model_copy(update={"name": name, "path": path}), mro, classes)


def _mappings(files: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """CONFIG_MAPPING_NAMES and SPECIAL_MODEL_TYPE_TO_MODULE_NAME as their literals (and their
    literal `.update({...})` calls) in the auto package build them."""
    mapping: dict[str, str] = {}
    special: dict[str, str] = {}
    order = sorted(p for p in files if p.startswith(AUTO_DIR) and (MAPPING_NAME in files[p] or SPECIAL_NAME in files[p])
                   and p.rsplit("/", 1)[-1] in ("configuration_auto.py", "auto_mappings.py"))
    order.sort(key=lambda p: p.endswith("configuration_auto.py"))  # it imports and updates the others
    for path in order:
        try:
            tree = ast.parse(files[path])
        except SyntaxError:
            continue
        for stmt in tree.body:
            target, value = None, None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                target, value = stmt.targets[0].id, stmt.value
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "update" \
                    and isinstance(stmt.value.func.value, ast.Name) and len(stmt.value.args) == 1:
                table = mapping if stmt.value.func.value.id == MAPPING_NAME else \
                    special if stmt.value.func.value.id == SPECIAL_NAME else None
                if table is not None:
                    table.update(_str_pairs(stmt.value.args[0]) or {})
                continue
            if target not in (MAPPING_NAME, SPECIAL_NAME) or value is None:
                continue
            table = mapping if target == MAPPING_NAME else special
            pairs = _str_pairs(value)
            if pairs is not None:
                table.update(pairs)
    return mapping, special


def _str_pairs(node: ast.expr) -> dict[str, str] | None:
    """A literal mapping of strings: a dict, `OrderedDict([(k, v), ...])`, `OrderedDict(**{...}, **NAME)`
    (the named part is the table itself, already read)."""
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                continue  # `**NAME`: the table being extended
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
                    and isinstance(v.value, str)):
                return None
            out[k.value] = v.value
        return out
    if isinstance(node, ast.Call) and _base_name(node.func) in ("OrderedDict", "dict"):
        out = {}
        for arg in node.args:
            if isinstance(arg, (ast.List, ast.Tuple)):
                for item in arg.elts:
                    if not (isinstance(item, ast.Tuple) and len(item.elts) == 2
                            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in item.elts)):
                        return None
                    out[item.elts[0].value] = item.elts[1].value  # type: ignore[attr-defined]
            else:
                pairs = _str_pairs(arg)
                if pairs is None:
                    return None
                out.update(pairs)
        for kw in node.keywords:
            if kw.arg is None:
                pairs = _str_pairs(kw.value) if isinstance(kw.value, ast.Dict) else {}
                if pairs is None:
                    return None
                out.update(pairs)
            elif isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                out[kw.arg] = kw.value.value
            else:
                return None
        return out
    return None


class _Classes:
    """Class name -> its definitions in the kept files, parsing a file only when a name it
    defines at top level is asked for (a text scan finds the candidates: ~500 files, a few used)."""

    _DEF = re.compile(r"^class\s+([A-Za-z_]\w*)", re.M)

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.where: dict[str, list[str]] = {}
        for path in sorted(files):
            if kept(path):
                for name in set(self._DEF.findall(files[path])):
                    self.where.setdefault(name, []).append(path)
        self.parsed: dict[str, dict[str, _Class]] = {}
        self.functions: dict[str, dict[str, ast.FunctionDef]] = {}

    def _module(self, path: str) -> dict[str, _Class]:
        if path not in self.parsed:
            try:
                tree = ast.parse(self.files[path])
            except SyntaxError:
                tree = ast.Module(body=[], type_ignores=[])
            self.parsed[path] = {s.name: _Class(path, s) for s in tree.body if isinstance(s, ast.ClassDef)}
            self.functions[path] = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
        return self.parsed[path]

    def function(self, path: str, name: str) -> ast.FunctionDef | None:
        """A module-level function of a file already read (a helper a method hands `self` to)."""
        self._module(path)
        return self.functions.get(path, {}).get(name)

    def get(self, name: str, default=None) -> list[_Class]:
        found = [self._module(p)[name] for p in self.where.get(name, ()) if name in self._module(p)]
        return found if found else ([] if default is None else default)

    def __getitem__(self, name: str) -> list[_Class]:
        return self.get(name)


def _classes(files: dict[str, str]) -> _Classes:
    return _Classes(files)


def _mro(cls: _Class, classes: _Classes) -> tuple[list[_Class] | None, str]:
    """C3 linearisation over the classes read; None (and why) when a base is not one of them,
    or its name is defined more than once (which one is imported is not read)."""
    def lin(c: _Class, depth: int) -> list[_Class] | None:
        if depth > 30:
            return None
        seqs = []
        for base in c.bases:
            if base in (None, "object"):
                continue
            found = classes.get(base or "", [])
            if len(found) != 1:
                raise LookupError(f"base {base} of {c.name} is {'defined more than once' if found else 'not read'}")
            sub = lin(found[0], depth + 1)
            if sub is None:
                return None
            seqs.append(sub)
        seqs.append([classes[b][0] for b in c.bases if b not in (None, "object")])
        out = [c]
        while any(seqs):
            for seq in seqs:
                if not seq:
                    continue
                head = seq[0]
                if not any(head in s[1:] for s in seqs):
                    break
            else:
                return None
            out.append(head)
            seqs = [s[1:] if s and s[0] is head else s for s in seqs]
        return out

    try:
        found = lin(cls, 0)
    except LookupError as exc:
        return None, str(exc)
    return (found, "") if found is not None else (None, f"the MRO of {cls.name} is not consistent")


def _facts(base: ConfigClass, mro: list[_Class], classes: _Classes) -> ConfigClass:
    fields: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    members: dict[str, str] = {}
    presence: dict[str, str] = {}
    attribute_map: dict[str, str] = {}
    for cls in reversed(mro):  # a subclass's declaration wins
        for stmt in cls.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                if "ClassVar" in ast.unparse(stmt.annotation):
                    members[name] = f"a class attribute of {cls.where(stmt)}"
                    fields.pop(name, None)
                    defaults.pop(name, None)
                    if name == "attribute_map":
                        attribute_map = _literal_map(stmt.value, attribute_map)
                    continue
                members.pop(name, None)
                fields[name] = cls.where(stmt)
                literal = _literal(stmt.value) if stmt.value is not None else _NO_LITERAL
                if literal is _NO_LITERAL:
                    defaults.pop(name, None)
                else:
                    defaults[name] = literal
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        members[target.id] = f"a class attribute of {cls.where(stmt)}"
                        fields.pop(target.id, None)
                        defaults.pop(target.id, None)
                        if target.id == "attribute_map":
                            attribute_map = _literal_map(stmt.value, attribute_map)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                prop = any(_base_name(d) == "property" or (isinstance(d, ast.Attribute) and d.attr in
                                                           ("setter", "getter", "deleter"))
                           for d in stmt.decorator_list)
                members[stmt.name] = f"a {'property' if prop else 'method'} of {cls.where(stmt)}"
                presence.pop(stmt.name, None)
                tested = _presence_test(stmt) if [_base_name(d) for d in stmt.decorator_list] == ["property"] \
                    else None
                if tested is not None:
                    presence[stmt.name] = tested
                fields.pop(stmt.name, None)
                defaults.pop(stmt.name, None)
    if attribute_map is None:
        attribute_map = {}
    dict_stores, dict_redirects, dict_requires = _config_dict_reading(mro, classes)
    stores, dynamic, popped, added = _stores(mro, members, classes, _class_tables(mro))
    hooks = _hooks(mro, stores)
    names, names_from = _text_config_names(mro)
    return base.model_copy(update={
        "mro": tuple(f"{c.name} ({c.path})" for c in mro), "defaults": defaults, "fields": fields,
        "stores": stores, "dynamic": dynamic, "popped": popped, "added": added, "members": members,
        "presence": presence,
        "attribute_map": attribute_map or {}, "hooks": hooks, "text_config_names": names,
        "text_config_from": names_from, "dict_stores": dict_stores, "dict_redirects": dict_redirects,
        "dict_requires": dict_requires,
        "unknown": None if attribute_map is not None else "attribute_map is not a literal"})


CONFIG_DICT_READERS = ("get_config_dict", "_get_config_dict")

_CONFIG_DICT = "config_dict"
_FROM_JSON = "cls._dict_from_json_file"


def _config_dict_reading(mro: list[_Class], classes: _Classes) -> tuple[tuple | None, tuple[str, ...],
                                                                         tuple[str, ...]]:
    """How `PreTrainedConfig.get_config_dict` makes the dict vLLM reads a model's config from, when
    its source reads as: the object `_dict_from_json_file` makes (or, under an `if gguf_file` test,
    a GGUF file's: vLLM passes none), read again from another file only under `if "K" in
    config_dict:`, changed only by stores of literal keys, and handed to a function this reading
    does not see only behind `"K" not in config_dict and ...`.

    (the stores of literal keys, each with its tests (ConfigClass.dict_stores), keys config.json
    must not have (they name another file), keys config.json must have (so the unseen function
    does not run)); (None, (), ()) for anything else."""
    defs = {}
    for cls in mro:
        for name in CONFIG_DICT_READERS:
            if name in cls.methods and name not in defs:
                defs[name] = (cls, cls.methods[name][-1])
    unread: tuple[None, tuple[str, ...], tuple[str, ...]] = (None, (), ())
    if set(defs) != set(CONFIG_DICT_READERS):
        return unread
    adds: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    # keys the two functions store into `kwargs` themselves: a test of one is not the caller's keywords
    stored_kwargs = {_literal(n.slice) for _, fn in defs.values() for n in ast.walk(fn)
                     if isinstance(n, ast.Subscript) and _named(n.value, "kwargs") and isinstance(n.ctx, ast.Store)}
    redirects: set[str] = set()
    required: set[str] = set()
    for name, (cls, fn) in defs.items():
        gguf = _under(fn, lambda test: "gguf_file" in ast.unparse(test))
        tests = _if_tests(fn)
        rereads: dict[int, str] = {}  # node id -> K of an enclosing `if "K" in config_dict:`
        guarded: dict[int, set[str]] = {}  # node id -> Ks of `"K" not in config_dict and ...` before it
        for node in ast.walk(fn):
            if isinstance(node, ast.If) and _dict_test(node.test, ast.In):
                for stmt in node.body:
                    rereads.update({id(n): _dict_test(node.test, ast.In) for n in ast.walk(stmt)})
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                keys: set[str] = set()
                for value in node.values:
                    for n in ast.walk(value):
                        guarded.setdefault(id(n), set()).update(keys)
                    key = _dict_test(value, ast.NotIn)
                    if key:
                        keys.add(key)
        for node in ast.walk(fn):
            if isinstance(node, ast.Subscript) and _named(node.value, _CONFIG_DICT) \
                    and isinstance(node.ctx, (ast.Store, ast.Del)):
                key = _literal(node.slice)
                if not isinstance(key, str) or isinstance(node.ctx, ast.Del):
                    return unread
                guards = tuple(_guard(t) for t in tests.get(id(node), ()))
                adds.add((key, tuple(("other", k) if kind == "kwarg" and k in stored_kwargs else (kind, k)
                                     for kind, k in guards)))
            elif isinstance(node, ast.Assign) and any(_CONFIG_DICT in _target_names(t) for t in node.targets):
                call = ast.unparse(node.value.func) if isinstance(node.value, ast.Call) else ""
                if name == "_get_config_dict" and call != _FROM_JSON and id(node) not in gguf:
                    return unread
                if name == "get_config_dict":
                    if call != "cls._get_config_dict":
                        return unread
                    if id(node) in rereads:
                        redirects.add(rereads[id(node)])
            elif isinstance(node, ast.Call) and any(_named(a, _CONFIG_DICT) for a in (*node.args, *(
                    k.value for k in node.keywords))):
                if isinstance(node.func, ast.Attribute) and _named(node.func.value, _CONFIG_DICT):
                    return unread  # config_dict.update(...), .pop(...)
                helper = classes.function(cls.path, node.func.id) if isinstance(node.func, ast.Name) else None
                if helper is None or _mutates_param(helper):
                    if not guarded.get(id(node)):
                        return unread
                    required.update(guarded[id(node)])
            elif isinstance(node, ast.Attribute) and _named(node.value, _CONFIG_DICT) and node.attr in _MUTATORS:
                return unread
    return tuple(sorted(adds)), tuple(sorted(redirects)), tuple(sorted(required))


def _if_tests(fn: ast.AST) -> dict[int, list[ast.expr]]:
    """Node id -> the conjuncts of the tests of the `if`s whose body holds it (an `else` branch
    or a loop counts as a test not known here)."""
    out: dict[int, list[ast.expr]] = {}

    def visit(node: ast.AST, tests: list[ast.expr]) -> None:
        out[id(node)] = tests
        if isinstance(node, ast.If):
            visit(node.test, tests)
            here = list(node.test.values) if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                else [node.test]
            for stmt in node.body:
                visit(stmt, tests + here)
            for stmt in node.orelse:
                visit(stmt, tests + [ast.Constant("else")])
            return
        for child in ast.iter_child_nodes(node):
            visit(child, tests)

    visit(fn, [])
    return out


def _guard(test: ast.expr) -> tuple[str, str]:
    """One conjunct a store is under: ("absent", K) for `"K" not in config_dict`, ("kwarg", K)
    for `"K" in kwargs`, else ("other", its text)."""
    key = _dict_test(test, ast.NotIn)
    if key:
        return "absent", key
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
            and _named(test.comparators[0], "kwargs") and isinstance(_literal(test.left), str):
        return "kwarg", _literal(test.left)
    return "other", ast.unparse(test)


def _under(fn: ast.AST, test) -> set[int]:
    """Ids of the nodes inside the body of an `if` whose test `test` accepts."""
    return {id(n) for node in ast.walk(fn) if isinstance(node, ast.If) and test(node.test)
            for stmt in node.body for n in ast.walk(stmt)}


def _dict_test(node: ast.AST, op) -> str:
    """K of `"K" in config_dict` (op ast.In) or `"K" not in config_dict` (ast.NotIn), else ""."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], op) \
            and _named(node.comparators[0], _CONFIG_DICT):
        key = _literal(node.left)
        return key if isinstance(key, str) else ""
    return ""


def _target_names(target: ast.AST) -> set[str]:
    """The names an assignment target binds (`a`, `a, b`), not those it stores into (`a[k]`)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for elt in target.elts for n in _target_names(elt)}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _mutates_param(fn: ast.FunctionDef) -> bool:
    """Whether a function may change the object one of its parameters holds (a store into it,
    a mutating method, or handing it on)."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id in params:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params \
                and node.attr in _MUTATORS:
            return True
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id in params for a in node.args):
            if not (isinstance(node.func, ast.Name) and node.func.id in _READERS):
                return True
    return False


def _presence_test(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """N when the function's whole body (its docstring aside) is `return hasattr(self, "N")`."""
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) \
        and isinstance(fn.body[0].value, ast.Constant) else fn.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return None
    call = body[0].value
    if _base_name(call.func) == "hasattr" and len(call.args) == 2 and not call.keywords and _is_self(call.args[0]) \
            and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
        return call.args[1].value
    return None


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return _NO_LITERAL
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_LITERAL
    if isinstance(value, (set, frozenset, bytes, complex)):
        return _NO_LITERAL  # not a JSON value
    return value


def _literal_map(node: ast.expr | None, old: dict[str, str]) -> dict[str, str]:
    value = _literal(node)
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return value
    return {"<not a literal>": "<not a literal>"} | old  # keeps every read of it open


def _methods_named(mro: list[_Class], name: str) -> list[tuple[_Class, ast.FunctionDef]]:
    return [(c, fn) for c in mro for fn in c.methods.get(name, [])]


def _class_tables(mro: list[_Class]) -> dict[str, tuple[str, ...] | None]:
    """Class attributes as the MRO resolves them (a subclass's wins): the string keys of a dict
    literal, or None for any other value (a loop over it may name anything)."""
    out: dict[str, tuple[str, ...] | None] = {}
    for cls in reversed(mro):
        for stmt in cls.node.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
                if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
            value = getattr(stmt, "value", None)
            keys = list(value.keys) if isinstance(value, ast.Dict) else None
            literal = keys is not None and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys)
            for target in targets:
                if isinstance(target, ast.Name):
                    names = tuple(str(k.value) for k in keys or () if isinstance(k, ast.Constant))
                    out[target.id] = names if literal else None
    return out


def _stores(mro: list[_Class], members: dict[str, str], classes, tables=None) -> tuple[dict, tuple, dict, dict]:
    """Names the construction-path methods store on `self`, the unbounded stores, and the
    config.json keys they pop from `**kwargs`; a store reached only under a popped key's
    `is not None` test carries that key as its gate."""
    roots = set(_ROOTS) | {m for c in mro for m in c.methods if m.startswith("validate")}
    todo: list[tuple[str, str | None]] = [(m, None) for m in sorted(roots)]
    seen: set[tuple[str, str | None]] = set()
    stores: dict[str, list[Site]] = {}
    dynamic: list[Site] = []
    popped: dict[str, str] = {}
    added: dict[str, str] = {}
    while todo:
        method, gate = todo.pop()
        if (method, gate) in seen or (method, None) in seen:
            continue
        seen.add((method, gate))
        for cls, fn in _methods_named(mro, method):
            walker = _MethodWalker(cls, fn, classes, gate, tables or {})
            walker.visit_body()
            for name, site in walker.stores:
                stores.setdefault(name, []).append(site)
                if members.get(name, "").startswith("a property"):
                    todo.append((name, site.gate))  # `self.p = v` runs p's setter
            dynamic.extend(walker.dynamic)
            popped.update({k: v for k, v in walker.popped.items() if k not in popped})
            added.update({k: v for k, v in walker.added.items() if k not in added})
            todo.extend(walker.calls)
    return {k: tuple(v) for k, v in sorted(stores.items())}, tuple(dynamic), popped, added


def _hooks(mro: list[_Class], stores: dict[str, tuple[Site, ...]]) -> tuple[Site, ...]:
    """`__getattr__` (any name may exist) and each `__getattribute__` that does more than
    hand the read to `super()` (after an `attribute_map` rename): one that raises only under
    a test on an instance-dict key K (`__dict__.get("K")`) is gated as K's stores are."""
    out = []
    for cls in mro:
        for fn in cls.methods.get("__getattr__", []):
            out.append(Site(where=cls.where(fn, "__getattr__")))
        for fn in cls.methods.get("__getattribute__", []):
            returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
            delegates = all(isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Attribute)
                            and r.value.func.attr == "__getattribute__" and isinstance(r.value.func.value, ast.Call)
                            and _base_name(r.value.func.value.func) == "super" for r in returns)
            raises = any(isinstance(n, ast.Raise) for n in ast.walk(fn))
            where = cls.where(fn, "__getattribute__")
            if not delegates:
                out.append(Site(where=where))
            elif raises:
                keys = [n.args[0].value for n in ast.walk(fn) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args
                        and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)]
                sites = stores.get(keys[0], ()) if len(keys) == 1 else ()
                if len(keys) == 1 and all(s.gate is not None for s in sites):
                    out.extend(Site(where=where, gate=s.gate) for s in sites)  # never raises otherwise
                else:
                    out.append(Site(where=where))
    return tuple(out)


class _MethodWalker:
    """One method's stores on `self` (named, guarded by `if self.X is None:`, drawn from a table,
    or unbounded), the methods it calls on self, the literal keys it pops from **kwargs."""

    def __init__(self, cls: _Class, fn: ast.FunctionDef, classes, gate: str | None = None, tables=None,
                 depth: int = 0):
        self.cls, self.fn, self.classes = cls, fn, classes
        self.tables = tables or {}
        self.depth = depth
        self.kwargs = fn.args.kwarg.arg if fn.args.kwarg is not None else None
        self.stores: list[tuple[str, Site]] = []
        self.dynamic: list[Site] = []
        self.popped: dict[str, str] = {}
        self.calls: list[tuple[str, str | None]] = []
        self.gate = gate  # the popped key the block being walked runs under
        self.locals_popped: dict[str, str] = {}  # local -> the key `local = kwargs.pop("K", None)` took
        self.added: dict[str, str] = {}
        # locals bound once only: a gate `if local is not None:` holds only for them
        bound: dict[str, int] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound[node.id] = bound.get(node.id, 0) + 1
        self.once = {name for name, count in bound.items() if count == 1}

    def site(self, node, guarded: bool = False) -> Site:
        return Site(where=self.cls.where(node, self.fn.name), guarded=guarded, gate=self.gate)

    def visit_body(self) -> None:
        self._block(self.fn.body, guard=None, loops={})

    def _block(self, body, guard, loops) -> None:
        for stmt in body:
            self._stmt(stmt, guard, loops)

    def _stmt(self, stmt, guard, loops) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                and stmt.value.func.attr == "pop" and isinstance(stmt.value.func.value, ast.Name) \
                and stmt.value.func.value.id == self.kwargs and stmt.value.args \
                and isinstance(stmt.value.args[0], ast.Constant) and isinstance(stmt.value.args[0].value, str) \
                and (len(stmt.value.args) == 1 or (isinstance(stmt.value.args[1], ast.Constant)
                                                   and stmt.value.args[1].value is None)):
            self.locals_popped[stmt.targets[0].id] = stmt.value.args[0].value
        if isinstance(stmt, ast.If):
            name = _none_guard(stmt.test)
            self._exprs(stmt.test, loops)
            popped = _not_none(stmt.test)
            if popped in self.locals_popped and popped in self.once and self.gate is None and not stmt.orelse:
                self.gate = self.locals_popped[popped]  # runs only when config.json states that key
                self._block(stmt.body, name, loops)
                self.gate = None
                return
            self._block(stmt.body, name, loops)
            self._block(stmt.orelse, None, loops)
            return
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._exprs(stmt.iter, loops)
            if self._table_keys(stmt.iter) == ():
                self._block(stmt.orelse, None, loops)  # over an empty class table: the body never runs
                return
            bound = dict(loops)
            names = self._loop_names(stmt)
            for target, values in names.items():
                bound[target] = values
            self._block(stmt.body, None, bound)
            self._block(stmt.orelse, None, loops)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._block(stmt.body, None, loops)  # a nested function may run: its stores count
            return
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        elif isinstance(stmt, ast.Delete):
            targets = list(stmt.targets)
        for target in targets:
            self._target(target, stmt, guard)
            if self.kwargs and any(isinstance(n, ast.Name) and n.id == self.kwargs for n in ast.walk(target)) \
                    and not self._kwargs_through_method(stmt):
                # **kwargs rebound from elsewhere: its keys may be gone, or others added (then set)
                self.popped.setdefault("*", self.site(stmt).where)
                self.dynamic.append(self.site(stmt))
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id == self.kwargs:
                self._kwargs_key(target.slice, stmt)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                self._stmt(child, None, loops)
            elif isinstance(child, ast.expr) and not any(child is t for t in targets):
                self._exprs(child, loops)
            elif isinstance(child, (ast.excepthandler, ast.withitem, ast.match_case)):
                for sub in ast.iter_child_nodes(child):
                    if isinstance(sub, ast.stmt):
                        self._stmt(sub, None, loops)
                    elif isinstance(sub, ast.expr):
                        self._exprs(sub, loops)
        for target in targets:  # subscripts and attributes inside a target still read
            self._exprs(target, loops)

    def _target(self, target, stmt, guard) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._target(elt, stmt, guard)
            return
        if isinstance(target, ast.Starred):
            self._target(target.value, stmt, guard)
            return
        if _is_self_attr(target):
            value = getattr(stmt, "value", None)
            converts = isinstance(value, ast.Call) and not value.args and len(value.keywords) == 1 \
                and value.keywords[0].arg is None and _is_self_attr(value.keywords[0].value, target.attr)
            site = self.site(stmt, guarded=guard == target.attr)
            self.stores.append((target.attr, site.model_copy(update={"converts": converts}) if converts else site))
            return
        if isinstance(target, ast.Subscript):
            holder = target.value
            if _is_self_attr(holder, "__dict__"):
                key = target.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.stores.append((key.value, self.site(stmt)))
                else:
                    self.dynamic.append(self.site(stmt))
            elif _is_self_attr(holder):
                self.stores.append((holder.attr, self.site(stmt)))  # type: ignore[attr-defined]

    def _loop_names(self, stmt) -> dict[str, tuple[str, ...] | str]:
        """Loop variables drawn from a table of string literals (their values), or from the
        method's **kwargs (`"kwargs"`: config.json's own keys)."""
        out: dict[str, tuple[str, ...] | str] = {}
        it, target = stmt.iter, stmt.target
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys") \
                and isinstance(it.func.value, ast.Name) and it.func.value.id == self.kwargs:
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(first, ast.Name):
                out[first.id] = "kwargs"
            return out
        if isinstance(it, ast.Call) and _base_name(it.func) == "zip" and isinstance(target, ast.Tuple) \
                and len(target.elts) == len(it.args):
            for elt, arg in zip(target.elts, it.args, strict=True):
                values = _strings(arg)
                if isinstance(elt, ast.Name) and values is not None:
                    out[elt.id] = values
            return out
        values = _strings(it)
        if values is None:
            values = self._returned_keys(it)
        table = self._table_keys(it)
        if table is not None:
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(first, ast.Name):
                out[first.id] = table
            return out
        if isinstance(target, ast.Name) and values is not None:
            out[target.id] = values
        return out

    def _table_keys(self, it) -> tuple[str, ...] | None:
        """The keys of `self.TABLE` (`.items()`, `.keys()`, or itself) for a class attribute
        whose value is a dict literal of string keys."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys") \
                and not it.args:
            it = it.func.value
        if isinstance(it, ast.Attribute) and _is_self(it.value) and it.attr in self.tables:
            return self.tables[it.attr]
        return None

    def _returned_keys(self, node) -> tuple[str, ...] | None:
        """`Cls.method().keys()` where the method only returns one dict literal: its keys."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys":
            node = node.func.value
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and not node.args):
            return None
        found = self.classes.get(node.func.value.id, [])
        if len(found) != 1:
            return None
        fns = found[0].methods.get(node.func.attr, [])
        if len(fns) != 1:
            return None
        returns = [n for n in ast.walk(fns[0]) if isinstance(n, ast.Return)]
        if len(returns) != 1 or not isinstance(returns[0].value, ast.Dict):
            return None
        keys = returns[0].value.keys
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys):
            return None
        return tuple(k.value for k in keys)  # type: ignore[union-attr]

    def _kwargs_through_method(self, stmt) -> bool:
        """`kwargs = self.m(**kwargs)`: m's own pops and additions are walked (it is called on self)."""
        value = getattr(stmt, "value", None)
        return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and _is_self(value.func.value) \
            and not value.args and len(value.keywords) == 1 and value.keywords[0].arg is None \
            and isinstance(value.keywords[0].value, ast.Name) and value.keywords[0].value.id == self.kwargs

    def _kwargs_key(self, key, node) -> None:
        """A key added to **kwargs: the `setattr` loop over it sets that name too, and what is
        gated on config.json stating it may run."""
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.stores.append((key.value, self.site(node)))
            self.added.setdefault(key.value, self.site(node).where)
        else:
            self.dynamic.append(self.site(node))

    def _helper(self, call: ast.Call, name: str | None) -> bool:
        """`f(..., self, ...)` for a function of the same module: its stores on that parameter
        are stores on self (walked with the parameter renamed `self`); False when not resolved."""
        fn = self.classes.function(self.cls.path, name) if name and self.depth < 4 else None
        if fn is None:
            return False
        params = [a.arg for a in fn.args.args]
        param = next((params[i] for i, a in enumerate(call.args) if _is_self(a) and i < len(params)), None) or \
            next((k.arg for k in call.keywords if k.arg in params and _is_self(k.value)), None)
        if param is None or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        renamed = _Rename(param).visit(copy.deepcopy(fn))
        walker = _MethodWalker(self.cls, renamed, self.classes, self.gate, self.tables, self.depth + 1)
        walker.visit_body()
        self.stores.extend(walker.stores)
        self.dynamic.extend(walker.dynamic)
        self.calls.extend(walker.calls)
        self.added.update(walker.added)
        return True

    def _exprs(self, node, loops) -> None:
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            func = sub.func
            name = _base_name(func) if isinstance(func, ast.Name) else None
            if name in ("setattr", "delattr") and sub.args and _is_self(sub.args[0]) and len(sub.args) >= 2:
                key = sub.args[1]
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.stores.append((key.value, self.site(sub)))
                elif isinstance(key, ast.Name) and key.id in loops:
                    values = loops[key.id]
                    if values != "kwargs":  # config.json's own keys: set as stated
                        for value in values:
                            self.stores.append((value, self.site(sub)))
                else:
                    self.dynamic.append(self.site(sub))
                continue
            if name not in _READERS and any(_is_self(a) for a in [*sub.args, *(k.value for k in sub.keywords)]):
                if not self._helper(sub, name):
                    self.dynamic.append(self.site(sub))  # `f(self)`: f may store anything on it
            if not isinstance(func, ast.Attribute):
                continue
            if _is_self(func.value) or (isinstance(func.value, ast.Call) and _base_name(func.value.func) == "super"):
                self.calls.append((func.attr, self.gate))
            elif _is_self_attr(func.value, "__dict__") and func.attr in _MUTATORS:
                key = sub.args[0] if sub.args else None
                if func.attr in ("pop", "setdefault") and isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.stores.append((key.value, self.site(sub)))
                else:
                    self.dynamic.append(self.site(sub))
            elif _is_self_attr(func.value) and func.attr in _MUTATORS:
                self.stores.append((func.value.attr, self.site(sub)))  # type: ignore[attr-defined]
            elif isinstance(func.value, ast.Name) and func.value.id == self.kwargs and func.attr in ("setdefault",
                                                                                                   "update"):
                if func.attr == "setdefault" and sub.args:
                    self._kwargs_key(sub.args[0], sub)
                else:
                    self.dynamic.append(self.site(sub))
            elif isinstance(func.value, ast.Name) and func.value.id == self.kwargs and func.attr == "pop" and sub.args:
                key = sub.args[0]
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.popped.setdefault(key.value, self.site(sub).where)
                elif isinstance(key, ast.Name) and key.id in loops and loops[key.id] != "kwargs":
                    for value in loops[key.id]:
                        self.popped.setdefault(value, self.site(sub).where)
                else:
                    self.popped.setdefault("*", self.site(sub).where)


class _Rename(ast.NodeTransformer):
    """A helper's parameter that receives `self`, named `self` (a parameter of that name shadows it)."""

    def __init__(self, param: str):
        self.param = param

    def visit_Name(self, node: ast.Name) -> ast.Name:  # noqa: N802 - ast API
        if node.id == self.param:
            return ast.copy_location(ast.Name(id="self", ctx=node.ctx), node)
        if node.id == "self":
            return ast.copy_location(ast.Name(id="_self_of_caller", ctx=node.ctx), node)
        return node


def _not_none(test) -> str | None:
    """NAME for a test `NAME is not None`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id
    return None


def _strings(node) -> tuple[str, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None


def _is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _is_self_attr(node, attr: str | None = None) -> bool:
    return isinstance(node, ast.Attribute) and _is_self(node.value) and (attr is None or node.attr == attr)


def _none_guard(test) -> str | None:
    """X for a test `self.X is None`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and _is_self_attr(test.left) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.attr  # type: ignore[attr-defined]
    return None


def _text_config_names(mro: list[_Class]) -> tuple[tuple[str, ...] | None, str]:
    """The names `get_text_config` looks for, read from the one definition the MRO resolves
    it to: its tuple literals of names (`("decoder", "generator", "text_config")`), when the
    body has the shape that returns `self` when none of them is set (`config_to_return = self`)."""
    for cls in mro:
        fns = cls.methods.get(TEXT_CONFIG)
        if not fns:
            continue
        fn = fns[-1]
        where = cls.where(fn, TEXT_CONFIG)
        text = ast.unparse(fn)
        if "config_to_return = self" not in text or "hasattr(self" not in text:
            return None, where
        names: list[str] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id.endswith("possible_text_config_names"):
                if isinstance(node.value, (ast.BinOp, ast.Name)):
                    continue  # `a + b` of the tuples read here
                values = _strings(node.value)
                if values is None:
                    return None, where
                names.extend(v for v in values if v not in names)
        return (tuple(names) if names else None), where
    return None, ""
