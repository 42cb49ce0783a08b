"""Recipes where they live: shell scripts, Dockerfiles, vLLM YAML configs and compose files, written here.

Readers keep every flag as written with its line and column; the revision maps flags to engine
keys later (tests/e2e/test_recipe_flags_real_vllm.py). The format is chosen by content.
"""

from __future__ import annotations

import pytest

from srcreview.core.errors import EXIT_DATA, DataError
from srcreview.model.recipe import load_recipes, looks_like_recipe, read_recipes

SPEC = '{"method": "mtp", "num_speculative_tokens": 3}'


def flags(recipe) -> list[tuple]:
    return [(f.flag, f.value, f.following, f.line, f.column) for f in recipe.flags]


def test_shell_script_quoting_continuations_env_and_json():
    text = (
        "#!/bin/bash\n"                                           # 1
        "set -euo pipefail\n"                                     # 2
        "export VLLM_USE_V2_MODEL_RUNNER=1\n"                     # 3
        "MODEL=Qwen/Qwen3-8B  # a shell variable, not env\n"     # 4
        "CUDA_VISIBLE_DEVICES=0 exec vllm serve \"$MODEL\" \\\n"  # 5
        "    --max-model-len=16384 \\\n"                          # 6
        f"    --speculative-config '{SPEC}' \\\n"                 # 7
        "    --no-enable-prefix-caching --served-model-name a b \\\n"  # 8
        "    --kv-cache-dtype \"fp8\"  2>&1 | tee serve.log\n"   # 9
    )
    (recipe,) = read_recipes(text, "serve.sh")
    assert recipe.format == "command-line" and recipe.path == "serve.sh" and recipe.name == "serve"
    assert recipe.info.model == "Qwen/Qwen3-8B"  # the script's own assignment on line 4, certain before line 5
    assert [(e.name, e.value, e.line) for e in recipe.env] == [("VLLM_USE_V2_MODEL_RUNNER", "1", 3),
                                                               ("CUDA_VISIBLE_DEVICES", "0", 5)]
    assert flags(recipe) == [
        ("--max-model-len", "16384", (), 6, 5),
        ("--speculative-config", None, (SPEC,), 7, 5),
        ("--no-enable-prefix-caching", None, (), 8, 5),
        ("--served-model-name", None, ("a", "b"), 8, 32),
        ("--kv-cache-dtype", None, ("fp8",), 9, 5),
    ]
    assert recipe.settings == ()  # flags wait for the revision


def test_a_here_document_is_input_to_its_command_unless_a_shell_runs_it():
    text = (
        "cat > notes.txt <<EOF\n"                               # 1
        "vllm serve not/this --max-num-seqs 1\n"                # 2: cat's input, never run
        "EOF\n"                                                 # 3
        "cat <<'X' ; export VLLM_LOGGING_LEVEL=DEBUG\n"         # 4: the line goes on after the opener
        "vllm serve nor/this\n"                                 # 5
        "X\n"                                                   # 6
        "echo <<< 'vllm serve a here-string'\n"                 # 7: <<< opens no document
        "bash <<-'END'\n"                                       # 8: a shell runs its document
        "\tvllm serve inner/model \\\n"                      # 9
        "\t    --tensor-parallel-size 2\n"                     # 10
        "\tEND\n"                                              # 11
        "vllm serve outer/model --max-model-len 4096\n"         # 12
    )
    inner, outer = read_recipes(text, "docs.sh")
    assert (inner.info.model, outer.info.model) == ("inner/model", "outer/model")
    assert flags(inner) == [("--tensor-parallel-size", None, ("2",), 10, 6)]
    assert flags(outer) == [("--max-model-len", None, ("4096",), 12, 24)]
    assert [(e.name, e.line) for e in outer.env] == [("VLLM_LOGGING_LEVEL", 4)]


def test_a_serve_only_inside_a_documents_input_is_no_serve_command():
    with pytest.raises(DataError, match="no `vllm serve` command found"):
        read_recipes("tee run.sh <<EOF\nvllm serve m\nEOF\n", "write.sh")


def test_python_module_entry_point_and_several_servers():
    text = ("python -m vllm.entrypoints.openai.api_server --model m1 --port 8000 &\n"
            "python3 -m vllm.entrypoints.cli.main serve m2 --max-num-seqs 4\n")
    first, second = read_recipes(text, "two.sh")
    assert (first.path, second.path) == ("two.sh#1", "two.sh#2")
    assert flags(first)[0] == ("--model", None, ("m1",), 1, 46)
    assert second.info.model == "m2" and flags(second) == [("--max-num-seqs", None, ("4",), 2, 47)]


def test_dockerfile_exec_and_shell_forms_env_and_image_pin():
    exec_form = ("FROM vllm/vllm-openai:v0.29.0 AS serve\n"
                 "ENV VLLM_USE_V2_MODEL_RUNNER=1 \\\n"
                 "    HF_HOME=/models\n"
                 'CMD ["Qwen/Qwen3-8B", "--max-model-len", "8192", \\\n'
                 '     "--kv-cache-dtype", "fp8"]\n')
    (recipe,) = read_recipes(exec_form, "Dockerfile")
    assert recipe.runtime.version == "0.29.0" and recipe.pin_line == 1
    assert recipe.info.model == "Qwen/Qwen3-8B"
    assert [(e.name, e.value, e.line) for e in recipe.env] == [("VLLM_USE_V2_MODEL_RUNNER", "1", 2),
                                                               ("HF_HOME", "/models", 3)]
    assert flags(recipe) == [("--max-model-len", None, ("8192",), 4, 24), ("--kv-cache-dtype", None, ("fp8",), 5, 7)]
    shell_form = ("FROM python:3.12\n"
                  "# srcreview: version=0.30.0 gpu='NVIDIA H100' compute_capability=9.0\n"
                  "ENTRYPOINT vllm serve m \\\n"
                  "   --max-model-len 4096\n")
    (recipe,) = read_recipes(shell_form, "Dockerfile")
    assert recipe.runtime.version == "0.30.0" and recipe.pin_line == 2 and recipe.hardware.capability == (9, 0)
    assert flags(recipe) == [("--max-model-len", None, ("4096",), 4, 4)]


def test_vllm_yaml_config_keeps_types_and_lines():
    text = ("# srcreview: gpu='NVIDIA GeForce RTX 5090' compute_capability=12.0\n"
            "model: Qwen/Qwen3-8B\n"
            "max-model-len: 16384\n"
            "enforce_eager: true\n"
            "speculative-config:\n"
            "  method: mtp\n"
            "  num_speculative_tokens: 3\n")
    (recipe,) = read_recipes(text, "config.yaml")
    assert recipe.format == "vllm-yaml" and recipe.info.model == "Qwen/Qwen3-8B"
    assert recipe.hardware.compute_capability == "12.0"
    assert [(f.flag, f.value, f.line, f.column) for f in recipe.flags] == [
        ("--max-model-len", 16384, 3, 1), ("--enforce_eager", True, 4, 1),
        ("--speculative-config", {"method": "mtp", "num_speculative_tokens": 3}, 5, 1)]


COMPOSE = """\
x-srcreview:
  gpu: NVIDIA GeForce RTX 5090
  compute_capability: "12.0"
x-common: &common
  environment:
    VLLM_USE_V2_MODEL_RUNNER: "1"
services:
  mtp:
    <<: *common
    image: ${VLLM_IMAGE:-vllm/vllm-openai:v0.29.0}
    command: >
      Qwen/Qwen3-8B --max-model-len 16384
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
  listed:
    image: vllm/vllm-openai:nightly-98dff2a81d747d1dba01a47f939f48c3526d4206
    environment:
      - HF_HOME=/models
      - PASSED_THROUGH
    command: ["Qwen/Qwen3-8B", "--max-num-seqs", "4"]
  custom:
    image: ghcr.io/me/stack:1
    entrypoint: ["/bin/sh", "-c"]
    command: ["FOO=1 vllm serve m --max-model-len 2048"]
  proxy:
    image: nginx:1.27
    command: ["nginx", "-g", "daemon off;"]
"""


def test_compose_services_each_a_recipe_and_others_skipped():
    mtp, listed, custom = read_recipes(COMPOSE, "stack/compose.yml")
    assert [r.path for r in (mtp, listed, custom)] == ["stack/compose.yml#mtp", "stack/compose.yml#listed",
                                                        "stack/compose.yml#custom"]
    assert {r.file for r in (mtp, listed, custom)} == {"stack/compose.yml"} and mtp.format == "compose"
    assert mtp.name == "mtp" and mtp.info.model == "Qwen/Qwen3-8B"
    assert mtp.runtime.version == "0.29.0" and mtp.pin_line == 10
    assert mtp.hardware.capability == (12, 0) and listed.hardware.gpu == "NVIDIA GeForce RTX 5090"
    assert [(e.name, e.value, e.line) for e in mtp.env] == [("VLLM_USE_V2_MODEL_RUNNER", "1", 6)]
    assert flags(mtp) == [("--max-model-len", None, ("16384",), 12, 21),
                          ("--speculative-config", None, ('{"method": "mtp", "num_speculative_tokens": 3}',), 13, 7)]
    assert listed.runtime.revision == "98dff2a81d747d1dba01a47f939f48c3526d4206" and listed.runtime.version is None
    assert [(e.name, e.value) for e in listed.env] == [("HF_HOME", "/models")]  # a bare NAME is the host's: unknown
    assert flags(listed) == [("--max-num-seqs", None, ("4",), 19, 33)]
    assert custom.runtime.version is None and [(e.name, e.value) for e in custom.env] == [("FOO", "1")]
    assert flags(custom) == [("--max-model-len", None, ("2048",), 23, 35)]


def test_compose_without_a_vllm_service_is_invalid_data(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compose.yml").write_text("services:\n  db:\n    image: postgres:16\n")
    result = cli("check", "compose.yml")
    assert result.code == EXIT_DATA and result.err == (
        "srcreview: error: compose.yml:2: no service runs `vllm serve` (a vllm/vllm-openai image, or a command that "
        "runs it)\n")


@pytest.mark.parametrize("text, message", [
    ("vllm serve m --speculative-config '{\n", "r.sh:1: unterminated single quote"),
    ("services:\n  a: [\n", "r.sh:3: malformed YAML"),
    ("# srcreview: gpu=x colour=red\nvllm serve m\n", "r.sh:1: srcreview comment: 'colour=red' is not one of"),
    ("# srcreview: compute_capability=twelve\nvllm serve m\n", "r.sh:1: srcreview compute_capability: must look"),
    ("vllm serve m extra --x 1\n", "r.sh:1: unexpected word 'extra'"),
    ("services:\n  a:\n    image: vllm/vllm-openai:v0.29.0\n    x-srcreview: {gpu: [1]}\n",
     "r.sh:4: x-srcreview.gpu must be a string"),
    ("a: &a [*a, *a]\nservices: *a\n", "r.sh"),
    ("echo hello\n", "r.sh:1: not a recipe"),
    ("vllm serve m --max-model-len \x1b[2J\n", "r.sh:1: --max-model-len contains the control character U+001B"),
])
def test_malformed_launch_files_are_one_line_data_errors(text, message):
    with pytest.raises(DataError) as caught:
        read_recipes(text, "r.sh")
    assert caught.value.message.startswith(message), caught.value.message
    assert "\n" not in caught.value.message


def test_alias_bomb_is_refused():
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)) + "services: *i\n"
    with pytest.raises(DataError, match="expands to more than"):
        read_recipes(text, "bomb.yml")


def test_format_is_chosen_by_content_not_by_extension(tmp_path):
    (tmp_path / "launch.txt").write_text("vllm serve m --max-model-len 8\n")
    (tmp_path / "recipe.yaml").write_text('[recipe]\nname = "toml after all"\n')
    (tmp_path / "docker-compose.toml").write_text(COMPOSE)
    assert load_recipes(tmp_path / "launch.txt")[0].format == "command-line"
    assert load_recipes(tmp_path / "recipe.yaml")[0].format == "toml"
    assert len(load_recipes(tmp_path / "docker-compose.toml")) == 3


def test_looks_like_recipe_is_the_discovery_predicate(tmp_path):
    files = {
        "r.toml": '[recipe]\nname = "x"\n',
        "compose.yml": COMPOSE,
        "config.yaml": "model: m\nmax-model-len: 8\n",
        "serve.sh": "#!/bin/sh\nvllm serve m\n",
        "Dockerfile": "FROM vllm/vllm-openai:v0.29.0\nCMD [\"m\"]\n",
        "README.md": "Run it with:\n\n    vllm serve m --max-model-len 8\n",
        "workflow.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n",
        "other.toml": '[tool.x]\na = 1\n',
        "db-compose.yml": "services:\n  db:\n    image: postgres:16\n",
        "notes.py": "print('vllm serve')\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "dir.toml").mkdir()
    found = sorted(name for name in [*files, "dir.toml", "missing.toml"] if looks_like_recipe(tmp_path / name))
    assert found == ["Dockerfile", "compose.yml", "config.yaml", "r.toml", "serve.sh"]
