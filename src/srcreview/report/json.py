"""`--format json`: the run as JSON, one shape for one recipe or many (the contract CI users
script against).

`{"schema_version": 1, "reviews": [Review, ...], "gate": RunGate}`: the reviews in the order
the recipes were given, each gate-annotated, and the run's decision. `srcreview schema json`
prints its JSON Schema, which is open for additions (fields are added, never renamed).
Deterministic: field order from the models, findings already sorted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from srcreview.core.textsafe import dumps
from srcreview.model.findings import Review, ReviewRun, RunGate


def run_of(reviews: Sequence[Review] | Review, gate=None) -> ReviewRun:
    """The ReviewRun of `reviews`, annotated by `gate` (a GateResult) when given."""
    if isinstance(reviews, Review):
        reviews = [reviews]
    if gate is None:
        return ReviewRun(reviews=tuple(reviews))
    counts = gate.counts()
    summary = RunGate(decision=gate.decision, exit_code=gate.exit_code, fail_on=str(gate.fail_on),
                      summary=gate.summary(), failing=counts["failing"], waived=counts["waived"],
                      problems=counts["problem"], open_questions=counts["open-question"], facts=counts["fact"],
                      stale_rules=len(gate.stale), baseline=gate.baseline)
    return ReviewRun(reviews=gate.annotate(reviews), gate=summary)


_REVIEWS = "\0srcreview-reviews\0"  # where the reviews go in the run's text


def render(reviews: Sequence[Review] | Review, *, gate=None, **_options) -> str:
    return "".join(chunks(reviews, gate=gate))


def chunks(reviews: Sequence[Review] | Review, *, gate=None) -> Iterator[str]:
    """The text of `dumps(run.model_dump(mode="json"), indent=2)` in pieces, one review at a
    time: the whole run as one Python document, or as one string built by concatenation, is
    several times its text (a campaign of a hundred recipes has megabytes of it)."""
    run = run_of(reviews, gate)
    document = run.model_dump(mode="json", exclude={"reviews"})
    ordered = {name: _REVIEWS if name == "reviews" else document[name]
               for name in type(run).model_fields if name == "reviews" or name in document}
    head, _, tail = dumps(ordered, indent=2).partition(dumps(_REVIEWS))
    yield head
    if not run.reviews:
        yield "[]"
    for n, review in enumerate(run.reviews):  # a list item at depth 2 (JSON strings hold no raw line break)
        text = dumps(review.model_dump(mode="json"), indent=2)
        yield ("[\n    " if n == 0 else ",\n    ") + text.replace("\n", "\n    ")
    if run.reviews:
        yield "\n  ]"
    yield tail + "\n"


def schema() -> dict:
    """The JSON Schema of `--format json`, open for additions: an object may carry fields it does
    not list (a newer srcreview adds them), so every output of this and later versions validates."""
    data = ReviewRun.model_json_schema()

    def open_(node):
        if isinstance(node, dict):
            node.pop("additionalProperties", None) if node.get("additionalProperties") is False else None
            for value in node.values():
                open_(value)
        elif isinstance(node, list):
            for value in node:
                open_(value)

    open_(data)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://srcreview.invalid/schemas/review-run-v1.json", **data}
