"""Hostile inputs, third round (issue 26): recipes in every format, rules directories, patches
and overlays, the cache, output streams and the Hub, each tried against the real CLI.

Every case answers with one line on stderr and its exit code, or is read as it is written,
in bounded time; never a traceback. docs/robustness.md has a row per case.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source
from hub_support import hub_env, obtain_in_subprocess, serve_hub

TOML = '[recipe]\nname = "x"\n[engine]\n'
COMPOSE = "services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n"
REGISTRY = "model:\n  model_id: org/m\n"


def _one_line(result, code: int) -> str:
    assert result.code == code, (result.code, result.err)
    assert "Traceback" not in result.err and len(result.err.splitlines()) == 1, result.err
    return result.err.strip()


def _doubling_script() -> str:
    return "#!/bin/sh\nA0=x\n" + "".join(f'A{i + 1}="$A{i}$A{i}"\n' for i in range(60)) \
        + "vllm serve m --served-model-name $A60\n"


def _chained_script() -> str:
    return "#!/bin/sh\nA0=$(hostname)\n" + "".join(f"A{i}=$A{i - 1}\n" for i in range(1, 20000)) \
        + "vllm serve m --served-model-name $A19999\n"


# (file name, text, exit code, what stderr says (65) or what the JSON holds (0))
RECIPES = {
    "toml-datetime": ("t.toml", TOML + "max_model_len = 1979-05-27T07:32:00Z\n", 65,
                      "t.toml:4: engine.max_model_len: a TOML date or time is no value a vLLM flag takes"),
    "toml-date-in-list": ("t.toml", '[recipe]\nname = "x"\n[engine.speculative_config]\nx = [1979-05-27]\n', 65,
                          "t.toml:4: engine.speculative_config.x: a TOML date or time"),
    "toml-time-in-model": ("t.toml", '[recipe]\nname = "x"\n[model]\nrope_theta = 07:32:00\n', 65,
                           "t.toml:4: [model] rope_theta: a time is not a JSON value"),
    "toml-zero-width-key": ("t.toml", TOML + '"max_model_len\u200b" = 5\n', 65, "is not a setting name"),
    "toml-lone-cr": ("t.toml", TOML.replace("\n", "\r") + "max_model_len = 5\r", 65, "t.toml:1: malformed TOML"),
    "toml-crlf": ("t.toml", (TOML + "max_model_len = 5\n").replace("\n", "\r\n"), 0, '"line": 4'),
    "toml-100000-element-array": ("t.toml", TOML + "cuda_graph_sizes = [" + ",".join(["1"] * 100000) + "]\n", 0,
                                  '"cuda_graph_sizes"'),
    "toml-lone-surrogate-escape": ("t.toml", TOML + 'served_model_name = "\\ud800"\n', 65,
                                   "not a Unicode scalar value"),
    "shell-unterminated-quote": ("s.sh", "#!/bin/sh\nvllm serve m --max-model-len '1024\n", 65,
                                 "s.sh:2: unterminated single quote"),
    "shell-nul": ("s.sh", "#!/bin/sh\nvllm serve m --max-model-len 5\x00\n", 65, "U+0000"),
    "shell-3000-continuations": ("s.sh", "#!/bin/sh\nvllm serve m " + "\\\n  --max-num-seqs 1 " * 3000 + "\n", 65,
                                 "more than 2000 settings"),
    "shell-doubling-variables": ("s.sh", _doubling_script(), 0, "the shell decides $A60"),
    "shell-20000-variable-chain": ("s.sh", _chained_script(), 0, "the shell decides $A19999"),
    "compose-python-tag": ("c.yml", COMPOSE + "    command: !!python/object/apply:os.system ['touch pwned']\n", 65,
                           "c.yml:4: malformed YAML: the tag tag:yaml.org,2002:python/object/apply:os.system"),
    "compose-duplicate-key": ("c.yml", COMPOSE + "    command: [m, --max-model-len, '5']\n    command: [m]\n", 65,
                              "c.yml:5: the key 'command' is already defined on line 4"),
    "compose-merge-override": ("c.yml", "x: &d {image: vllm/vllm-openai, command: [a]}\nservices:\n  llm:\n"
                               "    <<: *d\n    command: [m, --max-model-len, '5']\n", 0, '"model": "m"'),
    "compose-3000-services": ("c.yml", "services:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai\n    command: [m]\n" for i in range(3000)), 0, '"path": "c.yml#s2999"'),
    "compose-command-mapping": ("c.yml", COMPOSE + "    command: {a: b}\n", 65, "a command must be a string or a list"),
    "compose-alias-bomb": ("c.yml", "x: &a [" + ",".join(["lol"] * 10) + "]\n" + "".join(
        f"x{i}: &a{i} [" + ",".join([f"*a{i - 1}" if i > 1 else "*a"] * 10) + "]\n" for i in range(1, 9))
        + COMPOSE + "    command: [m]\n", 65, "YAML expands to more than 200000 nodes"),
    "compose-env-file-absolute": ("c.yml", COMPOSE + "    env_file: /etc/shadow\n    command: [m]\n", 0,
                                  "env_file /etc/shadow is refused"),
    "compose-extends-another-file": ("c.yml", COMPOSE + "    extends:\n      file: /etc/passwd\n      service: x\n"
                                     "    command: [m]\n", 0, "the service extends x of /etc/passwd"),
    "dockerfile-trailing-backslash": ("Dockerfile", "FROM vllm/vllm-openai:v0.29.0\nCMD vllm serve m \\", 65,
                                      "Dockerfile:2: unexpected word"),
    "dockerfile-exec-form-not-strings": ("Dockerfile", 'FROM vllm/vllm-openai:v0.29.0\nCMD ["m", 5, null]\n', 65,
                                         "Dockerfile:2: unexpected word"),
    "yaml-complex-key": ("v.yaml", "model: m\n? [a, b]\n: 1\nmax_model_len: 5\n", 65,
                         "v.yaml:2: a mapping key must be a scalar"),
    "yaml-two-documents": ("v.yaml", "model: m\nmax_model_len: 5\n---\nmodel: n\n", 65, "v.yaml:3: malformed YAML"),
    "yaml-tab-indent": ("v.yaml", "model: m\nspeculative_config:\n\tmethod: x\n", 65, "v.yaml:3: malformed YAML"),
    "yaml-10000-deep": ("v.yaml", "model: m\nspeculative_config: " + "[" * 10000 + "]" * 10000 + "\n", 65,
                        "nesting too deep"),
    "registry-variants-string": ("models/org/m.yaml", REGISTRY + "  base_args: []\nvariants: abc\n", 65,
                                 "m.yaml:4: variants must be a mapping"),
    "registry-5000-deep": ("models/org/m.yaml", REGISTRY + "  base_args: " + "[" * 5000 + "]" * 5000
                           + "\nvariants:\n  default: {}\n", 65, "nesting too deep"),
    "registry-args-not-strings": ("models/org/m.yaml", REGISTRY + "  base_args: [1, 2]\nvariants:\n  default: {}\n",
                                  65, "m.yaml:3: unexpected word '1'"),
}


@pytest.mark.parametrize("case", sorted(RECIPES))
def test_hostile_recipes_of_every_format(tmp_path, monkeypatch, cli, case):
    name, text, code, said = RECIPES[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    start = time.monotonic()
    result = cli("recipe", "show", name, "--format", "json")
    assert time.monotonic() - start < 30
    if code:
        assert said in _one_line(result, code)
        return
    assert result.code == 0 and result.err == "", result.err
    assert said in result.out
    if case.startswith("shell-"):
        assert len(result.out) < 200_000  # (fixed: the chain was 8 MB of reasons, 8 GB of memory)
    assert not (tmp_path / "pwned").exists()


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    return tmp_path


def _check(cli, *args: str, recipe: str = "demo.toml", fmt: str = "concise"):
    return cli("check", recipe, "--source", "tree", "--rev", FIXTURE_REV, "--format", fmt, *args)


def test_a_service_that_extends_another_leaves_the_review_incomplete(workdir, cli):
    """`extends:` inherits a command and an environment the review does not read: never a pass
    (fixed: ignored without a word)."""
    (workdir / "c.yml").write_text("services:\n  base:\n    image: redis\n  llm:\n    image: vllm/vllm-openai\n"
                                   "    extends: base\n    command: [m]\n")
    result = _check(cli, recipe="c.yml")
    assert result.code == 2 and "review incomplete: c.yml:6: the service extends base" in result.out


RULE = "spec-draft-attention-backend-ignored.toml"  # fires on the demo recipe


def _rules(workdir: Path, files: dict[str, str | None]) -> str:
    shipped = Path(__file__).resolve().parents[2] / "rules"
    folder = workdir / "myrules"
    folder.mkdir()
    for name, text in files.items():
        if text is None:
            (folder / name).mkdir()
        else:
            (folder / name).write_bytes(text.encode())
    if RULE not in files:
        shutil.copy(shipped / RULE, folder / RULE)
    return "myrules"


def _rule_text(**replace: str) -> str:
    text = (Path(__file__).resolve().parents[2] / "rules" / RULE).read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return text


def test_a_rule_file_with_a_byte_order_mark_loads(workdir, cli):
    """As a recipe does (fixed: `malformed TOML: Invalid statement` on line 1)."""
    folder = _rules(workdir, {RULE: "\ufeff" + _rule_text()})
    assert cli("rules", "list", "--rules", folder).code == 0
    assert _check(cli, "--rules", folder).code == 1


def test_rules_directories_holding_what_is_no_rule_file(workdir, cli):
    """A directory named `x.toml` is named and refused; `X.TOML` is no rule file (held)."""
    assert "myrules/x.toml: cannot read rule: a directory" in _one_line(
        _check(cli, "--rules", _rules(workdir, {"x.toml": None})), 64)
    shutil.rmtree(workdir / "myrules")
    upper = _rules(workdir, {"A.TOML": _rule_text()})
    (workdir / upper / RULE).unlink()
    assert "holds no rule file" in _one_line(_check(cli, "--rules", upper), 65)
    shutil.rmtree(workdir / "myrules")
    hidden = _rules(workdir, {".x.toml": "garbage ="})
    assert "myrules/.x.toml:1: malformed TOML" in _one_line(_check(cli, "--rules", hidden), 65)


def test_format_specs_and_attributes_in_a_claim_stay_text(workdir, cli):
    """A claim holding `{x:>999999999}`, `{x.__class__.__mro__}` or `{x[0]}`: placeholders are
    names only (core.templates), so these stay as written: no 1 GB padding, no attribute walk (held)."""
    claim = "does not reach the {speculative_config.method} draft model"
    hostile = "{speculative_config.method:>999999999} {speculative_config.method.__class__.__mro__} {x[0]}"
    folder = _rules(workdir, {RULE: _rule_text(**{claim: hostile})})
    result = _check(cli, "--rules", folder)
    assert result.code == 1 and len(result.out) < 20_000
    assert "{speculative_config.method:>999999999} unset {x[0]}" in result.out


SPEC = "vllm/config/speculative.py"


@pytest.mark.parametrize(("case", "patch", "code", "said"), [
    ("empty", "", 65, "p.diff: not a unified diff"),
    ("a-billion-line-hunk", f"--- a/{SPEC}\n+++ b/{SPEC}\n@@ -1,1000000000 +1,1000000000 @@\n x\n", 65,
     "p.diff:3: hunk #1 of vllm/config/speculative.py is cut short"),
    ("dot-dot-path", "--- /dev/null\n+++ b/../../x.py\n@@ -0,0 +1 @@\n+X = 1\n", 65,
     "p.diff:1: '../../x.py' is not a path inside the source tree"),
    ("absolute-path", "--- /dev/null\n+++ /abs/x.py\n@@ -0,0 +1 @@\n+X = 1\n", 65, "'/abs/x.py' is not a path inside"),
    ("git-binary", "diff --git a/vllm/x.bin b/vllm/x.bin\nnew file mode 100644\nindex 0000000..1111111\n"
     "GIT binary patch\nliteral 5\nMcmZ?b00000\n\nliteral 0\nHcmV?d00001\n\n", 65, "binary change to vllm/x.bin"),
    ("delete-a-missing-file", "--- a/vllm/nope.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-X = 1\n", 65,
     "vllm/nope.py does not exist at vLLM"),
    ("crlf-line-ends", f"--- a/{SPEC}\r\n+++ b/{SPEC}\r\n@@ -1,1 +1,2 @@\r\n x\r\n+X = 1\r\n", 65,
     "p.diff:3: hunk #1 (@@ -1,1 +1,2 @@) of vllm/config/speculative.py does not apply"),
    ("not-utf-8", "--- /dev/null\n+++ b/vllm/new.py\n@@ -0,0 +1 @@\n+X = '\udcff'\n", 65, "p.diff:4: patch is not valid UTF-8"),
    ("one-file-created-twice", "--- /dev/null\n+++ b/vllm/new.py\n@@ -0,0 +1 @@\n+X = 1\n--- /dev/null\n"
     "+++ b/vllm/new.py\n@@ -0,0 +1 @@\n+X = 2\n", 65, "p.diff:5: creates vllm/new.py"),
])
def test_hostile_patches_are_refused_on_their_line(workdir, cli, case, patch, code, said):
    (workdir / "p.diff").write_bytes(patch.encode("utf-8", "surrogateescape"))
    assert said in _one_line(_check(cli, "--patch", "p.diff"), code)


def test_a_module_with_a_nul_byte_does_not_parse(workdir, cli):
    """A patch (or the tree) putting a NUL byte into a module: Python cannot import it, so the
    rules that read it cannot be evaluated (fixed: libcst parsed it and the review was complete)."""
    first = (workdir / "tree" / SPEC).read_text().splitlines()[0]
    (workdir / "p.diff").write_text(f"--- a/{SPEC}\n+++ b/{SPEC}\n@@ -1,1 +1,2 @@\n {first}\n+X = '\x00'\n")
    result = _check(cli, "--patch", "p.diff")
    assert result.code == 2 and "does not parse (a NUL byte: Python cannot import the module)" in result.out


def test_hostile_overlays(workdir, cli):
    """A FIFO (held: refused unread), a name that is not UTF-8 (fixed: a UnicodeEncodeError
    traceback), an ESC in a file name (held: never reaches the terminal), an empty overlay (held)."""
    (workdir / "fifo" / "vllm").mkdir(parents=True)
    os.mkfifo(workdir / "fifo" / "vllm" / "x.py")
    assert "an overlay holds regular files only" in _one_line(_check(cli, "--overlay", "fifo"), 65)
    (workdir / "bad").mkdir()
    (workdir / "bad" / os.fsdecode(b"\xff.py")).write_text("X = 1\n")
    assert "the file name '\\udcff.py' is not UTF-8" in _one_line(_check(cli, "--overlay", "bad"), 65)
    (workdir / "esc" / "vllm").mkdir(parents=True)
    (workdir / "esc" / "vllm" / "\x1b]0;owned\x07.py").write_text("X = 1\n")
    shown = _check(cli, "--overlay", "esc", fmt="text")
    assert shown.code == 1 and "\x1b" not in shown.out and "\x07" not in shown.out and "owned" in shown.out
    (workdir / "empty").mkdir()
    assert "holds no file" in _one_line(_check(cli, "--overlay", "empty"), 65)


def test_a_cache_that_is_a_file_or_read_only(workdir, cli, monkeypatch):
    """`SRCREVIEW_CACHE` a regular file, or under a read-only directory: the review runs
    without a cache, to its own decision (held); a hostile `cache clean --rev` is refused (held)."""
    (workdir / "cachefile").write_text("not a directory")
    monkeypatch.setenv("SRCREVIEW_CACHE", str(workdir / "cachefile"))
    assert _check(cli).code == 1 and (workdir / "cachefile").read_text() == "not a directory"
    (workdir / "ro").mkdir()
    (workdir / "ro").chmod(0o555)
    try:
        monkeypatch.setenv("SRCREVIEW_CACHE", str(workdir / "ro" / "c"))
        assert _check(cli).code == 1
    finally:
        (workdir / "ro").chmod(0o755)
    assert "'../../etc' is neither a release version" in _one_line(cli("cache", "clean", "--rev=../../etc"), 64)
    monkeypatch.setenv("SRCREVIEW_CACHE", "relative-cache")
    assert _check(cli).code == 1 and any((workdir / "relative-cache").rglob("*.pickle"))


def _run(workdir: Path, shell: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", shell], cwd=workdir, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SRCREVIEW_CACHE": str(workdir / "cache"), "HF_HUB_OFFLINE": "1"})


CHECK = f"{sys.executable} -m srcreview check demo.toml --source tree --rev {FIXTURE_REV} --format concise"


def test_a_side_output_into_a_fifo_nobody_reads_is_refused_at_once(workdir):
    """`--sarif FIFO` with no reader hung the run for ever (fixed: refused, exit 64); a pipe
    with a reader (`>(cat)`) and /dev/null are written as before."""
    os.mkfifo(workdir / "out.sarif")
    start = time.monotonic()
    done = _run(workdir, f"{CHECK} --sarif out.sarif")
    assert time.monotonic() - start < 60
    assert done.returncode == 64 and done.stderr == ("srcreview: error: --sarif: cannot write out.sarif: "
                                                     "a FIFO no process reads\n")
    piped = _run(workdir, f"{CHECK} --sarif >(wc -c > sarif.size) >/dev/null; sleep 1")
    assert piped.returncode == 0 and int((workdir / "sarif.size").read_text()) > 1000
    assert _run(workdir, f"{CHECK} --sarif /dev/null >/dev/null; echo $?").stdout == "1\n"


def test_a_full_stderr_keeps_the_exit_code(workdir):
    """`2>/dev/full`: the error line cannot be written; the exit code stays the error's (fixed:
    the failed print escaped main, exit 1: a failed gate's code for a usage error)."""
    for command, code in (("recipe show nope.toml", 64), ("check bad.toml --source tree --rev 1234567ab", 65)):
        (workdir / "bad.toml").write_text("[recipe]\n")
        done = _run(workdir, f"{sys.executable} -m srcreview {command} 2>/dev/full; echo $?")
        assert done.stdout == f"{code}\n", (command, done.stdout)


def test_a_full_stdout_and_a_closed_stdin(workdir):
    """`>/dev/full`: one line, exit 2; `<&-`: the review runs to its decision (held)."""
    full = _run(workdir, f"{CHECK} >/dev/full")
    assert (full.returncode, full.stderr) == (2, "srcreview: error: cannot write the output: No space left on device\n")
    assert _run(workdir, f"{CHECK} <&- >/dev/null; echo $?").stdout == "1\n"


def test_a_command_substitution_in_a_flag_value_is_open_never_run(workdir, cli):
    """`--max-num-seqs $(touch pwned; echo 1)`: an open question naming it; nothing runs (held)."""
    (workdir / "s.sh").write_text('#!/bin/sh\n# srcreview: gpu="NVIDIA GeForce RTX 5090" compute_capability=12.0\n'
                                  "vllm serve m --max-num-seqs $(touch pwned; echo 1)\n")
    result = _check(cli, recipe="s.sh")
    assert result.code == 0 and "open-question engine-value-admitted - max_num_seqs = $(touch pwned; echo 1)" \
        in result.out
    assert not (workdir / "pwned").exists()


@pytest.mark.parametrize("columns", ["0", "-5", "abc", "100000000"])
def test_odd_terminal_widths(workdir, cli, monkeypatch, columns):
    """`COLUMNS` zero, negative, not a number, huge: the text report is written (held)."""
    monkeypatch.setenv("COLUMNS", columns)
    result = _check(cli, fmt="text")
    assert result.code == 1 and result.err == "" and "gate: failed" in result.out


def test_side_outputs_that_cannot_be_written(workdir, cli):
    """A directory, a missing parent, a full device (held)."""
    assert "--sarif: cannot write tree: Is a directory" in _one_line(_check(cli, "--sarif", "tree"), 64)
    assert "--markdown: cannot write no/such/x.md" in _one_line(_check(cli, "--markdown", "no/such/x.md"), 64)
    assert "--json: cannot write /dev/full: No space left on device" in _one_line(_check(cli, "--json", "/dev/full"), 2)


HOSTILE_CONFIGS = {
    "a-json-array": (b"[1, 2]", "not a JSON object"),
    "null": (b"null", "not a JSON object"),
    "html-with-200": (b"<html><body>rate limited</body></html>", "not valid JSON"),
    "utf-16": ('{"architectures": ["Qwen3ForCausalLM"]}'.encode("utf-16"), "not valid"),
    "50000-deep": (b'{"a": ' + b"[" * 50000 + b"]" * 50000 + b"}", "nested too deeply"),
    "1e999": (b'{"num_hidden_layers": 1e999}', "the number 1e999 is out of range"),
}


def test_a_hub_that_sends_what_is_no_config_leaves_it_unknown(tmp_path):
    """config.json from a Hub on 127.0.0.1 that is an array, `null`, an HTML page, UTF-16, JSON
    50,000 deep, a number past float's range: the config is unknown (with why), nothing on
    stderr; a redirect loop between two renamed repositories too (held; fixed: `1e999` was read as
    inf and written into the model facts' JSON as `Infinity`, which is no JSON)."""
    with serve_hub() as hub:
        for name, (body, _) in HOSTILE_CONFIGS.items():
            hub.publish(f"org/{name}", {"config.json": body})
        hub.renamed.update({"org/loop-a": "org/loop-b", "org/loop-b": "org/loop-a"})
        env = hub_env(tmp_path / "hf", hub.endpoint, HF_HUB_DOWNLOAD_TIMEOUT="4", HF_HUB_ETAG_TIMEOUT="4")
        facts, _, stderr = obtain_in_subprocess([(f"org/{name}", None, None) for name in HOSTILE_CONFIGS]
                                                + [("org/loop-a", None, None)], env)
    assert stderr == ""
    for (name, (_, why)), found in zip([*HOSTILE_CONFIGS.items(), ("loop", (b"", "TooManyRedirects"))], facts, strict=True):
        text = json.dumps(found)
        assert found.get("config") in (None, {}) and why in text, (name, found)


def test_a_variable_the_compose_environment_passes_through_is_unknown(workdir, cli):
    """`environment: [- VLLM_USE_V2_MODEL_RUNNER]` (or `NAME:`) passes the deploying shell's value:
    the analysis takes it as unknown, an open question, never as unset (fixed: the V2 runner was
    confirmed and the draft problem with it, as if the variable were unset)."""
    command = ('    command: ["m", "--kv-cache-dtype", "fp8_per_token_head", "--max-num-seqs", "1", '
               '"--speculative-config", \'{"method":"mtp","num_speculative_tokens":3,'
               '"attention_backend":"TRITON_ATTN"}\']\n'
               '    x-srcreview:\n      gpu: NVIDIA GeForce RTX 5090\n      compute_capability: "12.0"\n')
    for n, environment in enumerate(("      - VLLM_USE_V2_MODEL_RUNNER\n", "      VLLM_USE_V2_MODEL_RUNNER:\n",
                                     "      - VLLM_USE_V2_MODEL_RUNNER=1\n")):
        (workdir / f"c{n}.yml").write_text("services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n"
                                           f"    environment:\n{environment}{command}")
        result = _check(cli, recipe=f"c{n}.yml")
        if n < 2:
            assert result.code == 0 and "plausible open-question spec-draft-attention-backend-ignored" in result.out \
                and "undecided model runner" in result.out, result.out
        else:
            assert result.code == 1 and "high confirmed problem spec-draft-attention-backend-ignored" in result.out
