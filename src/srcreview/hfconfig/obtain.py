"""Obtain a model's config from wherever its reference points, never failing the review for it."""

from __future__ import annotations

from srcreview.hfconfig.facts import ModelFacts, unknown_facts
from srcreview.hfconfig.files import ConfigUnavailable
from srcreview.hfconfig.ref import ModelRef


def obtain_model_config(ref: ModelRef, *, offline: bool | None = None) -> ModelFacts:
    """The config of `ref` (a local directory or a Hub id), or facts that say once why it is
    unknown (tag `model-config-unknown`). `offline=True` keeps Hub refs to the huggingface_hub
    cache; None follows HF_HUB_OFFLINE. Never raises for an unavailable config."""
    try:
        if ref.kind == "local":
            from srcreview.hfconfig.local import read_local_config

            return read_local_config(ref)
        from srcreview.hfconfig.hub import read_hub_config

        return read_hub_config(ref, offline=offline)
    except ConfigUnavailable as exc:
        return unknown_facts(f"model config of {ref.shown}: {exc.reason}", ref=ref.text, kind=ref.kind,
                             revision=ref.revision)
