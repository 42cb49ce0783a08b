"""Start-up raises behind Python constructs the interpreter decides (fixtures/vllm_snippets/
startup_*): each pattern both ways, refuted where the recipe's values decide the raise is not
reached, and still open (or certain) where they do not. Lines are found by their `# mark:`."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from fixture_repos import FIXTURES
from recipe_support import construction_raises, fixture_tree, marked_line, module_index

from srcreview.index import Index
from srcreview.interp.interpreter import analyzer
from srcreview.vllm.construction import open_site
from srcreview.vllm.runtime import config_bindings

marked, raises = marked_line, construction_raises


# -- containers ------------------------------------------------------------------------------
OPS = "vllm/config/ops.py"


@pytest.fixture(scope="module")
def default_ops():
    return raises("startup_containers", {})


@pytest.mark.parametrize("label", ["op-syntax", "pass-type", "base-modes", "conflict", "after-append"])
def test_a_loop_or_comprehension_over_an_empty_default_never_raises(default_ops, label):
    assert (OPS, marked("startup_containers", OPS, label)) not in default_ops


def test_a_list_the_recipe_fills_is_walked_item_by_item():
    found = raises("startup_containers", {"ops": ["+a", "x"]})
    assert found.get((OPS, marked("startup_containers", OPS, "op-syntax"))) == "certain"
    assert raises("startup_containers", {"ops": ["+a", "-a"]}).get(
        (OPS, marked("startup_containers", OPS, "conflict"))) == "certain"
    clean = raises("startup_containers", {"ops": ["+a", "none"]})
    for label in ("op-syntax", "base-modes", "conflict"):
        assert (OPS, marked("startup_containers", OPS, label)) not in clean
    assert raises("startup_containers", {"ops": ["all", "none"]}).get(
        (OPS, marked("startup_containers", OPS, "base-modes"))) == "certain"


@pytest.mark.parametrize("label", ["after-alias-append", "after-setitem", "after-pop"])
def test_a_container_changed_in_place_is_not_the_constant_read_before(default_ops, label):
    assert default_ops.get((OPS, marked("startup_containers", OPS, label))) == "open"


def test_an_append_the_recipe_reaches_puts_the_item_in_the_list_the_loop_reads():
    # grow_extra decides the append: the list holds "bad" and the loop over it raises
    found = raises("startup_containers", {"grow_extra": True})
    assert found.get((OPS, marked("startup_containers", OPS, "after-append"))) == "certain"


FUSED = "vllm/config/fused.py"


@pytest.mark.parametrize("label", ["fused-syntax", "fused-modes", "fused-conflict"])
def test_checks_over_a_list_appended_to_under_an_undecided_condition_hold_for_every_item_it_may_hold(label):
    # `+rope` is appended (or not) as the host decides: every list it may be passes each check
    assert (FUSED, marked("startup_containers", FUSED, label)) not in raises("startup_containers", {})


def test_an_item_appended_under_an_undecided_condition_that_fails_a_check_leaves_it_open():
    assert raises("startup_containers", {}).get((FUSED, marked("startup_containers", FUSED, "loose-syntax"))) == "open"


@pytest.mark.parametrize(("settings", "label"), [({"fused_ops": ["rope"]}, "fused-syntax"),
                                                 ({"fused_ops": ["all", "none"]}, "fused-modes")])
def test_a_recipe_item_that_fails_a_check_on_a_list_a_hook_may_grow_is_not_refuted(settings, label):
    # the recipe's list may be rewritten by the hook: the raise on it is open, not certain
    assert raises("startup_containers", settings).get((FUSED, marked("startup_containers", FUSED, label))) == "open"


# -- what the engine passes to a nested config ----------------------------------------------
PATHS, OFFLOAD, DEVICE = "startup_engine_paths", "vllm/config/offload.py", "vllm/config/device.py"


@pytest.mark.parametrize("settings", [{}, {"group_size": 2}])
def test_a_nested_config_holds_the_engine_default_the_builder_passes(settings):
    # the engine passes step=1 (its own default), not PrefetchConfig's declared 0
    assert (OFFLOAD, marked(PATHS, OFFLOAD, "prefetch-step")) not in raises(PATHS, settings)


@pytest.mark.parametrize("settings", [{"group_size": 2, "step": 0}, {"offload_backend": "prefetch", "step": 0}])
def test_a_nested_config_holds_the_recipe_value_the_builder_passes(settings):
    assert raises(PATHS, settings).get((OFFLOAD, marked(PATHS, OFFLOAD, "prefetch-step"))) == "certain"


def test_a_value_passed_through_cast_is_the_value_itself():
    assert (DEVICE, marked(PATHS, DEVICE, "device")) not in raises(PATHS, {})
    assert raises(PATHS, {"device": "tpu"}).get((DEVICE, marked(PATHS, DEVICE, "device"))) == "certain"


def test_a_nested_field_the_builder_fills_from_a_call_stays_open():
    assert raises(PATHS, {}).get((OFFLOAD, marked(PATHS, OFFLOAD, "prefetch-window"))) == "open"


# -- values that differ between branches ----------------------------------------------------
BRANCHES, WORKERS = "startup_branches", "vllm/config/workers.py"


@pytest.mark.parametrize("label", ["too-few-cores", "backend-kind", "backend-class"])
def test_arithmetic_on_a_field_every_branch_leaves_equal_is_decided(label):
    # `groups` is 1 or `spare` (1 by default): `size * groups` is 1 on every path
    assert (WORKERS, marked(BRANCHES, WORKERS, label)) not in raises(BRANCHES, {})


def test_arithmetic_on_options_that_disagree_stays_open():
    found = raises(BRANCHES, {"spare": 2})
    assert found.get((WORKERS, marked(BRANCHES, WORKERS, "too-few-cores"))) == "open"
    # the backend is None, "mp" or "uni" there: which one decides the kind check, not a class
    assert found.get((WORKERS, marked(BRANCHES, WORKERS, "backend-kind"))) == "open"
    assert (WORKERS, marked(BRANCHES, WORKERS, "backend-class")) not in found


def test_a_recipe_value_that_takes_the_other_branch_reaches_the_open_check():
    assert raises(BRANCHES, {"size": 2}).get((WORKERS, marked(BRANCHES, WORKERS, "too-few-cores"))) == "open"


# -- early exits under an undecided condition ------------------------------------------------
GUARDS = "vllm/config/guards.py"


@pytest.mark.parametrize(("settings", "label"), [({"limit": 0}, "after-try-return"),
                                                 ({"limit": 2}, "after-early-return"),
                                                 ({"limit": 200}, "after-early-return-b")])
def test_a_raise_after_an_undecided_early_return_is_open_not_certain(settings, label):
    # the recipe's value decides the raise's own test, but the return above it depends on the host
    assert raises(BRANCHES, settings).get((GUARDS, marked(BRANCHES, GUARDS, label))) == "open"


@pytest.mark.parametrize("label", ["after-try-return", "after-early-return", "after-early-return-b"])
def test_a_raise_the_recipe_refutes_stays_refuted_after_an_early_return(label):
    assert (GUARDS, marked(BRANCHES, GUARDS, label)) not in raises(BRANCHES, {})


# -- a constant range -----------------------------------------------------------------------
RETRY, ATTEMPTS = "startup_retry", "vllm/config/attempts.py"


def test_a_raise_after_a_constant_number_of_attempts_that_each_return_or_raise_is_unreachable():
    found = raises(RETRY, {})
    assert (ATTEMPTS, marked(RETRY, ATTEMPTS, "after-tries")) not in found
    # the probe raises nothing the walk models (os.path.exists is a library's): the handler's
    # re-raise is not reached, as that library's failure is not reachable outside a try either
    assert (ATTEMPTS, marked(RETRY, ATTEMPTS, "last-failure")) not in found


def test_the_last_attempts_failure_is_re_raised_where_the_call_may_raise():
    # the strict probe raises OSError where the marker is missing (the host's filesystem): the
    # handler's re-raise is reached, under that condition and the one that the body raised
    found = raises(RETRY, {"loading_config.strict": True})
    assert found.get((ATTEMPTS, marked(RETRY, ATTEMPTS, "no-marker"))) == "open"
    assert found.get((ATTEMPTS, marked(RETRY, ATTEMPTS, "last-failure"))) == "open"


def test_no_attempt_at_all_reaches_the_raise_after_the_loop():
    assert raises(RETRY, {"tries": 0}).get((ATTEMPTS, marked(RETRY, ATTEMPTS, "after-tries"))) == "certain"


def test_a_range_too_long_to_spell_out_stays_open():
    assert raises(RETRY, {"tries": 100}).get((ATTEMPTS, marked(RETRY, ATTEMPTS, "after-tries"))) == "open"


# -- the rows of the values a raise reads ---------------------------------------------------
def _rows(settings: dict) -> dict[str, tuple[str, str]]:
    from recipe_support import build_recipe

    from srcreview.engine.run import review

    result = review(build_recipe(settings), fixture_tree(BRANCHES))
    return {k.key: (k.status, k.note) for k in result.knobs}


def test_a_certain_raise_refuses_the_values_its_tests_read():
    # `if self.floor > 0: if self.limit < 0: raise`: both tests decided by the recipe
    rows = _rows({"limit": -1, "floor": 1})
    assert rows["limit"][0] == rows["floor"][0] == "invalid-value"
    assert f"raises ValueError ({GUARDS}:{marked(BRANCHES, GUARDS, 'negative')})" in rows["limit"][1]
    assert "and those of floor" in rows["limit"][1]


def test_an_open_raise_whose_own_test_the_recipe_decides_leaves_those_values_undecided():
    # `limit < floor` is decided true, but an early return above it depends on the host
    rows = _rows({"limit": -1, "floor": 0})
    assert rows["limit"][0] == rows["floor"][0] == "undecided"
    assert rows["limit"][1].startswith(f"start-up: GuardsConfig.__post_init__ may raise ValueError ({GUARDS}:")


def test_values_no_raise_reads_stay_accepted():
    assert _rows({"limit": 8, "floor": 4, "size": 1}) == {"floor": ("accepted", ""), "limit": ("accepted", ""),
                                                          "size": ("accepted", "")}


def test_a_raise_on_an_argument_a_hook_may_have_rewritten_is_open():
    # DeviceConfig may set device = "cpu" on a large host before PlacementConfig gets it
    found = raises(PATHS, {"device": "mps", "replicas": 2})
    assert found.get(("vllm/config/placement.py", marked(PATHS, "vllm/config/placement.py", "placement-device"))) \
        == "open"
    assert ("vllm/config/placement.py", marked(PATHS, "vllm/config/placement.py", "placement-device")) \
        not in raises(PATHS, {"device": "mps", "replicas": 1})


# -- the platform's class-level constants -----------------------------------------------------
PLATFORM, DEVICE = "startup_platform", "vllm/config/device.py"


def test_a_platform_constant_every_variant_keeps_decides_the_raise_on_it():
    on_cuda = raises(PLATFORM, {"hardware.platform": "cuda"})
    assert (DEVICE, marked(PLATFORM, DEVICE, "device-type")) not in on_cuda
    # a constant a variant overrides, or one the tree stores into, is not the class's literal
    assert on_cuda.get((DEVICE, marked(PLATFORM, DEVICE, "variant-differs"))) == "open"
    assert on_cuda.get((DEVICE, marked(PLATFORM, DEVICE, "rebound"))) == "open"
    # with the platform open, nothing is known of the platform object
    assert raises(PLATFORM, {}).get((DEVICE, marked(PLATFORM, DEVICE, "device-type"))) == "open"


# -- values the engine's builder computes ----------------------------------------------------
FILLS, SHARD, BATCH = "startup_engine_fills", "vllm/config/shard.py", "vllm/config/batch.py"


def _fills(settings: dict, label: str, path: str = SHARD):
    return raises(FILLS, settings).get((path, marked(FILLS, path, label)))


@pytest.mark.parametrize("label", ["local-over-total", "external", "rank"])
@pytest.mark.parametrize("settings", [{}, {"nodes": 2}, {"shards": 4, "shards_local": 2, "shard_rank": 1}])
def test_a_check_on_what_the_builder_computes_on_its_path_is_refuted(settings, label):
    # the local size, the external flag and `shard_rank or 0`, as the builder computes them
    # (with nodes = 2 it stores `self.shards_local` first: the read after it sees that store)
    assert _fills(settings, label) is None


def test_a_check_on_what_the_builder_computes_is_certain_where_the_recipe_makes_it_fail():
    assert _fills({"shards": 2, "shards_local": 4}, "local-over-total") == "certain"
    # a rank makes the balancer external: with one shard that fails first, with two the rank does
    assert _fills({"shard_rank": 3}, "external") == "certain"
    assert _fills({"shards": 2, "shard_rank": 3}, "rank") == "certain"
    assert _fills({"shards": 2, "shard_rank": 3}, "external") is None


def test_a_field_a_method_the_builder_calls_stores_holds_what_that_method_leaves():
    # `self._infer_spares()` stores spares_local only under nodes > 1: not here, so it is still
    # None and the builder passes `self.spares`; with nodes = 2 it is twice the spares
    assert _fills({}, "spares") is None
    assert _fills({"nodes": 2}, "spares") == "certain"


def test_a_value_a_method_fills_in_from_the_host_is_each_value_it_may_be():
    # `_fill_batch_defaults` picks 4096 or 1024 as the host's CPU count says: fewer tokens than
    # 8 sequences on neither; with 2048 sequences, on one of them: open, for the host to decide
    assert _fills({}, "tokens-seqs", BATCH) is None
    index = Index(fixture_tree(FILLS))
    built = analyzer(index, config_bindings(index, {"max_seqs": 2048})).prepare()
    line = marked(FILLS, BATCH, "tokens-seqs")
    found = [r for r in built.open_raises if open_site(r)[:2] == (BATCH, line)]
    assert found and not built.rejections


def test_what_the_builder_computes_for_a_field_reads_as_that_fields_value():
    # `rank=self.shard_rank or 0`: the constant 0 the builder computes is what the field holds;
    # a reader (a draft's copy of the config) must see it as read from `shard_config.rank`
    from srcreview.interp.values import Const, Obj

    index = Index(fixture_tree(FILLS))
    an = analyzer(index, config_bindings(index, {}))
    an.prepare()
    root = Obj(cls=index.find_one("VllmConfig", "class").qualname, path=(), nonnull=True)
    shard = an.force(an.resolver.attribute(root, "shard_config"))
    assert an.force(an.resolver.attribute(shard, "rank")) == Const(0, origin=("shard_config", "rank"))


@pytest.mark.parametrize(("settings", "outcome"), [({"max_tokens": 4}, "certain"), ({"max_tokens": 4096}, None)])
def test_a_value_the_recipe_sets_decides_the_check_the_engine_default_leaves_open(settings, outcome):
    assert _fills(settings, "tokens-seqs", BATCH) == outcome


def test_nothing_is_followed_store_by_store_once_the_engine_arguments_leave_the_builder(tmp_path):
    # the same tree, but the builder hands `self` to a helper: it may store any field
    root = FIXTURES / FILLS
    files = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    files["vllm/engine/arg_utils.py"] = files["vllm/engine/arg_utils.py"].replace(
        "        external = self.external", "        audit(self)\n        external = self.external").replace(
        "@dataclass\nclass EngineArgs:", "def audit(args):\n    pass\n\n\n@dataclass\nclass EngineArgs:")
    index = module_index(tmp_path, files)
    built = analyzer(index, config_bindings(index, {})).prepare()
    opened = {open_site(r)[:2] for r in built.open_raises}
    assert (SHARD, marked(FILLS, SHARD, "local-over-total")) in opened


# -- helper objects built in a hook -------------------------------------------------------------
HELPERS, LAYOUT = "startup_helper_objects", "vllm/config/layout.py"


def _helpers(settings: dict, label: str):
    return raises(HELPERS, settings).get((LAYOUT, marked(HELPERS, LAYOUT, label)))


@pytest.mark.parametrize("kind", ["plain", "wide"])
def test_an_object_whose_init_stores_its_arguments_holds_them(kind):
    # the class comes from a module table (a call through an import), its __init__ stores the
    # heads and shards it was built with, and a rebuild under an undecided condition is the
    # same class built alike: the check on what convert() returns is decided both ways
    assert _helpers({"kind": kind, "heads": 8, "shards": 2}, "divides") is None
    assert _helpers({"kind": kind, "heads": 7, "shards": 4}, "divides") == "certain"
    assert _helpers({"kind": "plain", "heads": 6, "shards": 4}, "divides") == "certain"
    assert _helpers({"kind": "wide", "heads": 6, "shards": 4}, "divides") is None  # WideConvertor doubles them


def test_a_store_after_an_early_return_or_one_another_method_repeats_stays_open():
    # (8 heads over 2 shards: the summary's check passes, and the walk goes on to these)
    assert _helpers({"heads": 8, "shards": 2}, "early") == "open"
    assert _helpers({"heads": 8, "shards": 2}, "resetting") == "open"
    # `configure(self)` in __init__: the function it is handed may set any attribute
    assert _helpers({"heads": 8, "shards": 2}, "handing") == "open"


# -- the model's directory -------------------------------------------------------------------
MODEL = "vllm/config/model.py"


def model_raises(listing: dict | None, model: str = "./m") -> dict[str, str]:
    """The fixture's start-up raises by label, with `model` a directory whose entries the review
    listed ({path: kind}), or (listing None) one it knows nothing of."""
    from srcreview.interp.paths import KNOWN_DIRECTORIES, KnownDirectories, KnownTree

    index = Index(fixture_tree("startup_model_files"))
    bindings = config_bindings(index, {"model": model})
    if listing is not None:
        bindings[KNOWN_DIRECTORIES] = KnownDirectories((KnownTree(model, tuple(sorted(listing.items()))),))
    built = analyzer(index, bindings).prepare()
    assert built.built
    lines = {marked("startup_model_files", MODEL, label): label
             for label in ("no-config", "encoder", "weights", "os-exists")}
    found = {}
    for rejection in built.rejections:
        path, line = open_site(rejection)[:2]
        if path == MODEL and line in lines:
            found[lines[line]] = "certain"
    for rejection in built.open_raises:
        path, line = open_site(rejection)[:2]
        if path == MODEL and line in lines:
            found.setdefault(lines[line], "open")
    return found


def test_a_listed_model_directory_decides_what_start_up_asks_the_filesystem():
    # Path(m).exists() / "config.json" .is_file(), a sentence-transformers file looked up in
    # the directory and then in the Hub cache (which refuses "./m" as a repo id: ValueError,
    # caught), an rglob listing inside a retried call, os.path.exists
    assert model_raises({"config.json": "file", "tokenizer.json": "file"}) == {}


def test_each_file_the_listing_has_is_seen_there():
    assert model_raises({}) == {"no-config": "certain"}
    assert model_raises({"config.json": "file", "sentence_bert_config.json": "file"}) == {"encoder": "certain"}
    assert model_raises({"config.json": "file", "weights.bin": "file"}) == {"weights": "certain"}
    assert model_raises({"config.json": "file", "sub": "dir", "sub/weights.bin": "file"}) == {}


def test_an_unlisted_model_leaves_the_filesystem_questions_open():
    assert set(model_raises(None).values()) == {"open"}
    assert set(model_raises(None)) == {"no-config", "encoder", "weights", "os-exists"}


def test_a_directory_named_like_a_hub_repo_may_be_found_in_the_hub_cache():
    # "m" is a valid repo id: the cache lookup runs and may return a cached sentence config
    assert model_raises({"config.json": "file"}, model="m") == {"encoder": "open"}


def test_below_a_directory_the_listing_did_not_enter_nothing_is_decided():
    # a link to a directory: rglob's walk of it is not listed, so the listing cannot say weights.bin is absent
    assert model_raises({"config.json": "file", "linked": "opaque"}) == {"weights": "open"}


# -- what the builder hands the methods it calls on `self` ---------------------------------
FLOW_TREE, FLOW_CONFIG, FLOW_ROOT = "startup_engine_flow", "vllm/config/draft.py", "vllm/config/vllm.py"


def _flow(settings: dict, label: str, path: str = FLOW_CONFIG):
    return raises(FLOW_TREE, settings).get((path, marked(FLOW_TREE, path, label)))


def test_a_method_the_builder_calls_on_self_reads_the_value_the_builder_stored():
    # `(self.model, self.draft_config) = resolve(...)` then `self.create_draft_config()`: with no
    # draft the method returns None, so the root config's check on a draft is refuted; with one,
    # the draft config it builds is checked
    assert _flow({}, "drafting", FLOW_ROOT) is None
    assert _flow({"draft_config.tokens": 3}, "drafting", FLOW_ROOT) == "certain"
    assert _flow({"draft_config.tokens": 8}, "tokens") == "certain"
    assert _flow({"draft_config.tokens": 2}, "tokens") is None


def test_what_post_init_and_the_methods_the_builder_calls_store_is_followed():
    # `picked`: stored by __post_init__ (mode "legacy"), walked before the builder, and by
    # `self._pick()` (mode "auto"); in any other mode nothing picks
    assert _flow({}, "unpicked", FLOW_ROOT) is None
    assert _flow({"mode": "legacy"}, "unpicked", FLOW_ROOT) is None
    assert _flow({"mode": "manual"}, "unpicked", FLOW_ROOT) == "certain"


# -- try handlers ----------------------------------------------------------------------------
HANDLERS, HANDLED = "startup_handlers", "vllm/config/handlers.py"


def test_a_handler_no_modelled_exception_reaches_raises_nothing():
    # the bodies' callees do not raise under the defaults, a lambda's body included, and a
    # library call's own failure (os.path.exists) is not modelled: no handler's raise is reached
    assert raises(HANDLERS, {}) == {}


@pytest.mark.parametrize(("settings", "label"), [({"handlers_config.n": 5}, "converted"),
                                                 ({"handlers_config.lambdas": 5}, "re-raised")])
def test_a_handler_whose_body_raises_for_certain_raises_for_certain(settings, label):
    # checked(5) raises on every path: the conversion (and the last attempt's re-raise through
    # the lambda) is what the call does
    assert raises(HANDLERS, settings) == {(HANDLED, marked(HANDLERS, HANDLED, label)): "certain"}


def test_a_handler_of_an_import_may_run():
    # whether the package is installed is the host's to say
    assert raises(HANDLERS, {"handlers_config.kernels": True}) == \
        {(HANDLED, marked(HANDLERS, HANDLED, "missing-package")): "open"}


def test_a_certain_raise_on_a_config_object_handed_in_refuses_its_value():
    # `verify_with(self.limits_config)`: `limits_config.workers > 4` reads that config's field
    from recipe_support import build_recipe

    from srcreview.engine.run import review

    result = review(build_recipe({"workers": 5}), fixture_tree(HANDLERS))
    rows = {k.key: (k.status, k.note) for k in result.knobs}
    assert rows["workers"][0] == "invalid-value"
    assert f"({HANDLED}:{marked(HANDLERS, HANDLED, 'workers')})" in rows["workers"][1]
    assert result.startup.verdict == "rejected"


def test_a_certain_raise_on_a_local_refuses_the_values_that_decided_it():
    # `unsupported = "fast mode"` under `if self.mode == "fast":`, then `if unsupported is not
    # None: raise`: the raise's test reads the local, which the mode decided
    from recipe_support import build_recipe

    from srcreview.engine.run import review

    result = review(build_recipe({"mode": "fast"}), fixture_tree(HANDLERS))
    rows = {k.key: (k.status, k.note) for k in result.knobs}
    assert rows["mode"][0] == "invalid-value"
    assert f"({HANDLED}:{marked(HANDLERS, HANDLED, 'unsupported-mode')})" in rows["mode"][1]
    assert review(build_recipe({"mode": "safe"}), fixture_tree(HANDLERS)).startup.verdict != "rejected"


# -- the engine's batch defaults -------------------------------------------------------------
DEFAULTS, SCHED = "startup_batch_defaults", "vllm/config/scheduler.py"


@pytest.mark.parametrize(("hardware", "outcome"), [
    ({"hardware.gpu": "NVIDIA A100-SXM4-80GB", "hardware.memory_gib": 80.0}, "certain"),  # 2048 for an A100
    ({"hardware.gpu": "NVIDIA H100 80GB HBM3", "hardware.memory_gib": 80.0}, None),  # 8192
    ({"hardware.gpu": "NVIDIA H100 80GB HBM3", "hardware.memory_gib": 40.0}, "certain"),  # below 70 GiB
    ({"hardware.gpu": "NVIDIA H100 80GB HBM3"}, "open"),  # the memory is not given
])
def test_batch_defaults_follow_the_device_and_the_serve_usage_context(hardware, outcome):
    # the device's memory and name from the recipe's [hardware]; `vllm serve`'s usage context
    assert raises(DEFAULTS, hardware).get((SCHED, marked(DEFAULTS, SCHED, "small-batch"))) == outcome


def test_a_batch_the_recipe_sets_is_its_own():
    assert raises(DEFAULTS, {"max_num_batched_tokens": 1024}).get(
        (SCHED, marked(DEFAULTS, SCHED, "small-batch"))) == "certain"
    assert raises(DEFAULTS, {"max_num_batched_tokens": 8192, "hardware.gpu": "x"}) == {}


# -- the configs the engine's builder has built ----------------------------------------------
BUILT = "startup_built_configs"


@pytest.mark.parametrize(("settings", "outcome"), [
    ({"max_model_len": 1024}, None),  # the batch is raised to 2048, past the length
    ({"max_model_len": 4096, "enable_expert_parallel": True}, None),  # 256, raised to the length
    ({"max_model_len": 4096, "model": "multimodal"}, "certain"),  # its hook made it multimodal: 2048 stays
    ({"max_model_len": 4096, "model": "multimodal", "enable_expert_parallel": True}, "certain"),  # 256
])
def test_the_builder_reads_the_configs_it_built_as_their_hooks_left_them(settings, outcome):
    # `model_config.is_multimodal_model` over a field the model config's __post_init__ sets, and
    # `parallel_config.use_batched_dp_moe` of a `ParallelConfig(...)` built through an import
    assert raises(BUILT, settings).get((SCHED, marked(BUILT, SCHED, "short-batch"))) == outcome


@pytest.mark.parametrize(("largest", "outcome"), [(4, None), (2, "certain")])
def test_a_list_field_put_in_order_holds_its_items_in_that_order(largest, outcome):
    # `self.sizes.sort()` then `self.sizes[-1]`: vLLM's capture sizes, sorted before the largest is read
    found = raises("startup_containers", {"sizes": [4, 1, 2], "largest": largest})
    assert found.get((OPS, marked("startup_containers", OPS, "sizes-largest"))) == outcome


@pytest.mark.parametrize(("hardware", "outcome"), [
    ({"hardware.gpus": 8}, None),  # 8 GPUs for 4 ranks
    ({"hardware.gpus": 2}, "certain"),
    ({}, "open"),  # how many GPUs the engine sees is not given
])
def test_the_device_count_is_the_recipes_gpus(hardware, outcome):
    parallel = "vllm/config/parallel.py"
    found = raises(BUILT, {"max_model_len": 4096, "tensor_parallel_size": 4, **hardware})
    assert found.get((parallel, marked(BUILT, parallel, "too-few-gpus"))) == outcome


def test_a_class_the_builder_builds_twice_is_not_read_as_the_built_config(tmp_path):
    # a second ModelConfig(...) in the builder's class: which one a read is on is not known
    tree = tmp_path / BUILT
    shutil.copytree(FIXTURES / BUILT, tree)
    builder = tree / "vllm/engine/arg_utils.py"
    builder.write_text(builder.read_text() + textwrap.indent(textwrap.dedent("""
        def create_draft_model_config(self) -> ModelConfig:
            return ModelConfig(model="draft")
    """), "    "))
    found = construction_raises(tree, {"max_model_len": 4096, "model": "multimodal"})
    assert found.get((SCHED, marked(BUILT, SCHED, "short-batch"))) == "open"
