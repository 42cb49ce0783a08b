"""Text from the vLLM source is shown, never obeyed: no escape sequence, bidi control or rich markup
from a source line reaches the terminal through show, check, explain, graph, diff or bisect.

Markdown (a pull-request comment) is not a terminal, but the same text must not end a table
cell, open a code span or start HTML there.

The source is a git repository built here: the rule fixture tree, then a commit that puts hostile
text where the review carries it to the output (a config field's declared default, a branch
condition, a value admitted by a Literal type, comments in the anchored lines). Functions keep ordinary names; only strings and
comments are hostile, as they can be in a real checkout.
"""

from __future__ import annotations

import json
import re

import pytest
from history_support import BASE, RECIPE, build_history

from srcreview.core.textsafe import printable
from srcreview.report import markdown

HOSTILE = "\x1b]0;pwned\x07\x1b[2J[red]x[/red]\u202e:smile: <img src=x onerror=alert(1)>|`x`"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J[red]x[/red]\\u202e:smile: <img src=x onerror=alert(1)>|`x`"  # what the reader must see instead
ATTENTION = "vllm/config/attention.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"
SPECULATIVE = "vllm/config/speculative.py"
ADMITTED = "engine-value-admitted"  # appears once the recipe's method = "mtp" is no longer admitted
DRIFT = "recipe-identity-drift"  # its message quotes AttentionConfig.backend's declared default (the unset value)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_inert(result, *, color: bool = False) -> None:
    """Nothing in stdout or stderr acts on a terminal; with color, only SGR sequences rich wrote."""
    for stream in (result.out, result.err):
        text = re.sub(r"\x1b\[[0-9;]*m", "", stream) if color else stream
        assert not RAW.search(text), repr(RAW.search(text))
    assert "😄" not in result.out + result.err  # no emoji codes expanded either


@pytest.fixture
def hostile(make_git_repo, cache_dir):
    """(repo, base commit, hostile commit)."""
    repo = make_git_repo("vllm")
    (base,) = build_history(repo, ["base"])
    attention = (BASE / ATTENTION).read_text()
    assert "backend: AttentionBackendEnum | None = None" in attention
    attention = f"# {HOSTILE}\n# [bold]not bold[/bold]\n" + attention.replace(
        "backend: AttentionBackendEnum | None = None", f'backend: AttentionBackendEnum | None = "{HOSTILE}"')
    runner = (BASE / RUNNER).read_text()  # a condition only known at run time: undecided under any recipe
    assert "get_pp_group().is_last_rank:" in runner
    runner = runner.replace("get_pp_group().is_last_rank:",
                            f'get_pp_group().is_last_rank and get_pp_group().name != "{HOSTILE}":')
    speculative = (BASE / SPECULATIVE).read_text()
    assert 'Literal["ngram", "eagle", "eagle3", "mtp"]' in speculative
    speculative = speculative.replace('"mtp"]', f'"mtp{HOSTILE}"]')
    return repo, base, repo.commit({ATTENTION: attention, RUNNER: runner, SPECULATIVE: speculative}, message="hostile")


def test_printable_escapes_only_what_acts_on_a_terminal():
    assert printable(HOSTILE) == SHOWN
    assert printable("\x00\x7f\x85\u2066\u2069\u200f\ud800") == "\\x00\\x7f\\x85\\u2066\\u2069\\u200f\\ud800"
    ordinary = "def f(x):\n\treturn 'é → ·' # [note] └─ ❱ 漢字\\x1b"
    assert printable(ordinary) == ordinary
    assert printable(printable(HOSTILE)) == SHOWN


def test_show_prints_the_lines_escaped(cli, hostile):
    repo, _base, sha = hostile
    result = cli("show", "--source", str(repo.path), "--rev", sha, f"{ATTENTION}:1-3")
    assert result.code == 0, result.err
    assert_inert(result)
    lines = result.out.splitlines()
    assert lines[0] == f"1  # {SHOWN}"
    assert lines[1] == "2  # [bold]not bold[/bold]"
    assert lines[-1].endswith(f"/{ATTENTION}#L1-L3")


def test_a_hostile_path_in_an_error_is_escaped(cli, hostile):
    repo, _base, sha = hostile
    result = cli("show", "--source", str(repo.path), "--rev", sha, "vllm/\x1b[2J\u202e.py")
    assert result.code == 64
    assert_inert(result)
    assert "vllm/\\x1b[2J\\u202e.py: no such file" in result.err


@pytest.mark.parametrize("color", [False, True])
def test_check_text_shows_the_source_default_escaped(cli, hostile, color):
    repo, _base, sha = hostile
    result = cli("check", str(RECIPE), "--rev", sha, "--source", str(repo.path), "--fail-on", "none", "--verbose",
                 "--color", "always" if color else "never")
    assert result.code == 0, result.err
    assert_inert(result, color=color)
    plain = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", result.out).split())  # the text wraps between words
    assert f"attention_backend = {SHOWN}:" in plain  # the message, with the markup text kept literally
    assert f"declares AttentionConfig.backend (default \"{SHOWN}\")" in plain  # an anchor's role
    as_json = cli("check", str(RECIPE), "--rev", sha, "--source", str(repo.path), "--fail-on", "none",
                  "--format", "json")
    finding = next(f for f in json.loads(as_json.out)["reviews"][0]["findings"] if f["rule"] == DRIFT)
    assert HOSTILE in finding["message"]  # the data keeps the source's text; only its display escapes it
    assert_inert(as_json)  # bidi and C1 too: JSON printed to a terminal cannot act on it either
    for fmt in ("review", "sarif"):
        assert_inert(cli("check", str(RECIPE), "--rev", sha, "--source", str(repo.path), "--fail-on", "none",
                         "--format", fmt))


def test_explain_shows_the_excerpt_escaped(cli, hostile):
    repo, _base, sha = hostile
    result = cli("explain", DRIFT, str(RECIPE), "--rev", sha, "--source", str(repo.path), "--context", "9")
    assert result.code == 0, result.err
    assert_inert(result)
    assert f"attention_backend = {SHOWN}:" in result.out  # the message
    excerpt = [line for line in result.out.splitlines() if "AttentionBackendEnum | None" in line]
    start = SHOWN.split(" <img")[0]  # the excerpt is cut at the terminal's width
    assert excerpt and all(start in line for line in excerpt), excerpt  # the source line in the excerpt
    assert "[bold]not bold[/bold]" in result.out  # a comment line of the excerpt, literally


def test_graph_text_shows_a_condition_escaped(cli, hostile):
    repo, _base, sha = hostile
    where = ("--rev", sha, "--source", str(repo.path), "--from", "gpu_model_runner.GPUModelRunner.__init__",
             "--set", "speculative_config.method=mtp")
    result = cli("graph", *where)
    assert result.code == 0, result.err
    assert_inert(result)
    assert f'get_pp_group().name != "{SHOWN}"' in result.out  # an undecided branch, as an assumption
    dot = cli("graph", *where, "--format", "dot")
    assert dot.code == 0 and not RAW.search(dot.out)


def test_diff_and_bisect_show_both_sides_escaped(cli, hostile):
    repo, base, sha = hostile
    diff = cli("diff", str(RECIPE), "--rev", base, "--rev", sha, "--source", str(repo.path), "--color", "always")
    assert diff.code == 1, diff.err
    assert_inert(diff, color=True)
    assert f"admitted: ngram, eagle, eagle3, mtp{SHOWN}." in re.sub(r"\x1b\[[0-9;]*m", "", diff.out)
    bisect = cli("bisect", str(RECIPE), "--source", str(repo.path), "--revs", f"{base},{sha}", "--rule", ADMITTED)
    assert bisect.code == 0, bisect.err
    assert_inert(bisect)
    assert f"admitted: ngram, eagle, eagle3, mtp{SHOWN}." in bisect.out


def unescaped(text: str, char: str) -> int:
    return len(re.findall(r"(?<!\\)" + re.escape(char), text))


def test_markdown_escapes_the_source_text(cli, hostile):
    repo, _base, sha = hostile
    result = cli("check", str(RECIPE), "--rev", sha, "--source", str(repo.path), "--fail-on", "none",
                 "--format", "markdown")
    assert result.code == 0, result.err
    assert_inert(result)
    lines = result.out.splitlines()
    head = next(n for n, line in enumerate(lines) if f"`{DRIFT}`" in line)
    line = lines[head + 2]  # the message, below the head and the claim
    assert (r'attention_backend = \\x1b\]0;pwned\\x07\\x1b\[2J\[red\]x\[/red\]\\u202e:smile: '
            r'\<img src=x onerror=alert(1)\>\|\`x\`:') in line
    assert unescaped(result.out, "<img") == 0
    assert unescaped(line, "`") == 0, "the message's backticks are all escaped: it opens no code span"


def test_markdown_table_cells_and_links_hold(tmp_path, monkeypatch):
    """Cells keep their column, text outside code spans starts no HTML, a link target stays one."""
    from gate_support import DATA, LOADER, copy_recipes, make_review

    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml")
    review = make_review(DATA / "nested.toml", "recipes/nested.toml")
    knobs = tuple(k.model_copy(update={"value": f"x|y`<script>\x1b\n{k.value}"}) for k in review.knobs)
    review = review.model_copy(update={
        "revision": review.revision.model_copy(update={"version": "0.29.0|<b>\u202e"}), "knobs": knobs,
        "incomplete": ("reason with | and <b>bold</b>",)})
    text = markdown.render([review])
    assert not RAW.search(text)
    lines = text.splitlines()
    for head in ("| recipe |", "| knob |"):
        table = lines[next(n for n, line in enumerate(lines) if line.startswith(head)):]
        rows = table[:next((n for n, row in enumerate(table) if not row.startswith("|")), len(table))]
        assert len(rows) > 2 and {unescaped(row, "|") for row in rows} == {unescaped(rows[0], "|")}, rows
    outside_code = re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", "", text)  # code spans, whatever their fence
    assert "<script>" in text and unescaped(outside_code, "<") == 0

    odd = LOADER.model_copy(update={"url": LOADER.url.replace("utils.py", "u)<b>\x1b |`.py"), "symbol": "a|b<i>"})
    prefix = LOADER.url.split("utils.py")[0]
    assert markdown._link(odd) == f"[a\\|b\\<i\\>]({prefix}u%29%3Cb%3E%1B%20%7C%60.py#L36-L49)"
