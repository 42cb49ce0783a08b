"""On-disk facts cache: one pickle per (schema version, git blob id), loaded by a restricted unpickler.

Keyed by content, so every revision and every provider that holds the same file shares the
entry. Every entry (facts and the name index) carries the sha256 of its content, recorded when
it is written and checked when it is read: an entry edited in place, even into something that
still loads (facts of other content, name lists pointing at other files), is treated as absent
and rebuilt, as is one that does not load or loads as anything but the ModuleFacts it names.
A cache is never trusted over the source.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
from pathlib import Path

from srcreview.core.sealed import seal, unseal, write_atomic
from srcreview.index import facts as facts_module
from srcreview.index import ir
from srcreview.index.facts import SCHEMA_VERSION, ModuleFacts

_ALLOWED = {
    ("srcreview.index.facts", name)
    for name in ("ModuleFacts", "ClassFacts", "FunctionFacts", "FieldFact", "ConstantFact",
                 "ImportFact", "InstanceAttr", "Param", "PendingBody", "_Unknown")
} | {("srcreview.index.ir", cls.__name__) for cls in ir.NODE_CLASSES}
# No getattr (or any callable that reaches attributes): getattr(ModuleFacts, "__init__").__globals__
# leads to eval, so one crafted cache entry would run code (tests/test_static_guarantees.py).
_BUILTINS = {("builtins", "frozenset"), ("builtins", "set"), ("builtins", "Ellipsis"),
             ("builtins", "complex"), ("builtins", "bytes")}


class _FactsUnpickler(pickle.Unpickler):
    """Only the facts classes and a few builtins may be named: nothing else can be constructed."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return getattr(facts_module if module == "srcreview.index.facts" else ir, name)
        if (module, name) in _BUILTINS:
            import builtins

            return getattr(builtins, name)
        raise pickle.UnpicklingError(f"forbidden global {module}.{name}")


def load_pickled_ir(data: bytes):
    """A function body pickled inside a facts entry (FunctionFacts.body), by the same
    restricted unpickler as the entry itself."""
    return _FactsUnpickler(io.BytesIO(data)).load()


facts_module.BODY_LOADERS[bytes] = load_pickled_ir


def reuse_enabled(environ=None) -> bool:
    """Whether work a review did that is a pure function of the facts (function bodies converted
    to the IR) is kept for the next one: on unless `SRCREVIEW_REUSE=0`, the switch the tests
    compare outputs across (they must be byte-identical either way)."""
    return (os.environ if environ is None else environ).get("SRCREVIEW_REUSE", "").strip() != "0"


def facts_dir(cache_root: Path) -> Path:
    """Where the facts of a srcreview cache root live (`<root>/facts/v<schema>`)."""
    return Path(cache_root) / "facts" / f"v{SCHEMA_VERSION}"


def default_cache_dir() -> Path:
    """The `cache_dir` to give Index for the user cache: the srcreview cache root itself (the
    index puts its facts under facts_dir of it). Every command uses this one function, so no
    caller nests a second `facts/` level."""
    from srcreview.source.cache import default_root

    return default_root()[0]


class FactsCache:
    def __init__(self, root: Path):
        self.root = facts_dir(root)

    def _path(self, blob_id: str) -> Path:
        return self.root / blob_id[:2] / f"{blob_id}.pickle"

    def has(self, blob_id: str) -> bool:
        """Whether an entry exists (not whether it loads): enough to decide to parse ahead."""
        return self._path(blob_id).is_file()

    def load(self, blob_id: str, module: str, path: str) -> ModuleFacts | None:
        try:
            data = unseal(self._path(blob_id).read_bytes())
        except OSError:
            return None
        if data is None:
            return None
        try:
            facts = _FactsUnpickler(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - any corruption means "absent"
            return None
        if not isinstance(facts, ModuleFacts) or facts.blob_id != blob_id or facts.schema != SCHEMA_VERSION:
            return None
        try:
            if not all(fn.body_intact() for fn in facts.functions.values()):
                return None  # a function body damaged since it was written
        except Exception:  # noqa: BLE001 - not FunctionFacts at all: as corrupt
            return None
        if facts.module != module or facts.path != path:
            # same content at another path: the facts are the same, names are not
            facts = _renamed(facts, module, path)
        return facts

    def store(self, facts: ModuleFacts) -> None:
        # (a parse-ahead worker is never stopped mid-write: srcreview.index.prefetch holds SIGTERM back)
        write_atomic(self._path(facts.blob_id), seal(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)))


    def load_names(self, key: str) -> dict[str, list[str]] | None:
        """The raw-text answers of one revision listing (name -> files), or None when absent,
        damaged or edited since written."""
        try:
            data = json.loads((self.root / "names" / f"{key}.json").read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.pop("sha256", None) != _json_digest(data) or data.get("key") != key \
                or not isinstance(data.get("paths"), list) or not isinstance(data.get("names"), dict):
            return None
        paths = data["paths"]
        try:
            return {name: [paths[i] for i in indices if _position(i, paths)] for name, indices in data["names"].items()}
        except (TypeError, IndexError, AttributeError):
            return None

    def store_names(self, key: str, names: dict[str, list[str]]) -> None:
        paths = sorted({p for ps in names.values() for p in ps})
        position = {p: i for i, p in enumerate(paths)}
        data = {"key": key, "paths": paths, "names": {n: [position[p] for p in ps] for n, ps in sorted(names.items())}}
        write_atomic(self.root / "names" / f"{key}.json",
                     json.dumps({**data, "sha256": _json_digest(data)}, separators=(",", ":")).encode())


def _json_digest(data: dict) -> str:
    """The sha256 of a JSON document in one canonical spelling (recorded beside it when written)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _position(i, paths: list) -> bool:
    """A valid index into `paths` (a negative one would silently name another file)."""
    if type(i) is not int or not 0 <= i < len(paths):
        raise IndexError(i)
    return True


def _renamed(facts: ModuleFacts, module: str, path: str) -> ModuleFacts | None:
    # Relative imports were resolved against the old module name: only reuse when the
    # module has none (the common case for identical files is the same path anyway).
    if facts.imports or any(f.imports for f in facts.functions.values()):
        return None
    from dataclasses import replace

    return replace(facts, module=module, path=path)
