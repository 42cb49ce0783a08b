"""The runtime profile: the machine a review assumes the recipe runs on, stated once.

A recipe pins a vLLM release and names a GPU; it does not list what the container installs.
Left open, every import-time probe of the source (`HAS_TRITON = find_spec("triton") is not
None`, `current_platform.is_cuda()`) is undecided, and so is everything behind it (the model
runner, the attention backend). The review therefore assumes, unless the recipe or the command
line says otherwise, the release's official container on the recipe's GPU: the platform the GPU
implies (CUDA for NVIDIA; with no GPU named, the platform the official container is built for,
read from the pinned tree's docker/Dockerfile), the packages the pinned tree's requirement files install for that
platform (requirements/cuda.txt and what it includes with `-r`), and no out-of-tree plugins.
Every fact keeps where it came from; the analysis reads the profile through its bindings
(`hardware.platform`, `runtime.packages`), so a verdict that rests on it is decided under it
and says so.
"""

from __future__ import annotations

import re

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.model.findings import EntryPointGroup, ProfilePackage, RuntimeProfile, normalized_package

REQUIREMENTS = "requirements/{platform}.txt"  # the release's requirement file per platform
# what a pinned package brings that the vLLM tree does not name: PyTorch's Linux CUDA wheels
# require Triton (torch's own package metadata); the only such fact the profile adds
PULLED_IN = {"cuda": {"torch": (("triton", "PyTorch's Linux CUDA wheels require triton"),)}}
OFFICIAL_IMAGE = "vllm/vllm-openai"  # the image each release publishes
OFFICIAL_DOCKERFILE = "docker/Dockerfile"  # in the release's tree: what builds that image
OFFICIAL = f"the release's official container ({OFFICIAL_IMAGE})"
_REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)")
_LINUX_ONLY = re.compile(r"""\s*platform_system\s*==\s*["']Linux["']\s*""")
ENTRY_POINTS = "vllm.egg-info/entry_points.txt"  # the release's own entry points (in its sdist)
MAX_INCLUDES = 8  # `-r` depth: the release's files include one or two levels


def runtime_profile(tree, recipe, *, gpu: str | None = None, gpu_from: str = "") -> RuntimeProfile:
    """The profile of one review: the recipe's GPU (or `gpu` from the command line), its platform
    (or the recipe's `[runtime] platform`), the packages of the pinned tree's requirement file for
    that platform, overlaid by the recipe's `[runtime] packages`."""
    import srcreview.interp  # noqa: F401 - first: vllm.runtime and interp import each other (issue 24 leaves the cycle)
    from srcreview.vllm.runtime import PLATFORM_PREDICATES, platform_of

    pin = recipe.runtime
    gpu = gpu if gpu is not None else recipe.hardware.gpu
    gpu_from = gpu_from or recipe.hardware.gpu_from or ("the recipe's [hardware] gpu" if gpu else "")
    if pin.platform is not None:
        platforms = sorted({p for names in PLATFORM_PREDICATES.values() for p in names})
        if pin.platform not in platforms:
            raise DataError(f"{recipe.source_file}:{recipe.pin_line or 1}: [runtime] platform {pin.platform[:40]!r} "
                            f"is not a platform ({', '.join(platforms)})")
        platform, platform_from = pin.platform, "the recipe's [runtime] platform"
    elif platform_of(gpu):
        platform, platform_from = platform_of(gpu), f"{gpu} is an NVIDIA GPU"
    elif not gpu and (pin.image is None or _official(pin.image)) and (built := _container_platform(tree)):
        platform, platform_from = built
    else:
        platform, platform_from = None, "no GPU named" if not gpu else f"{gpu}: vendor not recognised"
    files: list[str] = []
    packages: dict[str, ProfilePackage] = {}
    if platform is not None:
        _read_requirements(tree, REQUIREMENTS.format(platform=platform), files, packages, 0)
        for name, brings in PULLED_IN.get(platform, {}).items():
            found = packages.get(normalized_package(name))
            for other, why in brings:
                if found is not None and found.installed and normalized_package(other) not in packages:
                    packages[normalized_package(other)] = ProfilePackage(
                        name=other, installed=True, requirement="",
                        source=f"pulled in by {found.requirement or found.name} at {found.source}: {why}")
    for name, installed in sorted(pin.packages.items()):
        given = packages.get(normalized_package(name))
        packages[normalized_package(name)] = ProfilePackage(
            name=name, installed=installed is not False, requirement=given.requirement if given else "",
            version=installed if isinstance(installed, str) else None, source="the recipe's [runtime] packages")
    entry_points = _entry_points(tree)
    container = f"the recipe's image {pin.image}, taken as the release's official build" \
        if pin.image else OFFICIAL
    return RuntimeProfile(platform=platform, platform_from=platform_from, gpu=gpu, gpu_from=gpu_from,
                          compute_capability=recipe.hardware.compute_capability,
                          compute_capability_from=recipe.hardware.compute_capability_from, container=container,
                          requirements=tuple(files), packages=tuple(packages.values()),
                          entry_points=entry_points, entry_points_from=ENTRY_POINTS if entry_points is not None else "")


def _official(image: str) -> bool:
    """Whether an image reference names the release's official container (any tag or digest)."""
    name = re.split(r"[:@]", image.removeprefix("docker.io/"), maxsplit=1)[0]
    return name == OFFICIAL_IMAGE


def _container_platform(tree) -> tuple[str, str] | None:
    """The platform the official container is built for, read from the pinned tree's own
    Dockerfile (its `ARG CUDA_VERSION=` and its `vllm-openai` stage): with no GPU named, the
    container still fixes the platform; only the GPU's capability stays open."""
    try:
        text = tree.read(OFFICIAL_DOCKERFILE).decode("utf-8", "replace")
    except SourceUnavailable:
        return None
    cuda = re.search(r"^ARG CUDA_VERSION=(\S+)", text, re.M)
    stage = re.search(rf"^FROM \S+ AS {re.escape(OFFICIAL_IMAGE.split('/')[-1])}\s*$", text, re.M)
    if cuda is None or stage is None:
        return None
    line = text.count("\n", 0, cuda.start()) + 1
    return "cuda", (f"no GPU named; the release's official container is built by {OFFICIAL_DOCKERFILE} "
                    f"(line {line}: CUDA {cuda.group(1)})")


def profile_bindings(profile: RuntimeProfile) -> dict:
    """The profile as the analysis reads it: the platform and the installed / absent packages."""
    from srcreview.vllm.runtime import ABSENT_KEY, ENTRY_POINTS_KEY, PACKAGES_KEY, PLATFORM_KEY

    out: dict = {}
    if profile.platform is not None:
        out[PLATFORM_KEY] = profile.platform
        out[PACKAGES_KEY] = profile.installed()
        if profile.entry_points is not None and profile.plugins == "none":
            out[ENTRY_POINTS_KEY] = tuple((g.group, g.names) for g in profile.entry_points)
    absent = tuple(sorted(normalized_package(p.name) for p in profile.packages if not p.installed))
    if absent:
        out[ABSENT_KEY] = absent
    return out


def _read_requirements(tree, path: str, files: list[str], packages: dict, depth: int) -> None:
    """Each requirement of `path` (and of the files it includes with `-r`), first mention kept."""
    if path in files or depth > MAX_INCLUDES:
        return
    try:
        text = tree.read(path).decode("utf-8", "replace")
    except SourceUnavailable:  # a tree without the file: the profile lists the files it read
        return
    files.append(path)
    folder = path.rsplit("/", 1)[0]
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            _read_requirements(tree, f"{folder}/{line.split(None, 1)[1].strip()}", files, packages, depth + 1)
            continue
        if line.startswith("-"):
            continue  # --extra-index-url and other options install nothing
        spec, _, marker = line.partition(";")
        if marker and not _LINUX_ONLY.fullmatch(marker):
            continue  # installed only under a marker the profile does not decide (python_version...)
        match = _REQUIREMENT.fullmatch(spec.strip())
        if match is None:
            continue
        key = normalized_package(match.group(1))
        packages.setdefault(key, ProfilePackage(name=match.group(1), installed=True, requirement=spec.strip(),
                                                source=f"{path}:{number}"))


def _entry_points(tree) -> tuple[EntryPointGroup, ...] | None:
    """Group -> entry-point names the release's package declares (an INI file, `[group]` then
    `name = module:attr` lines); None when the tree has no such file (a git checkout)."""
    try:
        text = tree.read(ENTRY_POINTS).decode("utf-8", "replace")
    except SourceUnavailable:
        return None
    groups: dict[str, list[str]] = {}
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            groups.setdefault(group, [])
        elif group is not None and "=" in line and not line.startswith(("#", ";")):
            groups[group].append(line.split("=", 1)[0].strip())
    return tuple(EntryPointGroup(group=g, names=tuple(sorted(names))) for g, names in sorted(groups.items()))
