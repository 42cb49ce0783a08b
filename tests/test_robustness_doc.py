"""docs/robustness.md names the tests behind each row; every name must be a test that exists.

A table of cases written by hand drifts from the suite; this keeps it honest.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "robustness.md"

# `test_file.py::test_name`, `::test_name` (same file as the previous reference), `tests/test_file.py`
_REFERENCE = re.compile(r"`((?:tests/)?test_[a-z0-9_]+\.py)?(?:::([a-z0-9_]+)(?:\[[^\]`]*\])?)?`")


def references() -> list[tuple[str, str | None]]:
    found = []
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        for match in _REFERENCE.finditer(line):
            path, name = match.groups()
            if path:
                current = Path(path).name
            if path or name:
                found.append((current, name))
        for path in re.findall(r"tests/(test_[a-z0-9_]+\.py)", line):
            found.append((path, None))
    return found


def test_the_doc_references_tests():
    refs = references()
    assert len({name for _, name in refs if name}) >= 60


def test_every_referenced_test_exists():
    missing = []
    for path, name in references():
        source = ROOT / "tests" / path
        if not source.is_file():
            missing.append(path)
        elif name and not re.search(rf"^def {name}\(", source.read_text(encoding="utf-8"), re.M):
            missing.append(f"{path}::{name}")
    assert sorted(set(missing)) == []
