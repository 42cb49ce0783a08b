"""The model registry's answers (srcreview.vllm.model_registry) against vLLM's own: for each
architecture, `_ModelInfo.from_model_cls(cls)` as the real wheel computes it in the oracle venv
(oracle_model_info.py) and as srcreview evaluates it from the pinned source. Every field
srcreview decides must be vLLM's value; the ones it leaves open are counted. Also the stub of
`torch.nn.Module` (srcreview.vllm.stubs) against the installed torch.

    .venv/bin/pytest -m differential tests/differential/test_model_info.py -s
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle_env  # noqa: E402

RELEASES = ("0.29.0", "0.33.0")
ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM", "DeepseekV3ForCausalLM", "Qwen2VLForConditionalGeneration",
         "JambaForCausalLM", "BertModel", "MistralForCausalLM", "Gemma3ForCausalLM")
# what a plain decoder's start-up reads of it: decided for the llama-like control recipes
READ_AT_STARTUP = ("is_text_generation_model", "is_pooling_model", "supports_multimodal", "is_hybrid",
                   "is_attention_free", "has_inner_state", "supports_pp", "attn_type")


@pytest.mark.differential
@pytest.mark.parametrize("release", RELEASES)
def test_model_info_as_vllm_computes_it(release, vllm_release, tmp_path):
    from srcreview.index import Index
    from srcreview.interp.interpreter import analyzer
    from srcreview.interp.values import Const, Derived
    from srcreview.vllm import stubs
    from srcreview.vllm.runtime import ENTRY_POINTS_KEY

    if not oracle_env.is_ready(release):
        pytest.fail(f"no oracle venv for vLLM {release}: run tests/differential/run.py {release} once", pytrace=False)
    out = tmp_path / "model_info.json"
    subprocess.run([str(oracle_env.venv_python(release)), str(Path(__file__).with_name("oracle_model_info.py")),
                    str(out), *ARCHS], check=True, capture_output=True, timeout=600)
    truth = json.loads(out.read_text())
    assert set(truth["torch_module_public_names"]) == set(stubs.PUBLIC_NAMES["torch.nn.Module"]), truth["torch"]

    index = Index(vllm_release(release))
    an = analyzer(index, {ENTRY_POINTS_KEY: ()})
    lines, wrong, open_ = [], [], []
    for arch in ARCHS:
        info = an.evaluate_text("vllm.model_executor.models.registry",
                                f"_ModelInfo.from_model_cls(ModelRegistry.models[{arch!r}].load_model_cls())")
        assert isinstance(info, Derived), (arch, info)
        for name, real in truth["model_info"][arch].items():
            mine = an.force(info.override(name)) if info.override(name) is not None else None
            if isinstance(mine, Const):
                value = list(mine.value) if isinstance(mine.value, tuple) else mine.value
                if value != real:
                    wrong.append(f"{arch}.{name}: srcreview {value!r}, vLLM {real!r}")
            else:
                open_.append(f"{arch}.{name}")
                if arch == "LlamaForCausalLM" and name in READ_AT_STARTUP:
                    wrong.append(f"{arch}.{name}: left open ({mine})")
        lines.append(f"{arch}: {sum(1 for n in truth['model_info'][arch] if f'{arch}.{n}' not in open_)}"
                     f"/{len(truth['model_info'][arch])} decided")
    print(f"vLLM {release} (torch {truth['torch']}): " + "; ".join(lines))
    print("  open: " + ", ".join(open_))
    assert not wrong, "\n".join(wrong)
