"""srcreview's own reviews pass srcreview's own audit: every source URL it writes is `ok`.

The review format writes every evidence anchor as a source URL with a purpose that names
something checkable (a plain word the role uses for its symbol is quoted as code), and every
URL a finding cites is among them; the audit reads the anchored lines at the real 0.29.0
revision and checks they show what the purpose names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srcreview.audit.reviews import audit_review, load_review
from srcreview.core.errors import SourceUnavailable
from srcreview.index import Index
from srcreview.index.cache import default_cache_dir

REPORTS = sorted((Path(__file__).parent.parent.parent / "reports").glob("*.review.json"))


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.name)
def test_generated_review_has_no_drifted_anchor(report, vllm_029):
    def tree_for(rev: str):
        if not vllm_029.revision.matches_commit(rev):
            raise SourceUnavailable(f"only 0.29.0 is available to this test, not {rev}")
        return vllm_029

    doc = load_review(report.read_bytes(), report.name)
    audit = audit_review(doc, report.name, tree_for, lambda tree: Index(tree, cache_dir=default_cache_dir()))
    assert audit.summary().get("ok", 0) > 0
    assert [(e.pointer, e.status, e.reason) for e in audit.entries if e.status != "ok"] == []


def test_reports_exist():
    assert len(REPORTS) >= 3
