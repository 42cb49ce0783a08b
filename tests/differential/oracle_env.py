"""Create or reuse the oracle virtual environment of one vLLM release.

    python tests/differential/oracle_env.py 0.29.0    # prints the venv's python

(Not named venv.py: with this folder on sys.path it would shadow the standard library's venv,
which creates the environment.)

The venv lives under the user cache, never in the repository:
``${SRCREVIEW_CACHE:-~/.cache/srcreview}/differential/vllm-X.Y.Z/venv``. It holds the real
``vllm==X.Y.Z`` wheel and what its metadata asks for (torch and the CUDA wheels: several GB),
installed by ``python -m pip install`` with pip's own configuration (index, find-links,
constraints): no package index is named here. ``installed.json`` beside the venv records what
was installed (``pip list``), how long it took and how big the venv is; ``ready`` marks a
finished install, so an interrupted one is redone.

This module is run with any Python >= 3.10; it imports nothing of srcreview or vLLM.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def cache_root() -> Path:
    env = os.environ.get("SRCREVIEW_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "srcreview"


def release_dir(version: str) -> Path:
    return cache_root() / "differential" / f"vllm-{version}"


def venv_python(version: str) -> Path:
    return release_dir(version) / "venv" / "bin" / "python"


def is_ready(version: str) -> bool:
    return (release_dir(version) / "ready").is_file() and venv_python(version).is_file()


def _du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


_TORCH_PIN = (
    "import importlib.metadata as m, re\n"
    "pin = [r for r in m.requires('vllm') or [] if re.match(r'torch *==', r) and 'extra' not in r]\n"
    "print(pin[0].split('==', 1)[1].split(';')[0].strip() if pin else '')\n"
    "print(m.version('torch'))\n"
)


def _torch_as_pinned(py: Path, out) -> str | None:
    """Reinstall torch as the release pins it when pip took a local build instead.

    ``torch==2.13.0`` admits a local version such as ``2.13.0+cpu`` (a CPU build that pip's
    find-links may offer), which sorts above the index's ``2.13.0``; the CPU build cannot load
    the release's ``torchvision`` (``operator torchvision::nms does not exist``), which
    transformers imports. ``torch===2.13.0`` (PEP 440 arbitrary equality) admits only the
    index's build of the pinned version, and its dependencies (the CUDA runtime wheels).
    """
    pin, have = subprocess.run([str(py), "-c", _TORCH_PIN], check=True, capture_output=True,
                               text=True).stdout.split("\n")[:2]
    if not pin or "+" not in have or have.split("+")[0] != pin:
        return None
    subprocess.run([str(py), "-m", "pip", "install", "--progress-bar", "off", f"torch==={pin}"],
                   check=True, stdout=out, stderr=subprocess.STDOUT)
    return f"{have} -> {pin} (torch==={pin})"


def _record(version: str, py: Path, seconds: float | None, torch_fix: str | None) -> dict:
    """Write installed.json: what the venv holds (pip list), how long it took, its size."""
    rdir = release_dir(version)
    venv = rdir / "venv"
    listed = subprocess.run(
        [str(py), "-m", "pip", "list", "--format", "json"], check=True,
        capture_output=True, text=True,
    ).stdout
    record = {
        "vllm": version,
        "python": subprocess.run(
            [str(py), "-c", "import sys; print(sys.version.split()[0])"],
            check=True, capture_output=True, text=True).stdout.strip(),
        "install_seconds": None if seconds is None else round(seconds, 1),
        "torch_reinstalled": torch_fix,
        "venv_bytes": _du(venv),
        "packages": {p["name"]: p["version"] for p in json.loads(listed)},
    }
    (rdir / "installed.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def ensure(version: str, python: str | None = None, log=print) -> Path:
    """The venv python of ``version``, installing it first when it is not ready."""
    if is_ready(version):
        return venv_python(version)
    rdir = release_dir(version)
    venv = rdir / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    rdir.mkdir(parents=True, exist_ok=True)
    (rdir / "ready").unlink(missing_ok=True)
    python = python or sys.executable
    log(f"creating {venv} with {python}")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    started = time.monotonic()
    cmd = [str(py), "-m", "pip", "install", "--progress-bar", "off", f"vllm=={version}"]
    log("running: " + " ".join(["python", "-m", "pip", "install", f"vllm=={version}"]))
    with open(rdir / "pip-install.log", "w") as out:
        subprocess.run(cmd, check=True, stdout=out, stderr=subprocess.STDOUT)
        torch_fix = _torch_as_pinned(py, out)
    seconds = time.monotonic() - started
    record = _record(version, py, seconds, torch_fix)
    (rdir / "ready").write_text(version + "\n")
    log(f"installed vllm {version} in {seconds:.0f} s, venv {record['venv_bytes'] / 1e9:.1f} GB")
    return py


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: oracle_env.py VERSION", file=sys.stderr)
        return 64
    py = ensure(argv[0], log=lambda m: print(m, file=sys.stderr))
    print(py)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
