"""docker-compose files: every service that runs `vllm serve` is one recipe, `file.yml#service`.

A service runs vLLM when its entrypoint/command invokes `vllm serve` (or the OpenAI server
module), or when it uses the `vllm/vllm-openai` image without overriding its entrypoint (which
is `vllm serve`), so `command:` holds the server's arguments. Its `environment` is the
recipe's env, its image tag the pin when the tag is a release (`v0.29.0`) or a nightly
commit. Hardware, which compose does not state, comes from `x-srcreview:` (in the service or
at the top level: `gpu`, `compute_capability`, `name`) or a `# srcreview:` comment. Other
services are skipped.

Values: compose itself substitutes `$VAR` / `${VAR:-default}` in `command:` from the deploying
shell's environment and `.env` (not from the service's `environment:`): unknown here, with the
default shown. `$$VAR` reaches the container as `$VAR`; under `sh -c` the container's shell
substitutes it from the service's `environment:` and `env_file:` (read, relative to the compose
file), which are certain. `volumes:` that mount a directory of the compose file's tree let
`--config /mounted/x.yaml` be read from the host side.
"""

from __future__ import annotations

import re

from srcreview.core.errors import DataError
from srcreview.model.recipe.command_line import (
    is_vllm_image,
    pin_of_image,
    recipe_from_words,
    serve_args,
)
from srcreview.model.recipe.directives import KEYS, Directives, read_directives
from srcreview.model.recipe.model import EnvVar, OpenItem, Recipe, RuntimePin
from srcreview.model.recipe.named_files import FileAccess, read_named
from srcreview.model.recipe.shell import Expansion, Word, commands
from srcreview.model.recipe.shell_values import UnknownValue
from srcreview.model.recipe.yaml_doc import Located

_COMPOSE_VAR = re.compile(r"\$(?:\{(?P<braced>[^}]*)\}|(?P<name>[A-Za-z_][A-Za-z0-9_]*))")
_SENTINEL = re.compile("\x00([^\x00\x01]*)\x01")

_DEFAULTED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}")
_SERVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def looks_like_compose(doc: Located | None) -> bool:
    return doc is not None and isinstance(doc.value, dict) and isinstance(doc.value.get("services"), Located) \
        and isinstance(doc.value["services"].value, dict)


def read_compose(doc: Located, text: str, shown: str, file: str, access: FileAccess = FileAccess()) -> list[Recipe]:
    lines = text.splitlines()
    file_directives = read_directives(text, shown)
    if doc.repeated:
        key, line, first = doc.repeated[0]
        raise DataError(f"{shown}:{line}: the key {key[:60]!r} is already defined on line {first} "
                        "(docker compose refuses the file)")
    top = _x_srcreview(doc.value.get("x-srcreview"), shown)
    recipes = []
    for name, service in doc.value["services"].value.items():
        if not isinstance(service.value, dict):
            raise DataError(f"{shown}:{service.line}: service {name!r} must be a mapping")
        served = _served(service, lines, shown)
        if served is None:
            continue
        if not _SERVICE.match(name):
            raise DataError(f"{shown}:{service.key_line or service.line}: {name[:60]!r} is not a compose service name")
        env_words, args = served
        args = _compose_values(args)
        directives = _combine(file_directives, top, _x_srcreview(service.value.get("x-srcreview"), shown))
        image = service.value.get("image")
        image_text = _text(image, shown, "image") if image is not None else ""
        runtime = pin_of_image(_defaults(image_text)) if image_text else RuntimePin()
        env_files, open_items = _env_files(service.value.get("env_file"), access, shown)
        open_items += _extends(service.value.get("extends")) + _passed_through_items(service.value.get("environment"))
        env = env_files + _environment(service.value.get("environment"), shown)
        env += [EnvVar(name=w.text.partition("=")[0], value=w.text.partition("=")[2], line=w.line) for w in env_words]
        env = _dedup(env)
        variables: dict[str, str | UnknownValue] = {e.name: e.value for e in env}
        for item, _ in _passed_through(service.value.get("environment")):
            variables[item] = UnknownValue(text=item, reason=f"the shell decides ${item}: the service's environment "
                                           "passes the deploying shell's value through")
        pinned = image is not None and (runtime.version or runtime.revision)
        mounts = _mounts(service.value.get("volumes"))
        recipe = recipe_from_words(args, path=f"{file}#{name}", file=file, name=name, env=env,
                                   runtime=runtime, pin_line=image.line if pinned and image is not None else None,
                                   directives=directives, fmt="compose", shown=shown, variables=variables,
                                   where="the service's environment",
                                   access=FileAccess(access.base, access.root, mounts))
        files = tuple(n for n in _env_file_names(service.value.get("env_file")) if not any(
            o.what == n for o in open_items))
        recipes.append(recipe.model_copy(update={"open": tuple(open_items) + recipe.open,
                                                 "files": files + recipe.files}))
    if not recipes:
        raise DataError(f"{shown}:{doc.value['services'].line}: no service runs `vllm serve` "
                        "(a vllm/vllm-openai image, or a command that runs it)")
    return recipes


def _compose_values(words: list[Word]) -> list[Word]:
    """Compose's own substitutions (sentinels left by _mark_compose) as Expansion parts the
    container cannot resolve (`outer`), beside the shell's own parts of a `sh -c` command."""
    out = []
    for word in words:
        if "\x00" not in word.text:
            out.append(word)
            continue
        parts: list = []
        for part in (word.parts or (word.text,)):
            if not isinstance(part, str):
                parts.append(part)
                continue
            at = 0
            for match in _SENTINEL.finditer(part):
                if match.start() > at:
                    parts.append(part[at:match.start()])
                parts.append(_outer(match.group(1).replace("\x02", "$")))
                at = match.end()
            if at < len(part):
                parts.append(part[at:])
        text = "".join(p if isinstance(p, str) else p.text for p in parts)
        out.append(Word(text, word.line, word.column, word.quoted, tuple(parts)))
    return out


def _outer(raw: str) -> Expansion:
    braced = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?\}", raw, re.S)
    if braced:
        return Expansion(raw, braced.group(1), braced.group(2) or "", braced.group(3) or "", outer=True)
    return Expansion(raw, raw.lstrip("${").rstrip("}") or None, outer=True)


def _mark_compose(text: str) -> str:
    """`text` with compose's own substitutions hidden in sentinels (for _compose_values) and
    `$$` turned into the container's `$`."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
            continue
        match = _COMPOSE_VAR.match(text, i)
        if match:
            out.append("\x00" + match.group(0).replace("$", "\x02") + "\x01")
            i = match.end()
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _passed_through(item: Located | None) -> list[tuple[str, int]]:
    """(name, line) of the `environment:` entries without a value (`- NAME`, `NAME:`): docker
    compose passes the deploying shell's value through."""
    if item is None or not isinstance(item.value, dict):
        return [(e.value, e.line) for e in (item.value if item is not None and isinstance(item.value, list) else ())
                if isinstance(e.value, str) and "=" not in e.value]
    return [(name, value.key_line or value.line) for name, value in item.value.items() if value.value is None]


def _passed_through_items(item: Located | None) -> list[OpenItem]:
    """An open item for each variable passed through: its value is the deploying shell's, so
    the analysis takes it as unknown (`may_set` env.NAME), never as unset."""
    return [OpenItem(what=name, line=line, may_set=(f"env.{name}",),
                     reason=f"the service's environment passes the deploying shell's {name} through: its value "
                            "is unknown here")
            for name, line in _passed_through(item) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)]


def _env_file_names(item: Located | None) -> list[str]:
    if item is None or item.value is None:
        return []
    entries = item.value if isinstance(item.value, list) else [item]
    names = []
    for entry in entries:
        path = entry.value.get("path") if isinstance(entry.value, dict) else None
        value = path.value if path else entry.value
        if isinstance(value, str):
            names.append(value)
    return names


def _env_files(item: Located | None, access: FileAccess, shown: str) -> tuple[list[EnvVar], list[OpenItem]]:
    """The variables of the service's `env_file:` files (NAME=value lines), in order, and what
    could not be read (an open question each)."""
    env: list[EnvVar] = []
    open_items: list[OpenItem] = []
    line = item.line if item is not None else 0
    for name in _env_file_names(item):
        found = read_named(name, access, "env_file")
        if found.text is None:
            open_items.append(OpenItem(what=name, line=line, incomplete=True, reason=found.reason + "; the variables "
                                       "it sets are unknown here"))
            continue
        for number, raw in enumerate(found.text.splitlines(), start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            key, eq, value = text.removeprefix("export ").partition("=")
            key = key.strip()
            if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
                raise DataError(f"{found.shown}:{number}: an env_file line must be NAME=value")
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            env.append(EnvVar(name=key, value=value, line=line))
    return env, open_items


def _extends(item: Located | None) -> list[OpenItem]:
    """`extends:` (another service, maybe of another file): what the service inherits from it
    (its command, environment) is not read, so the review does not cover it: incomplete."""
    if item is None:
        return []
    base = item.value.get("service") if isinstance(item.value, dict) else item
    name = base.value if isinstance(base, Located) and isinstance(base.value, str) else "another service"
    other = item.value.get("file") if isinstance(item.value, dict) else None
    where = f" of {other.value}" if isinstance(other, Located) and isinstance(other.value, str) else ""
    return [OpenItem(what=f"extends {name[:60]}{where[:80]}", line=item.line, incomplete=True,
                     reason=f"the service extends {name[:60]}{where[:80]}: what it inherits (command, environment) "
                            "is not read here")]


def _mounts(item: Located | None) -> tuple[tuple[str, str], ...]:
    """(container path, host path) of the bind mounts of the compose file's own tree (`./x:/y`)."""
    out = []
    for entry in (item.value if item is not None and isinstance(item.value, list) else ()):
        value = entry.value
        if isinstance(value, dict):
            source, target = value.get("source"), value.get("target")
            pair = (source.value if source else None, target.value if target else None)
        elif isinstance(value, str) and ":" in value:
            pair = tuple(value.split(":")[:2])
        else:
            continue
        source, target = pair
        if isinstance(source, str) and isinstance(target, str) and source.startswith(".") and target.startswith("/"):
            out.append((target, source))
    return tuple(out)


def _served(service: Located, lines: list[str], shown: str) -> tuple[list[Word], list[Word]] | None:
    value = service.value
    entrypoint = _words(value.get("entrypoint"), lines, shown)
    command = _words(value.get("command"), lines, shown)
    argv = (entrypoint or []) + (command or [])
    found = serve_args(argv) if argv else None
    if found is None and len(argv) >= 3 and argv[0].text.rsplit("/", 1)[-1] in ("sh", "bash") \
            and argv[1].text == "-c":  # `sh -c "... vllm serve ..."`: the command is in the string
        for words in commands(argv[2].text, shown, argv[2].line, argv[2].column):
            found = serve_args(words)
            if found is not None:
                break
    if found is not None:
        return found
    image = value.get("image")
    if entrypoint is None and image is not None and isinstance(image.value, str) \
            and is_vllm_image(_defaults(image.value)):
        return [], command or []  # the image's entrypoint is `vllm serve`: command holds its arguments
    return None


def _words(item: Located | None, lines: list[str], shown: str) -> list[Word] | None:
    """A compose command: a list (one word per item, exactly placed) or a string (shell words,
    placed by finding each in the file's text after the previous one)."""
    if item is None or item.value is None:
        return None
    if isinstance(item.value, list):
        words = []
        for part in item.value:
            if isinstance(part.value, (dict, list)) or part.value is None:
                raise DataError(f"{shown}:{part.line}: a command item must be a string")
            quoted = getattr(part.node, "style", None) in ("'", '"')
            words.append(Word(_mark_compose(str(part.value)), part.line, part.column + (1 if quoted else 0),
                              quoted=True))
        return words
    if not isinstance(item.value, str):
        raise DataError(f"{shown}:{item.line}: a command must be a string or a list")
    # compose splits the string as a shell would, but substitutes nothing itself beyond its own `${...}`
    words = [Word(w.text, w.line, w.column, w.quoted)
             for cmd in commands(_mark_compose(item.value), shown, item.line, item.column) for w in cmd]
    return _placed(words, lines, item)


def _placed(words: list[Word], lines: list[str], item: Located) -> list[Word]:
    line, column = item.line - 1, item.column - 1
    out = []
    for word in words:
        needle = _SENTINEL.sub(lambda m: m.group(1).replace("\x02", "$"), word.text).split("\n", 1)[0][:40]
        found = None
        for number in range(line, min(item.end_line, len(lines))):
            start = column if number == line else 0
            at = lines[number].find(needle, start) if needle else -1
            if at >= 0:
                found = (number, at)
                break
        if found is None:
            out.append(Word(word.text, item.line, item.column, word.quoted, word.parts))
            continue
        line, column = found[0], found[1] + len(needle)
        out.append(Word(word.text, found[0] + 1, found[1] + 1, word.quoted, word.parts))
    return out


def _defaults(text: str) -> str:
    """`${TAG:-v0.29.0}` -> `v0.29.0`: compose's default when the variable is unset (srcreview
    reads the file as written, not the deploying shell's environment)."""
    return _DEFAULTED.sub(lambda m: m.group(1), text)


def _text(item: Located, shown: str, what: str) -> str:
    if not isinstance(item.value, str):
        raise DataError(f"{shown}:{item.line}: {what} must be a string")
    return item.value


def _environment(item: Located | None, shown: str) -> list[EnvVar]:
    if item is None or item.value is None:
        return []
    out = []
    if isinstance(item.value, dict):
        for name, value in item.value.items():
            if value.value is None:
                continue  # `NAME:` passes the deploying shell's value through: unknown here
            if isinstance(value.value, (dict, list)):
                raise DataError(f"{shown}:{value.line}: environment {name} must be a string or number")
            out.append(EnvVar(name=name, value=_env_text(value.value), line=value.key_line or value.line))
        return out
    if isinstance(item.value, list):
        for entry in item.value:
            if not isinstance(entry.value, str):
                raise DataError(f"{shown}:{entry.line}: an environment entry must be NAME=value")
            name, eq, value = entry.value.partition("=")
            if eq:
                out.append(EnvVar(name=name, value=value, line=entry.line))
        return out
    raise DataError(f"{shown}:{item.line}: environment must be a mapping or a list")


def _env_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _dedup(env: list[EnvVar]) -> list[EnvVar]:
    return list({e.name: e for e in env}.values())


def _x_srcreview(item: Located | None, shown: str) -> Directives:
    found = Directives()
    if item is None:
        return found
    if not isinstance(item.value, dict):
        raise DataError(f"{shown}:{item.line}: x-srcreview must be a mapping ({', '.join(KEYS)})")
    for key, value in item.value.items():
        if key not in KEYS:
            raise DataError(f"{shown}:{value.key_line or value.line}: x-srcreview: unknown key {key[:40]!r} "
                            f"(expected: {', '.join(KEYS)})")
        if isinstance(value.value, (dict, list)) or value.value is None:
            raise DataError(f"{shown}:{value.line}: x-srcreview.{key} must be a string")
        found.values[key] = repr(value.value) if isinstance(value.value, float) else str(value.value)
        found.lines[key] = value.key_line or value.line
    return found


def _combine(*layers: Directives) -> Directives:
    out = Directives()
    for layer in layers:
        out.values.update(layer.values)
        out.lines.update(layer.lines)
    return out
