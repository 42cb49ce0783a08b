"""Source registries: `--format registry`, `--registry FILE` merges, `srcreview schema registry`, `audit REGISTRY`.

The seed registry (the campaign's own file, copied unchanged into tests/data) is the audit
input; registries srcreview writes are validated against the schema it publishes and audited
by srcreview itself. Sources come from a fixture tree committed to git in the test, or from
the real vLLM 0.29.0 (network tests, through the registry provider and the user cache).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from fixture_repos import fixture_repo
from recipe_support import DEMO_RECIPE, fixture_tree

from srcreview.audit.registries import audit_registry, review_claims
from srcreview.engine.examples import FIXTURE_SHA
from srcreview.model.revision import Revision
from srcreview.report.registry import SCHEMA, SCHEMA_ID

DATA = Path(__file__).resolve().parent.parent / "data"
SEED = DATA / "benchmark-source-registry-thinkingcap.json"
SEED_REVIEW = DATA / "independent-review-thinkingcap-98dff2a.json"
EXAMPLES = sorted((Path(__file__).resolve().parent.parent.parent / "examples").glob("*.toml"))
RECIPE = DEMO_RECIPE.read_text()
BLOB = "https://github.com/vllm-project/vllm/blob"


def test_published_schema_is_valid_and_admits_the_seed(cli):
    printed = json.loads(cli("schema", "registry").out)
    assert printed == SCHEMA
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    seed = json.loads(SEED.read_text())
    jsonschema.validate(seed, SCHEMA)
    broken = {**seed, "sources": [{k: v for k, v in seed["sources"][0].items() if k != "url"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


@pytest.fixture
def fixture_source(make_git_repo, tmp_path, cache_dir, monkeypatch):
    """A fixture tree committed to git, and two recipes pinned to that commit."""
    repo = fixture_repo(make_git_repo, name="vllm")
    sha = repo.git("rev-parse", "HEAD")
    work = tmp_path / "work"
    work.mkdir()
    for name, text in (("nested", RECIPE),
                       ("top", RECIPE.replace('attention_backend = "TRITON_ATTN"', "").replace(
                           "[engine]", '[engine]\nattention_backend = "TRITON_ATTN"'))):
        (work / f"{name}.toml").write_text(text.replace("[hardware]", f'[runtime]\nrevision = "{sha}"\n\n[hardware]')
                                           .replace('name = "demo-mtp3-nested-triton"', f'name = "demo-{name}"'))
    monkeypatch.chdir(work)
    return repo, sha


def test_format_registry_writes_full_commit_line_anchored_entries(fixture_source, cli):
    repo, sha = fixture_source
    result = cli("check", "nested.toml", "--source", str(repo.path), "--format", "registry", "--date", "2026-11-30")
    doc = json.loads(result.out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema"] == SCHEMA_ID and doc["observed_at"] == "2026-11-30"
    ids = [e["id"] for e in doc["sources"]]
    assert ids and len(set(ids)) == len(ids) and all(i.startswith("srcreview-demo-nested-") for i in ids)
    for entry in doc["sources"]:
        assert entry["url"].startswith(f"{BLOB}/{sha}/") and "#L" in entry["url"]
        assert entry["evidence_type"] == "official-source-code"
        assert entry["age_class"] == "current pinned engine revision"
        assert entry["observed_at"] == "2026-11-30" and entry["decision_impact"].startswith("demo-nested: ")
    ignored = [e for e in doc["sources"] if "spec-draft-attention-backend-ignored" in e["decision_impact"]]
    assert ignored and any("load_eagle_model" in e["hardware_runtime_relevance"] for e in ignored)
    again = cli("check", "nested.toml", "--source", str(repo.path), "--format", "registry", "--date", "2026-11-30")
    assert again.out == result.out  # deterministic
    # our own output passes our own audit: every entry pinned, at the pin, showing what it names
    Path("registry.json").write_text(result.out)
    audit = cli("audit", "registry.json", "--recipe", "nested.toml", "--source", str(repo.path), "--format", "json")
    report = json.loads(audit.out)
    assert audit.code == 0, report
    assert report["summary"]["ok"] > 0 and report["summary"]["drifted"] == report["summary"]["unpinned"] == 0


def test_registry_merge_touches_only_its_own_entries(fixture_source, cli):
    repo, sha = fixture_source
    seed = json.loads(SEED.read_text())
    ours_stale = {"id": "srcreview-demo-nested-0123456789ab", "url": f"{BLOB}/{sha}/vllm/gone.py#L1",
                  "observed_at": "2026-01-01", "age_class": "x", "evidence_type": "official-source-code",
                  "hardware_runtime_relevance": "", "decision_impact": ""}
    lookalike = {**ours_stale, "id": "srcreview-demo-nested-extra-0123456789ab"}  # another recipe's id
    Path("registry.json").write_text(json.dumps({**seed, "sources": seed["sources"] + [ours_stale, lookalike]}))
    first = cli("check", "nested.toml", "--source", str(repo.path), "--registry", "registry.json", "--date", "2026-11-30")
    assert first.code in (0, 1), first.err
    merged = json.loads(Path("registry.json").read_text())
    jsonschema.validate(merged, SCHEMA)
    assert {k: v for k, v in merged.items() if k != "sources"} == {k: v for k, v in seed.items() if k != "sources"}
    assert merged["sources"][:len(seed["sources"])] == seed["sources"]  # untouched, in place
    ids = [e["id"] for e in merged["sources"]]
    assert ours_stale["id"] not in ids and lookalike["id"] in ids
    written = cli("check", "nested.toml", "--source", str(repo.path), "--format", "registry", "--date", "2026-11-30")
    assert [e for e in merged["sources"] if e["id"].startswith("srcreview-demo-nested-") and e != lookalike] \
        == json.loads(written.out)["sources"]
    before = Path("registry.json").read_text()
    cli("check", "nested.toml", "--source", str(repo.path), "--registry", "registry.json", "--date", "2026-11-30")
    assert Path("registry.json").read_text() == before  # merging the same review again changes nothing
    cli("check", "top.toml", "--source", str(repo.path), "--registry", "registry.json", "--date", "2026-12-01")
    both = json.loads(Path("registry.json").read_text())
    assert [e for e in both["sources"] if e["id"].startswith("srcreview-demo-nested-")] == \
        [e for e in merged["sources"] if e["id"].startswith("srcreview-demo-nested-")]
    assert any(e["id"].startswith("srcreview-demo-top-") for e in both["sources"])


def test_merging_into_something_that_is_not_a_registry_is_invalid_data(fixture_source, cli):
    repo, _ = fixture_source
    Path("notes.json").write_text('{"sources": []}')
    result = cli("check", "nested.toml", "--source", str(repo.path), "--registry", "notes.json")
    assert result.code == 65 and "not a source registry" in result.err
    assert Path("notes.json").read_text() == '{"sources": []}'


def _fixture_tree():
    return fixture_tree("rules_spec_decode")


def _entry(n: int, url: str, relevance: str) -> dict:
    return {"id": f"e{n}", "url": url, "observed_at": "2026-11-30", "age_class": "current",
            "evidence_type": "official-source-code", "hardware_runtime_relevance": relevance, "decision_impact": ""}


def test_registry_entries_are_judged_one_by_one():
    tree = _fixture_tree()
    lines = tree.read_text("vllm/config/speculative.py").splitlines()
    field = next(n for n, line in enumerate(lines, 1) if line.strip().startswith("attention_backend:"))
    at = f"{BLOB}/{FIXTURE_SHA}/vllm/config/speculative.py"
    shared = "V2 standard MTP with Triton on sm120"
    doc = {"schema": SCHEMA_ID, "sources": [
        _entry(0, f"{at}#L{field}", "declares `SpeculativeConfig.attention_backend`"),
        _entry(1, f"{at}#L1-L3", "declares `SpeculativeConfig.attention_backend`"),
        _entry(2, f"{BLOB}/v0.29.0/vllm/config/speculative.py#L{field}", "declares `attention_backend`"),
        _entry(3, f"{BLOB}/98dff2a/vllm/config/speculative.py#L{field}", "declares `attention_backend`"),
        _entry(4, "https://github.com/vllm-project/vllm/pull/40886", "the overlay"),
        _entry(5, at, "speculative config"),
        _entry(6, "https://huggingface.co/org/model", "model card"),
        _entry(7, "https://github.com/someone/fork/blob/" + "1" * 40 + "/x.py#L1", "`x`"),
        _entry(8, f"{at}#L1-L2", shared),
        _entry(9, f"{at}#L3-L4", shared),
    ]}

    def tree_for(rev: str):
        assert rev == FIXTURE_SHA
        return tree

    report = audit_registry(doc, "registry.json", tree_for)
    status = {e.id: e.status for e in report.entries}
    assert status == {"e0": "ok", "e1": "drifted", "e2": "unpinned", "e3": "unpinned", "e4": "unpinned",
                      "e5": "whole-file", "e6": "not-vllm", "e7": "not-vllm", "e8": "unverifiable",
                      "e9": "unverifiable"}
    drifted = next(e for e in report.entries if e.id == "e1")
    assert drifted.corrected is not None and drifted.corrected.start_line <= field <= drifted.corrected.end_line
    assert report.failed
    other = Revision(requested="1234567", sha="1234567" + "0" * 33)
    pinned = audit_registry(doc, "registry.json", tree_for, pin=other)
    assert {e.id for e in pinned.entries if e.status == "other-revision"} == {"e0", "e1", "e5", "e8", "e9"}
    # a review that cites the same URL supplies its own claim
    claims = {f"{at}#L1-L2": "imports `dataclass`"}
    with_claims = audit_registry(doc, "registry.json", tree_for, claims=claims)
    assert {e.id: (e.status, e.claim_from) for e in with_claims.entries}["e8"] == ("ok", "review")


def test_audit_refuses_review_options_for_a_review(cli, tmp_path):
    review = tmp_path / "review.json"
    review.write_text(SEED_REVIEW.read_text())
    result = cli("audit", str(review), "--recipe", "x.toml", "--no-progress")
    assert result.code == 64 and "registry" in result.err


@pytest.mark.network
def test_audit_of_the_seed_registry_reports_its_unpinned_and_drifted_entries(vllm_029, cli):
    from srcreview.audit.reviews import audit_review, load_review
    from srcreview.index import Index
    from srcreview.index.cache import default_cache_dir

    nested = str(EXAMPLES[0])
    plain = cli("audit", str(SEED), "--recipe", nested, "--format", "json", "--no-progress")
    assert plain.code == 1
    report = json.loads(plain.out)
    by_id = {e["id"]: e for e in report["entries"]}
    assert by_id["vllm-029-image"]["status"] == "unpinned"
    assert {i for i, e in by_id.items() if e["status"] == "whole-file"} == \
        {"vllm-wsl2-uva-env-98dff2a"} | {f"vllm-029-kv-source-{n}" for n in range(5)}
    assert all(by_id[f"vllm-029-v2-mtp-source-{n}"]["status"] == "unverifiable" for n in range(12))
    assert all(e["status"] == "not-vllm" for i, e in by_id.items() if i.startswith("official-"))
    # with the review those ranges were cited in, each is checked against its own purpose,
    # with the same verdicts as the review's own audit
    claimed = cli("audit", str(SEED), "--recipe", nested, "--review", str(SEED_REVIEW), "--format", "json",
                  "--no-progress")
    entries = {e["url"]: e for e in json.loads(claimed.out)["entries"]}
    doc = load_review(SEED_REVIEW.read_bytes(), SEED_REVIEW.name)
    direct = audit_review(doc, SEED_REVIEW.name, lambda rev: vllm_029,
                          lambda tree: Index(tree, cache_dir=default_cache_dir()))
    assert {e.url for e in direct.entries} <= set(entries)
    for anchor in direct.entries:
        entry = entries[anchor.url]
        assert (entry["status"], entry["claim_from"]) == (anchor.status, "review")
        assert entry["corrected"] == (anchor.corrected.model_dump() if anchor.corrected else None)
    assert sum(1 for e in entries.values() if e["status"] == "drifted") >= 1
    assert review_claims(doc)  # the review names a purpose for its URLs


@pytest.mark.network
def test_format_registry_of_the_examples_passes_audit(vllm_029, cli, tmp_path):
    result = cli("check", *map(str, EXAMPLES), "--format", "registry", "--date", "2026-11-30", "--fail-on", "none")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    jsonschema.validate(doc, SCHEMA)
    assert {e["decision_impact"].split(":")[0] for e in doc["sources"]} == {p.stem for p in EXAMPLES}
    registry = tmp_path / "registry.json"
    registry.write_text(result.out)
    audit = cli("audit", str(registry), "--recipe", str(EXAMPLES[0]), "--format", "json", "--no-progress")
    report = json.loads(audit.out)
    assert audit.code == 0, [e for e in report["entries"] if e["status"] != "ok"]
    assert report["summary"]["ok"] == len(doc["sources"]) > 0  # every URL pinned, at the pin, showing its symbol
