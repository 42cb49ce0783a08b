"""docs/robustness.md names the tests behind each row; every name must be a test that exists.

A table of cases written by hand drifts from the suite; this keeps it honest.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "robustness.md"

# `test_file.py::test_name`, `::test_name` (same file as the previous reference), `tests/unit/test_file.py`
_REFERENCE = re.compile(r"`((?:tests/(?:[a-z0-9_]+/)?)?test_[a-z0-9_]+\.py)?(?:::([a-z0-9_]+)(?:\[[^\]`]*\])?)?`")
_PATH = re.compile(r"tests/((?:[a-z0-9_]+/)?test_[a-z0-9_]+\.py)")


def referenced_file(reference: str) -> Path:
    """`tests/unit/test_x.py` is that file; a bare `test_x.py` is the one file of that name in tests/."""
    if reference.startswith("tests/"):
        return ROOT / reference
    found = sorted((ROOT / "tests").rglob(reference))
    return found[0] if len(found) == 1 else ROOT / "tests" / reference


def references() -> list[tuple[str, str | None]]:
    found = []
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        for match in _REFERENCE.finditer(line):
            path, name = match.groups()
            if path:
                current = path
            if path or name:
                found.append((current, name))
        for path in _PATH.findall(line):
            found.append((f"tests/{path}", None))
    return found


def test_the_doc_references_tests():
    refs = references()
    assert len({name for _, name in refs if name}) >= 60


def test_every_referenced_test_exists():
    missing = []
    for path, name in references():
        source = referenced_file(path)
        if not source.is_file():
            missing.append(path)
        elif name and not re.search(rf"^def {name}\(", source.read_text(encoding="utf-8"), re.M):
            missing.append(f"{path}::{name}")
    assert sorted(set(missing)) == []
