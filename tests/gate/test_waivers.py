"""Waivers beside the recipe: reported as waived, never hidden; expired/unmatched/unknown are errors."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from gate_support import NESTED_SPEC, copy_recipes, make_review

from srcreview.cli.commands._gate_args import run_gate
from srcreview.core.errors import EXIT_DATA, EXIT_GATE_FAILED, EXIT_OK, DataError
from srcreview.gate.policy import evaluate
from srcreview.gate.waivers import check_waivers, load_waivers
from srcreview.report import markdown, sarif

RULE = "spec-draft-attention-backend-ignored"
TODAY = dt.date(2026, 11, 29)
KNOWN = {RULE, "test-coverage-missing", "kv-dtype-inherited"}


@pytest.fixture
def recipes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return copy_recipes(tmp_path, "nested.toml", "toplevel.toml")


def _review(name="nested.toml", spec=NESTED_SPEC):
    return make_review(f"recipes/{name}", f"recipes/{name}", spec)


def _confirmed(review):
    return next(f for f in review.findings if f.classification == "confirmed")


def _line_of(path, text):
    """The line of `text` in the file, computed, so no test hard-codes line numbers."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _gate(reviews, today=TODAY, known=KNOWN, fail_on="confirmed:high"):
    waivers = load_waivers([(r.recipe.path, r.recipe.path) for r in reviews])
    return evaluate(reviews, fail_on, waivers=waivers, known_rules=known, today=today)


def _sidecar(recipes, body):
    (recipes / "srcreview.toml").write_text(body, encoding="utf-8")


def _waiver(fp, rule=RULE, expires="2027-01-31", extra="", header="[[waivers]]"):
    rule_line = f'rule = "{rule}"\n' if rule else ""
    return f'{header}\nfingerprint = "{fp}"\n{rule_line}reason = "draft uses the target backend; measured"\nexpires = {expires}\n{extra}'


def test_sidecar_waiver_passes_the_gate_and_is_reported(recipes):
    review = _review()
    fp = _confirmed(review).fingerprint
    _sidecar(recipes, "# accepted findings\n\n" + _waiver(fp))
    result = _gate([review])
    assert result.exit_code == EXIT_OK
    assert [f.fingerprint for _, f in result.waived] == [fp]
    waived = _confirmed(result.reviews[0])
    assert waived.waiver.source == f"recipes/srcreview.toml:{_line_of(recipes / 'srcreview.toml', '[[waivers]]')}"
    assert waived.waiver.expires == "2027-01-31"
    assert len(result.reviews[0].findings) == len(review.findings), "waived findings are not hidden"

    text = markdown.render([review], gate=result)
    assert "waived until 2027-01-31" in text and fp in text
    log = json.loads(sarif.render([review], gate=result))
    suppressed = [r for r in log["runs"][0]["results"] if r.get("suppressions")]
    assert [r["partialFingerprints"]["srcreviewFingerprint/v1"] for r in suppressed] == [fp]
    assert suppressed[0]["suppressions"][0]["kind"] == "external"
    assert "draft uses the target backend" in suppressed[0]["suppressions"][0]["justification"]
    assert json.loads(review.model_dump_json())["findings"], "the JSON contract still lists it"
    assert json.loads(result.reviews[0].model_dump_json())["findings"][0]["waiver"]["reason"]


def test_waiver_in_the_recipe_array_and_keyed_forms(recipes):
    review = _review()
    fp = _confirmed(review).fingerprint
    recipe = recipes / "nested.toml"
    original = recipe.read_text()
    recipe.write_text(original + "\n" + _waiver(fp, header="[[srcreview.waivers]]"))
    result = _gate([_review()])
    assert result.exit_code == EXIT_OK
    note = _confirmed(result.reviews[0]).waiver
    assert note.source == f"recipes/nested.toml:{_line_of(recipe, '[[srcreview.waivers]]')}"
    log = json.loads(sarif.render(result.reviews, gate=result))
    assert log["runs"][0]["results"][0]["suppressions"][0]["kind"] == "inSource"

    recipe.write_text(original + f'\n[srcreview.waivers.{fp}]\nreason = "accepted"\nexpires = "2027-01-31"\n')
    result = _gate([_review()])
    assert result.exit_code == EXIT_OK
    assert _confirmed(result.reviews[0]).waiver.source.endswith(f":{_line_of(recipe, fp)}")


def test_waiver_valid_through_its_expiry_day(recipes):
    review = _review()
    _sidecar(recipes, _waiver(_confirmed(review).fingerprint, expires="2026-11-29"))
    assert _gate([review], today=dt.date(2026, 11, 29)).exit_code == EXIT_OK


@pytest.mark.parametrize("case", ["expired", "unmatched", "unknown-rule", "wrong-rule", "duplicate"])
def test_bad_waivers_are_invalid_data_with_file_and_line(recipes, case):
    review = _review()
    fp = _confirmed(review).fingerprint
    plausible = next(f for f in review.findings if f.classification == "plausible").fingerprint
    body = {
        "expired": _waiver(fp, expires="2026-11-28"),
        "unmatched": _waiver(fp) + "\n" + _waiver("0123456789abcdef"),
        "unknown-rule": _waiver(fp, rule="no-such-rule"),
        "wrong-rule": _waiver(plausible, rule=RULE),
        "duplicate": _waiver(fp) + "\n" + _waiver(fp),
    }[case]
    _sidecar(recipes, body)
    with pytest.raises(DataError) as err:
        _gate([review])
    message = err.value.message
    assert err.value.exit_code == EXIT_DATA and "\n" not in message
    headers = [i for i, line in enumerate(body.splitlines(), start=1) if line == "[[waivers]]"]
    expected_line = headers[-1]
    assert message.startswith(f"recipes/srcreview.toml:{expected_line}: waiver ")
    assert {"expired": "expired on 2026-11-28", "unmatched": "matches no finding",
            "unknown-rule": "unknown rule 'no-such-rule'", "wrong-rule": "from rule 'test-coverage-missing'",
            "duplicate": "repeats the waiver"}[case] in message


def test_unknown_rule_uses_known_rules_from_the_rule_set(recipes):
    review = _review()
    _sidecar(recipes, _waiver(_confirmed(review).fingerprint, rule="no-such-rule"))
    with pytest.raises(DataError, match="unknown rule"):
        run_gate(_args(recipes), [review], rules=[{"id": r} for r in KNOWN])
    with pytest.raises(DataError, match="but the finding is from rule"):
        run_gate(_args(recipes), [review], known_rules=KNOWN | {"no-such-rule"})


def _args(recipes, **kw):
    import argparse

    return argparse.Namespace(recipes=[str(recipes / "nested.toml")], fail_on=None, baseline=None, date="2026-11-29",
                              sarif=None, markdown=None, **kw)


def test_run_gate_finds_waivers_of_the_given_recipe_files(recipes):
    review = _review()
    _sidecar(recipes, _waiver(_confirmed(review).fingerprint))
    run = run_gate(_args(recipes), [review], known_rules=KNOWN)
    assert run.result.exit_code == EXIT_OK and len(run.result.waived) == 1


def test_sidecar_scoping_by_recipe_and_directory(recipes):
    nested, other = _review(), _review("toplevel.toml", spec=())
    fp = _confirmed(nested).fingerprint
    _sidecar(recipes, _waiver(fp, extra='recipe = "nested.toml"\n'))
    assert _gate([other]).exit_code == EXIT_OK, "a waiver scoped to a recipe not in this run is not unmatched"
    assert _gate([nested, other]).exit_code == EXIT_OK
    _sidecar(recipes, _waiver(fp, extra='recipe = "toplevel.toml"\n'))
    with pytest.raises(DataError, match="matches no finding of recipes/toplevel.toml"):
        _gate([nested, other])
    _sidecar(recipes, _waiver(fp, expires="2020-01-01", extra='recipe = "toplevel.toml"\n'))
    with pytest.raises(DataError, match="expired"):
        _gate([nested])


def test_waiver_does_not_cover_other_findings(recipes):
    review = _review()
    plausible = next(f for f in review.findings if f.classification == "plausible").fingerprint
    _sidecar(recipes, _waiver(plausible, rule="test-coverage-missing"))
    result = _gate([review])
    assert result.exit_code == EXIT_GATE_FAILED
    assert [f.classification for _, f in result.failing] == ["confirmed"]


@pytest.mark.parametrize("body, expected", [
    ('[[waivers]]\nfingerprint = "abcd1234"\nexpires = 2027-01-01\n', "waiver without reason"),
    ('[[waivers]]\nfingerprint = "abcd1234"\nreason = ""\nexpires = 2027-01-01\n', "reason must be a non-empty"),
    ('[[waivers]]\nfingerprint = "abcd1234"\nreason = "x"\nexpires = "next year"\n', "expires must be a date"),
    ('[[waivers]]\nfingerprint = "abcd1234"\nreason = "x"\nexpires = 2027-01-01T00:00:00\n', "expires must be a date"),
    ('[[waivers]]\nfingerprint = "abcd1234"\nreason = "x"\nexpires = 2027-01-01\nowner = "me"\n', "unknown waiver key 'owner'"),
    ('[waiver]\nfingerprint = "abcd1234"\n', "unknown key waiver"),
    ('[[waivers]]\nfingerprint = "a b"\nreason = "x"\nexpires = 2027-01-01\n', "fingerprint must be"),
    ('[[waivers]\n', "malformed TOML"),
])
def test_malformed_waiver_file(recipes, body, expected):
    _sidecar(recipes, body)
    with pytest.raises(DataError) as err:
        load_waivers([("recipes/nested.toml", "recipes/nested.toml")])
    assert expected in err.value.message and err.value.message.startswith("recipes/srcreview.toml:")
    key = expected.split("'")[1] if "'" in expected else None
    if key:
        assert err.value.message.startswith(f"recipes/srcreview.toml:{_line_of(recipes / 'srcreview.toml', key)}:")


def test_recipe_srcreview_table_is_strict(recipes):
    recipe = recipes / "nested.toml"
    recipe.write_text(recipe.read_text() + '\n[srcreview]\nwaiver = []\n')
    with pytest.raises(DataError) as err:
        load_waivers([(recipe, "recipes/nested.toml")])
    assert err.value.message.startswith(f"recipes/nested.toml:{_line_of(recipe, 'waiver = []')}: unknown key")
    recipe.write_text(recipe.read_text().replace("waiver = []", '[[srcreview.waivers]]\nfingerprint = "abcd1234"\n'
                                                                'reason = "x"\nexpires = 2027-01-01\nrecipe = "a.toml"'))
    with pytest.raises(DataError, match="belongs in srcreview.toml"):
        load_waivers([(recipe, "recipes/nested.toml")])


def test_sidecar_read_once_for_several_recipes(recipes):
    nested = _review()
    _sidecar(recipes, _waiver(_confirmed(nested).fingerprint))
    waivers = load_waivers([("recipes/nested.toml", "recipes/nested.toml"),
                            ("recipes/toplevel.toml", "recipes/toplevel.toml")])
    assert len(waivers) == 1 and waivers[0].recipes == ("recipes/nested.toml", "recipes/toplevel.toml")
    check_waivers(waivers, [nested], TODAY, KNOWN)


def test_inline_forms_point_at_the_waiver_line(recipes):
    review = _review()
    fp = _confirmed(review).fingerprint
    _sidecar(recipes, f'# accepted\nwaivers = [\n  {{ fingerprint = "{fp}", reason = "ok", expires = 2027-01-01 }},\n'
                      f'  {{ fingerprint = "0123456789abcdef", reason = "old", expires = 2020-01-01 }},\n]\n')
    with pytest.raises(DataError) as err:
        _gate([review])
    assert err.value.message.startswith(
        f"recipes/srcreview.toml:{_line_of(recipes / 'srcreview.toml', '0123456789abcdef')}: waiver 0123456789abcdef expired")
    recipe = recipes / "nested.toml"
    recipe.write_text(recipe.read_text() + f'\n[srcreview.waivers]\n"{fp}" = {{ reason = "ok", expires = 2027-01-01 }}\n')
    (recipes / "srcreview.toml").unlink()
    result = _gate([_review()])
    assert result.exit_code == EXIT_OK
    assert _confirmed(result.reviews[0]).waiver.source == f"recipes/nested.toml:{_line_of(recipe, fp)}"


def test_unmatched_waiver_of_an_incomplete_review_leaves_exit_2(recipes):
    review = _review()
    _sidecar(recipes, _waiver(_confirmed(review).fingerprint))
    broken = make_review("recipes/nested.toml", "recipes/nested.toml", (), incomplete=["source unavailable"])
    result = _gate([broken])
    assert result.exit_code == 2 and not result.waived
