"""Reuse across reviews (issue 27) never changes what a review says: the JSON of a sweep of
recipes (fixtures/recipe_forms and examples/ at 0.29.0) is byte-identical with the reuse off
(SRCREVIEW_REUSE=0), with it on in a cache that has none of its work yet, and with it on again
in that cache, where the converted function bodies come from the facts entries.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from srcreview.index.cache import _FactsUnpickler, facts_dir, unseal

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.network


def _converted_bodies(cache: Path) -> int:
    """How many function bodies the facts entries under `cache` hold converted (pickled IR)."""
    count = 0
    for entry in facts_dir(cache).glob("*/*.pickle"):
        facts = _FactsUnpickler(io.BytesIO(unseal(entry.read_bytes()) or b"")).load()
        count += sum(isinstance(fn.stored_body, bytes) for fn in facts.functions.values())
    return count


def test_the_sweep_is_byte_identical_with_and_without_reuse(cli, vllm_029, tmp_path, monkeypatch):
    from srcreview.source.cache import default_root

    registry = default_root()[0] / "registry"  # where vllm_029 put the source
    shutil.copytree(ROOT / "fixtures" / "recipe_forms", tmp_path / "sweep" / "forms")
    shutil.copytree(ROOT / "examples", tmp_path / "sweep" / "examples")
    monkeypatch.chdir(tmp_path / "sweep")
    monkeypatch.delenv("SRCREVIEW_CACHE_KEY", raising=False)  # no stored review: every one computed

    def sweep(cache: Path, reuse: str) -> str:
        if not cache.exists():
            cache.mkdir()
            os.symlink(registry, cache / "registry")
        monkeypatch.setenv("SRCREVIEW_CACHE", str(cache))
        monkeypatch.setenv("SRCREVIEW_REUSE", reuse)
        result = cli("check", "forms", "examples", "--rev", "0.29.0", "--model-config", "off", "--format", "json",
                     "--fail-on", "none")
        assert result.code in (0, 2), result.err
        assert result.out.count('"recipe": {') >= 30, "the sweep reviewed every recipe"
        return result.out

    without = sweep(tmp_path / "off", "0")
    assert _converted_bodies(tmp_path / "off") == 0, "with the reuse off, no converted body is kept"
    first = sweep(tmp_path / "on", "1")
    kept = _converted_bodies(tmp_path / "on")
    assert kept > 300, "the bodies the reviews converted are kept in the facts entries"
    second = sweep(tmp_path / "on", "1")
    assert _converted_bodies(tmp_path / "on") == kept, "nothing new to keep the second time"
    assert first == without
    assert second == without
