"""SARIF 2.1.0: schema-valid, primary location on the recipe line, anchors related, trace as codeFlow."""

from __future__ import annotations

import json

import pytest
from gate_support import (
    DATA,
    NESTED_SPEC,
    SHA,
    copy_recipes,
    make_review,
    sarif_errors,
    sarif_validator,
)

from srcreview.gate.policy import evaluate
from srcreview.model.findings import StaleRule
from srcreview.model.recipe import load_recipe
from srcreview.report import sarif


@pytest.fixture(scope="session")
def validator():
    return sarif_validator()


_errors = sarif_errors


@pytest.fixture
def nested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")
    return make_review(DATA / "nested.toml", "recipes/nested.toml", NESTED_SPEC,
                       knob_status={"speculative_config.attention_backend": "ignored"})


def test_schema_rejects_a_broken_log(validator, nested):
    log = json.loads(sarif.render([nested]))
    log["version"] = "2.0.0"
    del log["runs"][0]["tool"]["driver"]["name"]
    assert len(_errors(validator, log)) >= 2


def test_valid_and_anchored_on_the_recipe_line(validator, nested):
    result = evaluate([nested])
    log = json.loads(sarif.render([nested], gate=result, date="2026-11-29"))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    recipe = load_recipe(DATA / "nested.toml", "recipes/nested.toml")
    reported = [f for f in nested.findings if f.kind != "fact"]
    assert len(run["results"]) == len(reported)
    for res, finding in zip(run["results"], sorted(reported, key=lambda f: f.sort_key()), strict=True):
        assert res["ruleId"] == finding.rule
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == finding.rule
        primary = res["locations"][0]["physicalLocation"]
        assert primary["artifactLocation"] == {"uri": "recipes/nested.toml", "uriBaseId": "%SRCROOT%"}
        assert primary["region"]["startLine"] == recipe.setting(finding.knobs[0]).line
        assert res["partialFingerprints"] == {"srcreviewFingerprint/v1": finding.fingerprint}
    top = run["results"][0]
    assert top["level"] == "error" and top["properties"]["classification"] == "confirmed"
    assert run["results"][1]["level"] == "note", "an open question (plausible medium) is one step milder"
    assert top["message"]["text"].startswith(f"problem, confirmed (high): {nested.findings[0].claim}. ")
    assert [p["fingerprint"] for p in run["properties"]["facts"]] == \
        [f.fingerprint for f in nested.findings if f.kind == "fact"], "facts are not alerts"
    assert run["properties"]["reviewDate"] == "2026-11-29"
    assert run["properties"]["gate"] == {"decision": "failed", "exitCode": 1, "failOn": "confirmed:high",
                                         "failing": 1, "waived": 0,
                                         "summary": "1 problem at or above confirmed:high; 1 open question; 1 fact"}
    assert run["invocations"][0] == {"executionSuccessful": True, "exitCode": 1}


def test_related_locations_codeflow_and_provenance(validator, nested):
    log = json.loads(sarif.render([nested]))
    run = log["runs"][0]
    (base, origin), = run["originalUriBaseIds"].items()
    assert origin["uri"] == f"https://github.com/vllm-project/vllm/blob/{SHA}/"
    assert run["versionControlProvenance"] == [{"repositoryUri": "https://github.com/vllm-project/vllm",
                                                "revisionId": SHA, "mappedTo": {"uriBaseId": base}}]
    finding = next(f for f in nested.findings if f.classification == "confirmed")
    res = run["results"][0]
    related = res["relatedLocations"]
    assert sorted((r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"],
                   r["physicalLocation"]["region"]["endLine"]) for r in related) == \
        sorted((a.path, a.start_line, a.end_line) for a in finding.evidence)
    assert {r["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in related} == {base}
    assert res["properties"]["evidenceUrls"] == sorted(a.url for a in finding.evidence)
    for r in related:  # the message links each anchor by its related-location id
        assert f"]({r['id']})" in res["message"]["text"]
    flow = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["message"]["text"] for step in flow] == [h.text for h in finding.trace]
    assert flow[0]["location"]["physicalLocation"]["artifactLocation"]["uri"] == "recipes/nested.toml"
    assert flow[0]["location"]["physicalLocation"]["region"]["startLine"] == finding.recipe_line
    assert flow[1]["location"]["physicalLocation"]["artifactLocation"]["uriBaseId"] == base
    assert "physicalLocation" not in flow[-1]["location"], "a note hop has no location, only its text"


def test_rules_carry_their_docs(validator, nested):
    docs = [{"id": "spec-draft-attention-backend-ignored", "claim": "the nested backend {value} does not reach the draft",
             "severity": "high", "doc": {"what": "Traces the field.", "why": "GPU hours.", "references": ["a", "b"]}}]
    log = json.loads(sarif.render([nested], rules=docs))
    assert _errors(validator, log) == []
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    rule = rules["spec-draft-attention-backend-ignored"]
    assert rule["shortDescription"]["text"] == "the nested backend <value> does not reach the draft"
    assert rule["fullDescription"]["text"] == "Traces the field."
    assert "**" not in rule["help"]["text"] and "**Why it matters**" in rule["help"]["markdown"]
    assert "GPU hours." in rule["help"]["markdown"] and "- b" in rule["help"]["text"]
    assert rule["defaultConfiguration"] == {"level": "error"}
    assert rules["test-coverage-missing"]["shortDescription"]["text"], "undocumented rules fall back to their claim"
    assert list(rules) == sorted(rules)


def test_several_recipes_and_revisions_in_one_run(validator, nested):
    other_sha = "1" * 40
    other = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", [
        ("spec-draft-attention-backend-ignored", "attention_backend", "plausible", "high",
         {"evidence": (nested.findings[0].evidence[0].model_copy(
             update={"url": nested.findings[0].evidence[0].url.replace(SHA, other_sha)}),)})], sha=other_sha)
    log = json.loads(sarif.render([other, nested], gate=evaluate([other, nested])))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    assert len(log["runs"]) == 1
    assert sorted(p["revisionId"] for p in run["versionControlProvenance"]) == sorted([SHA, other_sha])
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]] == \
        ["recipes/nested.toml", "recipes/nested.toml", "recipes/toplevel.toml"]
    assert run["results"][-1]["level"] == "note", "an open question not failing the gate, at high severity too"


def test_incomplete_and_stale_rules_are_notifications(validator, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "toplevel.toml")
    review = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", incomplete=["source unavailable: offline"])
    review = review.model_copy(update={"stale_rules": (StaleRule(rule="old-rule", missing=("Foo.bar",)),)})
    result = evaluate([review])
    log = json.loads(sarif.render([review], gate=result))
    assert _errors(validator, log) == []
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    assert "offline" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert invocation["toolConfigurationNotifications"][0]["descriptor"]["id"] == "old-rule"


def test_deterministic_and_no_absolute_path(validator, nested, tmp_path):
    result = evaluate([nested])
    first = sarif.render([nested], gate=result, date="2026-11-29")
    assert first == sarif.render(list(reversed([nested])), gate=evaluate([nested]), date="2026-11-29")
    absolute = nested.model_copy(update={"recipe": nested.recipe.model_copy(
        update={"path": str(tmp_path / "recipes" / "nested.toml")})})
    text = sarif.render([absolute], gate=evaluate([absolute]))
    assert str(tmp_path) not in text and "/tmp" not in text.replace("https://", "")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(text)["runs"][0]["results"]}
    assert uris == {"nested.toml"}
    assert _errors(validator, json.loads(text)) == []


@pytest.mark.parametrize("path, uri", [("./recipes/a b.toml", "recipes/a%20b.toml"), ("C:\\r\\x.toml", "x.toml"),
                                       ("recipes/x.toml", "recipes/x.toml")])
def test_recipe_uri(path, uri):
    assert sarif.recipe_uri(path) == uri


def test_every_result_has_a_region(validator, nested):
    """A finding about the recipe as a whole (no knob line) is shown on line 1 (code scanning needs a region)."""
    whole = nested.findings[0].model_copy(update={"recipe_line": None, "knobs": (), "trace": ()})
    review = nested.model_copy(update={"findings": (whole,)})
    log = json.loads(sarif.render([review]))
    assert _errors(validator, log) == []
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}


def test_a_refuted_desired_property_is_a_result_and_a_confirmed_one_a_fact(validator, nested):
    """Results are problems and open questions; which classification is a problem is the rule's call."""
    spec = [("draft-inherits-backend", "attention_backend", "refuted", "high", {"problem": "refuted"}),
            ("backend-reaches-draft", "kv_cache_dtype", "confirmed", "medium", {"problem": "refuted"})]
    review = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", spec)
    log = json.loads(sarif.render([review], gate=evaluate([review])))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    assert [(r["ruleId"], r["level"], r["properties"]["kind"]) for r in run["results"]] == \
        [("draft-inherits-backend", "error", "problem")]
    assert run["results"][0]["message"]["text"].startswith("problem, refuted (high): ")
    assert [(f["rule"], f["classification"]) for f in run["properties"]["facts"]] == \
        [("backend-reaches-draft", "confirmed")]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["draft-inherits-backend"]
