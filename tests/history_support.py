"""Git histories built in the test from fixtures/vllm_snippets/history_spec_decode/.

`build_history(repo, steps)` commits one step at a time and returns the commit ids: "base"
(the whole tree of fixtures/vllm_snippets/rules_spec_decode, which the rule examples keep
at "confirmed" for the rule bisected here), "applied" (the loader starts applying speculative_config.attention_backend),
"reverted" (the loader as in base again) or "note" (an unrelated edit that changes no verdict).
"""

from __future__ import annotations

from pathlib import Path

from srcreview.source.overlays import materialize

SNIPPETS = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_snippets"
HISTORY = SNIPPETS / "history_spec_decode"
BASE = SNIPPETS / "rules_spec_decode"
RECIPE = HISTORY / "recipe.toml"
RULE = "spec-draft-attention-backend-ignored"
KNOB = "speculative_config.attention_backend"
LOADER = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def build_history(repo, steps: list[str]) -> list[str]:
    """Commit each step in order on `repo` (a conftest GitRepo); the commit ids, oldest first."""
    commits = []
    notes = 0
    for step in steps:
        if step == "base":
            files = _files(BASE)
        elif step == "applied":
            # an overlay of the base (srcreview.source.overlays): commit only what it changes
            base = _files(BASE)
            files = {k: v for k, v in _files(materialize(HISTORY / "applied")).items() if base.get(k) != v}
        elif step == "reverted":
            files = {LOADER: (BASE / LOADER).read_bytes()}
        elif step == "note":
            notes += 1
            envs = (repo.path / "vllm" / "envs.py").read_text()
            files = {"vllm/envs.py": envs + f"# unrelated change {notes}\n"}
        else:
            raise ValueError(step)
        commits.append(repo.commit(files, message=step))
    return commits
