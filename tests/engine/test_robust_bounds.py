"""Bounded in time, memory and depth: hostile inputs the user names and faults in the analysed tree.

Every case goes through the CLI (`srcreview.cli.main.main` in this process) and must end with one
`srcreview: error:` line (or a normal review) and its documented exit code, never a hang,
never a traceback, never `internal error`. Cases that used to hang run under an alarm, so a
regression fails instead of holding the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
from pathlib import Path

import pytest
from recipe_support import DEMO_RECIPE

from srcreview.core.errors import EXIT_USAGE

FIXTURE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets" / "rules_spec_decode"
RECIPE = DEMO_RECIPE.read_text()
REV = "1234567ab"


def make_tree(root: Path) -> Path:
    """The rules_spec_decode fixture as an unpacked sdist of commit REV."""
    shutil.copytree(FIXTURE, root)
    (root / "vllm" / "_version.py").write_text(f"__version__ = version = '0.0.0'\n"
                                               f"__commit_id__ = commit_id = 'g{REV}'\n")
    return root


@pytest.fixture
def work(tmp_path, monkeypatch):
    """tmp_path as the working directory, with a fixture tree `tree/`, a recipe `demo.toml` and a
    private cache; relative names keep socket paths short and messages free of local paths."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    make_tree(tmp_path / "tree")
    (tmp_path / "demo.toml").write_text(RECIPE)
    return tmp_path


@pytest.fixture
def alarm():
    """Fail (rather than hang) when a case does not finish within 20 s."""
    def expired(signum, frame):
        raise TimeoutError("the command did not finish within 20 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def one_error_line(result, code: int) -> str:
    assert result.code == code, result
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("srcreview: error: "), result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    return lines[0].removeprefix("srcreview: error: ")


# ------------------------------------------------------------------------------ special files

SPECIAL = ("fifo", "dev-zero", "dev-urandom", "socket")
_KIND = {"fifo": "a FIFO", "dev-zero": "a character device", "dev-urandom": "a character device",
         "socket": "a socket"}


def make_special(path: Path, kind: str, keep: list) -> None:
    """A FIFO (no writer), a link to /dev/zero or /dev/urandom, or a listening unix socket at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(os.path.relpath(path))  # relative: unix socket paths are short
        sock.listen(1)
        keep.append(sock)
    else:
        path.symlink_to(f"/dev/{kind.removeprefix('dev-')}")


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("role", ["recipe", "baseline", "waiver file", "review", "--source archive"])
def test_special_files_are_refused_before_reading(cli, work, alarm, role, kind):
    sockets: list = []
    try:
        if role == "recipe":
            make_special(work / "r.toml", kind, sockets)
            result = cli("check", "r.toml", "--rev", "0.29.0")
            shown, what = "r.toml", "recipe"
        elif role == "baseline":
            make_special(work / "base.json", kind, sockets)
            result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--baseline", "base.json")
            shown, what = "--baseline base.json", "baseline"
        elif role == "waiver file":
            make_special(work / "srcreview.toml", kind, sockets)
            result = cli("check", "demo.toml", "--source", "tree", "--rev", REV)
            shown, what = "srcreview.toml", "waiver"
        elif role == "review":
            make_special(work / "review.json", kind, sockets)
            result = cli("audit", "review.json", "--source", "tree")
            shown, what = "review.json", "review"
        else:
            make_special(work / "vllm-0.0.1.tar.gz", kind, sockets)
            result = cli("fetch", "--rev", REV, "--source", "vllm-0.0.1.tar.gz")
            shown, what = "--source vllm-0.0.1.tar.gz", "archive"
    finally:
        for sock in sockets:
            sock.close()
    line = one_error_line(result, EXIT_USAGE)
    assert line == f"{shown}: cannot read {what}: {_KIND[kind]}, not a regular file"
    assert result.out == ""


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_special_files_inside_the_source_tree_are_never_read(cli, work, alarm, kind):
    """A module, or the sdist's _version.py, that is (a link to) a FIFO or a device: refused, never read."""
    version = work / "tree" / "vllm" / "_version.py"
    shutil.move(version, work / "tree" / "vllm" / "_version.real")
    make_special(version, kind, [])
    result = cli("fetch", "--rev", REV, "--source", "tree")
    assert one_error_line(result, EXIT_USAGE) == \
        "--source tree: neither a git repository nor an unpacked vLLM sdist (no vllm/_version.py)"
    version.unlink()
    shutil.move(work / "tree" / "vllm" / "_version.real", version)
    fifo = work / "tree" / "vllm" / "fifo.py"
    make_special(fifo, kind, [])
    (work / "tree" / "vllm" / "config" / "linked.py").symlink_to("../fifo.py")  # an in-tree link to it
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    assert result.code == 1 and result.err == "", result.err  # the clean tree's decision: nothing needed them
    assert json.loads(result.out)["reviews"][0]["incomplete"] == []


# ------------------------------------------------------------------------------ deep nesting

def _deep_json(depth: int) -> str:
    return '{"reviews": ' + "[" * depth + "]" * depth + "}"


def _deep_toml(depth: int, kind: str) -> str:
    if kind == "arrays":
        return "[[waivers]]\nfingerprint = " + "[" * depth + "]" * depth + "\n"
    return "[[waivers]]\nfingerprint = " + "{ a = " * depth + "1" + " }" * depth + "\n"


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_deeply_nested_baseline_is_a_data_error(cli, work, alarm, depth):
    (work / "base.json").write_text(_deep_json(depth))
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--baseline", "base.json")
    assert one_error_line(result, 65) == "base.json: baseline is not JSON srcreview reads: nesting too deep"
    assert result.out == ""


@pytest.mark.parametrize("kind", ["arrays", "inline-tables"])
@pytest.mark.parametrize("depth", [5_000, 100_000])  # 100,000 inline tables: 800 KB, under the 1 MB limit
def test_deeply_nested_waiver_file_is_a_data_error(cli, work, alarm, depth, kind):
    (work / "srcreview.toml").write_text(_deep_toml(depth, kind))
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV)
    assert one_error_line(result, 65) == "srcreview.toml: malformed TOML: nesting too deep"


# ------------------------------------------------------------------- integers over 4,300 digits

HUGE = "9" * 5_000


def test_numbers_over_4300_digits_in_named_files_are_data_errors(cli, work, alarm):
    """Python refuses to convert them (json and tomllib raised a bare ValueError: a traceback)."""
    (work / "r.toml").write_text(RECIPE.replace("max_num_seqs = 1", f"max_num_seqs = {HUGE}"))
    line = RECIPE.splitlines().index("max_num_seqs = 1") + 1
    result = cli("check", "r.toml", "--rev", "0.29.0")
    assert one_error_line(result, 65) == f"r.toml:{line}: a number of 5000 digits, over the 4300-digit limit"

    underscored = "_".join(["9"] * 4_301)  # TOML digit groups: 4,301 digits
    (work / "r.toml").write_text(RECIPE.replace("max_num_seqs = 1", f"max_num_seqs = {underscored}"))
    assert one_error_line(cli("check", "r.toml", "--rev", "0.29.0"), 65).endswith(
        "a number of 4301 digits, over the 4300-digit limit")

    (work / "base.json").write_text('{"recipe": {"path": "demo.toml"},\n "findings": [], "x": ' + HUGE + "}")
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--baseline", "base.json")
    assert one_error_line(result, 65) == "--baseline base.json:2: a number of 5000 digits, over the 4300-digit limit"

    (work / "srcreview.toml").write_text(f'[[waivers]]\nfingerprint = "abcd"\nreason = "r"\nexpires = {HUGE}\n')
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV)
    assert one_error_line(result, 65) == "srcreview.toml:4: a number of 5000 digits, over the 4300-digit limit"
    (work / "srcreview.toml").unlink()

    url = f"https://github.com/vllm-project/vllm/blob/{REV}/vllm/config/speculative.py#L1-L{HUGE}"
    (work / "review.json").write_text(json.dumps({"source_urls": [{"url": url, "purpose": "SpeculativeConfig"}]}))
    result = cli("audit", "review.json", "--source", "tree")
    assert one_error_line(result, 65) == "review.json:1: a number of 5000 digits, over the 4300-digit limit"

    # 4,300 digits still convert: an ordinary (if absurd) value
    (work / "r.toml").write_text(RECIPE.replace("max_num_seqs = 1", f"max_num_seqs = {'9' * 4_300}"))
    assert cli("check", "r.toml", "--source", "tree", "--rev", REV, "--format", "json").code in (0, 1)


@pytest.mark.parametrize("spec", [f"vllm/config/speculative.py:1-{HUGE}", f"vllm/config/speculative.py:{HUGE}",
                                  "vllm/config/speculative.py:1234567890"])
def test_show_refuses_line_numbers_no_file_has(cli, work, spec):
    result = cli("show", "--rev", REV, "--source", "tree", spec)
    digits = len(spec.rpartition("-")[2].rpartition(":")[2])
    assert one_error_line(result, EXIT_USAGE) == \
        f"'vllm/config/speculative.py': a line number of {digits} digits; no file has that many lines"


def test_an_anchor_with_a_line_number_no_file_has_is_unverifiable(cli, work):
    url = f"https://github.com/vllm-project/vllm/blob/{REV}/vllm/config/speculative.py#L1-L12345678901"
    (work / "review.json").write_text(json.dumps({"source_urls": [{"url": url, "purpose": "SpeculativeConfig"}]}))
    result = cli("audit", "review.json", "--source", "tree", "--format", "json")
    assert result.code == 0, result.err
    (entry,) = json.loads(result.out)["entries"]
    assert entry["status"] == "unverifiable"
    assert entry["reason"].endswith("a line number of 11 digits; no file has that many lines")


# ------------------------------------------------------------- symlink loops, undecodable names

def _findings(result) -> list:
    return json.loads(result.out)["reviews"][0]["findings"]


def test_symlink_loops_in_the_source_tree_are_unreadable_never_a_crash(cli, work, alarm):
    clean = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    assert clean.code == 1, clean.err
    vllm = work / "tree" / "vllm"
    (vllm / "config" / "loop.py").symlink_to("loop.py")
    (vllm / "a.py").symlink_to("b.py")
    (vllm / "b.py").symlink_to("a.py")
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    # fixed: RuntimeError "Symlink loop" traceback; now each loop reads as an unreadable file
    assert (result.code, result.err, _findings(result)) == (1, "", _findings(clean))
    # a looping link that may be a package directory hides what it would hold: incomplete
    (vllm / "cycle").symlink_to("cycle", target_is_directory=True)
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    assert (result.code, result.err) == (2, "")
    assert json.loads(result.out)["reviews"][0]["incomplete"] == [
        "source tree: vllm/cycle: a dangling or looping symlink: the modules under it cannot be read"]


def test_non_utf8_file_names_in_the_source_tree_are_left_out(cli, work, make_git_repo, alarm):
    """A name that is not UTF-8 is no importable module and no GitHub path: not listed, not read."""
    clean = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    vllm = os.fsencode(work / "tree" / "vllm")
    with open(os.path.join(vllm, b"config", b"bad\xff.py"), "wb") as fh:
        fh.write(b"class SpeculativeConfig:\n    pass\n")
    os.mkdir(os.path.join(vllm, b"d\xfe"))
    with open(os.path.join(vllm, b"d\xfe", b"m.py"), "wb") as fh:
        fh.write(b"def get_model():\n    pass\n")
    os.symlink(b"bad\xff.py", os.path.join(vllm, b"config", b"link\xfd.py"))
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json")
    # fixed: a UnicodeEncodeError traceback
    assert (result.code, result.err, _findings(result)) == (1, "", _findings(clean))

    # the same names committed in a git checkout
    repo = make_git_repo("repo")
    shutil.copytree(work / "tree", repo.path, dirs_exist_ok=True, symlinks=True)
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "tree")
    commit = repo.git("rev-parse", "HEAD")
    result = cli("check", "demo.toml", "--source", str(repo.path), "--rev", commit, "--format", "json")
    assert result.code == 1 and result.err == "", result.err
    assert [f["classification"] for f in _findings(result)] == [f["classification"] for f in _findings(clean)]


# --------------------------------------------------------------------- a NUL in an anchor path

@pytest.mark.parametrize("nul", ["%00", "\x00"], ids=["percent-encoded", "raw"])
def test_a_nul_in_an_audited_anchor_path_is_unverifiable(cli, work, nul):
    url = f"https://github.com/vllm-project/vllm/blob/{REV}/vllm/config/spec{nul}ulative.py#L1-L3"
    (work / "review.json").write_text(json.dumps({"source_urls": [{"url": url, "purpose": "SpeculativeConfig"}]}))
    result = cli("audit", "review.json", "--source", "tree", "--format", "json")
    assert (result.code, result.err) == (0, "")  # fixed: ValueError "embedded null byte", a traceback
    (entry,) = json.loads(result.out)["entries"]
    assert (entry["status"], entry["reason"]) == \
        ("unverifiable", "'vllm/config/spec\\x00ulative.py': has a NUL byte: not a path inside the source tree")
    text = cli("audit", "review.json", "--source", "tree")
    assert text.code == 0 and "\x00" not in text.out and "has a NUL byte" in text.out


# ------------------------------------------------------------------------- a full disk on stdout

def _to_dev_full(work: Path, *args: str) -> tuple[int, str]:
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "srcreview", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=work, env={**os.environ, "SRCREVIEW_CACHE": str(work / "cache")},
                              timeout=120)
    return done.returncode, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [("check", "demo.toml", "--source", "tree", "--rev", REV, "--format", "json"),
                                  ("show", "--source", "tree", "--rev", REV, "vllm/config/speculative.py:1-3"),
                                  ("--version",)], ids=["check", "show", "version"])
def test_a_full_disk_on_stdout_is_one_line_and_exit_2(work, args):
    """Fixed: an OSError traceback ending in `internal error` (or, for small outputs, Python's
    own "Exception ignored" at exit with status 120)."""
    code, err = _to_dev_full(work, *args)
    assert (code, err) == (2, "srcreview: error: cannot write the output: No space left on device\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_a_full_disk_for_a_report_file_is_exit_2_and_a_bad_path_exit_64(cli, work):
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--sarif", "/dev/full")
    assert one_error_line(result, 2) == "--sarif: cannot write /dev/full: No space left on device"
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "--markdown", "no/such/dir/x.md")
    assert one_error_line(result, EXIT_USAGE) == "--markdown: cannot write no/such/dir/x.md: No such file or directory"
