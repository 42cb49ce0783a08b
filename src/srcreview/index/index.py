"""The Index: lazy, per-revision access to module facts, symbols, classes and constants."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.core.tags import Tag
from srcreview.index.builder import extract_facts
from srcreview.index.cache import FactsCache, reuse_enabled
from srcreview.index.facts import (
    MODULE_CODE,
    SCHEMA_VERSION,
    UNKNOWN,
    ClassFacts,
    ConstantFact,
    FieldFact,
    FunctionFacts,
    ModuleFacts,
    PendingBody,
)
from srcreview.vllm.anchors import PACKAGE_DIR

MAX_RESOLVE_DEPTH = 12
# Larger modules are not parsed (libcst, the fallback extractor, needs about 1 s and 350 MB per
# MB of source): their questions stay open. vLLM's largest module is about 0.35 MB.
MAX_PARSE_BYTES = 2_000_000
_ENUM_BASES = ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")
_GENERIC = re.compile(r"\[.*\]$", re.S)


class UnreadableSource(SourceUnavailable):
    """A module the analysis needs cannot be read or parsed: the question it serves stays
    open (plausible, tagged), never answered as if the module were absent or empty."""

    def __init__(self, path: str, reason: str, tag: Tag = "unparsable-source"):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.tag = path, reason, tag


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition found in the tree: a class, function/method, class field, module constant or module."""

    qualname: str  # absolute: "vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator.load_draft_model"
    kind: str  # "class" | "function" | "field" | "constant" | "module"
    module: str
    local: str  # module-relative qualname: "MTPSpeculator.load_draft_model" ("" for a module)
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class ClassInfo:
    """A class with what it inherits inside the tree."""

    symbol: Symbol
    facts: ClassFacts
    linearization: tuple[str, ...]  # the MRO: absolute qualnames in-tree; an out-of-tree base as written
    fields: tuple[FieldFact, ...]  # own and inherited, nearest declaration wins, base fields first
    methods: dict[str, Symbol]  # name -> nearest definition in the MRO
    properties: tuple[str, ...]
    constants: dict[str, object]  # class-level names whose value is a literal (ClassVar lists, ...)
    enum_members: tuple[tuple[str, object], ...] | None  # (name, value) when the class is an Enum

    @property
    def qualname(self) -> str:
        return self.symbol.qualname

    @property
    def mro(self) -> tuple[str, ...]:
        return self.linearization

    def field(self, name: str) -> FieldFact | None:
        return self._fields_by_name.get(name)

    @cached_property
    def _fields_by_name(self) -> dict[str, FieldFact]:
        """name -> the first field of that name (asked a hundred thousand times a review)."""
        out: dict[str, FieldFact] = {}
        for f in self.fields:
            out.setdefault(f.name, f)
        return out


@dataclass(frozen=True)
class FunctionInfo:
    symbol: Symbol
    facts: FunctionFacts
    module: ModuleFacts

    @property
    def qualname(self) -> str:
        return self.symbol.qualname


class Index:
    """Facts of one SourceTree, parsed on demand and cached by blob id + schema version."""

    def __init__(self, tree, cache_dir: Path | None = None, package: str = PACKAGE_DIR):
        self.tree = tree
        self.package = package  # the part of the tree searched by name ("" for any Python tree)
        self._cache = None
        if cache_dir is not None:
            self._cache = FactsCache(Path(cache_dir))
        self._modules: dict[str, ModuleFacts] = {}
        self._pending: dict[str, int] = {}  # path -> its bodies still pending when last loaded or stored
        self._files: set[str] | None = None
        self._module_paths: dict[str, str | None] = {}
        self._python_files: list[str] | None = None
        self._raw: dict[str, bytes] = {}
        self._class_infos: dict[str, ClassInfo | None] = {}  # None: being built (the MRO's cycle guard)
        self._resolved: dict[str, Symbol | None] = {}
        self._names: dict[str, list[str]] | None = None
        self._names_key = ""
        self.parsed: list[str] = []  # paths parsed in this run (the rest came from the cache)
        # called on a facts-cache miss before parsing: True when the facts may be cached now
        # (srcreview.index.prefetch waits for a module its worker is parsing)
        self.on_miss = None
        # called with the raw-text answers before computing a missing one: adds those another
        # process found meanwhile (the prefetch worker asks the same questions earlier)
        self.on_names_miss = None
        self.reviewed_before = False  # raw-text answers of this revision listing were on disk already
        self.unreadable: dict[str, str] = {}  # path -> why it could not be read or parsed (when asked)
        # the walks of one recipe's values (srcreview.interp.interpreter.analyzer), by bindings
        self.analyzers: dict[tuple, object] = {}
        # answers that are pure functions of this tree's facts, kept for every review of it, by
        # asker (srcreview.interp.resolver: which definition a name in a scope is)
        self.memo: dict[str, dict] = {}

    # -- files and modules -------------------------------------------------------------------
    def _all_files(self) -> set[str]:
        if self._files is None:
            # in-tree symlinks are modules too (Python imports them); one leaving the tree is
            # listed but never read (UnreadableSource when a question needs it)
            self._files = set(self.tree.files()) | set(getattr(self.tree, "symlinks", list)())
        return self._files

    def module_path(self, module: str) -> str | None:
        """The file of a dotted module name, or None when the tree has no such module (asked about
        ten thousand times a review: kept, the tree's files do not change under an Index)."""
        try:
            return self._module_paths[module]
        except KeyError:
            pass
        found = None
        if module and all(part.isidentifier() for part in module.split(".")):
            base = module.replace(".", "/")
            files = self._all_files()
            found = next((c for c in (f"{base}.py", f"{base}/__init__.py") if c in files), None)
        self._module_paths[module] = found
        return found

    @staticmethod
    def path_module(path: str) -> str:
        stem = path[:-3] if path.endswith(".py") else path
        if stem.endswith("/__init__"):
            stem = stem[: -len("/__init__")]
        return stem.replace("/", ".")

    def _raw_text(self, path: str) -> bytes:
        data = self._raw.get(path)
        if data is None:
            try:
                data = self.tree.read(path)
            except SourceUnavailable as exc:  # e.g. a symlink leaving the tree: no text to search
                self.unreadable.setdefault(path, str(exc))
                data = b""
            self._raw[path] = data
        return data

    def raw_text(self, path: str) -> bytes:
        """A file's bytes as the raw-text searches read them (`grep`), kept while they are."""
        return self._raw_text(path)

    def forget_text(self) -> None:
        """Drop the raw text kept for the prefilter (a whole tree's worth after a first review):
        a run reviewing many recipes holds none between reviews. A later question reads the
        files again; answered questions are kept (and on disk)."""
        self._raw.clear()

    def forget_analyses(self) -> None:
        """Drop the walks of the recipes reviewed so far (a megabyte or so each): a run reviewing
        many recipes at one revision keeps the tree's facts, not every recipe's walks."""
        self.analyzers.clear()

    def grep(self, text: str, prefix: str | None = None) -> list[str]:
        """Python files under `prefix` whose raw text contains `text` (no parsing; kept on disk
        per revision listing like definition_files)."""
        prefix = self.package if prefix is None else prefix
        needle = text.encode()
        return self._remembered(f"grep\0{prefix.strip('/')}\0{text}",
                                lambda: [p for p in self.python_files(prefix) if needle in self._raw_text(p)])

    def grep_re(self, pattern: str, prefix: str | None = None, literal: str | None = None) -> list[str]:
        """Files matching a regex; `literal`, a substring every match contains, skips most files cheaply."""
        prefix = self.package if prefix is None else prefix
        needle = literal.encode() if literal else None

        def compute() -> list[str]:  # (the regex compiled only when the answer is not remembered)
            regex = re.compile(pattern.encode(), re.M)
            return [p for p in self.python_files(prefix)
                    if (needle is None or needle in self._raw_text(p)) and regex.search(self._raw_text(p))]

        return self._remembered(f"grep_re\0{prefix.strip('/')}\0{pattern}\0{literal or ''}", compute)

    def filled_only_by_uncalled(self, name: str, store_files: list[str]) -> bool:
        """Whether every store into the module container `name` (found in `store_files`) lies in
        module-level functions that nothing in the tree names (srcreview.index.dormant)."""
        from srcreview.index import dormant

        def compute() -> list[str]:
            functions: set[str] = set()
            for path in store_files:
                found = dormant.storing_functions(self._raw_text(path), name)
                if found is None:
                    return []
                functions |= found
            for function in sorted(functions):
                for path in self.grep_re(rf"\b{re.escape(function)}\b", literal=function):
                    if dormant.named_outside(self._raw_text(path), function, own_file=path in store_files):
                        return []
            return list(store_files)  # the answer is kept as files, like every raw-text answer

        return bool(self._remembered(f"filled_only_by_uncalled\0{name}\0{chr(0).join(store_files)}", compute))

    def python_files(self, prefix: str | None = None) -> list[str]:
        prefix = self.package if prefix is None else prefix
        prefix = prefix.strip("/")
        if self._python_files is None:
            self._python_files = sorted(p for p in self._all_files() if p.endswith(".py"))
        if not prefix:
            return list(self._python_files)
        return [p for p in self._python_files if p == prefix or p.startswith(prefix + "/")]

    def module(self, name_or_path: str, *, allow_unparsable: bool = False) -> ModuleFacts:
        """Facts of a module by dotted name or tree path; SourceUnavailable if absent.

        A module that cannot be read (a symlink leaving the tree) or parsed (a syntax libcst
        does not know, undecodable bytes, over MAX_PARSE_BYTES) raises UnreadableSource, so the
        question that needed it stays open; `allow_unparsable` returns its (empty) facts with
        `parse_error` set instead, for callers that fall back to raw lines."""
        if name_or_path.endswith(".py"):
            path = name_or_path
            if path not in self._all_files():
                raise SourceUnavailable(f"{path}: no such file at {self.tree.revision.label()}")
            module = self.path_module(path)
        else:
            module = name_or_path
            path = self.module_path(module)
            if path is None:
                raise SourceUnavailable(f"{module}: no such module at {self.tree.revision.label()}")
        facts = self._modules.get(path)
        if facts is None:
            facts = self._load(path, module)
            self._modules[path] = facts
            self._pending[path] = _pending_bodies(facts)
        if facts.parse_error is not None and not allow_unparsable:
            self.unreadable.setdefault(path, facts.parse_error)
            raise UnreadableSource(path, f"does not parse ({facts.parse_error})")
        return facts

    def _load(self, path: str, module: str) -> ModuleFacts:
        try:
            blob = self.tree.blob_id(path)
        except SourceUnavailable as exc:  # listed, but not readable (a symlink leaving the tree)
            self.unreadable.setdefault(path, str(exc))
            raise UnreadableSource(path, "cannot be read" + (f" ({exc})" if str(exc) else ""),
                                   tag="unreadable-source") from None
        facts = self._cache.load(blob, module, path) if self._cache is not None else None
        if facts is None and self.on_miss is not None and self.on_miss(path, blob):
            facts = self._cache.load(blob, module, path)  # another process just parsed it
        if facts is not None:
            return facts
        data = self._raw_text(path)
        if len(data) > MAX_PARSE_BYTES:  # not parsed, not cached: the limit may change
            return ModuleFacts(module=module, path=path, blob_id=blob,
                               parse_error=f"{len(data)} bytes, over the {MAX_PARSE_BYTES}-byte parse limit")
        facts = extract_facts(data, module, path, blob)
        self.parsed.append(path)
        if self._cache is not None:
            self._cache.store(facts)
        return facts

    def keep_converted(self) -> int:
        """Store again the facts of each module whose function bodies were converted since it
        was loaded (or last stored): the conversion is a pure function of the file (its entry's
        blob id and schema), so the next process unpickles those bodies, about a third of the cost
        of parsing and converting them again. How many entries were written (none without a cache
        or with reuse off)."""
        if self._cache is None or not reuse_enabled():
            return 0
        written = 0
        for path, facts in self._modules.items():
            pending = _pending_bodies(facts)
            if pending < self._pending.get(path, pending) and facts.parse_error is None:
                self._cache.store(facts)
                self._pending[path] = pending
                written += 1
        return written

    def has_module(self, module: str) -> bool:
        return self.module_path(module) is not None

    def definition_files(self, name: str, prefix: str | None = None, *, scopes_only: bool = False,
                         remembered_only: bool = False) -> list[str] | None:
        """Files under `prefix` that may define `name` (`def`/`class` NAME, or NAME starting an assignment;
        with `scopes_only`, only `def`/`class` NAME: what a class, function or owner can be).

        The raw-text prefilter behind `find`: a substring scan, then a line regex on the few
        files that contain the name. Answers are kept on disk per revision listing (with file
        sizes and times where the tree is a directory, and the content digest of a `--source`
        directory's snapshot), so a warm run reads no file it does
        not need. A candidate is only ever confirmed from its parsed facts. With
        `remembered_only`, None when the answer is not known yet (nothing is read).
        """
        prefix = self.package if prefix is None else prefix
        prefix = prefix.strip("/")
        key = f"{prefix}\0{name}" + ("\0scope" if scopes_only else "")
        names = self._name_answers()
        if key in names:
            return names[key]
        if remembered_only:
            return None
        needle = name.encode()
        pattern = definition_pattern(needle, scopes_only)
        if scopes_only and f"{prefix}\0{name}" in names:  # a subset of the wider answer
            pool = names[f"{prefix}\0{name}"]
        else:
            pool = self.python_files(prefix)
        return self._remembered(key, lambda: [p for p in pool
                                              if needle in self._raw_text(p)
                                              and _line_match(self._raw_text(p), needle, pattern)])

    def _name_answers(self) -> dict[str, list[str]]:
        """The raw-text answers of this revision listing (definition files, greps), from disk once."""
        if self._names is None:
            self._names_key = self._listing_key(self.python_files(""))
            cached = self._cache.load_names(self._names_key) if self._cache is not None else None
            self._names = cached or {}
            self.reviewed_before = bool(cached)
        return self._names

    def remembered(self, key: str, compute) -> list[str]:
        """A list of strings computed from the tree's raw text once per revision listing (kept on
        disk with the grep answers): `key` names the question, versioned by its asker."""
        return self._remembered(key, compute)

    def _remembered(self, key: str, compute) -> list[str]:
        names = self._name_answers()
        if key not in names and self.on_names_miss is not None:
            self.on_names_miss(names)
            if key in names and self._cache is not None:  # kept on disk as if found here
                self._cache.store_names(self._names_key, names)
        if key not in names:
            names[key] = compute()
            if self._cache is not None:
                self._cache.store_names(self._names_key, names)
        return list(names[key])

    def definition_names(self) -> _DefinitionNames:
        """Name -> files anywhere in the tree that may define it, as a lazy mapping (`.get`, `[]`, `in`)."""
        return _DefinitionNames(self)

    def _listing_key(self, files: list[str]) -> str:
        import hashlib
        import os

        digest = hashlib.sha256(f"{SCHEMA_VERSION}\n{self.tree.revision.sha}\n".encode())
        variant = getattr(self.tree, "variant", "")  # a patched tree: same revision, other content
        if variant:
            digest.update(f"variant {variant}\n".encode())
        root = getattr(self.tree, "root", None)
        snapshot = getattr(self.tree, "snapshot", None)  # a --source directory: the digest of its content too
        if snapshot is not None:
            digest.update(f"content {snapshot.digest}\n".encode())
        for path in files:
            digest.update(path.encode() + b"\0")
            if root is not None:
                try:
                    st = os.stat(os.path.join(root, path))
                    digest.update(f"{st.st_size}:{st.st_mtime_ns}\0".encode())
                except OSError:
                    digest.update(b"?\0")
        return digest.hexdigest()

    # -- symbols -------------------------------------------------------------------------------
    def symbols(self, facts: ModuleFacts):
        """Every definition of a module as Symbols (classes, functions, fields, constants)."""
        m, p = facts.module, facts.path
        for local, c in facts.classes.items():
            yield Symbol(f"{m}.{local}", "class", m, local, p, c.start_line, c.end_line)
            for f in c.fields:
                yield Symbol(f"{m}.{local}.{f.name}", "field", m, f"{local}.{f.name}", p, f.start_line, f.end_line)
        for local, fn in facts.functions.items():
            if local != MODULE_CODE:  # the module's own code is asked for by name (`function`)
                yield Symbol(f"{m}.{local}", "function", m, local, p, fn.start_line, fn.end_line)
        for name, c in facts.constants.items():
            yield Symbol(f"{m}.{name}", "constant", m, name, p, c.start_line, c.end_line)

    def find(self, suffix: str, kind: str = "any", prefix: str | None = None) -> list[Symbol]:
        """Definitions whose absolute qualname ends with `suffix` (on a dot boundary), sorted."""
        prefix = self.package if prefix is None else prefix
        found = []
        for path in self.candidate_files(suffix, kind, prefix) or ():  # (None only when remembered_only)
            facts = self.module(path)
            for symbol in self.symbols(facts):
                if kind not in ("any", symbol.kind):
                    continue
                if symbol.qualname == suffix or symbol.qualname.endswith("." + suffix):
                    found.append(symbol)
        return sorted(found, key=lambda s: (s.path, s.start_line, s.qualname))

    def candidate_files(self, suffix: str, kind: str = "any", prefix: str | None = None, *,
                        remembered_only: bool = False) -> list[str] | None:
        """The files `find` parses for a suffix: those whose raw text may define it (no parsing).
        With `remembered_only`, None unless the raw-text answers are known already (nothing is read)."""
        prefix = self.package if prefix is None else prefix
        parts = [p for p in suffix.split(".") if p]
        if not parts or not all(p.isidentifier() or p == "<locals>" for p in parts):
            raise DataError(f"{suffix!r}: not a dotted Python name")
        # a class or function is only defined by `class`/`def`; a field or constant also by an assignment
        candidates = self.definition_files(parts[-1], prefix, scopes_only=kind in ("class", "function"),
                                           remembered_only=remembered_only)
        for owner in dict.fromkeys(parts[:-1]):
            # every qualifier is a module of the path or a class/function the file defines
            # (`x.model_loader = ...` or a local `model_loader = ...` owns nothing)
            if owner == "<locals>" or not candidates:
                continue
            owners = self.definition_files(owner, prefix, scopes_only=True, remembered_only=remembered_only)
            if owners is None:
                return None
            candidates = [p for p in candidates if p in owners or owner in p.removesuffix(".py").split("/")]
        return candidates

    def find_one(self, suffix: str, kind: str = "any") -> Symbol | None:
        """The one definition a suffix names: a full qualname first, else a unique suffix match."""
        if "." in suffix:
            symbol = self.resolve(suffix)
            if symbol is not None and kind in ("any", symbol.kind):
                return symbol
        found = self.find(suffix, kind)
        if len(found) > 1:
            # a name defined both as a class field and shadowed elsewhere is still one symbol per kind;
            # more than one candidate is ambiguous: the caller must qualify it further
            names = ", ".join(s.qualname for s in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
            raise DataError(f"{suffix!r} is ambiguous at {self.tree.revision.label()}: {names}")
        return found[0] if found else None

    # -- name resolution -----------------------------------------------------------------------
    def resolve(self, dotted: str, _depth: int = 0) -> Symbol | None:
        """The definition an absolute dotted name refers to, following re-exports."""
        if dotted in self._resolved:
            return self._resolved[dotted]
        self._resolved[dotted] = None  # cycle guard
        try:
            result = self._resolve(dotted, _depth)
        except SourceUnavailable:  # an unreadable module on the way: not "absent" next time either
            del self._resolved[dotted]
            raise
        self._resolved[dotted] = result
        return result

    def _resolve(self, dotted: str, depth: int) -> Symbol | None:
        if depth > MAX_RESOLVE_DEPTH:
            return None
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            path = self.module_path(module)
            if path is None:
                continue
            rest = parts[i:]
            if not rest:
                return Symbol(module, "module", module, "", path, 1, 1)
            return self._resolve_in(module, rest, depth)
        return None

    def _resolve_in(self, module: str, rest: list[str], depth: int) -> Symbol | None:
        facts = self.module(module)
        joined = ".".join(rest)
        if joined in facts.classes:
            c = facts.classes[joined]
            return Symbol(f"{module}.{joined}", "class", module, joined, facts.path, c.start_line, c.end_line)
        if joined in facts.functions:
            fn = facts.functions[joined]
            return Symbol(f"{module}.{joined}", "function", module, joined, facts.path, fn.start_line, fn.end_line)
        head = rest[0]
        if head in facts.classes:
            local = head
            for i, part in enumerate(rest[1:], start=1):
                nested = f"{local}.{part}"
                if nested in facts.classes:
                    local = nested
                    continue
                if nested in facts.functions and i == len(rest) - 1:
                    fn = facts.functions[nested]
                    return Symbol(f"{module}.{nested}", "function", module, nested, facts.path, fn.start_line,
                                  fn.end_line)
                field = facts.classes[local].field(part)
                if field is not None and i == len(rest) - 1:
                    return Symbol(f"{module}.{nested}", "field", module, nested, facts.path, field.start_line,
                                  field.end_line)
                return None
            c = facts.classes[local]
            return Symbol(f"{module}.{local}", "class", module, local, facts.path, c.start_line, c.end_line)
        if head in facts.functions and len(rest) == 1:
            fn = facts.functions[head]
            return Symbol(f"{module}.{head}", "function", module, head, facts.path, fn.start_line, fn.end_line)
        if head in facts.constants and len(rest) == 1 and facts.constants[head].guard is None:
            c = facts.constants[head]
            return Symbol(f"{module}.{head}", "constant", module, head, facts.path, c.start_line, c.end_line)
        imports = facts.import_map()
        if head in imports:
            target = imports[head]
            if target != f"{module}.{head}":
                return self.resolve(".".join([target, *rest[1:]]), depth + 1)
        if head in facts.constants and len(rest) == 1:
            c = facts.constants[head]
            return Symbol(f"{module}.{head}", "constant", module, head, facts.path, c.start_line, c.end_line)
        for imp in facts.imports:
            if imp.local == "*" and not imp.scope:
                found = self.resolve(".".join([imp.target, *rest]), depth + 1)
                if found is not None:
                    return found
        return None

    def resolve_name(self, module: str, name: str, scope: str = "") -> Symbol | None:
        """What a (dotted) name written in `module` (inside function `scope`) refers to."""
        facts = self.module(module)
        head, _, tail = name.partition(".")
        if scope:
            parts = scope.split(".")
            for n in range(len(parts), 0, -1):
                local = f"{'.'.join(parts[:n])}.<locals>.{head}"
                if local in facts.functions or local in facts.classes:
                    return self.resolve(f"{module}.{local}" + (f".{tail}" if tail else ""))
            for n in range(len(parts), 0, -1):
                func = facts.functions.get(".".join(parts[:n]))
                if func is not None:
                    local_imports = {i.local: i.target for i in func.imports}
                    if head in local_imports:
                        return self.resolve(local_imports[head] + (f".{tail}" if tail else ""))
        return self.resolve(f"{module}.{name}")

    # -- classes -------------------------------------------------------------------------------
    def class_info(self, qualname: str) -> ClassInfo | None:
        """A class by absolute qualname or unique suffix; None if absent; DataError if ambiguous."""
        if qualname in self._class_infos:
            return self._class_infos[qualname]
        symbol = self.find_one(qualname, "class")
        if symbol is None:
            return None
        info = self._class_info(symbol)
        self._class_infos[qualname] = info
        return info

    def _class_info(self, symbol: Symbol) -> ClassInfo | None:
        """None while the class is being built (a base that is the class itself, through a cycle)."""
        if symbol.qualname in self._class_infos:
            return self._class_infos[symbol.qualname]
        self._class_infos[symbol.qualname] = None  # cycle guard while computing the MRO
        try:
            return self._build_class_info(symbol)
        except SourceUnavailable:  # an unreadable base module: not "absent" next time either
            del self._class_infos[symbol.qualname]
            raise

    def _build_class_info(self, symbol: Symbol) -> ClassInfo:
        facts = self.module(symbol.module).classes[symbol.local]
        linearization = self._linearize(symbol, facts)
        fields: dict[str, FieldFact] = {}
        methods: dict[str, Symbol] = {}
        for qual in reversed(linearization):
            owner = self._class_symbol(qual)
            if owner is None:
                continue
            module = self.module(owner.module)
            cls = module.classes[owner.local]
            for f in cls.fields:
                fields.pop(f.name, None)
                fields[f.name] = f
            for name in cls.methods:
                fn = module.functions.get(f"{owner.local}.{name}")
                if fn is not None:
                    methods[name] = Symbol(f"{owner.qualname}.{name}", "function", owner.module,
                                           f"{owner.local}.{name}", owner.path, fn.start_line, fn.end_line)
        for name in methods:
            fields.pop(name, None)
        properties = tuple(sorted(n for n, s in methods.items()
                                  if self.module(s.module).functions[s.local].is_property))
        constants = {f.name: f.value for f in fields.values() if f.value is not UNKNOWN}
        enum_members = None
        if any(q.split(".")[-1] in _ENUM_BASES for q in linearization[1:]):
            enum_members = tuple((f.name, f.value) for f in facts.fields
                                 if f.annotation is None and not f.name.startswith("_"))
        info = ClassInfo(symbol, facts, linearization, tuple(fields.values()), methods, properties,
                         constants, enum_members)
        self._class_infos[symbol.qualname] = info
        return info

    def _class_symbol(self, qualname: str) -> Symbol | None:
        symbol = self.resolve(qualname) if "." in qualname else None
        return symbol if symbol is not None and symbol.kind == "class" else None

    def _base_symbols(self, symbol: Symbol, facts: ClassFacts) -> list[str]:
        out = []
        scope = symbol.local.split(".<locals>.")[0] if ".<locals>." in symbol.local else ""
        for base in facts.bases:
            name = _GENERIC.sub("", base).strip()
            if name in ("object", "Generic", "Protocol") or name.startswith(("Generic[", "Protocol[")):
                continue
            resolved = None
            if all(p.isidentifier() for p in name.split(".")):
                resolved = self.resolve_name(symbol.module, name, scope)
            out.append(resolved.qualname if resolved is not None and resolved.kind == "class" else name)
        return out

    def _linearize(self, symbol: Symbol, facts: ClassFacts, _seen: frozenset = frozenset()) -> tuple[str, ...]:
        if symbol.qualname in _seen:
            return (symbol.qualname,)
        seen = _seen | {symbol.qualname}
        sequences = []
        bases = self._base_symbols(symbol, facts)
        for base in bases:
            base_symbol = self._class_symbol(base)
            if base_symbol is None:
                sequences.append([base])
            else:
                base_facts = self.module(base_symbol.module).classes[base_symbol.local]
                sequences.append(list(self._linearize(base_symbol, base_facts, seen)))
        sequences.append(list(bases))
        result = [symbol.qualname]
        while True:
            sequences = [s for s in sequences if s]
            if not sequences:
                return tuple(result)
            for seq in sequences:
                head = seq[0]
                if not any(head in s[1:] for s in sequences):
                    break
            else:  # inconsistent hierarchy: fall back to depth-first order, still deterministic
                for seq in sequences:
                    result.extend(x for x in seq if x not in result)
                return tuple(result)
            result.append(head)
            for s in sequences:
                if s and s[0] == head:
                    s.pop(0)

    def subclass_of(self, qualname: str, ancestor: str) -> bool:
        info = self._class_info_abs(qualname)
        return info is not None and ancestor in info.linearization

    def _class_info_abs(self, qualname: str) -> ClassInfo | None:
        symbol = self._class_symbol(qualname)
        return self._class_info(symbol) if symbol is not None else None

    # -- functions -----------------------------------------------------------------------------
    def function(self, qualname: str) -> FunctionInfo | None:
        """A function or method by absolute qualname or unique suffix; `Class.method` may be inherited;
        `pkg.mod.<module>` (MODULE_CODE): what the module runs at import."""
        module_name, dot, local = qualname.rpartition(".")
        if dot and local == MODULE_CODE and self.has_module(module_name):
            facts = self.module(module_name)
            code = facts.functions[MODULE_CODE]
            return FunctionInfo(Symbol(qualname, "function", module_name, MODULE_CODE, facts.path, code.start_line,
                                       code.end_line), code, facts)
        symbol = self.find_one(qualname, "function")
        if symbol is None:
            owner, _, method = qualname.rpartition(".")
            info = self.class_info(owner) if owner else None
            symbol = info.methods.get(method) if info is not None else None
        if symbol is None:
            return None
        module = self.module(symbol.module)
        return FunctionInfo(symbol, module.functions[symbol.local], module)

    def function_at(self, symbol: Symbol) -> FunctionInfo:
        module = self.module(symbol.module)
        return FunctionInfo(symbol, module.functions[symbol.local], module)

    # -- values ----------------------------------------------------------------------------------
    def constant(self, qualname: str) -> ConstantFact | None:
        """A module-level constant by absolute qualname or unique suffix."""
        symbol = self.find_one(qualname, "constant")
        if symbol is None:
            return None
        return self.module(symbol.module).constants.get(symbol.local)

    def enum_members(self, qualname: str) -> tuple[tuple[str, object], ...] | None:
        info = self.class_info(qualname)
        return info.enum_members if info is not None else None

    def literal_values(self, annotation: str, context_module: str) -> tuple[str, ...] | None:
        """Members a Literal/Enum annotation admits (through aliases and imports), None if open-ended."""
        try:
            node = ast.parse(annotation, mode="eval").body
        except SyntaxError:
            return None
        values = self._literal_members(node, context_module, 0)
        if values is None:
            return None
        return tuple(dict.fromkeys(values))

    def _literal_members(self, node, module: str, depth: int) -> list | None:
        if depth > MAX_RESOLVE_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            if node.value is None:
                return []
            if isinstance(node.value, str):  # a forward reference
                try:
                    return self._literal_members(ast.parse(node.value, mode="eval").body, module, depth + 1)
                except SyntaxError:
                    return None
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left = self._literal_members(node.left, module, depth + 1)
            right = self._literal_members(node.right, module, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Subscript):
            head = _ast_dotted(node.value)
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            tail = head.split(".")[-1] if head else ""
            if tail == "Literal":
                out = []
                for el in elements:
                    if isinstance(el, ast.Constant) and isinstance(el.value, (str, int, bool)) or (
                            isinstance(el, ast.Constant) and el.value is None):
                        if el.value is not None:
                            out.append(el.value)
                        continue
                    sub = self._literal_members(el, module, depth + 1)  # Literal[Alias] nesting
                    if sub is None:
                        return None
                    out.extend(sub)
                return out
            if tail in ("Optional", "Union"):
                out = []
                for el in elements:
                    sub = self._literal_members(el, module, depth + 1)
                    if sub is None:
                        return None
                    out.extend(sub)
                return out
            if tail in ("Annotated",):
                return self._literal_members(elements[0], module, depth + 1)
            return None
        dotted = _ast_dotted(node)
        if dotted is None:
            return None
        symbol = self.resolve_name(module, dotted)
        if symbol is None:
            return None
        if symbol.kind == "constant":
            const = self.module(symbol.module).constants[symbol.local]
            try:
                value_node = ast.parse(const.text, mode="eval").body
            except SyntaxError:
                return None
            if isinstance(value_node, ast.Call) \
                    and _ast_dotted(value_node.func) in ("TypeAliasType", "typing.TypeAliasType") \
                    and len(value_node.args) >= 2:
                value_node = value_node.args[1]
            return self._literal_members(value_node, symbol.module, depth + 1)
        if symbol.kind == "class":
            info = self._class_info(symbol)
            if info is not None and info.enum_members is not None:
                return [name for name, _ in info.enum_members]
        return None

    # -- anchors ---------------------------------------------------------------------------------
    def anchor(self, path: str, start: int, end: int | None = None, symbol: str = "", role: str = ""):
        from srcreview.model.findings import Anchor

        end = start if end is None else end
        return Anchor(url=self.tree.url(path, start, end), path=path, start_line=start, end_line=end,
                      symbol=symbol, role=role)

    def symbol_anchor(self, symbol: Symbol, role: str = ""):
        return self.anchor(symbol.path, symbol.start_line, symbol.end_line, symbol.qualname, role)


class _DefinitionNames:
    """`index.definition_names()[name]`: files that may define `name`, computed on first ask."""

    def __init__(self, index: Index):
        self._index = index

    def get(self, name: str, default=None):
        found = self._index.definition_files(name, prefix="")
        return found if found else default

    def __getitem__(self, name: str) -> list[str]:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get(name))


def _pending_bodies(facts: ModuleFacts) -> int:
    return sum(isinstance(fn.stored_body, PendingBody) for fn in facts.functions.values())


def definition_pattern(needle: bytes, scopes_only: bool = False) -> re.Pattern[bytes]:
    """The line regex for a possible definition of `needle`: `def`/`class` NEEDLE, or (unless
    `scopes_only`) NEEDLE starting an assignment or annotation."""
    scope = rb"\b(?:def|class)[ \t]+" + re.escape(needle) + rb"\b"
    return re.compile(scope if scopes_only else scope + rb"|^[ \t]*" + re.escape(needle) + rb"[ \t]*(?::|=(?!=))",
                      re.M)


def _line_match(data: bytes, needle: bytes, pattern) -> bool:
    """Whether `pattern` matches in `data`, trying only the lines that contain `needle`: the
    same answer as `pattern.search(data)` for a definition pattern (every match contains the
    needle and stays within one line), without running the regex over the whole file."""
    if not needle or b"\n" in needle:
        return pattern.search(data) is not None
    at = data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        if end < 0:
            end = len(data)
        if pattern.search(data, start, end):
            return True
        at = data.find(needle, end)
    return False


def _ast_dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _ast_dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None
