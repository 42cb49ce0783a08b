"""Model configs from local directories written here: read directly, bounded, or said unknown once."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from hub_support import (
    GEMMA4_ASSISTANT,
    GEMMA4_TARGET,
    MULTI_LAYER_MTP,
    MULTI_LAYER_QUANT,
    QWEN35_GENERATION,
    QWEN35_MTP,
    dumps,
    write_model,
)

from srcreview.hfconfig import (
    MODEL_CONFIG_UNKNOWN,
    obtain_model_config,
    parse_model_ref,
)
from srcreview.hfconfig.files import MAX_FILE_BYTES


def _obtain(tmp_path, text):
    return obtain_model_config(parse_model_ref(text, base_dir=tmp_path))


def test_a_qwen35_mtp_directory(tmp_path):
    write_model(tmp_path / "models" / "qwen", {"config.json": QWEN35_MTP, "generation_config.json": QWEN35_GENERATION})
    facts = _obtain(tmp_path, "./models/qwen")
    assert (facts.source, facts.ref, facts.kind, facts.known, facts.tags) == ("local", "./models/qwen", "local", True, ())
    assert [(f.path, f.sha256, f.size, f.commit) for f in facts.files] == [
        (name, hashlib.sha256(dumps(doc)).hexdigest(), len(dumps(doc)), None)
        for name, doc in (("config.json", QWEN35_MTP), ("generation_config.json", QWEN35_GENERATION))]
    assert facts.get("model_type") == "qwen3_5" and facts.get("num_nextn_predict_layers") == 1
    assert facts.get("text_config.model_type") == "qwen3_5_text" and facts.get("text_config.mtp_num_hidden_layers") == 1
    assert facts.get("temperature", file="generation_config.json") == 0.6
    assert facts.get("text_config.absent", "default") == "default" and not facts.has("text_config.absent")
    assert facts.decided("text_config.absent") and facts.decided("x", file="hf_quant_config.json")  # known absent
    assert facts.origin("text_config.model_type") == "config.json" and facts.origin("absent") is None
    assert str(tmp_path) not in json.dumps(facts.to_json())


def test_a_gemma4_target_and_its_assistant_draft(tmp_path):
    write_model(tmp_path / "gemma-4", {"config.json": GEMMA4_TARGET})
    write_model(tmp_path / "gemma-4-assistant", {"config.json": GEMMA4_ASSISTANT})
    target, draft = _obtain(tmp_path, "gemma-4"), _obtain(tmp_path, "gemma-4-assistant")
    assert (target.get("model_type"), draft.get("model_type")) == ("gemma4", "gemma4_assistant")
    assert draft.get("text_config.num_kv_shared_layers") == 0 and draft.ref == "gemma-4-assistant"


def test_a_multi_layer_mtp_directory_with_a_quantization_file(tmp_path):
    write_model(tmp_path / "mtp3", {"config.json": MULTI_LAYER_MTP, "hf_quant_config.json": MULTI_LAYER_QUANT})
    facts = _obtain(tmp_path, "./mtp3")
    assert facts.get("num_nextn_predict_layers") == 3 and facts.get("quantization_config.quant_method") == "fp8"
    assert [f.path for f in facts.files] == ["config.json", "hf_quant_config.json"]
    assert facts.get("quantization.quant_algo", file="hf_quant_config.json") == "FP8"


def test_the_same_directory_gives_byte_identical_facts(tmp_path):
    write_model(tmp_path / "m", {"config.json": QWEN35_MTP, "generation_config.json": QWEN35_GENERATION})
    first, second = (json.dumps(_obtain(tmp_path, "./m").to_json()) for _ in range(2))
    assert first == second


def test_a_hub_snapshot_directory_of_links_is_read(tmp_path):
    """huggingface_hub's snapshot directories hold links to blobs: vLLM reads them, so do we."""
    write_model(tmp_path / "blobs", {"abc": QWEN35_MTP})
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "config.json").symlink_to(tmp_path / "blobs" / "abc")
    assert _obtain(tmp_path, "./snap").get("model_type") == "qwen3_5"


def _fifo(path):
    os.mkfifo(path)


@pytest.mark.parametrize("files, make, reason", [
    (None, None, "not a directory here"),
    ({"generation_config.json": QWEN35_GENERATION}, None, "no config.json in the directory"),
    ({"config.json": b'{"model_type": "qwen3_5",\n  "architectures": [}\n'}, None,
     "config.json is not valid JSON: Expecting value at line 2 column 21"),
    ({"config.json": b"[1, 2]"}, None, "config.json is not a JSON object"),
    ({"config.json": b'{"rope_theta": NaN}'}, None, "config.json is not valid JSON: NaN is not a JSON value"),
    ({"config.json": b'\xff{}'}, None, "config.json is not valid UTF-8 (byte 0)"),
    ({"config.json": b"[" * 100_000}, None, "config.json is nested too deeply"),
    ({"config.json": b" " * MAX_FILE_BYTES + b"{}"}, None, f"config.json is over the {MAX_FILE_BYTES}-byte limit"),
    ({"config.json": QWEN35_MTP, "quant_config.json": b"{"}, None,
     "quant_config.json is not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ({}, lambda d: _fifo(d / "config.json"), "config.json is not a regular file"),
    ({}, lambda d: (d / "config.json").mkdir(), "config.json is not a regular file"),
    ({"config.json": QWEN35_MTP}, lambda d: _fifo(d / "generation_config.json"),
     "generation_config.json is not a regular file"),
])
def test_an_unavailable_config_is_said_once_and_never_raised(tmp_path, files, make, reason):
    directory = tmp_path / "m"
    if files is not None:
        write_model(directory, files)
    if make is not None:
        make(directory)
    facts = _obtain(tmp_path, "./m")
    assert facts.unknown_reason == f"model config of ./m: {reason}"
    assert (facts.known, facts.source, facts.tags, facts.files, facts.documents) == (
        False, "none", (MODEL_CONFIG_UNKNOWN,), (), {})
    assert not facts.decided("model_type") and facts.get("model_type") is None and facts.origin("model_type") is None


def test_reading_a_local_config_never_imports_huggingface_hub(tmp_path):
    write_model(tmp_path / "m", {"config.json": QWEN35_MTP})
    code = ("import sys\nfrom srcreview.hfconfig import obtain_model_config, parse_model_ref\n"
            f"facts = obtain_model_config(parse_model_ref('./m', base_dir={str(tmp_path)!r}))\n"
            "print(facts.get('model_type'), 'huggingface_hub' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["qwen3_5", "False"]


def test_the_cli_help_never_imports_huggingface_hub():
    code = ("import sys\nfrom srcreview.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('huggingface_hub' in sys.modules, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stderr.strip() == "False"


def test_the_directory_listing_is_what_pathlib_sees_there(tmp_path):
    from pathlib import Path

    from srcreview.hfconfig.local import list_directory

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "original").mkdir()
    (tmp_path / "original" / "params.json").write_text("{}")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "x.bin").write_text("")
    os.symlink(outside, tmp_path / "linked")  # a link to a directory: not entered, as rglob does not
    os.symlink(tmp_path / "config.json", tmp_path / "alias.json")
    os.symlink(tmp_path / "gone", tmp_path / "broken")  # does not exist, for exists() as for rglob's is_file
    listing = list_directory(tmp_path)
    assert listing == (("alias.json", "file"), ("config.json", "file"), ("linked", "opaque"),
                       ("original", "dir"), ("original/params.json", "file"))
    # what pathlib answers for each entry it yields, and no entry more
    files = sorted(str(p.relative_to(tmp_path)) for p in Path(tmp_path).rglob("*") if p.is_file())
    assert [rel for rel, kind in listing if kind == "file"] == [f for f in files if not f.startswith("linked/")]


def test_a_local_model_binds_its_listing_for_the_review(tmp_path):
    from srcreview.hfconfig import obtain_model_config, parse_model_ref

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({"model_type": "llama"}))
    facts = obtain_model_config(parse_model_ref("./m", base_dir=tmp_path))
    assert facts.listing == (("config.json", "file"),)
    assert "listing" not in json.dumps(facts.to_json())  # never in an output
