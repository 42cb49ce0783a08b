"""The transformers release a recipe's runtime profile names, as the few files its config facts need.

`[runtime] packages = { transformers = "5.16.1" }` says which transformers builds the model's
config class. Its `py3-none-any` wheel is found on the index pip is configured with (PEP 691
JSON, as for vLLM's sdists: srcreview.source.registry), downloaded with progress, checked
against the sha256 the index gives, and only the members `srcreview.hfconfig.config_classes`
reads are kept, in the cache (`transformers/<version>`), so later runs are offline. The
config-class facts of each model the recipe names are then attached to its ModelFacts.
"""

from __future__ import annotations

import re

from srcreview.core.errors import SourceUnavailable
from srcreview.source.base import Progress, VerificationFailed
from srcreview.source.cache import Cache

MAX_MEMBER_BYTES = 2_000_000  # a kept config module is kilobytes; the index refuses to parse more

KIND = "transformers"
PROJECT = "transformers"
_VERSION = re.compile(r"\d+(\.\d+){1,3}")


def transformers_version(recipe) -> str | None:
    """The transformers version the recipe's `[runtime] packages` gives, if it gives one."""
    for name, value in (recipe.runtime.packages or {}).items():
        if name.lower().replace("_", "-") == PROJECT and isinstance(value, str):
            return value
    return None


def config_files(version: str, cache: Cache | None = None, progress: Progress | None = None) -> dict[str, str]:
    """wheel path -> text of the kept members of transformers `version`'s wheel."""
    from srcreview.hfconfig.config_classes import kept

    if not _VERSION.fullmatch(version):
        raise SourceUnavailable(f"transformers {version[:40]!r} is not a release version")
    cache = cache or Cache()
    with cache.entry(KIND, version) as entry:
        if not entry.ready:
            _build(entry, version, cache, progress)
        root = entry.tree
    out = {}
    for path in sorted(p for p in root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if kept(rel):
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _build(entry, version: str, cache: Cache, progress) -> None:
    import zipfile

    from srcreview.hfconfig.config_classes import kept
    from srcreview.source import http as nethttp
    from srcreview.source.pipindex import index_cert, index_url, redact_url
    from srcreview.source.registry import project_files

    http, index = nethttp.session(index_cert()), index_url()
    shown = redact_url(index)
    what = f"the package index {shown}"
    files = project_files(PROJECT, http, index)
    wanted = f"{PROJECT}-{version}-py3-none-any.whl"
    wheel = next((f for f in files if f.filename == wanted), None)
    if wheel is None:
        raise SourceUnavailable(f"package index {shown} lists no {wanted}")
    if not wheel.sha256:
        raise SourceUnavailable(f"{wanted}: the index gives no sha256 to verify it against")
    with cache.scratch() as scratch:
        archive = scratch / wanted
        got = nethttp.download(http, wheel.url, archive, f"{what} for {wanted}", wanted, progress,
                               expected_size=wheel.size)
        if got != wheel.sha256:
            raise VerificationFailed(f"{wanted}: sha256 {got} does not match the index's {wheel.sha256}")
        target = entry.staging()
        try:
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    name = info.filename
                    if info.is_dir() or not kept(name) or ".." in name.split("/") or name.startswith("/"):
                        continue
                    if info.file_size > MAX_MEMBER_BYTES:  # a config module is kilobytes: never expand a bomb
                        raise VerificationFailed(f"{wanted}: {name} is {info.file_size} bytes, over the "
                                                 f"{MAX_MEMBER_BYTES}-byte limit of a module")
                    dest = target / name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(zf.read(info))
        except (zipfile.BadZipFile, OSError) as exc:
            raise VerificationFailed(f"{wanted}: not a readable wheel ({exc})") from None
    entry.commit({"provider": KIND, "version": version, "wheel": wanted, "wheel_sha256": got})


def with_config_classes(recipe, cache: Cache | None = None, progress: Progress | None = None):
    """`recipe` with each model's config-class facts (ModelFacts.config_class) at the transformers
    version the recipe gives; without one, each model says how to give it."""
    from srcreview.hfconfig.config_classes import ConfigClass, config_class

    version = transformers_version(recipe)
    if not recipe.models or version is None:
        return recipe
    cache = cache or Cache()
    files: dict[str, str] | None = None
    problem = None
    models = []
    for facts in recipe.models:
        model_type = facts.config.get("model_type") if facts.known else None
        if not isinstance(model_type, str):
            models.append(facts)
            continue
        found = _stored_facts(cache, version, model_type)
        if found is None:
            if files is None and problem is None:
                try:
                    files = config_files(version, cache, progress)
                except SourceUnavailable as exc:
                    problem = f"transformers {version} could not be read: {exc}"
            if files is not None:
                found = config_class(files, version, model_type)
                _store_facts(cache, version, model_type, found)
            else:
                found = ConfigClass(version=version, model_type=model_type, unknown=problem)
        models.append(facts.model_copy(update={"config_class": found}))
    return recipe.model_copy(update={"models": tuple(models)})


def _facts_path(version: str, model_type: str) -> str | None:
    """Where the facts of one model type are kept: by version and by the code that reads them
    (a change to srcreview.hfconfig.config_classes reads the files again)."""
    import hashlib

    import srcreview.hfconfig.config_classes as reader

    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", model_type):
        return None
    try:
        with open(reader.__file__, "rb") as fh:
            code = hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError:
        return None
    return f"{KIND}-facts/{version}-{code}/{model_type}.json"


def _stored_facts(cache: Cache, version: str, model_type: str):
    import json

    from srcreview.hfconfig.config_classes import ConfigClass

    path = _facts_path(version, model_type)
    raw = cache.read_bytes(path) if path else None
    if raw is None:
        return None
    try:
        found = ConfigClass.model_validate(json.loads(raw))
    except ValueError:
        return None
    return found if found.version == version and found.model_type == model_type else None


def _store_facts(cache: Cache, version: str, model_type: str, found) -> None:
    import json

    path = _facts_path(version, model_type)
    if path is None:
        return
    try:
        cache.write_bytes_atomic(path, json.dumps(found.model_dump(mode="json"), sort_keys=True).encode())
    except OSError:  # a read-only cache: read the files again next time
        pass
