"""YAML with positions: PyYAML's node graph (safe tags only), read as values that remember their line.

Compose files and vLLM config files are YAML; a setting must keep the line and column it was
written on. Nodes carry their marks; `Located` pairs a value with them. Aliases are followed
(compose files use `<<: *defaults`), but a document that expands to more than `MAX_NODES`
nodes (an alias bomb) is refused, as is one nested too deep, and a collection tagged with
anything but YAML's own tags (`!!python/object/apply:…` read as a plain list took its argument
as the command). A key written twice is kept as the last (as PyYAML, and so vLLM, reads it) and
recorded on the document: docker compose refuses such a file, so its reader does too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from srcreview.core.errors import DataError

MAX_NODES = 200_000
# the collection tags a safe loader constructs, and compose's own merge tags (compose-spec)
_COLLECTION_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("map", "seq", "omap", "pairs", "set")) \
    | {"!reset", "!override"}


@dataclass(frozen=True)
class Located:
    value: Any  # str, int, float, bool, None, list[Located], dict[str, Located]
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    node: Any = None  # the YAML node (scalars: its style, for positions inside the text)
    key_line: int | None = None  # for a mapping's value: where its key is written
    key_column: int | None = None
    repeated: tuple[tuple[str, int, int], ...] = ()  # the document's: (key, its line, the first one's line)

    def plain(self) -> Any:
        """The value without positions."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def parse(text: str, shown: str) -> Located | None:
    """The single document of `text` (None if empty); DataError on invalid YAML."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)  # checks every character first: a control character is a ReaderError
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise DataError(f"{shown}:{line}: malformed YAML: the character U+{exc.character:04X} is not allowed") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        reader = _Reader(loader, shown)
        doc = reader.read(node, 0)
        return replace(doc, repeated=tuple(reader.repeated)) if reader.repeated else doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise DataError(f"{shown}:{line}: malformed YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise DataError(f"{shown}:1: malformed YAML: {str(exc).splitlines()[0][:200]}") from None
    except RecursionError:
        raise DataError(f"{shown}: malformed YAML: nesting too deep") from None
    finally:
        loader.dispose()


class _Reader:
    def __init__(self, loader, shown: str):
        self.loader = loader
        self.shown = shown
        self.count = 0
        self.repeated: list[tuple[str, int, int]] = []

    def read(self, node, depth: int) -> Located:
        import yaml

        self.count += 1
        if self.count > MAX_NODES:
            raise DataError(f"{self.shown}:{node.start_mark.line + 1}: YAML expands to more than {MAX_NODES} "
                            "nodes (aliases)")
        if depth > 64:
            raise DataError(f"{self.shown}:{node.start_mark.line + 1}: YAML nested deeper than 64 levels")
        where = dict(line=node.start_mark.line + 1, column=node.start_mark.column + 1,
                     end_line=node.end_mark.line + 1, node=node)
        if isinstance(node, yaml.CollectionNode) and node.tag not in _COLLECTION_TAGS:
            raise DataError(f"{self.shown}:{node.start_mark.line + 1}: malformed YAML: the tag {node.tag[:80]} "
                            "is not one a safe YAML reader constructs")
        if isinstance(node, yaml.MappingNode):
            self._own_repeats(node)
            self.loader.flatten_mapping(node)  # `<<: *defaults` merges, as compose reads them
            out: dict[str, Located] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True) \
                    if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, (str, int, float, bool)) or key is None:
                    raise DataError(f"{self.shown}:{key_node.start_mark.line + 1}: a mapping key must be a scalar")
                out[str(key)] = replace(self.read(value_node, depth + 1), key_line=key_node.start_mark.line + 1,
                                        key_column=key_node.start_mark.column + 1)
            return Located(out, **where)
        if isinstance(node, yaml.SequenceNode):
            return Located([self.read(item, depth + 1) for item in node.value], **where)
        try:
            value = self.loader.construct_object(node, deep=True)
        except (OverflowError, ValueError):  # a YAML 1.1 base-60 float past float's range (`1:59:...:59.5`)
            raise DataError(f"{self.shown}:{node.start_mark.line + 1}: the number {node.value[:20]}... "
                            "is out of range") from None
        if not isinstance(value, (str, int, float, bool)) and value is not None:
            value = str(value)  # dates, binary: as text
        return Located(value, **where)

    def _own_repeats(self, node) -> None:
        """Record the keys written twice in this mapping itself (before `<<` merges: a key that
        overrides a merged one is how merges are used)."""
        first: dict[str, int] = {}
        for key_node, _ in node.value:
            if not hasattr(key_node, "tag") or key_node.tag == "tag:yaml.org,2002:merge" or key_node.id != "scalar":
                continue
            key = str(self.loader.construct_object(key_node, deep=True))
            if key in first:
                self.repeated.append((key, key_node.start_mark.line + 1, first[key]))
            else:
                first[key] = key_node.start_mark.line + 1
