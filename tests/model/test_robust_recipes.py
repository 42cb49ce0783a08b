"""Hostile and malformed recipes: a Recipe or one clear line with exit 65 (64 if unreadable), never a traceback.

Property-based (hypothesis) over bytes, text and TOML-shaped documents, plus the named cases
of docs/robustness.md: huge files, deep nesting, non-UTF-8, duplicate keys, kebab/snake
duplicates, bad compute capabilities, unknown tables, wrong types.
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srcreview.core.errors import EXIT_DATA, EXIT_USAGE, DataError, UsageError
from srcreview.model.recipe import (
    MAX_KEY_DEPTH,
    MAX_RECIPE_BYTES,
    Recipe,
    load_recipe,
    parse_recipe,
)

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.function_scoped_fixture])
HEAD = '[recipe]\nname = "fuzz"\n'


def outcome(text: str) -> Recipe | DataError:
    """Parse; a DataError is an acceptable answer, anything else escapes and fails the test."""
    try:
        return parse_recipe(text, "recipe.toml")
    except DataError as exc:
        assert exc.exit_code == EXIT_DATA
        assert "\n" not in exc.message and exc.message.startswith("recipe.toml")
        return exc


# ------------------------------------------------------------------------ property-based

@FUZZ
@given(st.binary(max_size=2000))
def test_any_bytes_give_a_recipe_or_a_data_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "recipe.toml"
    path.write_bytes(data)
    try:
        load_recipe(path, display_path="recipe.toml")
    except DataError as exc:
        assert "\n" not in exc.message and exc.message.startswith("recipe.toml")


@FUZZ
@given(st.text(max_size=2000))
def test_any_text_gives_a_recipe_or_a_data_error(text):
    outcome(text)
    outcome(HEAD + text)


_KEYS = st.sampled_from([
    "recipe", "runtime", "hardware", "engine", "env", "srcreview", "name", "model", "gpu",
    "compute_capability", "version", "revision", "speculative_config", "method", "attention-backend",
    "attention_backend", "kv-cache-dtype", "kv_cache_dtype", "x", "VLLM_USE_V2_MODEL_RUNNER", "a.b",
    '"q.k"', "engine.speculative_config", '""', "'lit'", "1", "-",
])
_VALUES = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.booleans(),
                    st.text(max_size=12), st.sampled_from(["12.0", "8.9", 12.0, 8.95, 12, [], [1, "a"], {}]))


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{}"


def _toml_string(text: str) -> str:
    """A TOML basic string (json.dumps would write surrogate pairs, which TOML refuses)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


_LINES = st.lists(st.one_of(
    _KEYS.map(lambda k: f"[{k}]"),
    _KEYS.map(lambda k: f"[[{k}]]"),
    st.tuples(_KEYS, _VALUES).map(lambda kv: f"{kv[0]} = {_toml(kv[1])}"),
    st.text(max_size=16),
), max_size=14)


@FUZZ
@given(_LINES)
def test_toml_shaped_documents_give_a_recipe_or_a_data_error(lines):
    outcome(HEAD + "\n".join(lines))
    outcome("\n".join(lines))


_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
_SCALAR = st.one_of(st.integers(-1000, 1000), st.booleans(), st.text(st.characters(blacklist_categories=["Cs", "Cc", "Cf"]), max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))


@FUZZ
@given(st.dictionaries(_NAME, _SCALAR, min_size=1, max_size=6),
       st.dictionaries(_NAME, _SCALAR, min_size=1, max_size=4))
def test_valid_recipes_keep_every_setting_with_its_line(top, nested):
    """Whatever valid engine table is written, every scalar comes back under its key, on its line."""
    nested = {k: v for k, v in nested.items() if k not in top}
    text = HEAD + "[engine]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in top.items())
    if nested:
        text += "[engine.speculative_config]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in nested.items())
    top = {k: v for k, v in top.items() if k != "speculative_config"} if nested else top
    recipe = outcome(text)
    assert isinstance(recipe, Recipe), recipe
    lines = text.splitlines()
    expected = {**top, **{f"speculative_config.{k}": v for k, v in nested.items()}}
    assert {s.key for s in recipe.settings} == set(expected)
    for setting in recipe.settings:
        value = expected[setting.key]
        assert setting.value == value or (isinstance(value, float) and math.isclose(setting.value, value))
        assert lines[setting.line - 1].startswith(setting.key.rsplit(".", 1)[-1] + " =")


# ------------------------------------------------------------------------ named cases

def _err(text: str) -> str:
    with pytest.raises(DataError) as info:
        parse_recipe(text, "recipe.toml")
    assert "\n" not in info.value.message
    return info.value.message


def test_huge_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(HEAD.encode() + b"# " + b"x" * MAX_RECIPE_BYTES + b"\n")
    start = time.monotonic()
    with pytest.raises(DataError, match=r"big.toml: recipe is \d+ bytes, over the 1000000-byte limit"):
        load_recipe(path, display_path="big.toml")
    assert time.monotonic() - start < 3


def test_largest_allowed_file_parses_quickly(tmp_path):
    body = "".join(f"VAR_{i} = \"{i}\"\n" for i in range(40_000))
    text = HEAD + "[env]\n" + body
    assert len(text) < MAX_RECIPE_BYTES
    start = time.monotonic()
    recipe = parse_recipe(text, "recipe.toml")
    assert len(recipe.env) == 40_000 and recipe.env[-1].line == text.count("\n")
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("text", [
    HEAD + "[engine]\n" + '"' * 900_000 + " = 1\n",
    HEAD + "[engine]\n" + '"a".' * 15 + '"' + "b" * 900_000 + '" = 1\n',
    HEAD + "[engine]\n" + "a " * 450_000 + "= 1\n",
    HEAD + "[" + "a " * 450_000 + "\n",
    HEAD + "[" * 900_000 + "\n",
    HEAD + "[engine]\n" + "x = 1\n" * 150_000,
    HEAD + "".join(f"[engine.t{i}]\nx = 1\n" for i in range(45_000)),
    HEAD + 'description = "' + "x" * 950_000 + '"\n',
    HEAD + '[engine]\nx = "' + "." * 900_000 + '"\n',
    HEAD + "[engine]\n" + "".join(f"k{i} = [" + "1, " * 20 + "]\n" for i in range(12_000)),
], ids=["quotes", "long-quoted-part", "spaces", "open-header", "brackets", "repeated-key", "45k-tables",
        "long-string", "dots-in-value", "many-arrays"])
def test_pathological_large_inputs_finish_quickly(text):
    assert len(text.encode()) <= MAX_RECIPE_BYTES
    start = time.monotonic()
    outcome(text)
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("text, message", [
    (HEAD + "[engine]\n" + ".".join(["a"] * 20_000) + " = 1\n", f"recipe.toml:4: key nested deeper than {MAX_KEY_DEPTH} levels"),
    (HEAD + "[engine." + ".".join(["a"] * 2_000) + "]\nb = 1\n", f"recipe.toml:3: key nested deeper than {MAX_KEY_DEPTH} levels"),
    (HEAD + "[engine]\nx = " + "{a = " * 40 + "1" + "}" * 40 + "\n", f"nested deeper than {MAX_KEY_DEPTH} levels"),
    (HEAD + "[engine]\nx = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n", "nesting too deep"),
    (HEAD + "[engine]\nx = " + "[" * 5_000 + "1" + "]" * 5_000 + "\n", "nesting too deep"),
])
def test_deep_nesting_is_a_data_error_and_fast(text, message):
    start = time.monotonic()
    assert message in _err(text)
    assert time.monotonic() - start < 5


def test_non_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(HEAD.encode() + b'[hardware]\ngpu = "GeForce \xe9"\n')
    with pytest.raises(DataError, match=r"^latin1.toml:4: recipe is not valid UTF-8$"):
        load_recipe(path, display_path="latin1.toml")


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + HEAD.encode())
    assert load_recipe(path).name == "fuzz"


@pytest.mark.parametrize("text, message", [
    (HEAD + "[engine]\nmax_model_len = 1\nmax_model_len = 2\n", "recipe.toml:5: malformed TOML"),
    (HEAD + "[engine]\n[engine]\n", "malformed TOML"),
    (HEAD + "[engine]\nmax-model-len = 1\nmax_model_len = 2\n", "recipe.toml:5: engine key 'max_model_len' repeats 'max-model-len'"),
    (HEAD + "[engine.speculative_config]\nkv-cache-dtype = 'a'\nkv_cache_dtype = 'b'\n",
     "engine key 'kv_cache_dtype' repeats 'kv-cache-dtype'"),
    (HEAD + "[engine]\n\"speculative_config.method\" = 'x'\n[engine.speculative_config]\nmethod = 'mtp'\n",
     "engine key 'speculative_config.method' is not a setting name"),
    (HEAD + "[engine]\n\"\" = 1\n", "engine key '' is not a setting name"),
    (HEAD + "[engine.speculative_config]\n", "recipe.toml:3: [engine.speculative_config] is empty"),
])
def test_duplicate_and_ambiguous_keys(text, message):
    assert message in _err(text)


@pytest.mark.parametrize("value", ['"12"', '"twelve"', "8.95", "12.04", "true", "[12, 0]", '"12.0.1"', "-1",
                                   '"1.2.3"', "nan", "inf", '"١٢.٠"', '""'])
def test_bad_compute_capability(value):
    message = _err(HEAD + f"[hardware]\ncompute_capability = {value}\n")
    assert message.startswith("recipe.toml:4: hardware.compute_capability")


@pytest.mark.parametrize("value, capability", [('"12.0"', (12, 0)), ("8.9", (8, 9)), ("12", (12, 0)), ('"9.0"', (9, 0))])
def test_good_compute_capability(value, capability):
    recipe = parse_recipe(HEAD + f"[hardware]\ncompute_capability = {value}\n", "recipe.toml")
    assert recipe.hardware.capability == capability


@pytest.mark.parametrize("value", ["0", "-80", "true", '"80"', "[80]", "nan", "inf"])
def test_bad_gpu_memory(value):
    assert _err(HEAD + f"[hardware]\nmemory_gib = {value}\n").startswith("recipe.toml:4: hardware.memory_gib")


@pytest.mark.parametrize("value, gib", [("80", 80.0), ("79.6", 79.6)])
def test_gpu_memory_is_bound_for_the_analysis(value, gib):
    recipe = parse_recipe(HEAD + f'[hardware]\ngpu = "H100"\nmemory_gib = {value}\n', "recipe.toml")
    assert recipe.hardware.memory_gib == gib
    assert recipe.bindings["hardware.memory_gib"] == gib and recipe.bindings["hardware.gpu"] == "H100"
    assert "memory_gib" not in parse_recipe(HEAD, "recipe.toml").hardware.model_dump()  # omitted when unset


@pytest.mark.parametrize("value", ["0", "-8", "true", '"8"', "2.5", "[8]"])
def test_bad_gpu_count(value):
    assert _err(HEAD + f"[hardware]\ngpus = {value}\n").startswith("recipe.toml:4: hardware.gpus")


def test_gpu_count_is_bound_for_the_analysis():
    recipe = parse_recipe(HEAD + "[hardware]\ngpus = 8\n", "recipe.toml")
    assert recipe.hardware.gpus == 8 and recipe.bindings["hardware.gpus"] == 8
    assert "gpus" not in parse_recipe(HEAD, "recipe.toml").hardware.model_dump()  # omitted when unset


@pytest.mark.parametrize("text, message", [
    ("", "recipe.toml:1: missing [recipe] table"),
    ("[recipe]\n", "missing required key recipe.name"),
    (HEAD + "[engines]\nx = 1\n", "recipe.toml:3: unknown table [engines]"),
    (HEAD + "[recipe.extra]\n", "unknown key recipe.extra"),
    (HEAD.replace('"fuzz"', "1"), "recipe.toml:2: recipe.name"),
    ("recipe = 1\n", "[recipe] must be a table"),
    ("engine = 1\n" + HEAD, "[engine] must be a table"),
    (HEAD + "[runtime]\nversion = 0.29\n", "runtime.version"),
    (HEAD + "[runtime]\nflavour = 'x'\n", "unknown key runtime.flavour"),
    (HEAD + "[env]\nA = [1]\n", "env.A must be a string, number or boolean"),
    (HEAD + '[env]\n"A=B" = "x"\n', "env.'A=B' is not an environment variable name"),
    (HEAD + '[env]\nA = "x\\u0000y"\n', "recipe.toml:4: env.A contains the control character U+0000"),
    (HEAD + "[hardware]\ngpu = {a = 1}\n", "hardware.gpu"),
    ("\x00\x01", "malformed TOML"),
])
def test_unknown_tables_and_wrong_types(text, message):
    assert message in _err(text)


@pytest.mark.parametrize("where, value, char", [
    ("[recipe]\nname", "evil\\u001b]0;title\\u0007", "U+001B"),
    ("[recipe]\nname = 'x'\nmodel", "m\\u001b[31mred", "U+001B"),
    ("[recipe]\nname = 'x'\n[hardware]\ngpu", "RTX\\u0007", "U+0007"),
    ("[recipe]\nname = 'x'\n[engine.speculative_config]\nmethod", "mtp\\u202e", "U+202E"),
    ("[recipe]\nname = 'x'\n[engine]\nlimits", "\\u009b31m", "U+009B"),
    ("[recipe]\nname = 'x'\n[srcreview]\nnote", "\\u2066hidden\\u2069", "U+2066"),
])
def test_control_and_bidi_characters_are_refused(where, value, char):
    """They would drive the terminal (set its title, write the clipboard) or hide text wherever shown."""
    text = f'{where} = "{value}"\n'
    message = _err(text)
    assert message.startswith(f"recipe.toml:{text.count(chr(10))}: ") and message.endswith(char)


def test_tabs_and_newlines_in_values_are_fine():
    recipe = parse_recipe('[recipe]\nname = "x"\ndescription = """two\n\tlines"""\n', "recipe.toml")
    assert recipe.info.description == "two\n\tlines"


def test_key_like_lines_inside_multiline_strings_do_not_take_line_numbers():
    text = (HEAD + 'description = """\nmax_model_len = 5\n[engine]\n"""\nmodel = \'\'\'\nkv_cache_dtype = x\n\'\'\'\n'
            "[engine]\nmax_model_len = 16384\nkv_cache_dtype = 'auto'\n")
    recipe = parse_recipe(text, "recipe.toml")
    lines = text.splitlines()
    assert {s.key: lines[s.line - 1] for s in recipe.settings} == {
        "max_model_len": "max_model_len = 16384", "kv_cache_dtype": "kv_cache_dtype = 'auto'"}


def test_unreadable_paths_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="absent.toml: no such recipe file"):
        load_recipe(tmp_path / "absent.toml", display_path="absent.toml")
    with pytest.raises(UsageError, match="cannot read recipe"):
        load_recipe(tmp_path, display_path="dir")


# ------------------------------------------------------------------------ through the CLI

@pytest.mark.parametrize("content", [
    b"\xff\xfe not utf-8",
    (HEAD + "[engine]\n" + ".".join(["a"] * 5000) + " = 1\n").encode(),
    (HEAD + "[engine]\nx = 1\nx = 2\n").encode(),
    (HEAD + "[hardware]\ncompute_capability = 'sm120'\n").encode(),
    (HEAD + "[bogus]\n").encode(),
    b"[recipe\n",
])
def test_cli_invalid_recipe_exits_65_with_one_line(tmp_path, cli, content, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_bytes(content)
    result = cli("check", "bad.toml", "--rev", "0.29.0")
    assert result.code == EXIT_DATA, result
    assert result.err.startswith("srcreview: error: bad.toml")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert result.out == ""


def test_cli_missing_recipe_exits_64(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("check", "nope.toml", "--rev", "0.29.0")
    assert result.code == EXIT_USAGE
    assert "nope.toml" in result.err and "Traceback" not in result.err and str(tmp_path) not in result.err


# ------------------------------------------------------------------------ hostile pins, many settings

PINNED = HEAD + "[runtime]\n{key} = {value!r}\n[engine]\nmax_model_len = 4096\n"


@pytest.mark.parametrize("key, value", [
    ("revision", "HEAD"), ("revision", "--upload-pack=touch pwned"), ("revision", "0.29.0; rm -rf /"),
    ("revision", "98dff2a~1"), ("version", "HEAD"), ("version", "--upload-pack=x"), ("version", "0.29.0; rm -rf /"),
    ("version", "0.29.0\n"),
])
def test_hostile_pin_in_a_recipe_is_invalid_data_on_its_line(tmp_path, cli, monkeypatch, key, value):
    """A recipe's own revision/version is recipe data: exit 65 naming the recipe line, never 64 naming --rev
    (fixed: the recipe's pin went to --rev validation and was reported as a usage error)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.toml").write_text(PINNED.format(key=key, value=value))
    result = cli("check", "r.toml")
    assert result.code == EXIT_DATA, result
    assert result.err.startswith(f"srcreview: error: r.toml:4: runtime.{key}: "), result.err
    assert "--rev" not in result.err and result.err.count("\n") == 1 and result.out == ""


def test_hostile_pin_in_a_launch_file_comment_is_invalid_data(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.sh").write_text("#!/bin/sh\n# srcreview: revision='--upload-pack=x'\nvllm serve m --max-model-len 8\n")
    result = cli("check", "serve.sh")
    assert result.code == EXIT_DATA and result.err.startswith("srcreview: error: serve.sh:2: srcreview revision: ")


@pytest.mark.parametrize("form", ["toml", "command-line"])
def test_sixty_thousand_settings_are_refused_before_any_review(tmp_path, cli, monkeypatch, form):
    """Fixed: 60,000 settings did not finish in 300 s (Recipe.setting and the knob table scanned every
    setting per setting). Now the count is bounded (MAX_SETTINGS) and refused with the first line over it."""
    from srcreview.model.recipe import MAX_SETTINGS

    monkeypatch.chdir(tmp_path)
    if form == "toml":
        (tmp_path / "r.toml").write_text(HEAD + "[engine]\n" + "".join(f"k{i} = {i}\n" for i in range(60_000)))
        expected = f"r.toml:{4 + MAX_SETTINGS}: more than {MAX_SETTINGS} engine settings"
    else:
        (tmp_path / "r.sh").write_text("vllm serve m " + " ".join(f"--k{i}={i}" for i in range(60_000)) + "\n")
        expected = f"r.sh:1: more than {MAX_SETTINGS} settings"  # before the revision maps any flag
    result = cli("check", "r." + ("toml" if form == "toml" else "sh"), "--rev", "0.29.0",
                 "--source", str(tmp_path / "missing"))
    assert result.code == EXIT_DATA, result
    assert result.err.startswith("srcreview: error: " + expected), result.err


def test_a_review_of_the_most_settings_allowed_keeps_every_knob():
    """MAX_SETTINGS settings go through every rule and the knob table (linear: bench/bench_recipe.py
    measures the ratio); each keeps its row and its line."""

    from recipe_support import fixture_tree

    from srcreview.engine.run import review
    from srcreview.model.recipe import MAX_SETTINGS

    text = HEAD + "[engine]\n" + "".join(f"unknown_knob_{i} = {i}\n" for i in range(MAX_SETTINGS))
    recipe = parse_recipe(text, "r.toml")
    assert recipe.setting(f"unknown_knob_{MAX_SETTINGS - 1}").line == 3 + MAX_SETTINGS
    result = review(recipe, fixture_tree("rules_spec_decode"))
    rows = [k for k in result.knobs if k.recipe_line is not None]  # besides the unset target backend's row
    assert len(rows) == MAX_SETTINGS and len(result.knobs) == MAX_SETTINGS + 1
    assert {k.status for k in rows} == {"unknown-knob"}
    assert sorted(k.recipe_line for k in rows) == list(range(4, 4 + MAX_SETTINGS))
