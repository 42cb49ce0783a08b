"""The JSON contract: one shape for one recipe or many, a schema_version, and schemas that
validate every JSON output `check` writes (json, review, sarif), open for additions.

The outputs come from the real CLI on recipes reviewed against the `rules_spec_decode`
fixture tree (an unpacked sdist), complete and incomplete, with a waiver and a baseline.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV
from gate_support import sarif_errors, sarif_validator
from recipe_support import compose_text

from srcreview.cli.commands.schema import schema

REV = FIXTURE_REV
DEMO = DEMO_RECIPE.read_text()
TOPLEVEL = DEMO.replace('name = "demo-mtp3-nested-triton"', 'name = "demo-toplevel"').replace(
    "[engine]\n", '[engine]\nattention_backend = "TRITON_ATTN"\n')


@pytest.fixture
def workdir(offline_workdir):
    (offline_workdir / "recipes" / "demo.toml").write_text(DEMO)
    (offline_workdir / "recipes" / "toplevel.toml").write_text(TOPLEVEL)
    return offline_workdir


def _check(cli, *args: str, codes=(0, 1)) -> str:
    result = cli("check", *args, "--source", "tree", "--rev", REV)
    assert result.code in codes, result.err
    return result.out


def _validators():
    run, review = schema("json"), schema("review")
    jsonschema.Draft202012Validator.check_schema(run)
    return jsonschema.Draft202012Validator(run), jsonschema.Draft202012Validator(review), sarif_validator()


def _errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _outputs(cli, recipes: list[str], *extra: str, codes=(0, 1)) -> dict[str, dict]:
    return {fmt: json.loads(_check(cli, *recipes, "--format", fmt, *extra, codes=codes))
            for fmt in ("json", "review", "sarif")}


def test_one_shape_for_one_recipe_or_many(workdir, cli):
    one = json.loads(_check(cli, "recipes/demo.toml", "--format", "json"))
    many = json.loads(_check(cli, "recipes/demo.toml", "recipes/toplevel.toml", "--format", "json"))
    for doc, count in ((one, 1), (many, 2)):
        assert doc["schema_version"] == 1 and len(doc["reviews"]) == count
        assert set(doc) == {"schema_version", "reviews", "gate"}
        assert doc["gate"]["decision"] in ("passed", "failed") and doc["gate"]["summary"]
    assert [r["recipe"]["path"] for r in many["reviews"]] == ["recipes/demo.toml", "recipes/toplevel.toml"]
    assert one["reviews"][0] == many["reviews"][0], "a review reads the same alone or with others"


@pytest.mark.parametrize("recipes", [["recipes/demo.toml"], ["recipes"]], ids=["one recipe", "two recipes"])
def test_every_json_output_validates_against_its_schema(workdir, cli, recipes):
    run, review, sarif = _validators()
    demo = json.loads(_check(cli, "recipes/demo.toml", "--format", "json"))["reviews"][0]
    fingerprint = next(f["fingerprint"] for f in demo["findings"] if f["kind"] != "fact")
    (workdir / "recipes" / "srcreview.toml").write_text(
        f'[[waivers]]\nfingerprint = "{fingerprint}"\nreason = "accepted"\nexpires = 2099-01-01\nrecipe = "demo.toml"\n')
    (workdir / "previous.json").write_text(json.dumps({"reviews": [demo]}))
    for extra in ((), ("--baseline", "previous.json", "--date", "2026-11-29"), ("--fail-on", "plausible:info")):
        outputs = _outputs(cli, recipes, *extra)
        assert _errors(run, outputs["json"]) == []
        assert _errors(review, outputs["review"]) == []
        assert sarif_errors(sarif, outputs["sarif"]) == []
        assert len(outputs["json"]["reviews"]) == len(outputs["review"]["targets"]) == (2 if recipes == ["recipes"] else 1)


def test_an_incomplete_review_validates_too(workdir, cli):
    run, review, sarif = _validators()
    speculative = workdir / "tree" / "vllm" / "config" / "speculative.py"
    speculative.write_bytes(speculative.read_bytes() + b"\nLOADER = lazy import json\n")
    outputs = _outputs(cli, ["recipes"], codes=(2,))
    assert outputs["json"]["gate"]["decision"] == "incomplete" and outputs["json"]["reviews"][0]["incomplete"]
    assert _errors(run, outputs["json"]) == [] and _errors(review, outputs["review"]) == []
    assert sarif_errors(sarif, outputs["sarif"]) == []


def test_the_schema_is_open_for_additions(workdir, cli):
    run, _, _ = _validators()
    doc = json.loads(_check(cli, "recipes", "--format", "json"))

    def add_everywhere(node):
        if isinstance(node, dict):
            for value in node.values():
                add_everywhere(value)
            node["added_by_a_later_version"] = {"any": ["thing"]}
        elif isinstance(node, list):
            for value in node:
                add_everywhere(value)

    later = copy.deepcopy(doc)
    add_everywhere(later)
    assert _errors(run, later) == [], "a field added later never breaks a validator"
    assert "additionalProperties" not in json.dumps(schema("json"))
    broken = copy.deepcopy(doc)
    del broken["reviews"][0]["findings"][0]["fingerprint"]
    broken["reviews"][0]["findings"][1]["classification"] = "probably"
    assert len(_errors(run, broken)) == 2, "the schema still checks what it names"


def test_readers_take_the_run_and_the_earlier_shapes(workdir, cli):
    doc = json.loads(_check(cli, "recipes", "--format", "json"))
    first = doc["reviews"][0]
    finding = first["findings"][0]
    for name, data in (("run.json", doc), ("single.json", first), ("wrapped.json", {"reviews": doc["reviews"]})):
        (workdir / name).write_text(json.dumps(data))
        baseline = cli("check", "recipes", "--source", "tree", "--rev", REV, "--baseline", name, "--format", "json")
        assert baseline.code in (0, 1), baseline.err
        assert json.loads(baseline.out)["reviews"][0]["findings"][0]["baseline"] == "unchanged"
        explained = cli("explain", finding["fingerprint"], "--review", name, "--recipe", first["recipe"]["path"],
                        "--no-source")
        assert explained.code == 0, explained.err


def test_a_fingerprint_shared_by_two_recipes_is_told_apart_by_recipe(workdir, cli):
    """Fingerprints are unique within a recipe's review; across recipes `explain --recipe` picks."""
    doc = json.loads(_check(cli, "recipes", "--format", "json"))
    (workdir / "run.json").write_text(json.dumps(doc))
    for review in doc["reviews"]:
        fingerprints = [f["fingerprint"] for f in review["findings"]]
        assert len(fingerprints) == len(set(fingerprints))
    first, second = ({f["fingerprint"] for f in r["findings"]} for r in doc["reviews"])
    shared = sorted(first & second)[0]
    ambiguous = cli("explain", shared, "--review", "run.json", "--no-source")
    assert ambiguous.code == 64
    assert "matches findings of 2 recipes: recipes/demo.toml, recipes/toplevel.toml; choose one with --recipe PATH" \
        in ambiguous.err
    for path in ("recipes/toplevel.toml", "toplevel.toml"):
        picked = cli("explain", shared, "--review", "run.json", "--recipe", path, "--no-source", "--format", "json")
        assert picked.code == 0 and json.loads(picked.out)["recipe"] == "recipes/toplevel.toml", picked.err
    unknown = cli("explain", shared, "--review", "run.json", "--recipe", "other.toml", "--no-source")
    assert unknown.code == 64 and "--recipe other.toml: no review of that recipe" in unknown.err


def test_two_findings_of_one_recipe_never_share_a_fingerprint(workdir, cli):
    from srcreview.core.records import RecordError
    from srcreview.model.findings import Review

    doc = json.loads(_check(cli, "recipes/demo.toml", "--format", "json"))
    review = doc["reviews"][0]
    review["findings"][1]["fingerprint"] = review["findings"][0]["fingerprint"]
    with pytest.raises(RecordError, match="names two findings of recipes/demo.toml"):
        Review.model_validate(review)
    (workdir / "twice.json").write_text(json.dumps(doc))
    result = cli("explain", review["findings"][0]["fingerprint"], "--review", "twice.json", "--no-source")
    assert result.code == 65 and "names two findings" in result.err


COMPOSE = compose_text("demo")


def test_compose_services_patches_and_stale_rules_validate(workdir, cli):
    """What a compose service (recipe.file), a patch (patches, anchor origin) and a stale rule
    (gate.stale, the run's stale_rules) add to a review is in the schema, and validates."""
    import difflib

    run, review, sarif = _validators()
    (workdir / "recipes" / "compose.yml").write_text(COMPOSE)
    spec = workdir / "tree" / "vllm" / "config" / "speculative.py"
    before = spec.read_text()
    after = before.replace("    attention_backend: AttentionBackendEnum | None = None\n",
                           "    draft_attention_backend: AttentionBackendEnum | None = None\n")
    assert after != before
    (workdir / "rename.diff").write_text("".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        "a/vllm/config/speculative.py", "b/vllm/config/speculative.py")))
    outputs = _outputs(cli, ["recipes"], "--patch", "rename.diff")
    doc = outputs["json"]
    assert _errors(run, doc) == [] and _errors(review, outputs["review"]) == []
    assert sarif_errors(sarif, outputs["sarif"]) == []
    by_path = {r["recipe"]["path"]: r for r in doc["reviews"]}
    assert sorted(by_path) == ["recipes/compose.yml#demo", "recipes/demo.toml", "recipes/toplevel.toml"]
    assert by_path["recipes/compose.yml#demo"]["recipe"]["file"] == "recipes/compose.yml"
    demo = by_path["recipes/demo.toml"]
    assert demo["patches"][0]["file"] == "rename.diff" and demo["revision"]["release_from"] is None
    assert any(a["origin"] for f in demo["findings"] for a in f["evidence"])
    assert demo["gate"]["stale"] == ["spec-draft-attention-backend-ignored"]
    assert doc["gate"]["stale_rules"] == 3 and "; 3 stale rules; " in doc["gate"]["summary"]
    properties = schema("json")["$defs"]
    for model, field in (("RecipeRef", "file"), ("RevisionInfo", "release_from"), ("Review", "patches"),
                         ("Anchor", "origin"), ("ReviewGate", "stale"), ("RunGate", "stale_rules")):
        assert field in properties[model]["properties"], f"{model}.{field}"


def test_the_text_written_a_review_at_a_time_is_the_whole_document_dumped_at_once(workdir, cli):
    """`check --format json` writes each review as it renders it (report.json.chunks): the
    bytes are those of the whole run as one document, for no, one or many reviews."""
    from srcreview.core.textsafe import dumps
    from srcreview.model.findings import ReviewRun
    from srcreview.report import json as report

    text = _check(cli, "recipes/demo.toml", "recipes/toplevel.toml", "--format", "json")
    run = ReviewRun.model_validate_json(text)
    assert text == dumps(run.model_dump(mode="json"), indent=2) + "\n"
    for reviews in ((), run.reviews[:1], run.reviews):
        whole = dumps(report.run_of(list(reviews)).model_dump(mode="json"), indent=2) + "\n"
        assert "".join(report.chunks(list(reviews))) == report.render(list(reviews)) == whole
