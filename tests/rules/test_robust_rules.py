"""Rule files written by others: any damage gives a Rule or one DataError line `file:line: why` (exit 65).

Every shipped rule file is mutated by hypothesis (a line deleted, duplicated, swapped, a value
replaced by another TOML type, a key misspelt); arbitrary text and bytes are tried too.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srcreview.core.errors import EXIT_DATA, DataError
from srcreview.rules.loader import MAX_RULE_BYTES, Rule, load_rule_file, parse_rule

RULES = sorted((Path(__file__).parents[2] / "rules").glob("*.toml"))
TEXTS = {path.name: path.read_text(encoding="utf-8") for path in RULES}
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(text: str, shown: str) -> Rule | DataError:
    try:
        return parse_rule(text, shown)
    except DataError as exc:
        assert exc.exit_code == EXIT_DATA
        assert "\n" not in exc.message
        assert re.match(re.escape(shown) + r":\d+: \S", exc.message), exc.message  # file:line: why
        return exc


def test_there_are_rules_to_mutate():
    assert len(TEXTS) >= 5
    for name, text in TEXTS.items():
        assert isinstance(outcome(text, f"rules/{name}"), Rule)


_VALUES = st.one_of(st.integers(-5, 5).map(str), st.sampled_from(["true", "false", "[]", "{}", '["a", 1]', "1.5",
                                                                  '""', '"confirmed"', '"nonsense"', "nan"]))


@FUZZ
@given(st.sampled_from(sorted(TEXTS)), st.randoms(use_true_random=False),
       st.sampled_from(["delete", "duplicate", "swap", "value", "misspell"]), _VALUES)
def test_mutated_rule_files_load_or_fail_with_file_and_line(name, rnd: random.Random, operation, value):
    lines = TEXTS[name].splitlines()
    i = rnd.randrange(len(lines))
    if operation == "delete":
        del lines[i]
    elif operation == "duplicate":
        lines.insert(i, lines[i])
    elif operation == "swap":
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif "=" in lines[i]:
        key, rest = lines[i].split("=", 1)
        lines[i] = f"{key}= {value}" if operation == "value" else f"{key.strip()}x ={rest}"
    outcome("\n".join(lines) + "\n", f"rules/{name}")


@FUZZ
@given(st.text(max_size=400))
def test_any_text_is_a_rule_or_a_located_error(text):
    outcome(text, "rules/x.toml")


@pytest.mark.parametrize("content, message", [
    (b"id = 'x'\n" + b"#" * (MAX_RULE_BYTES + 1), f"over the {MAX_RULE_BYTES}-byte limit"),
    (b"id = '\xff'\n", "not valid UTF-8"),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", ""),
    (b"a." * 5000 + b"b = 1\n", ""),
])
def test_huge_undecodable_and_deep_rule_files(tmp_path, content, message):
    path = tmp_path / "x.toml"
    path.write_bytes(content)
    start = time.monotonic()
    with pytest.raises(DataError) as info:
        load_rule_file(path, display="rules/x.toml")
    assert time.monotonic() - start < 10
    assert info.value.message.startswith("rules/x.toml") and "\n" not in info.value.message
    assert message in info.value.message
