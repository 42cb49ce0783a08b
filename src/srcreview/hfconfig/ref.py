"""What vLLM takes for `--model` (and a draft's `speculative_config.model`): a Hub id or a directory.

vLLM reads a local directory when the path exists and asks the Hugging Face Hub otherwise.
srcreview decides the same way, from the recipe's directory rather than the server's working
directory: a path written as a path (`/`, `./`, `../`, `~`) is a directory, a name that is a
directory beside the recipe is one, and anything else must be a Hub id (`org/name`, optionally
`org/name@revision`). Everything else is a recipe mistake (DataError, exit 65).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from srcreview.core.errors import DataError
from srcreview.core.records import Field, Record

# The Hub's own rules (huggingface_hub.utils.validate_repo_id), ASCII only: one or two segments
# of letters, digits, '-', '_' and '.', not starting or ending with '-' or '.', no '--' or '..'.
_SEGMENT = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"(?:{_SEGMENT}/)?{_SEGMENT}")
_MAX_REPO_ID = 96
# A branch, tag, `refs/pr/N` or commit id: git ref characters, no '..', no leading '-' or '/'.
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,254}")
_PATH_PREFIXES = ("/", "./", "../", "~")

# huggingface_hub's `validate_hf_hub_args` checks the `repo_id` of these before they run, and
# raises HFValidationError (a ValueError) for a repo_id `validate_repo_id` refuses. The rule
# below refuses only what every huggingface_hub release refuses: its older releases let `\w`
# match any Unicode word character, so that is how it is matched here.
HUB_VALIDATED = frozenset({"huggingface_hub.try_to_load_from_cache", "huggingface_hub.hf_hub_download"})
_HUB_REPO_ID = re.compile(r"(\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b")


class ModelRef(Record):
    """A model as a recipe names it. `path` (the resolved directory) is for reading only: it is
    excluded from every serialisation and repr, so no local path reaches an output."""

    kind: Literal["hub", "local"]
    text: str = Field(description="as written in the recipe")
    repo_id: str | None = Field(default=None, description="the Hub repository (kind hub)")
    revision: str | None = Field(default=None, description="the Hub revision asked for; None: the Hub's default branch")
    path: Path | None = Field(default=None, exclude=True, repr=False)

    @property
    def shown(self) -> str:
        """How messages name the model: the Hub id with its revision, or the path as written."""
        if self.kind == "local":
            return self.text
        return f"{self.repo_id}@{self.revision}" if self.revision else str(self.repo_id)


def parse_model_ref(text: str, *, revision: str | None = None, base_dir: str | Path | None = None,
                    where: str = "") -> ModelRef:
    """The ModelRef of `text` (a recipe's `model`), with `revision` from a separate key if the
    recipe has one. Relative paths resolve against `base_dir` (the recipe's directory; default
    the working directory). `where` ("recipe.toml:3") prefixes error messages."""
    prefix = f"{where}: " if where else ""
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"{prefix}model must be a Hugging Face Hub id (org/name) or a local directory")
    shown = repr(text[:100])
    if text != text.strip():
        raise DataError(f"{prefix}model {shown} has leading or trailing spaces")
    if revision is not None:
        _check_revision(revision, prefix)
    base = Path(base_dir) if base_dir is not None else Path.cwd()

    if "://" in text:
        raise DataError(f"{prefix}model {shown} is a URL: give the Hub repository id (org/name) or a local directory")
    if text in (".", "..") or text.startswith(_PATH_PREFIXES):
        try:
            path = Path(text).expanduser()
        except RuntimeError:  # `~` with no home directory to expand it to
            raise DataError(f"{prefix}model {shown}: no home directory to expand '~' to") from None
        return _local(text, base / path, revision, prefix)
    name, at, pinned = text.partition("@")
    if not at and (base / text).is_dir():  # vLLM's own order: an existing directory wins over a Hub id
        return _local(text, base / text, revision, prefix)
    if not _REPO_ID.fullmatch(name) or len(name) > _MAX_REPO_ID or "--" in name or ".." in name:
        raise DataError(f"{prefix}model {shown} is neither a Hugging Face Hub id (org/name, at most "
                        f"{_MAX_REPO_ID} characters) nor an existing directory")
    if at:
        _check_revision(pinned, prefix)
        if revision is not None and revision != pinned:
            raise DataError(f"{prefix}model {shown} pins revision {pinned!r} but the recipe's revision is {revision!r}")
        revision = pinned
    return ModelRef(kind="hub", text=text, repo_id=name, revision=revision)


def _local(text: str, path: Path, revision: str | None, prefix: str) -> ModelRef:
    if revision is not None:
        raise DataError(f"{prefix}revision {revision!r} applies to a Hub id, not to the local directory {text!r}")
    return ModelRef(kind="local", text=text, path=path.resolve())


def _check_revision(revision: object, prefix: str) -> None:
    if not isinstance(revision, str) or not _REVISION.fullmatch(revision) or ".." in revision \
            or revision.endswith(("/", ".lock")):
        raise DataError(f"{prefix}revision {str(revision)[:100]!r} is not a branch, tag or commit id")


def hub_refuses(repo_id) -> bool:
    """Whether huggingface_hub's `validate_repo_id` raises for `repo_id` (not a string, more
    than one `/`, characters or ends it does not admit, `--` or `..`, a `.git` end): a local
    path as vLLM passes it (`./model`, `/models/x`) is refused."""
    if not isinstance(repo_id, str):
        return True
    return repo_id.count("/") > 1 or not _HUB_REPO_ID.fullmatch(repo_id) or "--" in repo_id \
        or ".." in repo_id or repo_id.endswith(".git")

