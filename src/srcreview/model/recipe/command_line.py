"""`vllm serve MODEL --flag value ...` as a recipe: from a shell script, a Dockerfile or a string.

The reader keeps each flag as written, with the words after it and its position
(`RawFlag`); which engine key a flag sets, whether it takes a value and how the value is
typed is the pinned revision's business (srcreview.vllm.flags). Environment assignments
before the command (`VAR=1 vllm serve`, `export VAR=1`, Dockerfile `ENV`) are the recipe's
env; a Dockerfile's `FROM vllm/vllm-openai:v0.29.0` pins the release.

A word the shell substitutes (`$PORT`, `${PORT:-8000}`, `$(...)`) is resolved from the
script's own certain assignments, else kept as an UnknownValue (srcreview.model.recipe.
shell_values); `--config FILE` is read, as vLLM's parser reads it, from the recipe's directory
(srcreview.model.recipe.named_files).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from srcreview.core import jsonvalue
from srcreview.core.errors import DataError
from srcreview.model.recipe.directives import Directives, read_directives
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    EnvVar,
    Format,
    OpenItem,
    RawFlag,
    Recipe,
    RecipeInfo,
    RuntimePin,
)
from srcreview.model.recipe.named_files import FileAccess
from srcreview.model.recipe.shell import Word, command_list, commands, is_assignment
from srcreview.model.recipe.shell_values import ScriptVariables, UnknownValue, resolve, tail
from srcreview.vllm.anchors import CLI_MODULE, PACKAGE, SERVER_MODULES

_WRAPPERS = {"exec", "env", "nohup", "time", "command", "sudo", "stdbuf"}
_REDIRECT = re.compile(r"^[0-9]*(>>?|<)(&?[0-9-]*)?$")
_IMAGE = re.compile(r"(?:^|/)vllm-openai(?::(?P<tag>[A-Za-z0-9._-]+))?(?:@sha256:[0-9a-f]{64})?$")
_RELEASE_TAG = re.compile(r"v?([0-9]+\.[0-9]+\.[0-9]+(?:rc[0-9]+|\.post[0-9]+)?)")
_NIGHTLY_TAG = re.compile(r"nightly-([0-9a-f]{40})")
_DOCKER_INSTRUCTION = re.compile(r"^\s*(FROM|ENV|CMD|ENTRYPOINT|ARG|RUN|COPY|ADD|WORKDIR|LABEL|EXPOSE|USER|"
                                 r"SHELL|VOLUME|HEALTHCHECK|STOPSIGNAL|ONBUILD|MAINTAINER)\b", re.I)


def serve_args(words: list[Word]) -> tuple[list[Word], list[Word]] | None:
    """(env assignments before the command, the words after `vllm serve`) or None if `words`
    does not run the vLLM server."""
    env: list[Word] = []
    i = 0
    while i < len(words) and (is_assignment(words[i]) or words[i].text in _WRAPPERS):
        if is_assignment(words[i]):
            env.append(words[i])
        i += 1
    rest = words[i:]
    for j, word in enumerate(rest):
        name = PurePosixPath(word.text).name
        if name == PACKAGE and j + 1 < len(rest) and rest[j + 1].text == "serve":
            return env, rest[j + 2:]
        if word.text == "-m" and j + 1 < len(rest):
            module = rest[j + 1].text
            if module in SERVER_MODULES:
                return env, rest[j + 2:]
            if module == CLI_MODULE and j + 2 < len(rest) and rest[j + 2].text == "serve":
                return env, rest[j + 3:]
    return None


def parse_args(words: list[Word], variables: dict | None = None,
               where: str = "the script") -> tuple[list[Word], list[RawFlag]]:
    """Positional words and flags (each with the words that follow it up to the next flag),
    values as the shell gives them (`variables`: see shell_values.resolve)."""
    variables = variables if variables is not None else {}

    def value(w: Word):
        return resolve(w, variables, where)

    positionals: list[Word] = []
    flags: list[RawFlag] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not word.quoted and _REDIRECT.match(word.text):  # `> log`, `2>&1`: the shell's, not vLLM's
            i += 2 if word.text in (">", ">>", "<") else 1
            continue
        if word.text.startswith("-") and len(word.text) > 1 and not _is_number(word.text):
            if word.text == "--":
                positionals.extend(words[i + 1:])
                break
            name, eq, inline = word.text.partition("=")
            following = []
            i += 1
            while i < len(words) and not (words[i].text.startswith("-") and len(words[i].text) > 1
                                          and not _is_number(words[i].text)) \
                    and not (not words[i].quoted and _REDIRECT.match(words[i].text)):
                following.append(value(words[i]))
                i += 1
            if eq:
                inline_value = value(tail(word, len(name) + 1)) if word.expands else inline
                flags.append(RawFlag(flag=name, value=inline_value, following=tuple(following),
                                     line=word.line, column=word.column))
            else:
                flags.append(RawFlag(flag=name, following=tuple(following), line=word.line, column=word.column))
            continue
        positionals.append(word)
        i += 1
    return positionals, flags


def _is_number(text: str) -> bool:
    return bool(re.fullmatch(r"-[0-9.]+(e-?[0-9]+)?", text))


def recipe_from_words(words: list[Word], *, path: str, file: str, name: str, env: list[EnvVar],
                      runtime: RuntimePin, pin_line: int | None, directives: Directives, fmt: Format,
                      shown: str, variables: dict | None = None, where: str = "the script",
                      access: FileAccess = FileAccess()) -> Recipe:
    """The recipe of the words after `vllm serve` (MODEL first when given positionally; words
    the shell may split into several, such as an unquoted `$EXTRA_ARGS`, are open)."""
    positionals, flags = parse_args(words, variables, where)
    if len(flags) > MAX_SETTINGS:
        raise DataError(f"{shown}:{flags[MAX_SETTINGS].line}: more than {MAX_SETTINGS} settings; "
                        "a vLLM recipe has tens")
    open_items: list[OpenItem] = []
    model = None
    for word in positionals:
        value = resolve(word, variables or {}, where)
        if isinstance(value, UnknownValue) and not word.quoted and value.text == word.text and word.expands:
            # unquoted: the shell may split it into any number of words, flags included
            open_items.append(OpenItem(what=word.text, line=word.line, reason=f"{value.reason}; unquoted, it may "
                                       "expand to any words, engine arguments included"))
            continue
        if isinstance(value, UnknownValue):
            open_items.append(OpenItem(what=word.text, line=word.line, reason=f"the served model: {value.reason}"))
            model = model or ""
            continue
        if model is None:
            model = value
            continue
        raise DataError(f"{shown}:{word.line}: unexpected word {word.text[:60]!r} after the model "
                        f"{model!r} (vllm serve takes one model)")
    if not model:
        model = _model_option(flags) or model
    recipe = Recipe(path=path, file=file if file != path else "", format=fmt,
                    info=RecipeInfo(name=directives.name or name, model=model or None),
                    runtime=directives.runtime(runtime, shown), hardware=directives.hardware(shown),
                    env=tuple(env), flags=tuple(flags), pin_line=directives.pin_line or pin_line,
                    open=tuple(open_items))
    from srcreview.model.recipe.config_file import with_config_file

    return with_config_file(recipe, access, shown)


def _model_option(flags: list[RawFlag]) -> str | None:
    """The model `--model X` names, known before the revision maps the flags, so the model's
    config is bound like a positional model's (the mapping checks the flag is the model's)."""
    for flag in flags:
        if flag.flag == "--model":
            value = flag.value if flag.value is not None else (flag.following[0] if flag.following else None)
            return value if isinstance(value, str) and value else None
    return None


def env_from_assignments(words: list[Word]) -> list[EnvVar]:
    out = []
    for word in words:
        name, _, value = word.text.partition("=")
        out.append(EnvVar(name=name, value=value, line=word.line))
    return out


def pin_of_image(image: str) -> RuntimePin:
    """A release tag (`vllm/vllm-openai:v0.29.0`) or nightly commit tag pins the engine; other
    images (`:latest`, a digest, not vLLM's) only name the image."""
    match = _IMAGE.search(image.strip())
    tag = match.group("tag") if match else None
    release = _RELEASE_TAG.fullmatch(tag) if tag else None
    nightly = _NIGHTLY_TAG.fullmatch(tag) if tag else None
    return RuntimePin(image=image.strip(), version=release.group(1) if release else None,
                      revision=nightly.group(1) if nightly else None)


def is_vllm_image(image: str) -> bool:
    return bool(_IMAGE.search(image.strip()))


# ---------------------------------------------------------------------------------------------
# files


def read_script(text: str, shown: str, file: str, access: FileAccess = FileAccess()) -> list[Recipe]:
    """Every `vllm serve` of a shell script (or a one-line command)."""
    directives = read_directives(text, shown)
    exported: list[EnvVar] = []
    found = []
    variables = ScriptVariables()
    for words, operator in command_list(text, shown):
        seen_before = variables.snapshot()
        variables.see(words, operator)
        if words[0].text == "export" and not words[0].quoted:
            exported += env_from_assignments([w for w in words[1:] if is_assignment(w)])
            continue
        if all(is_assignment(w) for w in words):
            continue  # plain shell variables are not the server's environment
        served = serve_args(words)
        if served is not None:
            found.append((served, list(exported), seen_before))
    if not found:
        raise DataError(f"{shown}:1: no `vllm serve` command found")
    stem = PurePosixPath(file).stem or file
    recipes = []
    for number, ((env_words, args), env, seen) in enumerate(found, start=1):
        path = file if len(found) == 1 else f"{file}#{number}"
        recipes.append(recipe_from_words(args, path=path, file=file,
                                         name=stem if len(found) == 1 else f"{stem}#{number}",
                                         env=_merge_env(env, env_from_assignments(env_words)),
                                         runtime=RuntimePin(), pin_line=None, directives=directives,
                                         fmt="command-line", shown=shown, variables=seen, access=access))
    return recipes


def _merge_env(first: list[EnvVar], then: list[EnvVar]) -> list[EnvVar]:
    merged = {e.name: e for e in first}
    merged.update({e.name: e for e in then})
    return list(merged.values())


def looks_like_dockerfile(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return bool(re.match(r"^(FROM|ARG)\s", stripped, re.I))
    return False


def read_dockerfile(text: str, shown: str, file: str, access: FileAccess = FileAccess()) -> list[Recipe]:
    """The server a Dockerfile's last stage runs: ENTRYPOINT + CMD (or the vLLM image's own
    `vllm serve` entrypoint followed by CMD), its ENV, and its `FROM` image as the pin."""
    directives = read_directives(text, shown)
    image, image_line = "", None
    env: list[EnvVar] = []
    entrypoint: list[Word] | None = None
    cmd: list[Word] | None = None
    for keyword, body, line, column in _instructions(text):
        if keyword == "FROM":
            parts = [w for w in body.split() if not w.startswith("--")]
            image, image_line = (parts[0] if parts else ""), line
            env, entrypoint, cmd = [], None, None  # a new stage starts afresh
        elif keyword == "ENV":
            env = _merge_env(env, _docker_env(body, shown, line, column))
        elif keyword in ("CMD", "ENTRYPOINT"):
            words = _docker_words(body, shown, line, column)
            if keyword == "CMD":
                cmd = words
            else:
                entrypoint, cmd = words, None  # ENTRYPOINT resets an inherited CMD
    runtime = pin_of_image(image) if image else RuntimePin()
    argv: list[Word] = []
    if entrypoint is not None:
        argv = entrypoint + (cmd or [])
    elif cmd is not None:
        argv = cmd
    served = serve_args(argv) if argv else None
    if served is None and entrypoint is None and image and is_vllm_image(image):
        served = ([], cmd or [])  # the vLLM image's entrypoint is the server; CMD holds its arguments
    if served is None:
        raise DataError(f"{shown}:1: the Dockerfile runs no `vllm serve` (ENTRYPOINT/CMD, or a vllm/vllm-openai "
                        "base image)")
    stem = PurePosixPath(file).parent.name or PurePosixPath(file).stem
    # shell form runs under /bin/sh -c with the stage's ENV set; exec form substitutes nothing
    variables = {e.name: e.value for e in env}
    return [recipe_from_words(served[1], path=file, file=file, name=stem or file,
                              env=_merge_env(env, env_from_assignments(served[0])),
                              runtime=runtime, pin_line=image_line if runtime.version or runtime.revision else None,
                              directives=directives, fmt="command-line", shown=shown, variables=variables,
                              where="the Dockerfile", access=access)]


def _instructions(text: str):
    """(KEYWORD, body, line, column of the body) per instruction, continuations joined
    (the body keeps its backslash-newlines, so word positions stay exact)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _DOCKER_INSTRUCTION.match(line)
        if not match or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        body = [line[match.end():]]
        while body[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            body.append("" if nxt.lstrip().startswith("#") else nxt)  # comments inside continuations vanish
        i += 1
        text_body = "\n".join(body)
        lead = len(text_body) - len(text_body.lstrip(" \t"))
        yield match.group(1).upper(), text_body[lead:], start + 1, match.end() + lead + 1


def _docker_words(body: str, shown: str, line: int, column: int) -> list[Word]:
    """Exec form (a JSON array: each string a word) or shell form (`sh -c` semantics)."""
    stripped = body.strip()
    if stripped.startswith("["):
        try:
            items = jsonvalue.loads(stripped.replace("\\\n", ""))
        except json.JSONDecodeError:
            items = None  # not JSON: Docker reads it as the shell form
        except ValueError as exc:  # JSON no reader holds (200,000 `[` deep, 1e999): never the shell form
            raise DataError(f"{shown}:{line}: exec form: {exc}") from None
        if isinstance(items, list) and all(isinstance(x, str) for x in items):
            return _json_words(body, items, line, column)
    words = [w for cmd in commands(body, shown, line, column) for w in cmd]
    # `sh -c "vllm serve ..."`: the command is inside the string
    if len(words) >= 3 and PurePosixPath(words[0].text).name in ("sh", "bash") and words[1].text == "-c":
        return [w for cmd in commands(words[2].text, shown, words[2].line, words[2].column + 1) for w in cmd]
    return words


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _json_words(body: str, items: list[str], line: int, column: int) -> list[Word]:
    words = []
    for match, item in zip(_JSON_STRING.finditer(body), items, strict=False):
        before = body[:match.start()]
        at_line = line + before.count("\n")
        at_col = (column + len(before)) if "\n" not in before else len(before) - before.rfind("\n")
        words.append(Word(item, at_line, at_col + 1, quoted=True))  # +1: past the opening quote
    return words


def _docker_env(body: str, shown: str, line: int, column: int) -> list[EnvVar]:
    words = [w for cmd in commands(body, shown, line, column) for w in cmd]
    if words and "=" not in words[0].text:  # legacy `ENV NAME value with spaces`
        return [EnvVar(name=words[0].text, value=" ".join(w.text for w in words[1:]), line=words[0].line)]
    return env_from_assignments([w for w in words if is_assignment(w)])
