"""Parse ahead on the second core: a forked worker fills the facts cache with the modules a
review is about to need, while the review itself runs sequentially and reads them back.

The worker is a hint, never a source of answers: it only writes facts (the cache is keyed by
content, written atomically), the review asks its own Index as always, and on a miss parses
the module itself. Which modules: the definitions of the rules' anchor symbols, their classes'
bases, what the names used in an anchor function's body resolve to, then the same for what
those resolved to (two levels), in that order. A run whose anchors are all cached starts no
worker.
"""

from __future__ import annotations

import os
import sys

from srcreview.errors import DataError, SourceUnavailable

_IGNORED = (DataError, SourceUnavailable, RecursionError, NotImplementedError, ValueError, KeyError)


def warm_facts(index, names: list[str]) -> None:
    """Load (parse and cache on a miss) the modules behind `names`; errors are ignored: the
    review meets them again and reports them. First each anchor and what it uses (in the
    order the review meets them), then, with the time left, what those use in turn."""
    used: dict[str, object] = {}
    for name in names:
        symbols = []
        for kind in ("class", "function"):  # what anchors are; the same raw-text answers as the review's
            try:
                symbols += index.find(name, kind=kind)
            except _IGNORED:
                continue
        for symbol in symbols:
            for found in _uses(index, symbol):
                used.setdefault(found.qualname, found)
    for symbol in list(used.values()):
        _uses(index, symbol)


def _uses(index, symbol) -> list:
    """What a class (its bases, its __init__, the classes its own fields are declared as: a
    config's nested configs) or a function (the imported names its body uses) refers to."""
    try:
        if symbol.kind == "class":
            info = index._class_info(symbol)
            init = info.methods.get("__init__")
            return ([init] if init is not None else []) + _field_classes(index, symbol, info)
        if symbol.kind == "function":
            return _resolve_body_names(index, symbol)
    except _IGNORED:
        pass
    return []


def _field_classes(index, symbol, info) -> list:
    names = sorted({n for f in info.facts.fields if f.annotation_expr is not None for n in _names(f.annotation_expr)})
    found = []
    for name in names:
        try:
            resolved = index.resolve_name(symbol.module, name)
        except _IGNORED:
            continue
        if resolved is not None and resolved.kind == "class":
            found.append(resolved)
    return found


def _resolve_body_names(index, symbol) -> list:
    facts = index.module(symbol.module)
    function = facts.functions.get(symbol.local)
    if function is None:
        return []
    imports = facts.import_map(symbol.local)
    used = sorted({n for n in _names(function.body) if n.split(".")[0] in imports})
    found = []
    for name in used:
        try:
            resolved = index.resolve_name(symbol.module, name, symbol.local)
        except _IGNORED:
            continue
        if resolved is not None and resolved.kind in ("class", "function"):
            found.append(resolved)
    return found


def _names(node):
    """Every name of a statement/expression IR tree, and `name.attr` for an attribute of one
    (`envs.X`: the module `envs` is only parsed when one of its attributes is resolved)."""
    from srcreview.index import ir

    for expr in ir.iter_exprs(node):
        if isinstance(expr, ir.Name):
            yield expr.id
        elif isinstance(expr, ir.Attr) and isinstance(expr.value, ir.Name):
            yield f"{expr.value.id}.{expr.attr}"


MIN_UNCACHED = 4  # fewer anchor files to parse than this: a worker costs more than it saves
# A worker costs a fork and a raw-text scan of its own: it pays on a real vLLM tree (over 2000
# modules), not on a small one (the fixtures), where the review alone is quicker.
MIN_TREE_MODULES = 500


def anchors_cached(index, names: list[str]) -> bool:
    """Whether (nearly) every file that may define an anchor already has cached facts, as after
    any earlier review at this revision: then no parse ahead is needed. Reads no source: with
    no raw-text answers on disk this is a first review here; after one, an anchor it did not
    ask about (a rule it skipped) is left to the review."""
    cache = index._cache
    if cache is None:
        return True
    index._name_answers()  # loads reviewed_before
    uncached = set()
    for name in names:
        try:  # classes and functions: `class`/`def` lines
            paths = index.candidate_files(name, kind="function", remembered_only=True)
        except DataError:
            continue
        if paths is None:
            if not index.reviewed_before:
                return False
            continue
        for path in paths:
            try:
                blob = index.tree.blob_id(path)
            except SourceUnavailable:
                continue
            if not cache.has(blob):
                uncached.add(path)
    return len(uncached) < MIN_UNCACHED


MAX_WAIT = 10.0  # seconds the review waits for a module the worker is parsing, at most


def _key(path: str) -> int:
    import zlib

    return zlib.crc32(path.encode()) or 1


class Prefetch:
    """A forked worker running warm_facts; `stop()` ends it (it is only ever ahead of the review).

    While it runs, a cache miss of the review on the module the worker is parsing right now
    waits for the worker's facts instead of parsing the same module a second time; the other
    way round, the worker skips the module the review is parsing (it is behind there)."""

    def __init__(self, index, process, current, reviewing, answers):
        self._index, self._process, self._current, self._reviewing = index, process, current, reviewing
        self._answers = answers
        index.on_miss = self._wait
        index.on_names_miss = self._take_answers

    def _take_answers(self, names: dict) -> None:
        """The raw-text answers the worker computed so far (the same tree, the same answers)."""
        import queue

        while True:
            try:
                key, found = self._answers.get_nowait()
            except (queue.Empty, OSError, EOFError, ValueError):
                return
            names.setdefault(key, found)

    def _wait(self, path: str, blob: str) -> bool:
        import time

        process, cache, key = self._process, self._index._cache, _key(path)
        if process is None:
            return False
        if self._current.value != key:
            self._reviewing.value = key  # the review parses it now: the worker skips it
            return False
        deadline = time.monotonic() + MAX_WAIT
        while self._current.value == key and process.is_alive() and time.monotonic() < deadline:
            if cache.has(blob):
                return True
            time.sleep(0.002)
        return cache.has(blob)

    def stop(self) -> None:
        process, self._process = self._process, None
        self._index.on_miss = None
        self._index.on_names_miss = None
        if process is not None and process.is_alive():
            process.terminate()
        if process is not None:
            process.join()


def start(index, names: list[str], *, min_tree_modules: int = MIN_TREE_MODULES) -> Prefetch | None:
    """A parse-ahead worker for `names` on another core, or None where it cannot pay: one core,
    no fork (only Linux forks cheaply and safely here), no facts cache, a small tree, or
    nothing to parse."""
    if not names or index._cache is None or (os.cpu_count() or 1) < 2 or not sys.platform.startswith("linux"):
        return None
    if len(index.python_files()) < min_tree_modules:
        return None
    if anchors_cached(index, names):
        return None
    import multiprocessing

    # in a first review here, the review's first question scans the raw text of every module:
    # read it once, before the fork, so the worker starts parsing at once instead of reading
    # it all a second time (after one, the answers are on disk and the review reads no file)
    if not index.reviewed_before:
        for path in index.python_files():
            index._raw_text(path)
    context = multiprocessing.get_context("fork")
    current = context.Value("q", 0, lock=False)  # _key of the module the worker is parsing
    reviewing = context.Value("q", 0, lock=False)  # _key of the module the review parsed last
    answers = context.Queue()  # (key, files): the raw-text answers the worker computed
    process = context.Process(target=_worker, args=(index, names, current, reviewing, answers), daemon=True)
    process.start()
    return Prefetch(index, process, current, reviewing, answers)


class _Skipped(KeyError):
    """The review is parsing this module itself: the worker leaves it (and what follows from it)."""


def _worker(index, names: list[str], current, reviewing, answers) -> None:
    import signal

    remembered = index._remembered

    def shared(key, compute):  # every answer the worker computes goes to the review as well
        known = key in index._name_answers()
        found = remembered(key, compute)
        if not known:
            answers.put((key, found))
        return found

    index._remembered = shared

    load = index._load
    cache = index._cache

    def announced_load(path, module):  # what the review may wait for while it is being loaded
        key = _key(path)
        if reviewing.value == key and not cache.has(index.tree.blob_id(path)):
            raise _Skipped(path)
        current.value = key
        try:
            return load(path, module)
        finally:
            current.value = 0

    index._load = announced_load

    # stop() ends the worker at once, even inside a parse, but never inside a cache write
    # (SIGTERM is held back for its few milliseconds, so no temp file is left behind)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    store = index._cache.store

    def store_whole(facts):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            store(facts)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})

    index._cache.store = store_whole
    index._cache.store_names = lambda *_: None  # the review keeps the name answers; two writers would race
    try:
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the worker never reports
        warm_facts(index, names)
    except Exception:  # noqa: BLE001, S110 - a hint that fails changes nothing
        pass
