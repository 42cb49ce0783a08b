"""The gate never passes by accident (issue 26): what srcreview could not review, or reviewed
under rules it did not run, is never a pass.

Every case runs the real CLI on files made in the test (a fixture tree as the source).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source

COMPOSE = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n"
           "    command: [\"some/model\", \"--max-model-len\", \"1024\"]\n")
PASSING = DEMO_RECIPE.read_text().replace('attention_backend = "TRITON_ATTN"\n', "")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "good.toml").write_text(PASSING)
    return tmp_path


def _check(cli, *args):
    return cli("check", *args, "--source", "tree", "--rev", FIXTURE_REV, "--format", "concise")


@pytest.mark.parametrize(("name", "content", "why"), [
    ("serve.sh", b"#!/bin/sh\nexport VLLM_X='\x1b]0;title\x07'\nvllm serve some/model --max-model-len 1024\n",
     "control character"),
    ("launch", b"#!/bin/bash\nexec vllm serve some/model \\\n  --max-num-seqs \x1b[31m\n", "control character"),
    ("docker-compose.yml", COMPOSE.encode() + b"# " + b"x" * 1_000_100 + b"\n", "limit"),
    ("compose.yaml", b"services:\n  llm:\n    image: vllm/vllm-openai\n    command: [\"m\", \xff\xfe]\n", "UTF-8"),
    ("Dockerfile", b"FROM vllm/vllm-openai:v0.29.0\nCMD [\"vllm\", \"serve\", \"m\", \"\x1b\"]\n", ""),
    ("stack.yml", b"\xff\xfe" + "services:\n  llm:\n    image: vllm/vllm-openai\n    command: [\"m\", \"--x\"".encode(
        "utf-16-le") + b"\x00\xd8", "UTF-16"),
    ("docker-compose.yaml", b"# " + b"x" * 1_000_100 + b"\n" + COMPOSE.encode(), "limit"),  # vLLM past 1 MB
    ("Dockerfile.vllm", b"# " + b"x" * 1_000_100 + b"\nFROM vllm/vllm-openai:v0.29.0\nCMD [\"m\"]\n", "limit"),
    ("big-config.yaml", b"model: some/model\nmax_model_len: 1024\n# " + b"x" * 1_000_100 + b"\n", "limit"),
    ("esc-config.yaml", b"model: some/model\nserved-model-name: \"\x1b[31m\"\n", "U+001B"),
    ("bad-config.yml", b"model: some/\xffmodel\nmax-model-len: 1024\n", "UTF-8"),
])
def test_a_directory_run_fails_on_every_recipe_it_cannot_read(workdir, cli, name, content, why):
    assert _check(cli, "recipes").code == 0, "the good recipe alone passes"
    (workdir / "recipes" / name).write_bytes(content)
    result = _check(cli, "recipes")
    assert result.code in (2, 65) and f"recipes/{name}" in result.err, result.err
    assert why in result.err and len(result.err.splitlines()) == 1 and result.out == ""


def test_a_utf16_compose_file_with_a_bom_is_reviewed(workdir, cli):
    """docker compose reads it, so srcreview reviews it (UTF-16 and UTF-32, either byte order)."""
    for n, codec in enumerate(("utf-16", "utf-32", "utf-16-be")):
        bom = {"utf-16": b"", "utf-32": b"", "utf-16-be": b"\xfe\xff"}[codec]
        (workdir / "recipes" / f"compose{n}.yml").write_bytes(bom + COMPOSE.encode(codec))
    result = _check(cli, "recipes")
    assert result.code in (0, 1, 2), result.err
    assert all(f"recipes/compose{n}.yml" in result.out for n in range(3)), result.out


def test_files_that_are_no_recipe_stay_out(workdir, cli):
    """What only mentions vLLM is not made a recipe: a README, a k8s manifest, another
    compose project, a large log."""
    recipes = workdir / "recipes"
    (recipes / "README.md").write_text("Run `vllm serve some/model` to start.\n")
    (recipes / "deploy.yaml").write_text("kind: Deployment\nspec:\n  args: [vllm, serve, m, \"\x1b\"]\n")
    (recipes / "compose.yml").write_text("services:\n  cache:\n    image: redis:7\n")
    (recipes / "serve.log").write_bytes(b"vllm serve m\n" * 100_000)
    (recipes / "mkdocs.yml").write_bytes(b"site_name: docs\nnav:\n  - vllm serve: serve.md\n# \xff\x1b\n")
    (recipes / "data.yaml").write_bytes(b"- model: some/model\n  max_model_len: 1\n# " + b"x" * 1_000_100 + b"\n")
    result = _check(cli, "recipes")
    assert result.code == 0, result.err


def test_an_empty_or_missing_rules_directory_is_never_a_pass(workdir, cli):
    """A submodule not checked out runs no rule: refused, before and after any stored review,
    and a missing directory is not served the empty one's stored summary."""
    (workdir / "empty").mkdir()
    (workdir / "readme-only").mkdir()
    (workdir / "readme-only" / "README.md").write_text("rules live in a submodule\n")
    for _ in range(2):  # the second round finds whatever the first one stored
        for rules, code, why in (("empty", 65, "holds no rule file"), ("readme-only", 65, "holds no rule file"),
                                 ("no-such-dir", 64, "no such directory")):
            result = _check(cli, "recipes", "--rules", rules)
            assert (result.code, result.out) == (code, ""), (rules, result.err)
            assert why in result.err and len(result.err.splitlines()) == 1
        assert _check(cli, "recipes").code == 0  # the shipped rules, stored meanwhile
    for rules, code in (("empty", 65), ("no-such-dir", 64)):
        listed = cli("rules", "list", "--rules", rules)
        assert listed.code == code and len(listed.err.splitlines()) == 1 and "Traceback" not in listed.err
    from srcreview.store.reviews import rules_digest

    assert rules_digest(workdir / "empty") is None and rules_digest(workdir / "no-such-dir") is None


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "digits"])
def test_a_rules_directory_holding_a_special_file_is_refused_unread(workdir, kind):
    """A FIFO or a link to /dev/zero named `x.toml` in `--rules`, or a rule file holding a
    5,000-digit number: `check` (with and without stored reviews) and `rules list` end in one
    line, in bounded time (fixed: the FIFO and /dev/zero hung for ever, in the loader and in
    the rules digest of stored reviews; the digits were a ValueError traceback)."""
    import os
    import shutil
    import subprocess

    rules = workdir / "myrules"
    shutil.copytree(Path(__file__).parents[2] / "rules", rules)
    special = rules / "zz-special.toml"
    if kind == "fifo":
        os.mkfifo(special)
    elif kind == "dev-zero":
        special.symlink_to("/dev/zero")
    else:
        special.write_text('id = "zz-special"\nseverity = ' + "9" * 5000 + "\n")
    expected = {"fifo": (64, "myrules/zz-special.toml: cannot read rule: a FIFO, not a regular file"),
                "dev-zero": (64, "myrules/zz-special.toml: cannot read rule: a character device, not a regular file"),
                "digits": (65, "myrules/zz-special.toml:2: a number of 5000 digits, over the 4300-digit limit")}[kind]
    for key, args in (("", ("check", "recipes", "--source", "tree", "--rev", FIXTURE_REV)),
                      ("secret", ("check", "recipes", "--source", "tree", "--rev", FIXTURE_REV)),
                      ("", ("rules", "list"))):
        env = {**os.environ, "SRCREVIEW_CACHE_KEY": key}
        result = subprocess.run(_srcreview(*args, "--rules", "myrules"), capture_output=True, text=True, env=env,
                                timeout=60)
        assert (result.returncode, result.stdout) == (expected[0], ""), (args, result.stderr[-2000:])
        assert result.stderr.splitlines() == [f"srcreview: error: {expected[1]}"], (args, result.stderr[-2000:])


def _srcreview(*args: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "srcreview", *args]


def test_a_failed_gate_stays_failed_when_its_reader_goes_away(workdir):
    """`check ... | true`, `| head -1`: the reader leaves, the exit code stays the gate's (1),
    nothing on stderr; a passing gate stays 0."""
    import subprocess

    (workdir / "failing.toml").write_text(DEMO_RECIPE.read_text())
    args = ("check", "failing.toml", "--source", "tree", "--rev", FIXTURE_REV, "-v", "--color", "never")
    for read_lines in (0, 1):
        proc = subprocess.Popen(_srcreview(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(read_lines):
            assert proc.stdout.readline()
        proc.stdout.close()  # `| true` reads nothing; `| head -1` one line
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 1 and err == "", err
    shell = subprocess.run(["bash", "-c", " ".join(_srcreview(*args)) + " | head -c 10 >/dev/null; "
                            "echo ${PIPESTATUS[0]}"], capture_output=True, text=True, timeout=300)
    assert shell.stdout.strip() == "1"
    for fmt in ("text", "json", "sarif"):  # `| head -0`: the reader exits before a byte is written
        zero = subprocess.run(["bash", "-c", " ".join(_srcreview(*args[:-3], "--format", fmt)) + " | head -0; "
                               "echo ${PIPESTATUS[0]}"], capture_output=True, text=True, timeout=300)
        assert (zero.stdout.strip(), zero.stderr) == ("1", ""), (fmt, zero.stderr[-2000:])
    passing = subprocess.Popen(_srcreview("check", "recipes", "--source", "tree", "--rev", FIXTURE_REV),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    passing.stdout.close()
    assert passing.wait(timeout=300) == 0 and passing.stderr.read() == b""


def test_closed_stdout_and_an_ascii_stdout(workdir):
    """`>&-` is one line and exit 2 (no output can be written; no file takes its descriptor);
    `PYTHONIOENCODING=ascii` writes what it cannot encode as JSON escapes, JSON stays valid."""
    import json
    import os
    import subprocess

    (workdir / "failing.toml").write_text(DEMO_RECIPE.read_text().replace('name = "demo', 'name = "café─😀-demo'))
    closed = subprocess.run(["bash", "-c", " ".join(_srcreview("check", "failing.toml", "--source", "tree",
                                                                "--rev", FIXTURE_REV)) + " >&-"],
                            capture_output=True, text=True, timeout=300)
    assert closed.returncode == 2 and closed.stderr.splitlines() == [
        "srcreview: error: stdout is closed: nothing can be written (redirect it to /dev/null to discard the output)"]
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    for fmt in ("text", "json", "concise", "sarif", "markdown"):
        result = subprocess.run(_srcreview("check", "failing.toml", "--source", "tree", "--rev", FIXTURE_REV,
                                           "--format", fmt), capture_output=True, env=env, timeout=300)
        assert result.returncode == 1 and result.stderr == b"", result.stderr.decode()[-2000:]
        assert result.stdout.isascii() and (fmt in ("concise", "sarif") or b"\\u00e9" in result.stdout)  # (no name)
        if fmt in ("json", "sarif"):
            document = json.loads(result.stdout)
            assert fmt == "sarif" or "café─😀-demo" in json.dumps(document, ensure_ascii=False)


# --- a waiver holds only for the classification it was written for ----------------------------

def _spec(classification: str, severity: str = "high"):
    from gate_support import LOADER, SPECULATOR

    return (("spec-draft-attention-backend-ignored", "speculative_config.attention_backend", classification, severity,
             {"symbols": ("MTPSpeculator.load_draft_model", "load_eagle_model"), "evidence": (LOADER, SPECULATOR)}),)


def _gate_with(recipes, waiver_extra: str, now: str, baseline=None, severity: str = "high"):
    import datetime as dt

    from gate_support import make_review

    from srcreview.gate.policy import evaluate
    from srcreview.gate.waivers import load_waivers

    review = make_review(recipes / "nested.toml", "recipes/nested.toml", _spec(now, severity))
    [finding] = review.findings
    (recipes / "srcreview.toml").write_text(
        f'[[waivers]]\nfingerprint = "{finding.fingerprint}"\nreason = "accepted while open"\n'
        f'expires = 2099-01-31\n{waiver_extra}')
    waivers = load_waivers([(recipes / "nested.toml", "recipes/nested.toml")])
    return evaluate([review], "plausible:high", waivers=waivers, baseline=baseline, today=dt.date(2026, 12, 1))


@pytest.fixture
def gate_recipes(tmp_path, monkeypatch):
    from gate_support import copy_recipes

    monkeypatch.chdir(tmp_path)
    return copy_recipes(tmp_path, "nested.toml")


def test_a_waiver_does_not_follow_its_finding_into_a_worse_classification(gate_recipes):
    written_for_open = 'classification = "plausible"\n'
    assert _gate_with(gate_recipes, written_for_open, "plausible").exit_code == 0  # waived, as written
    worse = _gate_with(gate_recipes, written_for_open, "confirmed")
    assert worse.exit_code == 1 and not worse.waived and len(worse.failing) == 1
    assert "1 waiver outgrown" in worse.summary() and "written for a plausible finding, it is confirmed now" \
        in worse.summary() and "srcreview.toml:1" in worse.summary()
    assert worse.reviews[0].findings[0].waiver is None
    # a waiver written for the confirmed problem holds, and goes on holding when the finding improves
    for now in ("confirmed", "plausible", "refuted"):
        result = _gate_with(gate_recipes, 'classification = "confirmed"\n', now)
        assert result.exit_code == 0 and len(result.waived) == 1 and not result.outgrown, now


def test_an_old_waiver_file_takes_the_classification_from_the_baseline(gate_recipes, tmp_path):
    from gate_support import make_review

    from srcreview.gate.baseline import load_baseline

    before = make_review(gate_recipes / "nested.toml", "recipes/nested.toml", _spec("plausible"))
    (tmp_path / "previous.json").write_text(before.model_dump_json())
    baseline = load_baseline(tmp_path / "previous.json", "previous.json")
    outgrown = _gate_with(gate_recipes, "", "confirmed", baseline=baseline)
    assert outgrown.exit_code == 1 and "outgrown" in outgrown.summary()
    assert _gate_with(gate_recipes, "", "plausible", baseline=baseline).exit_code == 0  # same classification
    assert _gate_with(gate_recipes, "", "confirmed").exit_code == 0  # no record at all: as before


@pytest.mark.parametrize("value", ['"problem"', '"Confirmed"', "1", '""', '["plausible"]'])
def test_a_waiver_classification_must_be_one_of_the_three(gate_recipes, value):
    from srcreview.core.errors import DataError

    with pytest.raises(DataError, match=r"srcreview.toml:5: waiver \w+: classification"):
        _gate_with(gate_recipes, f"classification = {value}\n", "plausible")


def test_a_waiver_does_not_follow_its_finding_to_a_higher_severity(gate_recipes, tmp_path):
    """As the baseline's `worse`: a waiver written for a low open question stops waiving it
    once its rule calls it high; as much of a problem at the same or a lower severity, or less
    of a problem at any severity, it holds. An old waiver file takes the severity from the
    baseline."""
    from gate_support import make_review

    from srcreview.gate.baseline import load_baseline

    low = 'classification = "plausible"\nseverity = "low"\n'
    assert _gate_with(gate_recipes, low, "plausible", severity="low").exit_code == 0
    grown = _gate_with(gate_recipes, low, "plausible", severity="high")
    assert grown.exit_code == 1 and not grown.waived and len(grown.failing) == 1
    assert "written for a low plausible finding, it is high plausible now: not waived" in grown.summary()
    for extra, now, severity in (('classification = "plausible"\nseverity = "high"\n', "plausible", "high"),
                                 ('classification = "plausible"\nseverity = "high"\n', "plausible", "medium"),
                                 ('classification = "confirmed"\nseverity = "low"\n', "plausible", "high")):
        held = _gate_with(gate_recipes, extra, now, severity=severity)
        assert held.exit_code == 0 and len(held.waived) == 1 and not held.outgrown, (extra, now, severity)
    # severity alone (no classification, no baseline) is compared alone
    assert _gate_with(gate_recipes, 'severity = "medium"\n', "plausible", severity="high").exit_code == 1
    before = make_review(gate_recipes / "nested.toml", "recipes/nested.toml", _spec("plausible", "low"))
    (tmp_path / "previous.json").write_text(before.model_dump_json())
    baseline = load_baseline(tmp_path / "previous.json", "previous.json")
    old = _gate_with(gate_recipes, "", "plausible", baseline=baseline, severity="high")
    assert old.exit_code == 1 and "written for a low plausible finding" in old.summary()
    assert _gate_with(gate_recipes, "", "plausible", baseline=baseline, severity="low").exit_code == 0


@pytest.mark.parametrize("value", ['"critical"', '"High"', "3", '""'])
def test_a_waiver_severity_must_be_a_severity(gate_recipes, value):
    from srcreview.core.errors import DataError

    with pytest.raises(DataError, match=r"srcreview.toml:5: waiver \w+: severity"):
        _gate_with(gate_recipes, f"severity = {value}\n", "plausible")


# --- a stored verdict is served only under a key that does not live in the cache ---------------

def _forge_entries(cache: Path) -> int:
    """What a poisoned CI cache holds: every stored review edited to pass (its problems made
    facts), sealed again the only way one can without the key (sha256 of the new payload)."""
    import hashlib

    from srcreview.store.reviews import MAGIC

    forged = 0
    for entry in (cache / "reviews").rglob("*.json"):
        payload = entry.read_bytes()[len(MAGIC) + 32:]
        edited = payload.replace(b'"classification":"confirmed"', b'"classification":"refuted"')
        if edited != payload:
            entry.write_bytes(MAGIC + hashlib.sha256(edited).digest() + edited)
            forged += 1
    return forged


def test_a_stored_review_edited_and_sealed_again_is_never_served(workdir, cli, monkeypatch):
    from conftest import make_tar

    (workdir / "failing.toml").write_text(DEMO_RECIPE.read_text())
    tree = workdir / "tree"  # as an sdist archive: a source with an identity, whose reviews are stored
    (workdir / "tree.tar.gz").write_bytes(make_tar({p.relative_to(tree).as_posix(): p.read_bytes()
                                                    for p in sorted(tree.rglob("*")) if p.is_file()}))
    args = ("check", "failing.toml", "--source", "tree.tar.gz", "--rev", FIXTURE_REV, "--format", "json")
    monkeypatch.delenv("SRCREVIEW_CACHE_KEY", raising=False)
    assert cli(*args).code == 1
    assert not (workdir / "cache" / "reviews").exists(), "without a key nothing is stored"
    assert "stored reviews: off" in cli("cache", "info").out

    monkeypatch.setenv("SRCREVIEW_CACHE_KEY", "secret of this pipeline")
    assert "stored reviews: on" in cli("cache", "info").out
    computed = cli(*args)
    assert computed.code == 1 and _forge_entries(workdir / "cache") == 1
    for key in ("secret of this pipeline", "another pipeline's secret", None):
        if key is None:
            monkeypatch.delenv("SRCREVIEW_CACHE_KEY")
        else:
            monkeypatch.setenv("SRCREVIEW_CACHE_KEY", key)
        again = cli(*args)
        assert (again.code, again.out) == (computed.code, computed.out), f"a forged verdict served under {key!r}"
        _forge_entries(workdir / "cache")


def test_an_unkeyed_seal_does_not_verify_under_a_key():
    from srcreview.core.sealed import seal, unseal
    from srcreview.store.reviews import cache_key

    key = cache_key({"SRCREVIEW_CACHE_KEY": "k"})
    assert cache_key({}) is None and cache_key({"SRCREVIEW_CACHE_KEY": ""}) is None
    assert unseal(seal(b"payload", b"m\n", key), b"m\n", key) == b"payload"
    assert unseal(seal(b"payload", b"m\n"), b"m\n", key) is None
    assert unseal(seal(b"payload", b"m\n", cache_key({"SRCREVIEW_CACHE_KEY": "other"})), b"m\n", key) is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file")
def test_what_a_directory_run_cannot_read_fails_the_run(workdir, cli):
    recipes = workdir / "recipes"
    (recipes / "locked").mkdir()
    (recipes / "locked").chmod(0)
    try:
        result = _check(cli, "recipes")
        assert result.code == 2 and "recipes/locked: cannot list this directory" in result.err
    finally:
        (recipes / "locked").chmod(0o755)
    (recipes / "secret.toml").write_text(PASSING)
    (recipes / "secret.toml").chmod(0)
    result = _check(cli, "recipes")
    assert result.code in (2, 64) and "recipes/secret.toml" in result.err


@pytest.mark.parametrize(("name", "content"), [
    ("docker-compose.yml", 'services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n    environment:\n'
                           '      VLLM_USE_V2_MODEL_RUNNER: "${V2:-1}"\n    command: ["some/model"]\n'),
    ("serve.sh", '#!/bin/sh\nexport VLLM_USE_V2_MODEL_RUNNER="${VLLM_USE_V2_MODEL_RUNNER:-1}"\nvllm serve some/model\n'),
])
def test_an_env_value_the_shell_decides_says_so_and_its_default(workdir, cli, name, content):
    """`${V2:-1}` in compose `environment:`, `export V="${V:-1}"` in a script (issue 26): compose
    and the shell substitute them where the recipe runs, so the knob is undecided, never
    silently: its note says who decides and the default it names (was: "undecided: int(value)")."""
    import json

    (workdir / "recipes" / name).write_text(content)
    result = cli("check", f"recipes/{name}", "--source", "tree", "--rev", FIXTURE_REV, "--format", "json")
    assert result.code in (0, 1), result.err
    [review] = json.loads(result.out)["reviews"]
    [knob] = [k for k in review["knobs"] if k["key"] == "env.VLLM_USE_V2_MODEL_RUNNER"]
    variable = "V2" if name.endswith(".yml") else "VLLM_USE_V2_MODEL_RUNNER"
    assert knob["status"] == "undecided"
    assert f"${{{variable}:-1}} is substituted where the recipe runs" in knob["note"], knob["note"]
    assert knob["note"].endswith(f"it is '1' when {variable} is unset"), knob["note"]
