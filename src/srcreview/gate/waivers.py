"""Waivers: accepted findings, written beside the recipe because vLLM itself cannot be edited.

A waiver names a finding by fingerprint (stable across code motion), says why it is
accepted and until when. It lives either in a `srcreview.toml` in the recipe's directory
(applies to every recipe there, or to one with `recipe = "file.toml"`) or in the recipe:

    # srcreview.toml                          # or, in the recipe itself
    [[waivers]]                               [[srcreview.waivers]]
    fingerprint = "3f2a9c0d1e2b4a5c"          fingerprint = "3f2a9c0d1e2b4a5c"
    rule = "spec-draft-attention-backend-ignored"   # optional; checked when given
    reason = "draft uses the target backend; measured OK in run 41"
    expires = 2027-01-31                      # a TOML date or "2027-01-31"
    recipe = "mtp3-nested-triton.toml"        # srcreview.toml only, optional
    classification = "plausible"              # optional: what the finding was when waived
    severity = "medium"                       # optional: its severity then

A fingerprint ignores the classification (a baseline follows a finding through it), so a
waiver written for an open question would go on waiving the same finding once it is a
confirmed problem. A waiver therefore holds only while its finding is no more of a problem
than when it was written: `classification` records that (confirmed, refuted or plausible);
a waiver file without it takes the classification the baseline (`--baseline`) records for
the finding, and without a baseline keeps waiving whatever the finding is (as before: add
`classification` to pin it). `severity` does the same for the finding's severity (a rule
whose severity was raised): as for the baseline's `worse`, a finding outgrows its waiver when
it is more of a problem, or as much of one at a higher severity. A waiver its finding outgrew
waives nothing, and the gate's summary says which.

A table keyed by fingerprint (`[srcreview.waivers.3f2a9c0d1e2b4a5c]`) works too. A waived
finding stays in every report, marked waived. A waiver that has expired, matches no finding
of the recipes it applies to, or names an unknown rule is an error (DataError, exit 65)
pointing at its file and line: stale waivers must not pile up silently.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from srcreview.core.errors import DataError
from srcreview.core.project import DEFAULTS_TABLE
from srcreview.core.userfile import read_user_file
from srcreview.model.findings import SEVERITY_ORDER, Review, WaiverNote
from srcreview.model.recipe.files import WAIVER_FILE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_WAIVER_BYTES = 1_000_000
_FIELDS = {"fingerprint", "reason", "expires", "rule", "recipe", "classification", "severity"}
CLASSIFICATIONS = ("confirmed", "refuted", "plausible")
_FINGERPRINT = re.compile(r"^[0-9A-Za-z_.:-]{4,128}$")


@dataclass(frozen=True)
class Waiver:
    """One waiver, with where it is written and which reviewed recipes it applies to."""

    fingerprint: str
    reason: str
    expires: _dt.date
    file: str
    line: int
    rule: str | None = None
    recipe: str | None = None
    recipes: tuple[str, ...] = ()
    classification: str | None = None  # what the finding was when waived (None: not recorded)
    severity: str | None = None  # its severity then (None: not recorded)

    @property
    def source(self) -> str:
        return f"{self.file}:{self.line}"

    def note(self) -> WaiverNote:
        return WaiverNote(fingerprint=self.fingerprint, reason=self.reason,
                          expires=self.expires.isoformat(), source=self.source)


def load_waivers(recipes: Iterable[tuple[Path | str, str]],
                 project: tuple[Path, str] | None = None) -> tuple[Waiver, ...]:
    """Waivers for the reviewed recipes, given as (file on disk, path shown in reports), and
    those of the project's waiver file (`waivers` of the project defaults, srcreview.core.project:
    (file, shown)), which apply to every reviewed recipe (`recipe = "name.toml"`: those so named).

    Each `srcreview.toml` is read once, however many of its directory's recipes are reviewed.
    """
    waivers: list[Waiver] = []
    by_dir: dict[Path, tuple[str, list[tuple[str, str]]]] = {}
    for path, shown in [(Path(p), shown) for p, shown in recipes]:
        waivers.extend(_recipe_waivers(path, shown))
        sidecar = path.parent / WAIVER_FILE
        if sidecar.exists() or sidecar.is_symlink():  # not a regular file: refused when read, never skipped
            shown_dir = PurePosixPath(shown.replace("\\", "/")).parent
            shown_sidecar = str(shown_dir / WAIVER_FILE) if str(shown_dir) != "." else WAIVER_FILE
            entry = by_dir.setdefault(sidecar.resolve(), (shown_sidecar, []))
            entry[1].append((path.name, shown))
    if project is not None and Path(project[0]).resolve() not in by_dir:
        by_dir[Path(project[0]).resolve()] = (project[1], [(Path(path).name, shown) for path, shown in recipes])
    for sidecar, (shown_sidecar, members) in sorted(by_dir.items(), key=lambda kv: kv[1][0]):
        for waiver in _sidecar_waivers(sidecar, shown_sidecar):
            if waiver.recipe is None:
                applies = tuple(sorted({s for _, s in members}))
            else:
                applies = tuple(sorted({s for name, s in members if name == waiver.recipe}))
            waivers.append(replace(waiver, recipes=applies))
    return tuple(sorted(waivers, key=lambda w: (w.file, w.line)))


def check_waivers(waivers: Sequence[Waiver], reviews: Sequence[Review], today: _dt.date,
                  known_rules: Iterable[str] | None = None) -> None:
    """Refuse expired, unmatched, duplicate or wrongly-ruled waivers, first problem first.

    A waiver matching nothing in a review that could not complete is not an error: the
    finding may be missing because the review is, and the run exits 2 for that anyway.
    """
    known = None if known_rules is None else set(known_rules)
    findings = {r.recipe.path: {f.fingerprint: f for f in r.findings} for r in reviews}
    incomplete = {r.recipe.path for r in reviews if r.incomplete}  # may lack the finding: exit 2, not 65
    seen: dict[tuple[str, str], Waiver] = {}
    for waiver in sorted(waivers, key=lambda w: (w.file, w.line)):
        label = f"{waiver.source}: waiver {waiver.fingerprint}"
        if waiver.expires < today:
            raise DataError(f"{label} expired on {waiver.expires.isoformat()} "
                            f"(checked on {today.isoformat()}); renew it with a new reason or remove it")
        if waiver.rule is not None and known is not None and waiver.rule not in known:
            raise DataError(f"{label} names unknown rule {waiver.rule!r}")
        reviewed = [p for p in waiver.recipes if p in findings]
        for path in reviewed:
            key = (path, waiver.fingerprint)
            if key in seen:
                raise DataError(f"{label} repeats the waiver at {seen[key].source} for {path}")
            seen[key] = waiver
        matched = [findings[p][waiver.fingerprint] for p in reviewed if waiver.fingerprint in findings[p]]
        if not matched and any(p not in incomplete for p in reviewed):
            where = reviewed[0] if len(reviewed) == 1 else f"{len(reviewed)} recipes"
            raise DataError(f"{label} matches no finding of {where}; remove it")
        if waiver.rule is not None:
            other = sorted({f.rule for f in matched if f.rule != waiver.rule})
            if other:
                raise DataError(f"{label} names rule {waiver.rule!r} but the finding is from rule {other[0]!r}")


def _read_toml(path: Path, shown: str, what: str, text: str | None = None) -> tuple[dict, str]:
    if text is None:
        raw = read_user_file(path, shown, what, MAX_WAIVER_BYTES)
        try:
            text = raw.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise DataError(f"{shown}:{line}: {what} is not valid UTF-8") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        pos = re.search(r"\(at line (\d+)", str(exc))
        raise DataError(f"{shown}:{pos.group(1) if pos else 1}: malformed TOML: "
                        f"{re.sub(r' ?[(]at line.*', '', str(exc))}") from None
    except RecursionError:
        raise DataError(f"{shown}: malformed TOML: nesting too deep") from None


def _recipe_waivers(path: Path, shown: str) -> list[Waiver]:
    from srcreview.model.recipe import MAX_RECIPE_BYTES, decode_recipe, is_toml_recipe

    # the recipe was read already: decoded as its reader did (a UTF-16 compose file is one)
    text = decode_recipe(read_user_file(path, shown, "recipe", MAX_RECIPE_BYTES), shown)
    if not is_toml_recipe(text):
        return []  # a script, vLLM config or compose file: its waivers live in srcreview.toml
    data, text = _read_toml(path, shown, "recipe", text)
    table = data.get("srcreview")
    if table is None:
        return []
    lines = _Lines(text)
    if not isinstance(table, dict):
        raise DataError(f"{shown}:{lines.header(('srcreview',))}: [srcreview] must be a table")
    unknown = sorted(set(table) - {"waivers"})
    if unknown:
        raise DataError(f"{shown}:{lines.key(('srcreview',), unknown[0])}: unknown key srcreview.{unknown[0]} "
                        "(expected: waivers)")
    waivers = _parse(table.get("waivers"), ("srcreview", "waivers"), lines, shown, allow_recipe=False)
    return [replace(w, recipes=(shown,)) for w in waivers]


def _sidecar_waivers(path: Path, shown: str) -> list[Waiver]:
    data, text = _read_toml(path, shown, "waiver")
    lines = _Lines(text)
    unknown = sorted(set(data) - {"waivers", DEFAULTS_TABLE})  # [defaults]: the project's (core.project)
    if unknown:
        raise DataError(f"{shown}:{lines.key((), unknown[0])}: unknown key {unknown[0]} "
                        f"(expected: waivers, {DEFAULTS_TABLE})")
    return _parse(data.get("waivers"), ("waivers",), lines, shown, allow_recipe=True)


def _parse(raw, table: tuple[str, ...], lines: _Lines, shown: str, allow_recipe: bool) -> list[Waiver]:
    dotted = ".".join(table)
    if raw is None:
        return []
    entries: list[tuple[dict, tuple[str, ...] | None, int]]  # (body, its table or None in an array, line)
    if isinstance(raw, dict):
        entries = []
        for fingerprint, body in raw.items():
            if not isinstance(body, dict):
                raise DataError(f"{shown}:{lines.key(table, fingerprint)}: {dotted}.{fingerprint} must be a table "
                                "with reason and expires")
            if "fingerprint" in body and body["fingerprint"] != fingerprint:
                raise DataError(f"{shown}:{lines.key(table + (fingerprint,), 'fingerprint')}: fingerprint "
                                f"{body['fingerprint']!r} differs from the table name {fingerprint!r}")
            start = lines.header(table + (fingerprint,), fallback=lines.key(table, fingerprint))
            entries.append(({**body, "fingerprint": fingerprint}, table + (fingerprint,), start))
    elif isinstance(raw, list):
        entries = []
        starts = lines.array_headers(table)
        for i, body in enumerate(raw):
            start = starts[i] if i < len(starts) else lines.key(table[:-1], table[-1])
            if i >= len(starts) and isinstance(body, dict) and isinstance(body.get("fingerprint"), str):
                start = lines.find(body["fingerprint"], after=start)  # inline array: the fingerprint's line
            if not isinstance(body, dict):
                raise DataError(f"{shown}:{start}: {dotted}[{i}] must be a table")
            entries.append((body, None, start))
    else:
        raise DataError(f"{shown}:{lines.key(table[:-1], table[-1])}: {dotted} must be a table or an array of tables")

    waivers = []
    for body, keyed, start in entries:
        def where(key: str, body=body, keyed=keyed, start=start) -> int:
            return lines.key(keyed, key, fallback=start) if keyed else lines.after(start, key)

        allowed = _FIELDS if allow_recipe else _FIELDS - {"recipe"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            hint = " (recipe = ... belongs in srcreview.toml)" if unknown[0] == "recipe" else ""
            raise DataError(f"{shown}:{where(unknown[0])}: unknown waiver key {unknown[0]!r}{hint} "
                            f"(expected: {', '.join(sorted(allowed))})")
        for required in ("fingerprint", "reason", "expires"):
            if required not in body:
                raise DataError(f"{shown}:{start}: waiver without {required}")
        fingerprint = body["fingerprint"]
        if not isinstance(fingerprint, str) or not _FINGERPRINT.match(fingerprint):
            raise DataError(f"{shown}:{where('fingerprint')}: waiver fingerprint must be the finding's "
                            "fingerprint (letters, digits, - _ . :)")
        reason = body["reason"]
        if not isinstance(reason, str) or not reason.strip():
            raise DataError(f"{shown}:{where('reason')}: waiver {fingerprint}: reason must be a non-empty string")
        expires = _expiry(body["expires"])
        if expires is None:
            raise DataError(f"{shown}:{where('expires')}: waiver {fingerprint}: expires must be a date "
                            "like 2027-01-31")
        for optional in ("rule", "recipe", "classification", "severity"):
            if optional in body and (not isinstance(body[optional], str) or not body[optional]):
                raise DataError(f"{shown}:{where(optional)}: waiver {fingerprint}: {optional} must be "
                                "a non-empty string")
        classification = body.get("classification")
        if classification is not None and classification not in CLASSIFICATIONS:
            raise DataError(f"{shown}:{where('classification')}: waiver {fingerprint}: classification must be "
                            f"one of {', '.join(CLASSIFICATIONS)} (what the finding was when waived)")
        severity = body.get("severity")
        if severity is not None and severity not in SEVERITY_ORDER:
            raise DataError(f"{shown}:{where('severity')}: waiver {fingerprint}: severity must be one of "
                            f"{', '.join(sorted(SEVERITY_ORDER, key=SEVERITY_ORDER.__getitem__, reverse=True))} "
                            "(the finding's severity when waived)")
        recipe = body.get("recipe")
        if recipe is not None and ("/" in recipe or "\\" in recipe):
            raise DataError(f"{shown}:{where('recipe')}: waiver {fingerprint}: recipe names a file in this "
                            "directory, without a path")
        waivers.append(Waiver(fingerprint=fingerprint, reason=reason.strip(), expires=expires,
                              file=shown, line=start, rule=body.get("rule"), recipe=recipe,
                              classification=classification, severity=severity))
    return waivers


def _expiry(value) -> _dt.date | None:
    if isinstance(value, _dt.datetime):
        return None
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


class _Lines:
    """Lines of TOML headers and keys, so each waiver error names file:line (tomllib keeps none)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""  # a bare or quoted key,
                      r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")  # then dotted parts

    def __init__(self, text: str):
        self._headers: dict[tuple[str, ...], int] = {}
        self._arrays: dict[tuple[str, ...], list[int]] = {}
        self._keys: dict[tuple[str, ...], int] = {}
        self._key_lines: list[tuple[int, str]] = []
        self._text = text.splitlines()
        table: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                table = self._split(header.group(2))
                if header.group(1) == "[[":
                    self._arrays.setdefault(table, []).append(number)
                else:
                    self._headers.setdefault(table, number)
                self._key_lines.append((number, "["))
                continue
            key = self._KEY.match(line)
            if key:
                parts = self._split(key.group(1))
                self._keys.setdefault(table + parts, number)
                self._key_lines.append((number, parts[0]))

    @staticmethod
    def _split(dotted: str) -> tuple[str, ...]:
        return tuple(p.strip().strip("\"'") for p in re.split(r"\.(?=(?:[^\"']|\"[^\"]*\"|'[^']*')*$)", dotted))

    def header(self, table: tuple[str, ...], fallback: int | None = None) -> int:
        if table in self._headers:
            return self._headers[table]
        if fallback is not None:
            return fallback
        return self.key(table[:-1], table[-1]) if table else 1

    def key(self, table: tuple[str, ...] | None, key: str, fallback: int | None = None) -> int:
        table = table or ()
        if table + (key,) in self._keys:
            return self._keys[table + (key,)]
        if table + (key,) in self._headers:
            return self._headers[table + (key,)]
        if fallback is not None:
            return fallback
        for end in range(len(table), 0, -1):
            if table[:end] in self._headers:
                return self._headers[table[:end]]
        return 1

    def find(self, text: str, after: int) -> int:
        """The first line from `after` on that contains `text` (else `after`)."""
        for number, line in enumerate(self._text[after - 1:], start=after):
            if text in line:
                return number
        return after

    def array_headers(self, table: tuple[str, ...]) -> list[int]:
        return self._arrays.get(table, [])

    def after(self, start: int, key: str) -> int:
        """The line of `key` inside the block that starts at `start` (else `start`)."""
        for number, name in self._key_lines:
            if number <= start:
                continue
            if name == "[":
                break
            if name == key:
                return number
        return start
