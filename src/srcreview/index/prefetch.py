"""Parse ahead on the second core: a forked worker fills the facts cache with the modules a
review is about to need, while the review itself runs sequentially and reads them back.

The worker is a hint, never a source of answers: it only writes facts (the cache is keyed by
content, written atomically), the review asks its own Index as always, and on a miss parses
the module itself. What the worker does is given by the caller (`walk`): `check` has it run
the same review with the rules in reverse order, so it meets, and parses, first what the
review meets last; the modules it parses are exactly the ones a review needs, none guessed.
Where both need the module the other is parsing, each waits for the other's facts instead
of parsing it a second time. A run whose anchors (`names`: where the rules start) are all
cached starts no worker.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.index.index import MAX_PARSE_BYTES

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
    """A forked worker running its walk; `stop()` ends it (it is only a hint for the review).

    While it runs, a cache miss of the review on the module the worker is parsing right now
    waits for the worker's facts instead of parsing the same module a second time, and the
    worker waits for the review's facts of the module the review is parsing."""

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
        process, cache, key = self._process, self._index._cache, _key(path)
        if process is None:
            return False
        if self._current.value != key:
            self._reviewing.value = key  # the review parses it now: the worker waits for it
            return False
        deadline = time.monotonic() + MAX_WAIT
        while self._current.value == key and process.is_alive() and time.monotonic() < deadline:
            if cache.has(blob):
                return True
            time.sleep(0.002)
        return cache.has(blob)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the walk to end (`check` stops it instead: it is only ever a hint)."""
        if self._process is not None:
            self._process.join(timeout)

    def stop(self) -> None:
        process, self._process = self._process, None
        self._index.on_miss = None
        self._index.on_names_miss = None
        if process is not None and process.is_alive():
            process.terminate()
        if process is not None:
            process.join()


def start(index, names: list[str], walk: Callable[[], object], *,
          min_tree_modules: int = MIN_TREE_MODULES) -> Prefetch | None:
    """A worker on another core running `walk()` over `index` (its results are dropped; what it
    parses stays in the facts cache), or None where it cannot pay: one core, no fork (only Linux
    forks cheaply and safely here), no facts cache, a small tree, or the anchors `names` cached."""
    if not names or index._cache is None or (os.cpu_count() or 1) < 2 or not sys.platform.startswith("linux"):
        return None
    if len(index.python_files()) < min_tree_modules:
        return None
    if anchors_cached(index, names):
        return None
    import multiprocessing

    # in a first review here, the review's first question scans the raw text of every module:
    # read it once, before the fork, so the worker starts at once instead of reading it all a
    # second time (after one, the answers are on disk and the review reads no file)
    if not index.reviewed_before:
        for path in index.python_files():
            index._raw_text(path)
    context = multiprocessing.get_context("fork")
    current = context.Value("q", 0, lock=False)  # _key of the module the worker is parsing
    reviewing = context.Value("q", 0, lock=False)  # _key of the module the review parsed last
    answers = context.Queue()  # (key, files): the raw-text answers the worker computed
    process = context.Process(target=_worker, args=(index, walk, current, reviewing, answers), daemon=True)
    process.start()
    return Prefetch(index, process, current, reviewing, answers)


def _worker(index, walk, current, reviewing, answers) -> None:
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
        # the review is parsing it: its facts will be in the cache (unless it is too large to parse)
        if reviewing.value == key and len(index._raw_text(path)) <= MAX_PARSE_BYTES:
            blob = index.tree.blob_id(path)
            deadline = time.monotonic() + MAX_WAIT
            while reviewing.value == key and not cache.has(blob) and time.monotonic() < deadline:
                time.sleep(0.002)
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
        walk()
    except Exception:  # noqa: BLE001, S110 - a hint that fails changes nothing
        pass
