"""The model's own config, as vLLM reads it at start-up: from a local directory or the Hugging Face Hub."""

from srcreview.hfconfig.ref import ModelRef, parse_model_ref

__all__ = ["ModelRef", "parse_model_ref"]
