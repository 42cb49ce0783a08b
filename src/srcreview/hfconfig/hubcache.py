"""The huggingface_hub cache and settings read directly, so a review that need not ask the Hub
does not import the library (about a third of a stored review's whole run).

What is read here is what huggingface_hub itself reads: the settings come from the same
environment variables with the same defaults and expansions (`constants.py`: `HF_HUB_CACHE`,
else `HUGGINGFACE_HUB_CACHE`, else `$HF_HOME/hub` with `HF_HOME` defaulting to
`$XDG_CACHE_HOME/huggingface` or `~/.cache/huggingface`; `HF_HUB_OFFLINE` or
`TRANSFORMERS_OFFLINE`; `HF_ENDPOINT`), and `lookup` answers as `try_to_load_from_cache`
does over the cache layout (`models--org--name/refs/<branch>` holding a commit,
`snapshots/<commit>/<file>`, `.no_exist/<commit>/<file>` recording a file the Hub said is
absent). tests/hfconfig/test_hfconfig_hubcache.py checks both against the installed huggingface_hub on
caches it wrote itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_TRUE = {"1", "ON", "YES", "TRUE"}  # huggingface_hub's ENV_VARS_TRUE_VALUES
DEFAULT_ENDPOINT = "https://huggingface.co"
STAGING_ENDPOINT = "https://hub-ci.huggingface.co"


class _NoExist:
    """The cache records that the Hub said the file does not exist at that commit."""

    def __repr__(self) -> str:
        return "NO_EXIST"


NO_EXIST = _NoExist()


def _is_true(value: str | None) -> bool:
    return value is not None and value.upper() in _TRUE


def _expanded(path: str) -> str:
    return os.path.expandvars(os.path.expanduser(path))


@dataclass(frozen=True)
class HubSettings:
    """What huggingface_hub would take from this environment on import."""

    cache_dir: str
    offline: bool
    endpoint: str

    @classmethod
    def from_environment(cls, environ=None) -> HubSettings:
        env = os.environ if environ is None else environ
        home = _expanded(env.get("HF_HOME", os.path.join(env.get("XDG_CACHE_HOME", _default_home()), "huggingface")))
        cache = _expanded(env.get("HF_HUB_CACHE", env.get("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub"))))
        offline = _is_true(env.get("HF_HUB_OFFLINE") or env.get("TRANSFORMERS_OFFLINE"))
        endpoint = env.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")
        if _is_true(env.get("HUGGINGFACE_CO_STAGING")):
            endpoint = STAGING_ENDPOINT
        return cls(cache_dir=cache, offline=offline, endpoint=endpoint)


def _default_home() -> str:
    return os.path.join(os.path.expanduser("~"), ".cache")


def lookup(cache_dir: str, repo_id: str, filename: str, revision: str | None = None) -> str | _NoExist | None:
    """The cached file of model `repo_id` at `revision` (a branch, tag or commit; None: main),
    NO_EXIST when the cache records its absence at that commit, None when the cache cannot say.
    Raises OSError only where huggingface_hub's own lookup would (an unreadable refs file)."""
    revision = "main" if revision is None else revision
    repo = _repo_dir(cache_dir, repo_id)
    if not os.path.isdir(repo):
        return None
    refs = os.path.join(repo, "refs")
    if os.path.isdir(refs):
        ref_file = os.path.join(refs, revision)
        if os.path.isfile(ref_file):
            with open(ref_file) as handle:
                revision = handle.read()
    if os.path.isfile(os.path.join(repo, ".no_exist", revision, filename)):
        return NO_EXIST
    snapshots = os.path.join(repo, "snapshots")
    if not os.path.exists(snapshots) or revision not in os.listdir(snapshots):
        return None
    cached = os.path.join(snapshots, revision, filename)
    return cached if os.path.isfile(cached) else None


def snapshot_file(cache_dir: str, repo_id: str, filename: str, commit: str) -> str | None:
    """The file of `commit`'s snapshot if the cache holds it: what hf_hub_download returns for
    a commit without asking the Hub."""
    path = os.path.join(_repo_dir(cache_dir, repo_id), "snapshots", commit, filename)
    return path if os.path.exists(path) else None


def _repo_dir(cache_dir: str, repo_id: str) -> str:
    return os.path.join(cache_dir, "--".join(("models", *repo_id.split("/"))))
