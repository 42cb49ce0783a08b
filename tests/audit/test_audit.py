"""`srcreview audit`: anchors of a hand-written review judged against a small tree written here.

Expected line numbers are computed from the fixture text (where the described code really
is), never copied from the tool's output.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srcreview.audit.reviews import (
    AnchorRef,
    audit_review,
    collect_anchors,
    load_review,
    parse_blob_url,
    parse_purpose,
)
from srcreview.cli.main import main
from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.index import Index
from srcreview.model.revision import resolve_rev
from srcreview.source.base import DirectoryTree

SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = "https://github.com/vllm-project/vllm"

FILES = {
    "vllm/config/speculative.py": '''\
        """Speculative decoding settings (fixture written for srcreview's tests)."""
        from dataclasses import dataclass


        @dataclass
        class SpeculativeConfig:
            """Configuration for speculative decoding."""

            method: str | None = None
            """The speculative method, e.g. mtp."""
            num_speculative_tokens: int = 1
            """How many tokens the draft proposes per step."""
            attention_backend: str | None = None
            """Attention backend of the draft model."""
            kv_cache_dtype: str | None = None
            """KV cache dtype of the draft. When `None`, the draft inherits the
            target's cache dtype."""

            def describe(self) -> str:
                parts = [str(self.method), str(self.num_speculative_tokens)]
                if self.attention_backend is not None:
                    parts.append(self.attention_backend)
                if self.kv_cache_dtype is not None:
                    parts.append(self.kv_cache_dtype)
                return ",".join(parts)
        ''',
    "vllm/spec_decode/loader.py": '''\
        from vllm.config.speculative import SpeculativeConfig


        def get_model(config):
            return config


        def load_draft_model(config):
            spec = config.speculative_config
            if spec.kv_cache_dtype is not None:
                config = config.with_cache_dtype(spec.kv_cache_dtype)
            return get_model(config)
        ''',
    "vllm/engine/args.py": '''\
        def add_cli_args(parser):
            group = parser.add_argument_group("model")
            group.add_argument("--max-model-len", type=int)
            group.add_argument("--seed", type=int)
            attention = parser.add_argument_group("attention")
            attention.add_argument(
                "--attention-backend", default=None
            )
            return parser
        ''',
    "vllm/backends/triton.py": '''\
        def has_device_capability(value):
            return value <= 120


        class TritonImpl:
            def __init__(self, kv_cache_dtype):
                self.kv_cache_dtype = kv_cache_dtype
                self.scale = 1.0
                if self.kv_cache_dtype.startswith("fp8") and not has_device_capability(89):
                    raise ValueError(
                        "FP8 KV cache is not supported by Triton below SM89"
                    )
                self.ready = True
        ''',
}


def _text(path: str) -> str:
    return textwrap.dedent(FILES[path])


def line_of(path: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line of a fixture file containing `needle`."""
    hits = [n for n, line in enumerate(_text(path).splitlines(), start=1) if needle in line]
    return hits[nth - 1]


def url(path: str, start: int, end: int, sha: str = SHA, repo: str = REPO) -> str:
    return f"{repo}/blob/{sha}/{path}#L{start}-L{end}"


@pytest.fixture
def tree_root(tmp_path) -> Path:
    root = tmp_path / "tree"
    for path in FILES:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_text(path))
    return root


def _auditor_inputs(root: Path):
    def tree_for(rev: str):
        revision = resolve_rev(rev)
        if revision.sha != SHA:
            raise SourceUnavailable(f"no source for {rev}")
        return DirectoryTree(root, revision)

    return tree_for, Index


def _audit(root: Path, entries: list[tuple[str, str]]):
    doc = {"artifacts": {"pinned_runtime": {"source_urls": [{"url": u, "purpose": p} for u, p in entries]}}}
    tree_for, index_for = _auditor_inputs(root)
    return audit_review(doc, "review.json", tree_for, index_for).entries


SPEC = "vllm/config/speculative.py"
LOADER = "vllm/spec_decode/loader.py"
ARGS = "vllm/engine/args.py"
TRITON = "vllm/backends/triton.py"


# ---------------------------------------------------------------- purposes

def test_purpose_identifiers_flags_and_concepts():
    purpose = parse_purpose("standard MTP loads through load_eagle_model and accepts --attention-backend")
    labels = [t.label for t in purpose.terms]
    assert labels == ["mtp", "load_eagle_model", "--attention-backend"]
    assert [t.kind for t in purpose.terms] == ["concept", "identifier", "flag"]


def test_purpose_negated_terms_are_never_required():
    purpose = parse_purpose("loader does not apply speculative_config.attention_backend and only replaces cache dtype")
    assert [t.label for t in purpose.terms] == ["cache dtype"]
    assert [t.label for t in purpose.absent] == ["speculative_config.attention_backend"]


def test_purpose_slash_means_either():
    purpose = parse_purpose("the MTP/EAGLE loader")
    assert [[t.label for t in g] for g in purpose.required] == [["mtp", "eagle"]]


def test_purpose_capability_and_declared():
    purpose = parse_purpose("declared fields: Triton requires SM89 for FP8")
    assert purpose.declared
    assert [t.label for t in purpose.terms] == ["triton", "SM89", "fp8"]
    assert not parse_purpose("Triton requires SM89").declared


def test_purpose_remarks_and_keys_are_context_not_requirements():
    purpose = parse_purpose("reads AttentionConfig.backend (vllm_config = get_current_vllm_config() -> VllmConfig)")
    assert [t.label for t in purpose.terms] == ["AttentionConfig.backend"]
    assert [t.label for t in purpose.context] == ["vllm_config", "get_current_vllm_config", "VllmConfig"]
    purpose = parse_purpose("covers kv_cache_dtype=fp8_per_token_head only")
    assert [t.label for t in purpose.terms] == ["fp8_per_token_head"]
    assert [t.label for t in purpose.context] == ["kv_cache_dtype"]
    # a comparison is not key=value, a call's parentheses are not a remark
    purpose = parse_purpose('gate: self.kv_cache_dtype == "bfloat16" and has_device_capability(80)')
    assert [t.label for t in purpose.terms] == ["self.kv_cache_dtype", "has_device_capability"]


def test_purpose_dotted_names_and_what_is_not_code():
    purpose = parse_purpose("entry: Attention.__init__ reads CacheConfig.cache_dtype; see vllm/config/speculative.py")
    terms = {t.label: (t.qualifier, t.name) for t in purpose.terms}
    assert terms == {"Attention.__init__": ("Attention", "__init__"), "CacheConfig.cache_dtype": ("CacheConfig", "cache_dtype")}


def test_negation_before_quoted_code_is_not_a_claim_of_absence():
    purpose = parse_purpose('condition: x.startswith("fp8") and not (platform.has_device_capability(89))')
    assert purpose.absent == ()


def test_purpose_with_nothing_checkable():
    assert parse_purpose("generic upstream kernel coverage").required == ()


# ---------------------------------------------------------------- anchors in the document

def test_collect_anchors_finds_urls_anywhere_in_order():
    a = url(SPEC, 1, 2)
    b = url(LOADER, 3, 4)
    c = url(ARGS, 5, 5)
    doc = {
        "artifacts": {"pinned_runtime": {"source_urls": [{"url": a, "purpose": "p1"}]}},
        "breakage_probes": [{"evidence": f"see {b} where load_draft_model runs"}],
        "notes": [{"link": c, "description": "the flag"}],
        "plain": "https://github.com/vllm-project/vllm/blob/main/README.md has no line anchor",
    }
    found = collect_anchors(doc)
    assert found == [
        AnchorRef("/artifacts/pinned_runtime/source_urls/0/url", a, "p1"),
        AnchorRef("/breakage_probes/0/evidence", b, "see where load_draft_model runs"),
        AnchorRef("/notes/0/link", c, "the flag"),
    ]


def test_parse_blob_url_variants():
    parsed = parse_blob_url(f"{REPO}/blob/{SHA}/vllm/a%20b.py#L7")
    assert (parsed.repo, parsed.rev, parsed.path, parsed.start, parsed.end) == ("vllm-project/vllm", SHA, "vllm/a b.py", 7, 7)
    assert parse_blob_url(f"{REPO}/blob/{SHA}/x.py#L3C2-L9C4").end == 9
    with pytest.raises(DataError):
        parse_blob_url(f"{REPO}/blob/{SHA}/x.py#L9-L3")


def test_load_review_errors_are_data_errors():
    with pytest.raises(DataError, match=r"review.json:3: malformed JSON"):
        load_review(b'{\n  "a": \n}', "review.json")
    with pytest.raises(DataError, match="not valid UTF-8"):
        load_review(b'{"a": "\xff"}', "review.json")


# ---------------------------------------------------------------- verdicts

def test_ok_when_the_range_shows_every_named_thing(tree_root):
    start = line_of(SPEC, "attention_backend: str")
    end = line_of(SPEC, "target's cache dtype")
    [entry] = _audit(tree_root, [(url(SPEC, start, end), "declared draft attention-backend and KV-dtype fields")])
    assert entry.status == "ok", entry
    assert entry.corrected is None
    assert entry.terms == ("attention backend", "kv dtype")


def test_drifted_field_declarations_get_whole_declarations_with_docstrings(tree_root):
    method = line_of(SPEC, "def describe")
    [entry] = _audit(tree_root, [(url(SPEC, 2, 4), "declared draft attention-backend and KV-dtype fields, "
                                                   "including target-KV inheritance when unset")])
    assert entry.status == "drifted"
    assert entry.missing == ("attention backend", "kv dtype", "inherit")
    # the fields, not the method that also reads both (which would be a smaller raw window)
    assert (entry.corrected.start_line, entry.corrected.end_line) == (
        line_of(SPEC, "attention_backend: str"), line_of(SPEC, "target's cache dtype"))
    assert entry.corrected.start_line < method
    assert entry.corrected.url == url(SPEC, entry.corrected.start_line, entry.corrected.end_line)


def test_drifted_flag_points_at_the_whole_registration_statement(tree_root):
    [entry] = _audit(tree_root, [(url(ARGS, 2, 4), "the CLI accepts --attention-backend")])
    assert entry.status == "drifted"
    assert (entry.corrected.path, entry.corrected.start_line, entry.corrected.end_line) == (
        ARGS, line_of(ARGS, "attention.add_argument("), line_of(ARGS, "default=None") + 1)


def test_a_raise_is_widened_to_the_condition_that_guards_it(tree_root):
    [entry] = _audit(tree_root, [(url(TRITON, 1, 3), "Triton requires SM89 or newer for FP8 KV")])
    assert entry.status == "drifted"
    guard = line_of(TRITON, "if self.kv_cache_dtype.startswith")
    assert (entry.corrected.start_line, entry.corrected.end_line) == (guard, guard + 3)


def test_identifier_missing_from_the_file_is_found_in_another_file(tree_root):
    [entry] = _audit(tree_root, [(url(SPEC, 5, 8), "load_draft_model replaces the cache dtype")])
    assert entry.status == "drifted"
    assert entry.corrected.path == LOADER
    assert entry.corrected.start_line == line_of(LOADER, "def load_draft_model")
    assert entry.corrected.end_line == line_of(LOADER, "return get_model(config)")
    assert "is not in vllm/config/speculative.py" in entry.reason


def test_a_camelcase_name_is_looked_up_where_it_is_declared(tree_root):
    [entry] = _audit(tree_root, [(url(SPEC, 5, 8), "TritonImpl checks the FP8 capability")])
    assert entry.status == "drifted"
    assert entry.corrected.path == TRITON
    assert entry.corrected.start_line == line_of(TRITON, "class TritonImpl")


def test_a_camelcase_word_nobody_declares_is_prose_not_a_drift(tree_root):
    start, end = line_of(SPEC, "attention_backend: str"), line_of(SPEC, "Attention backend of the draft")
    [entry] = _audit(tree_root, [(url(SPEC, start, end), "PyTorch reads the declared attention_backend field")])
    assert entry.status == "ok"
    assert any("PyTorch is declared nowhere" in n for n in entry.notes)


def test_a_line_inside_the_named_function_is_in_it(tree_root):
    line = line_of(LOADER, "if spec.kv_cache_dtype is not None")
    [entry] = _audit(tree_root, [(url(LOADER, line, line), "load_draft_model reads .kv_cache_dtype")])
    assert entry.status == "ok", entry.reason
    [entry] = _audit(tree_root, [(url(SPEC, line_of(SPEC, "def describe"), line_of(SPEC, "def describe")),
                                  "load_draft_model reads .kv_cache_dtype")])
    assert entry.status == "drifted"  # describe() is not load_draft_model


def test_a_qualified_name_needs_its_qualifier_on_the_line_or_around_it(tree_root):
    field = line_of(SPEC, "kv_cache_dtype: str")
    read = line_of(LOADER, "if spec.kv_cache_dtype is not None")
    [inside, elsewhere, spelled] = _audit(tree_root, [
        (url(SPEC, field, field), "declares SpeculativeConfig.kv_cache_dtype"),  # in class SpeculativeConfig
        (url(LOADER, read, read), "reads SpeculativeConfig.kv_cache_dtype"),  # `spec.`: qualifier unseen
        (url(SPEC, line_of(SPEC, "self.kv_cache_dtype is not None"), line_of(SPEC, "self.kv_cache_dtype is not None")),
         "reads SpeculativeConfig.kv_cache_dtype"),
    ])
    assert inside.status == "ok" and spelled.status == "ok"
    assert elsewhere.status == "ok"  # no line of the file shows the qualifier: it cannot be checked, so it is not


def test_the_qualifier_picks_the_right_one_of_two_same_names(tree_root):
    (tree_root / "vllm" / "two.py").write_text(
        "class FirstConfig:\n    value: int = 1\n    \"\"\"First.\"\"\"\n\n\n"
        "class SecondConfig:\n    value: int = 2\n    \"\"\"Second.\"\"\"\n")
    [right, wrong] = _audit(tree_root, [(url("vllm/two.py", 7, 8), "declares SecondConfig.value"),
                                        (url("vllm/two.py", 2, 3), "declares SecondConfig.value")])
    assert right.status == "ok"
    assert wrong.status == "drifted" and (wrong.corrected.start_line, wrong.corrected.end_line) == (7, 8)


def test_identifier_nowhere_at_the_revision_is_unverifiable(tree_root):
    [entry] = _audit(tree_root, [(url(SPEC, 5, 8), "calls load_eagle_model")])
    assert entry.status == "unverifiable"
    assert "load_eagle_model occurs nowhere" in entry.reason


@pytest.mark.parametrize(("anchor", "purpose", "reason"), [
    (url(SPEC, 1, 3), "generic coverage of the kernel", "names no identifier"),
    (url(SPEC, 1, 3), "", "no purpose given"),
    (url("vllm/missing.py", 1, 3), "reads attention_backend", "does not exist"),
    (url(SPEC, 1, 3, repo="https://github.com/someone/fork"), "reads attention_backend", "not the configured repository"),
    (url(SPEC, 1, 3, sha="main"), "reads attention_backend", "revision 'main'"),
    (url(SPEC, 1, 3, sha="fedcba9876543210fedcba9876543210fedcba98"), "reads attention_backend", "no source for"),
    (url(SPEC, 1, 3), "the flashinfer path decodes", "none of the named things occurs"),
    (url(SPEC, 1, 3), "FlashInfer decodes", "none of the named things occurs"),
    (url(SPEC, 1, 3), "reads speculative_config.draft_backend_name", "draft_backend_name occurs nowhere"),
])
def test_unverifiable_with_a_reason(tree_root, anchor, purpose, reason):
    [entry] = _audit(tree_root, [(anchor, purpose)])
    assert entry.status == "unverifiable"
    assert reason in entry.reason


def test_a_revision_is_obtained_once_even_when_it_fails(tree_root):
    calls = []

    def tree_for(rev):
        calls.append(rev)
        raise SourceUnavailable("offline")

    other = "fedcba9876543210fedcba9876543210fedcba98"
    doc = [{"url": url(SPEC, 1, 2, sha=other), "purpose": "attention_backend"},
           {"url": url(LOADER, 1, 2, sha=other), "purpose": "load_draft_model"}]
    report = audit_review(doc, "review.json", tree_for, Index)
    assert [e.status for e in report.entries] == ["unverifiable", "unverifiable"]
    assert calls == [other]


def test_claimed_absent_terms_are_reported_not_required(tree_root):
    start, end = line_of(LOADER, "def load_draft_model"), line_of(LOADER, "return get_model")
    [entry] = _audit(tree_root, [(url(LOADER, start, end),
                                  "the loader does not apply attention_backend and replaces the cache dtype")])
    assert entry.status == "ok"
    assert entry.claimed_absent == ("attention_backend",)
    [entry] = _audit(tree_root, [(url(SPEC, 13, 16),
                                  "declares kv_cache_dtype without attention_backend")])
    assert any("said to be absent" in n for n in entry.notes)


def test_a_file_that_does_not_parse_is_audited_on_its_lines(tree_root):
    broken = tree_root / "vllm" / "broken.py"
    broken.write_text("def load_draft_model(:\n    pass\n\n\nx = 1\nuses attention_backend here\n")
    [entry] = _audit(tree_root, [(url("vllm/broken.py", 1, 2), "attention_backend is read")])
    assert entry.status == "drifted"
    assert (entry.corrected.start_line, entry.corrected.end_line) == (6, 6)
    assert any("does not parse" in n for n in entry.notes)


def test_range_past_the_end_of_file(tree_root):
    [entry] = _audit(tree_root, [(url(LOADER, 400, 420), "load_draft_model")])
    assert entry.status == "drifted"
    assert any("past the last line" in n for n in entry.notes)


def test_a_range_that_covers_the_file_and_runs_past_its_end_is_drifted(tree_root):
    """`#L1-L99999999` shows whatever the purpose names, but it is no anchor: drifted, corrected."""
    [entry] = _audit(tree_root, [(url(LOADER, 1, 99999999), "load_draft_model")])
    assert entry.status == "drifted" and entry.reason.startswith("the range ends past the last line")
    assert entry.corrected is not None and entry.corrected.end_line <= line_of(LOADER, "return get_model") + 5


def test_audit_is_deterministic(tree_root):
    entries = [(url(SPEC, 2, 4), "declared attention-backend field"), (url(ARGS, 1, 2), "accepts --attention-backend")]
    assert _audit(tree_root, entries) == _audit(tree_root, entries)


# ---------------------------------------------------------------- command line, on a git repository

@pytest.fixture
def git_review(tmp_path):
    repo = GitRepo(tmp_path / "tree")
    sha = repo.commit({path: _text(path) for path in FILES}, "fixture")
    review = {
        "schema_version": "operator-workflow/v1",
        "artifacts": {"pinned_runtime": {"vllm_revision": sha, "source_urls": [
            {"url": url(LOADER, line_of(LOADER, "def load_draft_model"), line_of(LOADER, "return get_model"), sha=sha),
             "purpose": "load_draft_model replaces the cache dtype"},
            {"url": url(ARGS, 1, 3, sha=sha), "purpose": "the CLI accepts --attention-backend"},
            {"url": url(SPEC, 1, 3, sha=sha), "purpose": "generic coverage"},
        ]}},
    }
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review))
    return path, sha


def test_cli_json_exit_1_on_drift(git_review, capsys, monkeypatch):
    path, sha = git_review
    monkeypatch.chdir(path.parent)
    code = main(["audit", "review.json", "--source", "tree", "--format", "json", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    data = json.loads(out)
    assert data["summary"] == {"ok": 1, "drifted": 1, "unverifiable": 1}
    assert [e["status"] for e in data["entries"]] == ["ok", "drifted", "unverifiable"]
    assert data["entries"][1]["corrected"]["url"].startswith(f"{REPO}/blob/{sha}/{ARGS}#L")
    assert str(path.parent) not in out


def test_cli_text_exit_0_without_drift(git_review, capsys, monkeypatch):
    path, sha = git_review
    review = json.loads(path.read_text())
    del review["artifacts"]["pinned_runtime"]["source_urls"][1]
    path.write_text(json.dumps(review))
    code = main(["audit", str(path), "--source", str(path.parent / "tree"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 anchors: 1 ok, 0 drifted, 1 unverifiable" in out
    assert str(path.parent) not in out


def test_cli_usage_and_data_errors(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text("{}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    listed = tmp_path / "listed.json"
    listed.write_text(json.dumps([f"{REPO}/blob/{SHA}/vllm/config/speculative.py#L1-L2"]))
    review = {"recipe": {"path": "r.toml"}, "revision": {"sha": SHA}, "knobs": [],
              "findings": [{"evidence": [{"url": f"{REPO}/blob/{SHA}/vllm/config/speculative.py#L1-L2",
                                          "role": "declares SpeculativeConfig"}]}]}
    check_json = tmp_path / "check.json"
    check_json.write_text(json.dumps({"schema_version": 1, "reviews": [review]}))
    single_review = tmp_path / "single.json"
    single_review.write_text(json.dumps(review))
    cases = [
        (["audit", str(tmp_path / "absent.json")], 64, "absent.json: no such review file"),
        (["audit", str(good), "--source", str(tmp_path / "no-such-dir")], 64, "--source no-such-dir: no such file"),
        (["audit", str(good), "--provider", "local"], 64, "--provider local needs --source PATH"),
        (["audit", str(good), "--source", str(tmp_path), "--provider", "github"], 64, "cannot be combined"),
        (["audit", str(bad)], 65, "bad.json:1: malformed JSON"),
        (["audit", str(good)], 65, "good.json: no line-anchored GitHub URL to audit"),
        (["audit", str(listed)], 65, "listed.json: not a review document (expected a JSON object, got list)"),
        (["audit", str(check_json)], 65, "check.json: this is `srcreview check --format json` output"),
        (["audit", str(single_review)], 65, "single.json: this is `srcreview check --format json` output"),
    ]
    for args, code, message in cases:
        assert main(args) == code
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and str(tmp_path) not in err


# ---------------------------------------------------------------- hostile review files

@pytest.mark.parametrize("anchor, reason", [
    (f"{REPO}/blob/{SHA}/../../etc/passwd#L1-L2", "not a path inside the source tree"),
    (f"{REPO}/blob/{SHA}/vllm/%2e%2e/%2e%2e/x.py#L1-L2", "not a path inside the source tree"),
    (f"{REPO}/blob/{SHA}/vllm/config/speculative.py#L0-L2", "is empty"),
])
def test_hostile_anchor_urls_are_unverifiable(tree_root, anchor, reason):
    [entry] = _audit(tree_root, [(anchor, "reads attention_backend")])
    assert entry.status == "unverifiable"
    assert reason in entry.reason


def test_finding_urls_is_linear_in_the_size_of_the_review():
    """A lazy regex up to `#L` took 51 s on 400 KB of URL prefixes; 5 MB must stay fast."""
    import time

    start = time.monotonic()
    assert collect_anchors({"x": "https://github.com/a" * 250_000}) == []
    many = collect_anchors({"x": f"see {url(SPEC, 1, 2)} for load_x " * 50_000})
    assert len(many) == 50_000 and "load_x" in many[-1].purpose
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("purpose", ["not " * 500_000, "a." * 1_000_000, "(" * 1_000_000, "x_y/" * 500_000])
def test_huge_purposes_are_parsed_quickly(purpose):
    import time

    start = time.monotonic()
    parse_purpose(purpose)
    assert time.monotonic() - start < 5


def test_deeply_nested_review_is_a_data_error():
    with pytest.raises(DataError, match="nesting too deep|malformed JSON"):
        load_review(b"[" * 100_000 + b"]" * 100_000, "review.json")


_PIECES = st.sampled_from([SPEC, LOADER, ARGS, TRITON, "vllm/none.py", "../x.py", ""])
_URLS = st.builds(lambda path, a, b, sha: f"{REPO}/blob/{sha}/{path}#L{a}-L{b}", _PIECES,
                  st.integers(0, 40), st.integers(0, 40), st.sampled_from([SHA, "main", "abc", SHA[:7]]))
_PURPOSES = st.one_of(st.text(max_size=40), st.sampled_from([
    "declared attention-backend and KV-dtype fields", "accepts --attention-backend", "load_draft_model",
    "MTP/EAGLE loader does not apply attention_backend", "Triton requires SM89 for FP8 KV; sm120 passes"]))
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10), _URLS,
                               st.builds(lambda u, p: f"{p} {u} {p}", _URLS, _PURPOSES)),
                     lambda inner: st.one_of(st.lists(inner, max_size=4),
                                             st.dictionaries(st.sampled_from(["url", "purpose", "x", "evidence"]), inner, max_size=4),
                                             st.fixed_dictionaries({"url": _URLS, "purpose": _PURPOSES})),
                     max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(doc=_JSON)
def test_any_review_document_gets_a_verdict_for_every_anchor(tree_root, doc):
    tree_for, index_for = _auditor_inputs(tree_root)
    report = audit_review(doc, "review.json", tree_for, index_for)
    assert len(report.entries) == len(collect_anchors(doc))
    for entry in report.entries:
        assert entry.reason and "\n" not in entry.reason
        if entry.status == "drifted" and entry.corrected is not None:
            assert entry.corrected.start_line <= entry.corrected.end_line
        if entry.status == "ok":
            assert not entry.missing


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "x", "alpha beta"]), min_size=1, max_size=25))
def test_best_window_is_the_smallest_span_showing_every_term(lines):
    import itertools

    from srcreview.audit.reviews import FileText, Term, Units, best_window

    text = FileText.build("f.py", "\n".join(lines), Units())
    terms = [Term(w, "concept", phrases=((w,),)) for w in ("alpha", "beta", "gamma")]
    groups = [(t,) for t in terms if text.hits(t)]
    if not groups:
        return
    start, end = best_window(text, groups, declared=False)
    choices = [[a for a, _ in text.hits(g[0])] for g in groups]
    spans = sorted((max(c) - min(c), min(c)) for c in itertools.product(*choices))
    assert (end - start, start) == spans[0]


def test_each_anchor_is_read_at_its_own_revision(tmp_path, cli, monkeypatch):
    """The same path and range: true at the first commit, drifted at the second where code moved."""
    repo = GitRepo(tmp_path / "tree")
    body = "class SpeculativeConfig:\n    attention_backend: str | None = None\n    \"\"\"Draft backend.\"\"\"\n"
    first = repo.commit({"vllm/config/speculative.py": body})
    second = repo.commit({"vllm/config/speculative.py": "# moved\n" * 10 + body})
    doc = {"source_urls": [{"url": url(SPEC, 2, 3, sha=sha), "purpose": "declares attention_backend"}
                           for sha in (first, second)]}
    (tmp_path / "review.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    result = cli("audit", "review.json", "--source", "tree", "--format", "json", "--no-progress")
    assert result.code == 1, result.err
    entries = json.loads(result.out)["entries"]
    assert [e["status"] for e in entries] == ["ok", "drifted"]
    assert (entries[1]["corrected"]["start_line"], entries[1]["corrected"]["end_line"]) == (12, 13)
    assert entries[1]["corrected"]["url"] == url(SPEC, 12, 13, sha=second)


def test_text_output_cannot_drive_the_terminal(tree_root, tmp_path, cli, monkeypatch):
    """Review text is shown, never obeyed: no rich markup, no escape sequence reaches the terminal."""
    repo = GitRepo(tmp_path / "repo")
    sha = repo.commit({path: _text(path) for path in FILES})
    start = line_of(SPEC, "attention_backend: str")
    purpose = "[bold red]x[/] attention_backend \x1b]52;c;cGF5bG9hZA==\x07 \x1b[31m \u202e [link=file:///x]y[/link]"
    doc = {"source_urls": [{"url": url(SPEC, start, start + 1, sha=sha), "purpose": purpose}]}
    (tmp_path / "review.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    result = cli("audit", "review.json", "--source", "repo", "--no-progress")
    assert result.code == 0, result.err
    assert "\x1b" not in result.out and "\x07" not in result.out and "\u202e" not in result.out
    assert "\\x1b[31m" in result.out and "[bold red]x[/]" in result.out
    as_json = cli("audit", "review.json", "--source", "repo", "--no-progress", "--format", "json")
    assert as_json.out.isascii() and json.loads(as_json.out)["entries"][0]["purpose"] == purpose


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120) | st.lists(st.sampled_from(
    ["not", "(", ")", "=", "/", "load_eagle_model", "MTP", "KV-dtype", "`x y`", "A.b", "a.py", "--flag", "SM89",
     "rather than", "and", ";", "attention backend", "__init__", "Owner.__init__", ".", "kv_cache_dtype=fp8"]),
    max_size=14).map(" ".join))
def test_parse_purpose_is_total_and_names_only_what_is_written(text):
    purpose = parse_purpose(text)
    required = set(purpose.terms)
    assert not required & set(purpose.absent) and not required & set(purpose.context)
    for term in (*purpose.terms, *purpose.absent, *purpose.context):
        if term.kind in ("identifier", "flag"):
            assert term.label in text.replace("`", "")
            assert term.name and term.label.endswith(term.name)
