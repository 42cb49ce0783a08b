"""Model directories and a Hugging Face Hub on 127.0.0.1, for the model-config tests.

The configs are shaped like the real ones vLLM dispatches on (a Qwen3.5-style MTP model, a
Gemma4 target with its `gemma4_assistant` draft, a multi-layer MTP model), written here. The
server answers `hf_hub_download` as the Hub does (huggingface_hub's file_download.py reads
these): HEAD and GET on `/{repo}/resolve/{revision}/{file}` with `X-Repo-Commit`, a quoted
`ETag` (the file's git blob id) and `Content-Length`; errors carry `X-Error-Code`
(`RepoNotFound` with 401 when the caller has no access, `RevisionNotFound`, `EntryNotFound`
with the commit); a renamed repository answers 307 with a relative `Location`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

QWEN35_MTP = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "num_nextn_predict_layers": 1,
    "text_config": {"model_type": "qwen3_5_text", "hidden_size": 5120, "num_hidden_layers": 64,
                    "mtp_num_hidden_layers": 1, "layer_types": ["linear_attention", "full_attention"]},
    "vision_config": {"model_type": "qwen3_5", "depth": 27},
    "torch_dtype": "bfloat16",
}
QWEN35_GENERATION = {"temperature": 0.6, "top_p": 0.95, "eos_token_id": [248046, 248044]}
GEMMA4_TARGET = {
    "architectures": ["Gemma4ForConditionalGeneration"],
    "model_type": "gemma4",
    "text_config": {"model_type": "gemma4_text", "num_hidden_layers": 35, "num_kv_shared_layers": 15},
}
GEMMA4_ASSISTANT = {
    "architectures": ["Gemma4AssistantForCausalLM"],
    "model_type": "gemma4_assistant",
    "text_config": {"model_type": "gemma4_text", "num_hidden_layers": 4, "num_kv_shared_layers": 0},
}
MULTI_LAYER_MTP = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "num_nextn_predict_layers": 3,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}
MULTI_LAYER_QUANT = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}


def dumps(config: dict) -> bytes:
    return json.dumps(config, indent=2).encode() + b"\n"


def write_model(directory: Path, files: dict[str, dict | bytes]) -> Path:
    """A model directory with `files` (name -> JSON object, or raw bytes) and a stand-in weights file."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content if isinstance(content, bytes) else dumps(content))
    (directory / "model.safetensors").write_bytes(b"weights are never read")
    return directory


def git_blob_id(data: bytes) -> str:
    """What the Hub sends as the ETag of a file kept in git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def commit_id(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


@dataclass
class HubRepo:
    files: dict[str, bytes]
    commit: str
    branches: tuple[str, ...] = ("main",)
    token: str | None = None  # a private repository: only this bearer token may read it
    hub_headers: bool = True  # False: answer like a plain web server (no X-Repo-Commit)


@dataclass
class Hub:
    """The Hub on 127.0.0.1: `repos` by id, `renamed` old id -> new id, every request in `requests`."""

    endpoint: str
    repos: dict[str, HubRepo] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Authorization)

    def publish(self, repo_id: str, files: dict[str, dict | bytes], **options) -> HubRepo:
        data = {name: content if isinstance(content, bytes) else dumps(content) for name, content in files.items()}
        data.setdefault("model.safetensors", b"weights are never downloaded")
        repo = HubRepo(data, commit_id(repo_id + json.dumps(sorted(data))), **options)
        self.repos[repo_id] = repo
        return repo

    def answer(self, method: str, path: str, authorization: str | None) -> tuple[int, dict[str, str], bytes]:
        self.requests.append((method, path, authorization))
        repo_id, sep, rest = path.partition("/resolve/")
        repo_id = repo_id.lstrip("/")
        revision, _, filename = rest.partition("/")
        revision, filename = unquote(revision), unquote(filename)
        if not sep or not filename:
            return 404, {}, b"not found"
        if repo_id in self.renamed:
            return 307, {"Location": f"/{self.renamed[repo_id]}/resolve/{rest}"}, b""
        repo = self.repos.get(repo_id)
        if repo is not None and repo.token is not None and authorization != f"Bearer {repo.token}":
            repo = None
        if repo is None:
            status = 404 if authorization else 401
            return status, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"}, b""
        if revision not in (*repo.branches, repo.commit):
            return 404, {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id"}, b""
        if filename not in repo.files:
            return 404, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found",
                         "X-Repo-Commit": repo.commit}, b""
        data = repo.files[filename]
        headers = {"ETag": f'"{git_blob_id(data)}"', "Content-Type": "application/json", "Accept-Ranges": "bytes"}
        if repo.hub_headers:
            headers["X-Repo-Commit"] = repo.commit
        return 200, headers, data

    def files_requested(self) -> set[str]:
        return {unquote(path.rpartition("/")[2]) for _, path, _ in self.requests}


def serve_hub():
    """Context manager: a running Hub; its endpoint is `hub.endpoint` (for HF_ENDPOINT)."""
    return _HubServer()


class _HubServer:
    def __enter__(self) -> Hub:
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_HEAD(self):  # noqa: N802 - http.server API
                self._answer(body=False)

            def do_GET(self):  # noqa: N802 - http.server API
                self._answer(body=True)

            def _answer(self, body: bool):
                with lock:
                    status, headers, data = hub.answer(self.command, self.path, self.headers.get("Authorization"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        hub = Hub(f"http://127.0.0.1:{self._server.server_address[1]}")
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return hub

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        return False


# huggingface_hub reads HF_HOME, HF_ENDPOINT, HF_HUB_OFFLINE and the token when it is first
# imported, as in a real `srcreview check` run: each environment gets its own process.
_OBTAIN = """
import json, sys
from srcreview.hfconfig import obtain_model_config, parse_model_ref
out = []
for text, revision, offline in json.loads(sys.argv[1]):
    out.append(obtain_model_config(parse_model_ref(text, revision=revision), offline=offline).to_json())
print(json.dumps(out, sort_keys=True))
"""


def hub_env(home: Path, endpoint: str, **variables: str) -> dict[str, str]:
    """The process environment without any HF_* of this machine, plus the test's own."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_"))}
    env.update(HF_HOME=str(home), HF_ENDPOINT=endpoint, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(variables)
    return env


def obtain_in_subprocess(calls: list[tuple[str, str | None, bool | None]], env: dict[str, str]):
    """Run obtain_model_config on (ref, revision, offline) calls in a fresh Python; (facts JSON list, stdout, stderr)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _OBTAIN, json.dumps(calls)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stdout, done.stderr
