"""Project defaults (issue 24 C): `[tool.srcreview]` in pyproject.toml or `[defaults]` in
srcreview.toml, found from the working directory up, shown by `check --show-config`; a flag on
the command line wins; a srcreview.toml's waivers and defaults never mix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NESTED = ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"


def test_show_config_without_a_project_file(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--show-config")
    assert result.code == 0
    assert result.out.splitlines()[0] == "project defaults: none found"
    assert "fail-on = confirmed:high  (built in)" in result.out


def test_pyproject_defaults_found_from_a_subdirectory(tmp_path, monkeypatch, cli):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.srcreview]\nrev = "0.29.0"\n'
                                             'model-config = "off"\nfail-on = "plausible:medium"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    result = cli("check", "--show-config", "--fail-on", "none")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "project defaults: ../pyproject.toml"
    assert "rev = 0.29.0  (../pyproject.toml:5)" in lines
    assert "model-config = off  (../pyproject.toml:6)" in lines
    assert "fail-on = none  (command line)" in lines


def test_srcreview_toml_defaults_beside_waivers(tmp_path, monkeypatch, cli):
    """A srcreview.toml holds both: its [defaults] set the defaults, its [[waivers]] stay waivers
    of the recipes beside it (the waiver loader accepts the [defaults] table)."""
    (tmp_path / "srcreview.toml").write_text('[defaults]\nfail-on = "none"\n\n[[waivers]]\n'
                                             'fingerprint = "0000000000000000"\nreason = "x"\nexpires = 2099-01-01\n',
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--show-config")
    assert "fail-on = none  (srcreview.toml:2)" in result.out
    shutil.copy(NESTED, tmp_path / "r.toml")
    result = cli("check", "r.toml", "--rev", "0.29.0", "--model-config", "off", "--format", "concise")
    assert result.code == 65 and "srcreview.toml:" in result.err and "matches no finding" in result.err


def test_a_bad_default_is_a_data_error_with_its_line(tmp_path, monkeypatch, cli):
    (tmp_path / "pyproject.toml").write_text('[tool.srcreview]\nrev = "0.29.0"\ncolour = "red"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--show-config")
    assert result.code == 65 and "pyproject.toml:3: unknown key colour" in result.err
    (tmp_path / "pyproject.toml").write_text('[tool.srcreview]\nfail-on = "sometimes"\n', encoding="utf-8")
    result = cli("check", "--show-config")
    assert result.code == 65 and "pyproject.toml:2: fail-on:" in result.err


def test_check_without_recipes_is_a_usage_error(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    result = cli("check")
    assert result.code == 64 and "give at least one RECIPE" in result.err


@pytest.mark.network
def test_defaults_apply_to_a_review(tmp_path, monkeypatch, cli, vllm_029):
    """The project's fail_on and waivers file are the run's: a waiver that matches nothing fails."""
    shutil.copy(NESTED, tmp_path / "r.toml")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "w.toml").write_text('[[waivers]]\nfingerprint = "0000000000000000"\nreason = "x"\n'
                                            'expires = 2099-01-01\n', encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.srcreview]\nrev = "0.29.0"\nmodel-config = "off"\n'
                                             'fail-on = "none"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "r.toml", "--format", "concise")
    assert result.code == 0 and "gate: passed" in result.out  # fail_on none: the confirmed finding passes
    with (tmp_path / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('waivers = "ci/w.toml"\n')
    result = cli("check", "r.toml", "--format", "concise")
    assert result.code == 65 and "ci/w.toml:1: waiver 0000000000000000 matches no finding" in result.err
