"""The compute capability of an NVIDIA GPU named by the recipe, from NVIDIA's published list
(developer.nvidia.com/cuda-gpus): a hardware fact, not vLLM's, so it lives here and not in
the tree.

A recipe that says `gpu = "NVIDIA H100"` and no `compute_capability` means 9.0; left open,
every capability check of the pinned source (backends, kernels, quantization) stays
undecided. A name decides a capability only when the entries it fits agree on one: "RTX 6000"
is Turing, Ampere, Ada or Blackwell depending on the rest of its name, and "Blackwell" alone
is 10.0 (B200) or 12.0 (RTX PRO 6000), so both stay open.
"""

from __future__ import annotations

import re

# (the words a name must contain, in any order; the capability). Words are lower-case
# alphanumerics: "NVIDIA A100-SXM4-80GB" has a100, sxm4, 80gb.
_ENTRIES: tuple[tuple[tuple[str, ...], str], ...] = (
    # Blackwell
    (("b100",), "10.0"), (("b200",), "10.0"), (("gb200",), "10.0"),
    (("b300",), "10.3"), (("gb300",), "10.3"),
    (("gb10",), "12.1"), (("dgx", "spark"), "12.1"),
    (("rtx", "pro", "6000"), "12.0"), (("rtx", "pro", "5000"), "12.0"),
    (("rtx", "pro", "4500"), "12.0"), (("rtx", "pro", "4000"), "12.0"),
    (("rtx", "5090"), "12.0"), (("rtx", "5080"), "12.0"), (("rtx", "5070"), "12.0"), (("rtx", "5060"), "12.0"),
    # Hopper
    (("h100",), "9.0"), (("h200",), "9.0"), (("h800",), "9.0"), (("h20",), "9.0"), (("gh200",), "9.0"),
    (("hopper",), "9.0"),
    # Ada Lovelace
    (("l4",), "8.9"), (("l20",), "8.9"), (("l40",), "8.9"), (("l40s",), "8.9"), (("ada",), "8.9"),
    (("rtx", "4090"), "8.9"), (("rtx", "4080"), "8.9"), (("rtx", "4070"), "8.9"), (("rtx", "4060"), "8.9"),
    # Ampere
    (("a100",), "8.0"), (("a800",), "8.0"), (("a30",), "8.0"),
    (("a10",), "8.6"), (("a10g",), "8.6"), (("a40",), "8.6"), (("rtx", "a6000"), "8.6"), (("rtx", "a5000"), "8.6"),
    (("rtx", "3090"), "8.6"), (("rtx", "3080"), "8.6"), (("rtx", "3070"), "8.6"), (("rtx", "3060"), "8.6"),
    # Turing, Volta
    (("t4",), "7.5"), (("v100",), "7.0"),
)
_SOURCE = "NVIDIA's published compute capability of {entry}"


def capability_of(gpu: str | None) -> tuple[str, str] | None:
    """(capability "major.minor", where it comes from) for a GPU name, or None when the name fits
    no entry or entries that disagree. The most specific fit decides (`RTX PRO 6000 Blackwell`
    over a generation word)."""
    words = set(re.findall(r"[a-z0-9]+", (gpu or "").lower()))
    fits = [(needed, cap) for needed, cap in _ENTRIES if set(needed) <= words]
    if not fits:
        return None
    most = max(len(needed) for needed, _ in fits)
    best = [(needed, cap) for needed, cap in fits if len(needed) == most]
    if len({cap for _, cap in best}) != 1:
        return None
    return best[0][1], _SOURCE.format(entry=" ".join(best[0][0]).upper())
