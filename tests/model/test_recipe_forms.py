"""Recipes as people write them (issue 24), the readers' side: shell words that expand, values
the shell decides, files a recipe names, and the parser forms a small fixture engine defines.

The real vLLM trees are reviewed in tests/test_recipe_forms_real_vllm.py; here everything is
written in the test (files in tmp_path, the fixture trees of fixtures/vllm_snippets).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from srcreview.core.errors import DataError
from srcreview.index import Index
from srcreview.model.recipe import load_recipes, read_recipes
from srcreview.model.recipe.shell import Expansion, command_list
from srcreview.model.recipe.shell_values import UnknownValue, is_unknown
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree
from srcreview.vllm.argv_forms import parser_forms
from srcreview.vllm.flags import at_revision

SNIPPETS = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_snippets"


def _index(name: str) -> Index:
    return Index(DirectoryTree(SNIPPETS / name, Revision(requested="fixture", sha="1234567ab" + "0" * 31),
                               provider="fixture"))


def _values(recipe) -> list:
    return [(f.flag, f.value, f.following) for f in recipe.flags]


# --- shell words ---------------------------------------------------------------------------------

def test_words_keep_their_expansions_and_single_quotes_stay_literal():
    text = "vllm serve $M '$LIT' a\"b$C\"d ${X:-a b}c \"$(cat f | wc -l)\" `date` $1 x$\n"
    ((words, operator),) = command_list(text, "s.sh")
    parts = {w.text: w.parts for w in words}
    assert operator == ""
    assert parts["$M"] == (Expansion("$M", "M"),)
    assert parts["$LIT"] == ()  # in single quotes `$` is a character
    assert parts["ab$Cd"] == ("ab", Expansion("$C", "C"), "d")  # the quote ends the name
    assert parts["${X:-a b}c"] == (Expansion("${X:-a b}", "X", ":-", "a b"), "c")  # one word, spaces and all
    assert parts["$(cat f | wc -l)"] == (Expansion("$(cat f | wc -l)", op="command"),)
    assert parts["`date`"] == (Expansion("`date`", op="command"),)
    assert parts["$1"] == (Expansion("$1"),) and parts["x$"] == ()


def test_commands_know_whether_they_surely_run():
    text = "A=1\ntest -f x && B=2 || C=3\nD=4; E=5 &\nf &&\n  G=6\n"
    got = [(words[0].text, op) for words, op in command_list(text, "s.sh")]
    assert got == [("A=1", ""), ("test", ""), ("B=2", "&&"), ("C=3", "||"), ("D=4", ""), ("E=5", ""),
                   ("f", ""), ("G=6", "&&")]


# --- values the shell decides -------------------------------------------------------------------

def test_script_assignments_resolve_only_where_certain():
    text = ("#!/bin/bash\n"
            "PORT=8001\n"                                   # 2: certain
            "LEN=${LEN:-4096}\n"                            # 3: the caller's LEN, else 4096
            "[ -n \"$X\" ] && TP=2\n"                       # 4: only if the test holds
            "if [ -n \"$FAST\" ]; then\n  SEQS=64\nfi\n"   # 6: only on one branch
            "read -r DTYPE\n"                               # 8: read at run time
            "NAME=m PORT2=$PORT\n"                          # 9: certain, from a certain value
            "vllm serve \"$NAME\" --port $PORT2 --data-parallel-rpc-port=$PORT --max-model-len $LEN \\\n"
            "  -tp $TP --max-num-seqs \"$SEQS\" --kv-cache-dtype $DTYPE --seed \"$(date +%s)\" <seed>\n")
    (recipe,) = read_recipes(text, "serve.sh")
    assert recipe.info.model == "m"
    flags = {f.flag: f.value if f.value is not None else f.following[0] for f in recipe.flags}
    assert flags["--port"] == "8001" and flags["--data-parallel-rpc-port"] == "8001"
    unknown = {k: v for k, v in flags.items() if isinstance(v, UnknownValue)}
    assert set(unknown) == {"--max-model-len", "-tp", "--max-num-seqs", "--kv-cache-dtype", "--seed"}
    assert unknown["--max-model-len"].default == "4096" and "LEN is not set" in unknown["--max-model-len"].reason
    assert "only on some paths (line 4)" in unknown["-tp"].reason
    assert "only on some paths (line 6)" in unknown["--max-num-seqs"].reason
    assert "`read` sets it (line 8)" in unknown["--kv-cache-dtype"].reason
    assert "it runs a command" in unknown["--seed"].reason
    date, seed = recipe.flags[-1].following
    assert date.text == "$(date +%s)" and seed.text == "<seed>" and "placeholder" in seed.reason

def test_an_unknown_value_is_no_value():
    value = UnknownValue(text="$PORT", reason="the shell decides $PORT")
    assert value != "$PORT" and repr(value) == "$PORT" and str(value) == "$PORT"
    assert is_unknown(value) and is_unknown([1, value]) and is_unknown({"a": {"b": value}})
    assert not is_unknown("$PORT") and not is_unknown([1, "x"])


def test_placeholders_and_words_the_shell_may_split_are_open():
    text = "vllm serve <model> --port <port> $EXTRA_ARGS --max-model-len 8\n"
    (recipe,) = read_recipes(text, "serve.sh")
    assert recipe.info.model is None
    assert [(o.what, o.line) for o in recipe.open] == [("<model>", 1)]
    assert "placeholder" in recipe.open[0].reason
    port = recipe.flags[0].following
    assert isinstance(port[0], UnknownValue) and port[0].text == "<port>"
    # the unquoted $EXTRA_ARGS follows --port: it stays among the words the mapping reads
    assert isinstance(port[1], UnknownValue) and port[1].text == "$EXTRA_ARGS"


def test_a_sourced_file_leaves_every_variable_to_the_shell():
    text = "PORT=1\n. ./env.sh\nvllm serve m --port $PORT --seed $SEED\n"
    (recipe,) = read_recipes(text, "serve.sh")
    port, seed = (f.following[0] for f in recipe.flags)
    assert isinstance(port, UnknownValue) and "sourced file ./env.sh (line 2)" in port.reason
    assert isinstance(seed, UnknownValue) and "sourced file" in seed.reason


def test_dockerfile_shell_form_reads_env_and_exec_form_substitutes_nothing():
    shell = "FROM vllm/vllm-openai:v0.29.0\nENV PORT=8001\nENTRYPOINT vllm serve m --port $PORT --seed $SEED\n"
    (recipe,) = read_recipes(shell, "Dockerfile")
    port, seed = (f.following[0] for f in recipe.flags)
    assert port == "8001" and isinstance(seed, UnknownValue) and "not set in the Dockerfile" in seed.reason
    exec_form = 'FROM vllm/vllm-openai:v0.29.0\nENV PORT=8001\nCMD ["m", "--port", "$PORT"]\n'
    (recipe,) = read_recipes(exec_form, "Dockerfile")
    assert recipe.flags[0].following == ("$PORT",)  # no shell: vLLM gets the text itself


def test_compose_substitutes_from_the_deploying_shell_and_the_container_from_its_environment():
    text = ("services:\n"
            "  s:\n"
            "    image: vllm/vllm-openai:v0.29.0\n"
            "    environment:\n"
            "      DTYPE: fp8\n"
            "      PASSED:\n"
            "    entrypoint: [\"sh\", \"-c\"]\n"
            "    command: [\"vllm serve m --kv-cache-dtype $$DTYPE --port ${PORT:-8001} --seed $$PASSED\"]\n"
            "  t:\n"
            "    image: vllm/vllm-openai:v0.29.0\n"
            "    command: m --port ${PORT:-8002} --seed $$SEED\n")
    first, second = read_recipes(text, "compose.yml")
    dtype, port, passed = (f.following[0] for f in first.flags)
    assert dtype == "fp8"
    assert isinstance(port, UnknownValue) and port.default == "8001" and "compose substitutes" in port.reason
    assert isinstance(passed, UnknownValue) and "passes the deploying shell's value through" in passed.reason
    port, seed = (f.following[0] for f in second.flags)
    assert isinstance(port, UnknownValue) and port.default == "8002"
    assert [f.line for f in second.flags] == [11, 11]
    assert seed == "$SEED"  # `$$` is a `$` for the container, and no shell runs this command


# --- files the recipe names ---------------------------------------------------------------------

def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_config_file_is_read_relative_to_the_script_before_the_command_line(tmp_path):
    _write(tmp_path, {"r/serve.sh": "vllm serve m --config conf/c.yaml -tp 2\n",
                      "r/conf/c.yaml": "model: other\ntensor-parallel-size: 4\nenforce-eager: true\n"})
    (recipe,) = load_recipes(tmp_path / "r" / "serve.sh", "r/serve.sh")
    assert recipe.info.model == "m" and recipe.files == ("conf/c.yaml",)
    assert [(f.flag, f.value, f.line, f.origin) for f in recipe.flags[:2]] == [
        ("--tensor-parallel-size", 4, 1, "conf/c.yaml:2"), ("--enforce-eager", True, 1, "conf/c.yaml:3")]
    assert [f.flag for f in recipe.flags[2:]] == ["--config", "-tp"]  # the command line comes after


def test_config_file_outside_the_recipes_tree_is_refused(tmp_path):
    _write(tmp_path, {"outside.yaml": "max-model-len: 8\n", "r/link.yaml": "",
                      "r/a.sh": "vllm serve m --config ../outside.yaml\n",
                      "r/b.sh": f"vllm serve m --config {tmp_path / 'outside.yaml'}\n",
                      "r/c.sh": "vllm serve m --config link.yaml\n"})
    (tmp_path / "r" / "link.yaml").unlink()
    os.symlink(tmp_path / "outside.yaml", tmp_path / "r" / "link.yaml")
    for name, words in (("a.sh", "leaves the recipe's directory tree"), ("b.sh", "an absolute path outside"),
                        ("c.sh", "leaves the recipe's directory tree")):
        (recipe,) = load_recipes(tmp_path / "r" / name, name)
        (item,) = recipe.open
        assert item.incomplete and words in item.reason and "refused" in item.reason, name
        assert [f.flag for f in recipe.flags] == ["--config"] and recipe.files == (), name


def test_config_file_not_read_is_open_and_said(tmp_path):
    _write(tmp_path, {"a.sh": "vllm serve m --config missing.yaml\n",
                      "b.sh": "vllm serve m --config $CONF\n",
                      "c.sh": "vllm serve m --config=c.yaml\n", "c.yaml": "max-model-len: 8\n"})
    reasons = {}
    for name in ("a.sh", "b.sh", "c.sh"):
        (recipe,) = load_recipes(tmp_path / name, name)
        (item,) = recipe.open
        assert item.incomplete
        reasons[name] = item.reason
    assert "cannot be read: no such config file" in reasons["a.sh"]
    assert "the shell decides $CONF" in reasons["b.sh"]
    assert "two words" in reasons["c.sh"]
    (recipe,) = read_recipes("vllm serve m --config c.yaml\n", "serve.sh")  # text only: no file system
    assert "not read from a file" in recipe.open[0].reason


def test_config_file_mistakes_are_data_errors(tmp_path):
    _write(tmp_path, {"a.sh": "vllm serve m --config c.yaml --config c.yaml\n", "c.yaml": "max-model-len: 8\n",
                      "b.sh": "vllm serve m --config c.json\n", "c.json": "{}\n",
                      "d.sh": "vllm serve m --config bad.yaml\n", "bad.yaml": "a: [\n"})
    for name, words in (("a.sh", "--config is given 2 times"), ("b.sh", "YAML config files only"),
                        ("d.sh", "bad.yaml:")):
        with pytest.raises(DataError) as raised:
            load_recipes(tmp_path / name, name)
        assert words in raised.value.message, name


def test_compose_volume_maps_the_config_path_and_env_file_is_read(tmp_path):
    _write(tmp_path, {"compose.yml": ("services:\n  s:\n    image: vllm/vllm-openai:v0.29.0\n"
                                      "    env_file: [serve.env, gone.env]\n"
                                      "    volumes: [\"./conf:/etc/vllm:ro\"]\n"
                                      "    command: [m, --config, /etc/vllm/c.yaml]\n"),
                      "conf/c.yaml": "max-model-len: 8\n", "serve.env": "# comment\nHF_HOME=/models\nQ='x y'\n"})
    (recipe,) = load_recipes(tmp_path / "compose.yml", "compose.yml")
    assert [(f.flag, f.value, f.origin) for f in recipe.flags[:1]] == [("--max-model-len", 8, "conf/c.yaml:1")]
    assert [(e.name, e.value) for e in recipe.env] == [("HF_HOME", "/models"), ("Q", "x y")]
    (item,) = recipe.open
    assert item.what == "gone.env" and item.incomplete and "cannot be read" in item.reason
    assert recipe.files == ("serve.env", "conf/c.yaml")


# --- the parser forms of the revision (a fixture engine) ---------------------------------------

def test_forms_come_from_the_trees_own_parse_args():
    forms = parser_forms(_index("serve_parser_forms"))
    assert forms.where == "vllm/utils/argparse_utils.py:9" and forms.optimization_flag == "--optimization-level"
    assert forms.underscores and forms.dotted and forms.dotted_json and not forms.dotted_human_int
    plain = parser_forms(_index("serve_parser_plain"))
    assert not plain.found and plain.missing == ("FlexibleArgumentParser.parse_args is not found at this revision",)


def test_without_a_readable_parser_the_short_forms_are_open_not_unknown():
    text = "vllm serve m -O3 -cc.mode=3 --max_model_len 8 --enforce-eager --model m\n"
    (recipe,) = read_recipes(text, "serve.sh")
    mapped = at_revision(recipe, _index("serve_parser_forms"))
    assert {s.key: s.value for s in mapped.settings} == {"optimization_level": 3, "compilation_config.mode": 3,
                                                         "max_model_len": 8, "enforce_eager": True}
    assert mapped.open == () and mapped.info.model == "m"
    plain = at_revision(recipe, _index("serve_parser_plain"))
    assert {s.key for s in plain.settings} == {"enforce_eager"}
    assert [o.what for o in plain.open] == ["-O3", "-cc.mode", "--max_model_len"]
    assert all("not settled" in o.reason and "parse_args is not found" in o.reason for o in plain.open)


def test_yaml_false_is_a_no_flag_only_where_one_is_registered():
    text = "# srcreview: version=0.29.0\nmodel: m\nenforce-eager: false\nmax-model-len: 8\n"
    (recipe,) = read_recipes(text, "config.yaml")
    mapped = at_revision(recipe, _index("serve_parser_forms"))
    assert {s.key for s in mapped.settings} == {"max_model_len"}  # --enforce-eager is store_true: no --no- form
    (note,) = mapped.notes
    assert note.what == "--enforce-eager" and "dropped" in note.reason


def test_recipe_show_says_what_the_shell_decides_and_what_is_open(tmp_path):
    from srcreview.report.recipe import render_json, render_text

    _write(tmp_path, {"serve.sh": "P=1\nvllm serve m --data-parallel-rpc-port $P --max-model-len $LEN "
                                  "--config gone.yaml -cc.mode=3 --compilation-config.level=1\n"})
    (recipe,) = load_recipes(tmp_path / "serve.sh", "serve.sh")
    text = render_text(at_revision(recipe, _index("serve_parser_forms")), "fixture")
    assert "data_parallel_rpc_port = 1  (--data-parallel-rpc-port)" in text
    assert "max_model_len = $LEN  (the shell decides it)" in text
    assert "--config gone.yaml: config file gone.yaml cannot be read" in text
    assert "-cc: replaced by the dotted --compilation-config.… arguments" in text
    assert '"text": "$LEN"' in render_json(at_revision(recipe, _index("serve_parser_forms")))
