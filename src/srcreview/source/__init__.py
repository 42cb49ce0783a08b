"""Sources of the exact vLLM tree at a revision, all behind the SourceTree interface.

Call `open_source(revision, source=..., provider=...)`; providers live in their own modules
(registry, github, gitrepo, archive) and share the cache (`srcreview.source.cache.Cache`).
"""

from srcreview.source.base import SourceTree, git_blob_id
from srcreview.source.obtain import open_source

__all__ = ["SourceTree", "git_blob_id", "open_source"]
