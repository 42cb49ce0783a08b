"""A review of a patched tree: each anchor says where its lines come from, and the layers are recorded.

The engine builds anchors from `tree.url`, which for a PatchedTree already points at upstream
(unchanged lines) or at the patch (lines a layer added or changed). This pass, run on the
finished Review, adds what the URL alone does not say: `Anchor.origin` (upstream or patched,
with the lines the URL points at) and `Review.patches` (each layer's file, sha256 and the
paths it touched). The analysis never sees any of it.
"""

from __future__ import annotations

from typing import cast

from srcreview.model.findings import Anchor, AnchorOrigin, PatchRecord, Review


def mark_patched(review: Review, tree) -> Review:
    """`review` with its anchors' origins and the tree's layers; unchanged for a plain tree."""
    from srcreview.source.patched import PatchedTree, layer_records

    if not isinstance(tree, PatchedTree):
        return review

    def mark(anchor: Anchor | None) -> Anchor | None:
        if anchor is None:
            return None
        found = tree.provenance(anchor.path, anchor.start_line, anchor.end_line)
        if found is None:
            return anchor
        origin = AnchorOrigin(kind=found.kind, file=found.file, start_line=found.start_line,
                              end_line=found.end_line, sha256=found.sha256)
        return anchor.model_copy(update={"url": tree.url(anchor.path, anchor.start_line, anchor.end_line),
                                         "origin": origin})

    def marked(anchors) -> tuple[Anchor, ...]:
        return tuple(cast(Anchor, mark(a)) for a in anchors)  # (no None among them)

    findings = tuple(
        f.model_copy(update={"evidence": marked(f.evidence),
                             "trace": tuple(h.model_copy(update={"anchor": mark(h.anchor)}) for h in f.trace)})
        for f in review.findings)
    return review.model_copy(update={
        "runner": review.runner.model_copy(update={"evidence": marked(review.runner.evidence)}),
        "knobs": tuple(k.model_copy(update={"evidence": marked(k.evidence)}) for k in review.knobs),
        "findings": findings,
        "patches": tuple(PatchRecord(**record) for record in layer_records(tree)),
    })
