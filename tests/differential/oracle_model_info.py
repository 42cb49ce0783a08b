"""vLLM's own `_ModelInfo` of some architectures, as JSON, run in the oracle venv of a release.

    <venv>/bin/python tests/differential/oracle_model_info.py OUT.json ARCH...

Prepared as the oracle prepares a case (oracle_vllm._prepare: stub extension modules, the CUDA
platform, the inspection in-process), then `_ModelInfo.from_model_cls(cls)` on each
architecture's registered class: what `ModelConfig` asks the registry. Also `dir()` of
`torch.nn.Module`, for the stub srcreview keeps of it (srcreview.interp.stubs).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle_vllm  # noqa: E402


def main(out: str, archs: list[str]) -> int:
    oracle_vllm._prepare((8, 0), "NVIDIA A100-SXM4-80GB")
    import torch
    from vllm.model_executor.models.registry import ModelRegistry, _ModelInfo

    infos = {}
    for arch in archs:
        cls = ModelRegistry.models[arch].load_model_cls()
        infos[arch] = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(_ModelInfo.from_model_cls(cls)).items()}
    module_names = sorted(n for n in dir(torch.nn.Module) if not n.startswith("_"))
    Path(out).write_text(json.dumps({"model_info": infos, "torch_module_public_names": module_names,
                                     "torch": torch.__version__}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
