"""srcreview.core.records: the frozen, validated records a warm check uses instead of pydantic models.

They must validate as strictly as the contract says (no coercion across types, unknown keys
refused, required keys named), read back what they dump, describe it in a JSON Schema that a
validator accepts, and sit inside the pydantic models of the analysis unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel

from srcreview.core.records import Field, Record, RecordError, field_validator


class Leaf(Record):
    """A leaf."""

    name: str
    size: int = 0
    kind: Literal["a", "b"] = "a"
    note: str | None = Field(None, omit_none=True, description="absent from dumps when None")
    secret: str | None = Field(None, exclude=True, repr=False)


class Tree(Record):
    leaves: tuple[Leaf, ...] = ()
    first: Leaf | None = None
    tags: dict[str, Any] = Field(default_factory=dict)
    weight: float = 1.0

    @field_validator("tags", mode="before")
    @classmethod
    def _no_empty_keys(cls, value):
        if isinstance(value, dict) and "" in value:
            raise ValueError("a tag needs a name")
        return value

    def _validated(self) -> None:
        if self.first is not None and self.first not in self.leaves:
            raise ValueError("first must be one of the leaves")


class Loose(Record, extra="ignore"):
    name: str


def _error(exc: pytest.ExceptionInfo) -> tuple:
    err = exc.value.errors()[0]
    return err["loc"], err["type"]


def test_nested_input_becomes_records_and_lists_become_tuples():
    tree = Tree.model_validate({"leaves": [{"name": "x", "size": 2}, {"name": "y"}], "first": {"name": "x", "size": 2}})
    assert tree.leaves == (Leaf(name="x", size=2), Leaf(name="y")) and isinstance(tree.leaves, tuple)
    assert tree.first is not None and tree.first.size == 2 and tree.weight == 1.0
    assert Tree(leaves=[Leaf(name="z")]).leaves == (Leaf(name="z"),), "direct construction converts too"
    assert Tree(weight=2).weight == 2.0 and type(Tree(weight=2).weight) is float


@pytest.mark.parametrize("data, loc, kind", [
    ({"leaves": [{"name": 5}]}, ("leaves", 0, "name"), "string_type"),
    ({"leaves": [{"name": "x", "size": "5"}]}, ("leaves", 0, "size"), "int_type"),
    ({"leaves": [{"name": "x", "size": True}]}, ("leaves", 0, "size"), "int_type"),
    ({"leaves": [{"name": "x", "kind": "c"}]}, ("leaves", 0, "kind"), "literal_error"),
    ({"leaves": [{"size": 1}]}, ("leaves", 0, "name"), "missing"),
    ({"leaves": [{"name": "x", "colour": "red"}]}, ("leaves", 0, "colour"), "extra_forbidden"),
    ({"leaves": "x"}, ("leaves",), "tuple_type"),
    ({"leaves": ["x"]}, ("leaves", 0), "model_type"),
    ({"weight": "heavy"}, ("weight",), "float_type"),
    ({"tags": {"": 1}}, ("tags",), "value_error"),
    ({"first": {"name": "q"}}, (), "value_error"),
])
def test_what_does_not_fit_is_refused_and_located(data, loc, kind):
    with pytest.raises(RecordError) as exc:
        Tree.model_validate(data)
    assert _error(exc) == (loc, kind)
    assert exc.value.title == "Tree" and isinstance(exc.value, ValueError)


def test_every_error_is_listed_not_only_the_first():
    with pytest.raises(RecordError) as exc:
        Leaf.model_validate({"name": 1, "size": "2", "extra": 3})
    assert exc.value.error_count() == 1, "unknown keys are refused before the fields are read"
    with pytest.raises(RecordError) as exc:
        Leaf.model_validate({"name": 1, "size": "2"})
    assert [e["loc"] for e in exc.value.errors()] == [("name",), ("size",)]


def test_records_are_frozen_and_copies_are_validated():
    leaf = Leaf(name="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        leaf.name = "y"  # type: ignore[misc]
    assert leaf.model_copy(update={"size": 3}) == Leaf(name="x", size=3)
    with pytest.raises(RecordError):
        leaf.model_copy(update={"kind": "z"})
    assert hash(leaf) == hash(Leaf(name="x"))


def test_unknown_keys_may_be_ignored_where_declared():
    assert Loose.model_validate({"name": "n", "later": 1}) == Loose(name="n")


def test_dumps_read_back_as_the_same_record():
    tree = Tree(leaves=(Leaf(name="x", note="n", secret="s"), Leaf(name="y")), tags={"k": [1, (2, 3)]})
    data = tree.model_dump(mode="json")
    assert data["leaves"][0] == {"name": "x", "size": 0, "kind": "a", "note": "n"}, "excluded fields never leave"
    assert "note" not in data["leaves"][1], "an omit_none field is absent when None"
    assert data["tags"] == {"k": [1, [2, 3]]} and json.loads(json.dumps(data)) == data
    again = Tree.model_validate_json(tree.model_dump_json())
    assert again == tree.model_copy(update={"leaves": (tree.leaves[0].model_copy(update={"secret": None}),
                                                        tree.leaves[1]), "tags": {"k": [1, [2, 3]]}})
    assert tree.model_dump()["leaves"][0]["name"] == "x" and tree.model_dump(exclude={"tags"}).keys() == {
        "leaves", "first", "weight"}
    assert "secret" not in repr(tree.leaves[0])


def test_the_schema_describes_the_dump():
    schema = Tree.model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = Tree(leaves=(Leaf(name="x"),), first=Leaf(name="x")).model_dump(mode="json")
    assert list(validator.iter_errors(good)) == []
    bad = {**good, "leaves": [{"name": "x", "kind": "c"}], "unknown": 1}
    assert len(list(validator.iter_errors(bad))) == 2
    leaf = schema["$defs"]["Leaf"]
    assert leaf["required"] == ["name"] and "secret" not in leaf["properties"]
    assert leaf["properties"]["note"]["description"] == "absent from dumps when None"
    assert leaf["description"] == "A leaf." and "description" not in schema, "only a docstring describes a record"


def test_a_record_inside_a_pydantic_model():
    class Holder(BaseModel):
        tree: Tree
        leaf: Leaf | None = None

    held = Holder.model_validate({"tree": {"leaves": [{"name": "x", "note": None}]}})
    assert held.tree.leaves == (Leaf(name="x"),)
    assert held.model_dump(mode="json") == {"tree": {"leaves": [{"name": "x", "size": 0, "kind": "a"}],
                                                     "first": None, "tags": {}, "weight": 1.0}, "leaf": None}
    with pytest.raises(ValueError, match="name"):
        Holder.model_validate({"tree": {"leaves": [{"size": 1}]}})


@pytest.mark.parametrize("code", [
    "from srcreview.model.findings import Review\nimport srcreview.model.recipe, srcreview.gate.policy, srcreview.store.reviews",
    "import srcreview.engine.run\nfrom srcreview.rules.loader import load_rules\nfrom srcreview.checks import KINDS, check_kind\n"
    "load_rules()\n[check_kind(k) for k in KINDS]",
], ids=["warm: stored review, recipe, gate", "cold: rules, every check kind, the engine"])
def test_check_never_imports_pydantic(code):
    """Importing pydantic and building its validators cost more than a whole warm check."""
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\nprint('pydantic' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_a_finding_cannot_promise_what_rests_on_open_questions():
    from srcreview.model.findings import Finding

    base = {"id": "x", "rule": "r", "severity": "high", "claim": "c", "message": "m", "fingerprint": "f" * 16}
    finding = Finding.model_validate({**base, "classification": "plausible", "assumptions": ["the model's config"],
                                      "kind": "fact"})
    assert finding.kind == "open-question", "kind follows from classification, whatever the input says"
    with pytest.raises(RecordError, match="cannot rest on open questions"):
        Finding.model_validate({**base, "classification": "confirmed", "assumptions": ["the model's config"]})
    with pytest.raises(RecordError, match="cannot rest on open questions"):
        finding.model_copy(update={"classification": "refuted"})
