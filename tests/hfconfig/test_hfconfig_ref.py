"""What a recipe's `model` names: a Hub id (with a revision) or a local directory, else exit 65."""

from __future__ import annotations

import json

import pytest

from srcreview.core.errors import EXIT_DATA, DataError
from srcreview.hfconfig import parse_model_ref


@pytest.mark.parametrize("text, revision, repo_id, expect_revision", [
    ("Qwen/Qwen3.5-27B", None, "Qwen/Qwen3.5-27B", None),
    ("gpt2", None, "gpt2", None),
    ("google/gemma-4-e2b_it.v1", None, "google/gemma-4-e2b_it.v1", None),
    ("Qwen/Qwen3.5-27B@main", None, "Qwen/Qwen3.5-27B", "main"),
    ("org/name@refs/pr/12", None, "org/name", "refs/pr/12"),
    ("org/name", "0123456789abcdef0123456789abcdef01234567", "org/name", "0123456789abcdef0123456789abcdef01234567"),
    ("org/name@v1.0", "v1.0", "org/name", "v1.0"),  # the same revision twice is no conflict
])
def test_hub_ids(tmp_path, text, revision, repo_id, expect_revision):
    ref = parse_model_ref(text, revision=revision, base_dir=tmp_path)
    assert (ref.kind, ref.repo_id, ref.revision, ref.text, ref.path) == ("hub", repo_id, expect_revision, text, None)
    assert ref.shown == (f"{repo_id}@{expect_revision}" if expect_revision else repo_id)


@pytest.mark.parametrize("text, where", [
    ("./models/qwen", "models/qwen"),
    ("../up/qwen", "../up/qwen"),
    ("models/qwen", "models/qwen"),  # a Hub-id shape, but a directory beside the recipe: vLLM's order
    (".", "."),
])
def test_local_directories_resolve_against_the_recipe_directory(tmp_path, text, where):
    base = tmp_path / "recipes"
    (base / "models" / "qwen").mkdir(parents=True)
    ref = parse_model_ref(text, base_dir=base)
    assert ref.kind == "local" and ref.text == text
    assert ref.path == (base / where).resolve()


def test_absolute_and_home_paths_are_local_even_when_missing(tmp_path):
    assert parse_model_ref(str(tmp_path / "absent")).path == tmp_path / "absent"
    home = parse_model_ref("~/models/x")
    assert home.kind == "local" and not str(home.path).startswith("~")


def test_the_resolved_path_never_reaches_a_serialisation_or_repr(tmp_path):
    ref = parse_model_ref("./m", base_dir=tmp_path)
    assert str(tmp_path) not in json.dumps(ref.model_dump(mode="json")) + repr(ref) + str(ref) + ref.shown


@pytest.mark.parametrize("text, revision, message", [
    ("", None, "Hugging Face Hub id (org/name) or a local directory"),
    (" org/name", None, "leading or trailing spaces"),
    ("https://huggingface.co/org/name", None, "is a URL"),
    ("a/b/c", None, "neither a Hugging Face Hub id"),
    ("org/na--me", None, "neither a Hugging Face Hub id"),
    ("-org/name", None, "neither a Hugging Face Hub id"),
    ("org/" + "n" * 100, None, "at most 96 characters"),
    ("org/name@", None, "is not a branch, tag or commit id"),
    ("org/name@../main", None, "is not a branch, tag or commit id"),
    ("org/name", "-rf", "is not a branch, tag or commit id"),
    ("org/name@v1", "v2", "pins revision 'v1' but the recipe's revision is 'v2'"),
    ("./local", "main", "applies to a Hub id, not to the local directory './local'"),
])
def test_anything_else_is_invalid_recipe_data(tmp_path, text, revision, message):
    with pytest.raises(DataError) as caught:
        parse_model_ref(text, revision=revision, base_dir=tmp_path, where="recipe.toml:3")
    assert caught.value.exit_code == EXIT_DATA
    assert str(caught.value).startswith("recipe.toml:3: ") and message in str(caught.value)


def test_a_home_path_without_a_home_is_invalid_data(monkeypatch):
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    with pytest.raises(DataError, match="no home directory to expand"):
        parse_model_ref("~/models/x")


REPO_IDS = ["org/name", "name", "a.b-c_d", "./model", "../m", "/abs/path/model", "org/name/sub", ".hidden",
            "name.", "-name", "a--b", "a..b", "repo.git", "", "x" * 97, "org/" + "y" * 96, "café", "org/ré",
            "org//name", "org/", "/name", "model/", "./", "."]


@pytest.mark.parametrize("text", REPO_IDS)
def test_a_repo_id_refused_here_is_refused_by_huggingface_hub(text):
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    from srcreview.hfconfig.ref import hub_refuses

    if hub_refuses(text):  # only what the Hub's own validator refuses may be taken as refused
        with pytest.raises(HFValidationError):
            validate_repo_id(text)


def test_the_local_paths_vllm_passes_are_refused_and_hub_ids_are_not():
    from srcreview.hfconfig.ref import hub_refuses

    assert all(hub_refuses(t) for t in ("./model", "/abs/path/model", "../m", "org/name/sub"))
    assert not any(hub_refuses(t) for t in ("org/name", "model", "Qwen/Qwen3-0.6B"))


def test_the_functions_named_as_validated_raise_a_value_error_before_they_run(tmp_path):
    # called for real: a refused repo id never reaches the cache or the network
    import importlib

    from srcreview.hfconfig.ref import HUB_VALIDATED

    for name in sorted(HUB_VALIDATED):
        module, _, function = name.rpartition(".")
        call = getattr(importlib.import_module(module), function)
        with pytest.raises(ValueError):
            call(repo_id="./model", filename="config.json", cache_dir=str(tmp_path))
