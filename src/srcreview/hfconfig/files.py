"""The model files srcreview reads, in one place, and how one of them becomes a JSON object.

These are the files vLLM builds its model and quantization config from at start-up:
`config.json` (required), the generation config, and the quantization files that vLLM's
config loader or its quantization methods look for. Nothing else is read or downloaded: no
weights, no tokenizer, no code.
"""

from __future__ import annotations

import json

from srcreview.core.jsonvalue import finite_float
from srcreview.core.userfile import MAX_INT_DIGITS  # what Python converts to an int (4,300 digits)

CONFIG_FILE = "config.json"
OPTIONAL_FILES = (
    "generation_config.json",
    "hf_quant_config.json",  # ModelOpt; vLLM's config loader tries it for every model
    "quantize_config.json",  # GPTQ, AWQ, MoE-WNA16
    "quant_config.json",  # AWQ
    "quantization_config.json",  # INC
    "params.json",  # a Mistral-format checkpoint: vLLM may read its config (and quantization) from it instead
)
MISTRAL_PARAMS_FILE = "params.json"
MODEL_FILES = (CONFIG_FILE, *OPTIONAL_FILES)
# the file names the libraries vLLM imports spell as constants (transformers/utils/__init__.py:
# `CONFIG_NAME = "config.json"`, the file srcreview reads as CONFIG_FILE)
EXTERNAL_CONSTANTS = {"transformers.utils.CONFIG_NAME": CONFIG_FILE}
MAX_FILE_BYTES = 8 << 20  # a large model's config.json is tens of KB; quantization ignore lists reach a few MB


class ConfigUnavailable(Exception):
    """The model config cannot be obtained; `reason` is the one line the review shows."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse_document(name: str, raw: bytes) -> dict:
    """The JSON object in `raw` (file `name`), or ConfigUnavailable saying what is wrong with it."""
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigUnavailable(f"{name} is over the {MAX_FILE_BYTES}-byte limit")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigUnavailable(f"{name} is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise ConfigUnavailable(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except _NonStandardConstant as exc:
        raise ConfigUnavailable(f"{name} is not valid JSON: {exc.args[0]} is not a JSON value") from None
    except _HugeInteger as exc:
        raise ConfigUnavailable(f"{name} holds an integer of {exc.args[0]} digits (at most {MAX_INT_DIGITS})") from None
    except RecursionError:
        raise ConfigUnavailable(f"{name} is nested too deeply") from None
    except ValueError as exc:  # a number past float's range (finite_float): `Infinity` in every JSON written after
        raise ConfigUnavailable(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigUnavailable(f"{name} is not a JSON object")
    return data


class _NonStandardConstant(ValueError):
    pass




class _HugeInteger(ValueError):
    pass


def _bounded_int(text: str) -> int:
    """json's integers, refused past MAX_INT_DIGITS digits: Python converts no more (a longer
    one is a bare ValueError from json)."""
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _HugeInteger(digits)
    return int(text)


def _refuse_constant(name: str):
    """NaN and Infinity are Python's JSON extensions: the review's own JSON output could not carry them."""
    raise _NonStandardConstant(name)
