"""Crashes and hangs (issue 26): hostile numbers, files and servers end as one line (exit 65
or 2) or an open question, in bounded time and memory, never a traceback.

Real files made in the test, a real HTTP server on 127.0.0.1 for the Hub.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source
from hub_support import commit_id, dumps, git_blob_id, hub_env, obtain_in_subprocess

from srcreview.hfconfig.files import MAX_FILE_BYTES


def _one_line(result, code: int) -> str:
    assert result.code == code, result.err
    assert "Traceback" not in result.err and len(result.err.splitlines()) == 1, result.err
    return result.err.strip()


@pytest.mark.parametrize(("name", "text", "where"), [
    ("b60.yaml", "model: some/model\nmax_model_len: 1:" + ":".join(["59"] * 3000) + "\n", "b60.yaml:2"),
    ("b60-nested.yaml", "model: m\nspeculative_config:\n  num_speculative_tokens: 1:" + ":".join(["5"] * 2500) + "\n",
     "b60-nested.yaml:2"),  # (the line of the table a vLLM YAML flag is written in)
    ("hex.toml", '[recipe]\nname = "x"\n[engine]\nmax_model_len = 0x' + "f" * 4000 + "\n", "hex.toml:4"),
    ("oct.toml", '[recipe]\nname = "x"\n[engine.speculative_config]\nnum_speculative_tokens = 0o' + "7" * 5000 + "\n",
     "oct.toml:4"),
    ("bin.toml", '[recipe]\nname = "x"\n[engine]\nseed = 0b' + "1" * 15000 + "\n", "bin.toml:4"),
    ("list.toml", '[recipe]\nname = "x"\n[engine]\ncuda_graph_sizes = [1, 0x' + "f" * 4000 + "]\n", "list.toml:4"),
    ("model.toml", '[recipe]\nname = "x"\n[engine]\nmax_num_seqs = 1\n[model]\nnum_hidden_layers = 0x' + "f" * 4000
     + "\n", "model.toml:6"),
    ("f60.yaml", "model: m\ngpu_memory_utilization: 1:" + ":".join(["59"] * 300) + ".5\n", "f60.yaml:2"),
    ("inf.yaml", "model: m\ngpu_memory_utilization: .inf\n", "inf.yaml:2"),
    ("nan.toml", '[recipe]\nname = "x"\n[engine]\ngpu_memory_utilization = nan\n', "nan.toml:4"),
    ("inf.toml", '[recipe]\nname = "x"\n[engine.speculative_config]\nx = [-inf]\n', "inf.toml:4"),
    ("compose.yml", "services:\n  llm:\n    image: vllm/vllm-openai\n    command: [m]\n    environment: {}\n"
     "    x-size: 1\n    deploy: {replicas: 1:" + ":".join(["1"] * 80) + "}\n", None),
])
def test_huge_integers_in_recipes_are_one_line(tmp_path, monkeypatch, cli, name, text, where):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    for args in (("recipe", "show", name), ("recipe", "show", name, "--format", "json")):
        start = time.monotonic()
        result = cli(*args)
        assert time.monotonic() - start < 10
        if where is None:  # a compose key srcreview does not read: no value of it reaches a report
            assert result.code == 0, result.err
            continue
        assert _one_line(result, 65).startswith(f"srcreview: error: {where}: ")
        assert any(why in result.err for why in ("more than 4300 digits", "over the 4300-digit limit", "out of range", "not a number any setting"))


def _model_recipe(tmp_path: Path, name: str, config: bytes) -> Path:
    (tmp_path / name).mkdir()
    (tmp_path / name / "config.json").write_bytes(config)
    recipe = tmp_path / f"{name}.toml"
    recipe.write_text(DEMO_RECIPE.read_text().replace('name = "demo-mtp3-nested-triton"',
                                                      f'name = "demo"\nmodel = "./{name}"'))
    return recipe


def test_hostile_model_configs_leave_the_config_unknown(tmp_path, monkeypatch, cli):
    """A 5,000-digit integer in config.json, 300,000 keys: the review goes on without the
    config (its branches stay open), in bounded time."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    wide = {f"key_{i}": i for i in range(300_000)}
    wide["architectures"] = ["Qwen3ForCausalLM"]
    cases = {"digits": (b'{"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": ' + b"9" * 5000 + b"}",
                        "holds an integer of 5000 digits"),
             "negative": (b'{"num_hidden_layers": -' + b"1" * 4301 + b"}", "holds an integer of 4301 digits"),
             "wide": (json.dumps(wide).encode(), None)}
    for name, (config, reason) in cases.items():
        recipe = _model_recipe(tmp_path, name, config)
        start = time.monotonic()
        result = cli("check", recipe.name, "--source", "tree", "--rev", FIXTURE_REV, "--format", "json")
        assert time.monotonic() - start < 60 and result.code in (0, 1), result.err
        [review] = json.loads(result.out)["reviews"]
        [model] = [m for m in review["models"] if "target" in m["roles"]]
        if reason is None:
            assert model["unknown"] is None and model["files"], model  # read, whole
        else:
            assert reason in model["unknown"] and model["files"] == [], model


class _HostileHub:
    """A Hub on 127.0.0.1 that answers HEAD like the Hub and GET of config.json as `mode` says:
    `trickle` (a byte a second), `endless` (a chunked body without end), `huge` (64 MiB,
    announced). `sent` counts the body bytes it wrote."""

    def __init__(self, mode: str):
        self.mode, self.sent, self.stop = mode, 0, threading.Event()
        hub = self
        body = dumps({"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 2})
        size = 64 << 20 if mode == "huge" else len(body)
        bomb = gzip.compress(b" " * (64 << 20), compresslevel=9) if mode == "gzip" else b""
        commit = commit_id(mode)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _head(self, chunked: bool):
                if not self.path.endswith("/config.json"):
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("X-Repo-Commit", commit)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return False
                self.send_response(200)
                self.send_header("X-Repo-Commit", commit)
                self.send_header("ETag", f'"{git_blob_id(body)}"')
                self.send_header("Content-Type", "application/json")
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif hub.mode == "gzip" and self.command == "GET":
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(bomb)))
                else:
                    self.send_header("Content-Length", str(size))
                self.end_headers()
                return True

            def do_HEAD(self):  # noqa: N802
                self._head(chunked=False)

            def do_GET(self):  # noqa: N802
                if not self._head(chunked=hub.mode == "endless"):
                    return
                try:
                    while not hub.stop.is_set():
                        if hub.mode == "trickle":
                            self.wfile.write(body[hub.sent % len(body):][:1])
                            self.wfile.flush()
                            hub.sent += 1
                            time.sleep(1)
                        elif hub.mode == "gzip":  # 64 MiB of spaces, 64 KiB on the wire
                            self.wfile.write(bomb)
                            hub.sent += len(bomb)
                            return
                        elif hub.mode == "endless":
                            chunk = b" " * 65536
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            hub.sent += len(chunk)
                        else:
                            self.wfile.write(b" " * 65536)
                            hub.sent += 65536
                            if hub.sent >= size:
                                return
                except OSError:  # the client went away: what the test wants
                    return

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(("mode", "reason"), [
    ("trickle", "took over 12 s to send config.json"),
    ("endless", f"sent more than {MAX_FILE_BYTES} bytes of config.json; stopped there"),
    ("huge", f"announced config.json as {64 << 20} bytes, over the {MAX_FILE_BYTES}-byte limit"),
    ("gzip", f"decodes to more than {MAX_FILE_BYTES} bytes; stopped there"),
])
def test_a_hostile_hub_is_stopped_while_it_streams(tmp_path, mode, reason):
    hub = _HostileHub(mode)
    try:
        start = time.monotonic()
        env = hub_env(tmp_path / "hf", hub.endpoint, HF_HUB_DOWNLOAD_TIMEOUT="4", HF_HUB_ETAG_TIMEOUT="4")
        [facts], _, stderr = obtain_in_subprocess([("org/model", None, None)], env)
        elapsed = time.monotonic() - start
    finally:
        hub.close()
    assert reason in json.dumps(facts), facts
    assert elapsed < 60 and stderr == ""
    # what the server could write: what srcreview read, plus what the kernel buffers on loopback
    # (a few MB each way); a download to the end would be 64 MiB, or never end
    assert hub.sent < 3 * MAX_FILE_BYTES, f"{hub.sent} bytes sent: the download was not stopped at the limit"
    if mode == "huge":
        assert hub.sent < MAX_FILE_BYTES, "refused on its announced size, before its body was read"


def test_closed_stderr_never_spills_onto_stdout(tmp_path):
    """`2>&-`: an error has nowhere to go, its exit code stays, and stdout stays the output's."""
    import subprocess
    import sys

    result = subprocess.run(["bash", "-c", f"{sys.executable} -m srcreview recipe show nope.toml 2>&-"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert (result.returncode, result.stdout) == (64, "")


def test_rules_given_as_a_file_or_nothing_are_usage_errors(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rule.toml").write_text('id = "x"\n')
    (tmp_path / "empty").mkdir()
    assert _one_line(cli("rules", "list", "--rules", "rule.toml"), 64).endswith("--rules rule.toml: not a directory")
    assert _one_line(cli("rules", "--doc", "--rules", "empty"), 65).endswith("holds no rule file (*.toml)")
    assert _one_line(cli("rules", "test", "--rules", "empty"), 65)


_DEEP = "[" * 200_000 + "]" * 200_000  # valid JSON, nested past the interpreter's stack


@pytest.mark.parametrize(("name", "text", "where", "why"), [
    ("Dockerfile", "FROM vllm/vllm-openai:v0.29.0\nCMD " + _DEEP + "\n", "Dockerfile:2: exec form", "nesting too deep"),
    ("ep.Dockerfile", 'FROM vllm/vllm-openai\nENTRYPOINT ["vllm", "serve", "org/m", "--speculative-config", '
     + json.dumps('{"method": ' + _DEEP + "}") + "]\n", "ep.Dockerfile:2: --speculative-config: invalid JSON",
     "nesting too deep"),
    ("serve.sh", "#!/bin/sh\nvllm serve org/m --speculative-config '{\"method\": " + _DEEP + "}'\n",
     "serve.sh:2: --speculative-config: invalid JSON", "nesting too deep"),
    ("big.sh", "#!/bin/sh\nvllm serve org/m --speculative-config '{\"num_speculative_tokens\": 1e999}'\n",
     "big.sh:2: --speculative-config: invalid JSON", "the number 1e999 is out of range"),
    ("nan.sh", "#!/bin/sh\nvllm serve org/m --speculative-config '{\"num_speculative_tokens\": NaN}'\n",
     "nan.sh:2: --speculative-config: invalid JSON", "NaN is not a number any setting takes"),
], ids=("exec-form", "entrypoint-flag", "script-flag", "1e999", "nan"))
def test_json_no_reader_holds_inside_a_recipe_value_is_one_line(tmp_path, monkeypatch, cli, name, text, where, why):
    """JSON inside a recipe's words (a Dockerfile's exec form, a `--speculative-config`
    value as the revision's parser reads it) 200,000 deep, or a number no JSON output holds:
    one line, exit 65, in bounded time and memory (fixed: a RecursionError traceback)."""
    import resource

    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / name).write_text(text)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    result = cli("check", name, "--source", "tree", "--rev", FIXTURE_REV)
    assert time.monotonic() - start < 20
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # kB
    assert _one_line(result, 65) == f"srcreview: error: {where}: {why}" and result.out == ""


def test_a_short_base_60_integer_is_read_as_yaml_1_1_reads_it(tmp_path, monkeypatch, cli):
    """`1:59:59:59:59` is an integer in YAML 1.1 (vLLM's YAML loader reads it so): the value
    a report shows is that integer, not a crash and not the text."""
    monkeypatch.chdir(tmp_path)
    parts = [1, 59, 59, 59, 59]
    (tmp_path / "b60.yaml").write_text("model: some/model\nmax_model_len: " + ":".join(map(str, parts)) + "\n")
    result = cli("recipe", "show", "b60.yaml", "--format", "json")
    assert result.code == 0, result.err
    expected = 0
    for part in parts:
        expected = expected * 60 + part
    assert str(expected) in result.out and "1:59" not in result.out
