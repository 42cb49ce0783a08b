"""`--format json`: the Review model as JSON (the contract CI users script against).

One recipe gives a single Review object; several give {"reviews": [...]}, in the order the
recipes were given. Deterministic: field order from the model, findings already sorted.
"""

from __future__ import annotations

from collections.abc import Sequence

from srcreview.findings import Review
from srcreview.textsafe import dumps


def to_data(review: Review) -> dict:
    return review.model_dump(mode="json")


def render(reviews: Sequence[Review] | Review, **_options) -> str:
    if isinstance(reviews, Review):
        reviews = [reviews]
    data = to_data(reviews[0]) if len(reviews) == 1 else {"reviews": [to_data(r) for r in reviews]}
    return dumps(data, indent=2) + "\n"
