"""Faults in the analysed tree itself: modules libcst cannot parse, undecodable or NUL bytes,
very large files, symlinks inside the tree and leaving it.

Each case copies the `rules_spec_decode` fixture into tmp_path as an unpacked sdist (its
`vllm/_version.py` names the commit), breaks one file and runs the real CLI
(`srcreview check RECIPE --source DIR --rev <hex> --format json`). A module is *required*
when a question reads its facts: it may define a rule's anchor symbol, or it lies on a traced
path (an import or re-export followed, a base class, a callee, the runner selection). Breaking
a required module makes exactly the questions that read it plausible, tagged and naming the
file, and the run exits 2; breaking a module no question reads changes nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from recipe_support import DEMO_RECIPE

from srcreview.cli.main import main
from srcreview.index import MAX_PARSE_BYTES

FIXTURE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets" / "rules_spec_decode"
REV = "1234567ab"

RECIPE = DEMO_RECIPE.read_text()

# Required for this recipe: the class of speculative_config and the MTP draft loader.
REQUIRED = ("vllm/config/speculative.py", "vllm/v1/worker/gpu/spec_decode/mtp/speculator.py")
# Read by no question of this recipe.
NOT_REQUIRED = ("vllm/v1/attention/backends/fa_utils.py", "vllm/platforms/interface.py")
# Read, but required by none: the V1 proposer is off the V2 runner's path; it only appears in
# the list of other functions that mention the field (context, not proof) of a traced
# field-applied rule. No shipped rule traces that far (the draft rules ask draft-config), so
# the test adds one: the MTP loader, traced to get_model, never reads the nested backend.
CONTEXT_ONLY = "vllm/v1/spec_decode/llm_base_proposer.py"
CONTEXT_RULE = """\
id = "mtp-loader-reads-nested-backend"
severity = "low"
claim = "the MTP draft loader never reads speculative_config.attention_backend"

[check]
kind = "field-applied"
entry = "MTPSpeculator.load_draft_model"
field = "SpeculativeConfig.attention_backend"
sink = "model_loader.get_model"
max_depth = 4

[verdict]
applied = "refuted"
not-applied = "confirmed"
undecided = "plausible"

[message]
confirmed = "MTPSpeculator.load_draft_model reaches get_model without reading SpeculativeConfig.attention_backend."
refuted = "MTPSpeculator.load_draft_model reads SpeculativeConfig.attention_backend."
plausible = "Whether the MTP loader reads SpeculativeConfig.attention_backend could not be settled: {reason}."

[doc]
what = "Traces the MTP draft loader to get_model; the other functions that mention the field are listed as context."
why = "It reads a module for context only."
instead = "Nothing: a test rule."

[[examples]]
fixture = "rules_spec_decode"
settings = { "speculative_config.method" = "mtp" }
expect = "confirmed"
"""

BREAKAGES = {
    # syntax libcst does not know (libcst 1.9 already parses Python 3.15's `lazy import`; a
    # statement in expression position stands for whatever the next Python adds)
    "unknown-syntax": lambda data: data + b"\nLOADER = lazy import json\n",
    # a Latin-1 byte without an encoding declaration
    "non-utf8": lambda data: data + b"\nNAME = '\xe9t\xe9'\n",
    "nul-bytes": lambda data: data.replace(b"\n", b"\n\0", 1),
    "unknown-encoding": lambda data: b"# -*- coding: klingon -*-\n" + data,
    # valid Python, over the parse limit: never handed to libcst
    "too-large": lambda data: data + b"\n" + (b"# " + b"x" * 97 + b"\n") * (MAX_PARSE_BYTES // 100 + 1),
}


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(FIXTURE, root)
    (root / "vllm" / "_version.py").write_text(f"__version__ = version = '0.0.0'\n"
                                               f"__commit_id__ = commit_id = 'g{REV}'\n")
    return root


def _check(tmp_path: Path, root: Path, capsys, *args: str) -> tuple[int, dict, str]:
    recipe = tmp_path / "demo.toml"
    recipe.write_text(RECIPE)
    capsys.readouterr()
    code = main(["check", str(recipe), "--source", str(root), "--rev", REV, "--format", "json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out)["reviews"][0], err


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The review of the intact tree (JSON) and its exit code."""
    tmp = tmp_path_factory.mktemp("clean")
    root = _tree(tmp)
    recipe = tmp / "demo.toml"
    recipe.write_text(RECIPE)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("SRCREVIEW_CACHE", str(tmp / "cache"))
        code = main(["check", str(recipe), "--source", str(root), "--rev", REV, "--format", "json"])
    return code, json.loads(out.getvalue())["reviews"][0]


def _by_id(doc: dict) -> dict[str, dict]:
    return {f["id"]: f for f in doc["findings"]}


def test_the_clean_tree_is_complete_and_gates_on_a_confirmed_finding(clean):
    code, doc = clean
    assert code == 1 and doc["incomplete"] == []
    classes = {f["classification"] for f in doc["findings"]}
    assert "confirmed" in classes


def _assert_only_questions_on_the_file_changed(clean_doc: dict, doc: dict, broken: str, tag: str):
    before, after = _by_id(clean_doc), _by_id(doc)
    affected = [f for f in after.values() if tag in f["tags"]]
    assert affected, "no question reported the broken module"
    for f in affected:
        assert f["classification"] == "plausible"
        assert broken in f["message"]
    for fid, f in after.items():
        if broken in json.dumps(f) and tag in f["tags"]:
            continue
        # every other answer is what the clean tree gives (or an open question, never a new verdict)
        if fid in before:
            assert f["classification"] in (before[fid]["classification"], "plausible"), fid
        else:
            assert f["classification"] == "plausible", fid
    # answers that never needed the file are unchanged
    assert any(after.get(fid) == f for fid, f in before.items())
    assert doc["incomplete"] and all(broken in line for line in doc["incomplete"])


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
@pytest.mark.parametrize("broken", REQUIRED)
def test_an_unparsable_required_module_makes_its_questions_plausible_and_exits_2(
        tmp_path, capsys, clean, broken, breakage):
    root = _tree(tmp_path)
    path = root / broken
    path.write_bytes(BREAKAGES[breakage](path.read_bytes()))
    code, doc, err = _check(tmp_path, root, capsys)
    assert code == 2, err
    assert "Traceback" not in err
    _assert_only_questions_on_the_file_changed(clean[1], doc, broken, "unparsable-source")
    # nothing is confirmed or refuted on the strength of the broken module
    assert all(f["classification"] == "plausible" for f in doc["findings"] if broken in json.dumps(f["evidence"]))
    if breakage == "too-large":
        assert any(f"over the {MAX_PARSE_BYTES}-byte parse limit" in line for line in doc["incomplete"])


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
@pytest.mark.parametrize("broken", NOT_REQUIRED)
def test_an_unparsable_module_no_question_reads_changes_nothing(tmp_path, capsys, clean, broken, breakage):
    root = _tree(tmp_path)
    path = root / broken
    path.write_bytes(BREAKAGES[breakage](path.read_bytes()))
    code, doc, err = _check(tmp_path, root, capsys)
    assert (code, doc) == clean, err


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_module_read_only_for_context_keeps_every_verdict_and_says_it_does_not_parse(
        tmp_path, capsys, breakage):
    from srcreview.core.resources import data_dir

    rules = tmp_path / "rules"
    shutil.copytree(data_dir("rules"), rules)
    (rules / "mtp-loader-reads-nested-backend.toml").write_text(CONTEXT_RULE)
    root = _tree(tmp_path)
    clean = _check(tmp_path, root, capsys, "--rules", str(rules))
    assert [a["role"] for f in clean[1]["findings"] for a in f["evidence"] if a["path"] == CONTEXT_ONLY] == \
        ["SpecDecodeBaseProposer._create_draft_vllm_config mentions .attention_backend: not on the feasible path"]
    path = root / CONTEXT_ONLY
    path.write_bytes(BREAKAGES[breakage](path.read_bytes()))
    code, doc, err = _check(tmp_path, root, capsys, "--rules", str(rules))
    assert code == clean[0] and doc["incomplete"] == [], err
    before, after = _by_id(clean[1]), _by_id(doc)
    assert {k: (f["classification"], f["tags"]) for k, f in after.items()} == \
        {k: (f["classification"], f["tags"]) for k, f in before.items()}
    roles = [a["role"] for f in after.values() for a in f["evidence"] if a["path"] == CONTEXT_ONLY]
    # the mentions are found in the raw text; the functions holding them in the index's facts
    assert roles == [f"{CONTEXT_ONLY} mentions .attention_backend but does not parse"]


def test_a_symlink_inside_the_tree_is_read_as_its_target(tmp_path, capsys, clean):
    """Python imports an in-tree symlink: so does the analysis (anchored at the link's path)."""
    root = _tree(tmp_path)
    module = root / "vllm" / "config" / "speculative.py"
    module.rename(module.with_suffix(".py.real"))
    module.symlink_to("speculative.py.real")
    code, doc, err = _check(tmp_path, root, capsys)
    assert (code, doc) == clean, err


def test_a_symlink_leaving_the_tree_is_never_read(tmp_path, capsys, clean):
    root = _tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    module = root / "vllm" / "config" / "speculative.py"
    shutil.move(module, outside / "speculative.py")  # intact: were it read, the review would be the clean one
    module.symlink_to(outside / "speculative.py")
    code, doc, err = _check(tmp_path, root, capsys)
    assert code == 2, err
    broken = "vllm/config/speculative.py"
    _assert_only_questions_on_the_file_changed(clean[1], doc, broken, "unreadable-source")
    assert all("symlink leaves the source tree" in line for line in doc["incomplete"])
    assert str(tmp_path) not in json.dumps(doc) + err


def test_a_symlink_leaving_the_tree_that_no_question_reads_changes_nothing(tmp_path, capsys, clean):
    root = _tree(tmp_path)
    module = root / "vllm" / "platforms" / "interface.py"
    outside = tmp_path / "interface.py"
    shutil.move(module, outside)
    module.symlink_to(outside)
    code, doc, err = _check(tmp_path, root, capsys)
    assert (code, doc) == clean, err


def test_reads_through_a_symlinked_directory_leaving_the_tree_are_refused(tmp_path):
    from srcreview.core.errors import SourceUnavailable
    from srcreview.model.revision import Revision
    from srcreview.source.base import DirectoryTree

    root = _tree(tmp_path)
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "secret.py").write_text("TOKEN = 'do-not-read'\n")
    (root / "vllm" / "linked").symlink_to(secret, target_is_directory=True)
    tree = DirectoryTree(root, Revision(requested=REV, sha=REV))
    assert not any(p.startswith("vllm/linked") for p in tree.files())
    with pytest.raises(SourceUnavailable, match="leaves the source tree"):
        tree.read("vllm/linked/secret.py")


def test_a_full_check_never_imports_or_executes_the_analysed_tree(tmp_path, clean):
    """Every module of the tree (and a setup.py and conftest.py beside it) writes a marker when
    imported or executed, as a module constant the evaluator might be tempted to compute; the
    tree is first on PYTHONPATH and the working directory. A full `check` writes no marker and
    still reaches the clean tree's verdicts."""
    import subprocess
    import sys

    root = _tree(tmp_path)
    marker = tmp_path / "executed"
    side_effect = f"_SIDE_EFFECT = open({str(marker)!r}, 'a').write(__name__ + '\\n')\n".encode()
    modules = sorted(root.rglob("*.py"))
    for path in modules:
        path.write_bytes(side_effect + path.read_bytes())
    for name in ("setup.py", "conftest.py"):
        (root / name).write_bytes(side_effect)
    recipe = tmp_path / "demo.toml"
    recipe.write_text(RECIPE)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(root), "SRCREVIEW_CACHE": str(tmp_path / "cache"),
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "srcreview", "check", str(recipe), "--source", str(root),
                           "--rev", REV, "--format", "json"], capture_output=True, text=True, cwd=root, env=env,
                          timeout=120)
    assert not marker.exists(), marker.read_text()
    assert done.returncode == clean[0], done.stderr
    doc = json.loads(done.stdout)["reviews"][0]
    assert doc["incomplete"] == []
    assert {k: f["classification"] for k, f in _by_id(doc).items()} == \
        {k: f["classification"] for k, f in _by_id(clean[1]).items()}
    # the control: the same line does write the marker when the module is imported
    subprocess.run([sys.executable, "-c", "import vllm.config.speculative"], cwd=tmp_path, env=env,
                   check=True, timeout=60)
    assert "vllm.config.speculative" in marker.read_text()
