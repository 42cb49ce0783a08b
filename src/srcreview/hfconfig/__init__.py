"""The model's own config, as vLLM reads it at start-up: from a local directory or the Hugging Face Hub.

vLLM chooses draft paths from the model's config (`model_type`, `num_nextn_predict_layers`, ...).
This package obtains those facts and never fails a review for them: `parse_model_ref` reads what
a recipe names, `obtain_model_config` reads config files only (never weights),
`parse_model_overrides` / `apply_overrides` lay the recipe's own `[model]` values over them.
huggingface_hub is imported only when a Hub config is actually fetched.
"""

from srcreview.hfconfig.facts import (
    MODEL_CONFIG_UNKNOWN,
    AppliedOverride,
    ConfigFile,
    ModelFacts,
    unknown_facts,
)
from srcreview.hfconfig.files import CONFIG_FILE, MODEL_FILES, OPTIONAL_FILES
from srcreview.hfconfig.obtain import obtain_model_config
from srcreview.hfconfig.overrides import (
    ModelOverrides,
    Override,
    apply_overrides,
    parse_model_overrides,
)
from srcreview.hfconfig.ref import ModelRef, parse_model_ref

__all__ = [
    "AppliedOverride", "CONFIG_FILE", "ConfigFile", "MODEL_CONFIG_UNKNOWN", "MODEL_FILES", "ModelFacts",
    "ModelOverrides", "ModelRef", "OPTIONAL_FILES", "Override", "apply_overrides", "obtain_model_config",
    "parse_model_overrides", "parse_model_ref", "unknown_facts",
]
