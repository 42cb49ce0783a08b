"""A GPU the recipe names decides its compute capability where NVIDIA's list does (srcreview.model.gpus)."""

from __future__ import annotations

import pytest

from srcreview.model.gpus import capability_of
from srcreview.model.recipe.model import Hardware


@pytest.mark.parametrize(("name", "capability"), [
    ("NVIDIA H100 80GB HBM3", "9.0"), ("H100-SXM5", "9.0"), ("NVIDIA GH200", "9.0"), ("NVIDIA H20", "9.0"),
    ("NVIDIA hopper", "9.0"), ("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA A10G", "8.6"), ("NVIDIA L40S", "8.9"),
    ("NVIDIA GeForce RTX 5090", "12.0"), ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
    ("rtx_pro_5000_4x", "12.0"), ("NVIDIA B200", "10.0"), ("dgx_station_gb300", "10.3"),
    ("dgx_spark_gb10", "12.1"), ("NVIDIA RTX 6000 Ada Generation", "8.9"), ("Tesla T4", "7.5"),
    ("Tesla V100-SXM2-16GB", "7.0"),
])
def test_a_listed_gpu_has_its_capability(name, capability):
    assert capability_of(name)[0] == capability


@pytest.mark.parametrize("name", [
    "NVIDIA blackwell",  # B200 (10.0) or RTX PRO 6000 (12.0)
    "Quadro RTX 6000",  # Turing; the RTX A6000, RTX 6000 Ada and RTX PRO 6000 are others
    "NVIDIA GPU", "AMD Instinct MI300X", "", None,
])
def test_a_name_that_does_not_fix_one_capability_leaves_it_open(name):
    assert capability_of(name) is None


def test_the_recipes_own_capability_wins_and_a_derived_one_says_where_it_comes_from():
    stated = Hardware(gpu="NVIDIA H100", compute_capability="8.0")
    assert stated.with_known_capability() is stated
    derived = Hardware(gpu="NVIDIA H100").with_known_capability()
    assert (derived.capability, derived.compute_capability_from) == (
        (9, 0), "NVIDIA's published compute capability of H100")
