"""A model config read from a local directory, as vLLM reads `--model /path/to/model`."""

from __future__ import annotations

import hashlib

from srcreview.hfconfig.facts import ConfigFile, ModelFacts
from srcreview.hfconfig.files import (
    CONFIG_FILE,
    MODEL_FILES,
    ConfigUnavailable,
    parse_document,
)
from srcreview.hfconfig.readfile import read_regular_file
from srcreview.hfconfig.ref import ModelRef


def read_local_config(ref: ModelRef) -> ModelFacts:
    """The config files present in the directory of `ref`; ConfigUnavailable when config.json
    is missing or any present file is unreadable or not a JSON object."""
    directory = ref.path
    if directory is None or not directory.is_dir():
        raise ConfigUnavailable("not a directory here")
    files, documents = [], {}
    for name in MODEL_FILES:
        raw = read_regular_file(directory / name, name)
        if raw is None:
            if name == CONFIG_FILE:
                raise ConfigUnavailable(f"no {CONFIG_FILE} in the directory")
            continue
        documents[name] = parse_document(name, raw)
        files.append(ConfigFile(path=name, sha256=hashlib.sha256(raw).hexdigest(), size=len(raw)))
    return ModelFacts(source="local", ref=ref.text, kind="local", files=tuple(files), documents=documents)
