"""Sources of the exact vLLM tree at a revision, all behind the SourceTree interface."""

from srcreview.source.base import SourceTree, git_blob_id

__all__ = ["SourceTree", "git_blob_id"]
