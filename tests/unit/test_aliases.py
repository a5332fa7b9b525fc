"""Keyword values named by a code, by another name, or by a code read with stray spaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrag.content.aliases import KeywordValues, load_aliases
from toolrag.content.collection_spec import CollectionSpec
from toolrag.errors import ConfigError

VALUES = KeywordValues(
    ["GRB-101", "GRB-107", "GRB-110"],
    {"GRB-107": ["Summit Ridge Hotel"], "GRB-110": ["Westbrook Community Pool"]},
)


@pytest.mark.parametrize(
    ("given", "value"),
    [
        ("GRB-107", "GRB-107"),
        ("grb 107", "GRB-107"),
        ("GRB-1 07", "GRB-107"),  # OCR splits a code
        ("GRB-1 1 0", "GRB-110"),
        ("Summit Ridge Hotel", "GRB-107"),
        ("summit ridge", "GRB-107"),
        ("the Westbrook pool", None),  # not all its words are in one name
        ("GRB-1", None),  # in every code: none chosen
        ("", None),
    ],
)
def test_resolve(given: str, value: str | None) -> None:
    assert VALUES.resolve(given) == value


def test_closest_lists_values_with_their_names() -> None:
    assert VALUES.closest("Summit Hotel", n=1) == ["GRB-107 / Summit Ridge Hotel"]


def test_alias_files_of_both_shapes(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        "values:\n  - {value: A1, names: [Alpha, First]}\nprojects:\n  - {code: P1, name: Pier}\n"
    )
    assert load_aliases(path) == {"A1": ["Alpha", "First"], "P1": ["Pier"]}
    path.write_text("values: [unclosed")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_aliases(path)


def test_title_field_must_be_declared() -> None:
    base = {"name": "c", "description": "Some files of ours.", "paths": ["*.md"]}
    with pytest.raises(ValueError, match="title_field 'heading' is not a declared field"):
        CollectionSpec(**base, title_field="heading")
    with pytest.raises(ValueError, match="id_field 'number' is not a declared field"):
        CollectionSpec(**base, id_field="number")
    spec = CollectionSpec(**base, fields=[{"name": "heading"}], title_field="heading")
    assert spec.title_field == "heading"
    assert spec.fields[0].alias_file(tmp := Path("/x")) is None
    with_aliases = CollectionSpec(
        **base, fields=[{"name": "code", "aliases": "codes.yaml"}], filters=["code"]
    )
    assert with_aliases.fields[0].alias_file(tmp) == Path("/x/codes.yaml")


def test_question_names_add_the_word_pairs_only_one_value_has() -> None:
    values = KeywordValues(
        ["A", "B"], {"A": ["Riverside Medical Office Building"], "B": ["Harbor Office Building"]}
    )
    names = values.question_names()
    assert "riverside medical" in names["A"] and "harbor office" in names["B"]
    assert "office building" not in names["A"] + names["B"]
    assert names["A"][:2] == ["A", "Riverside Medical Office Building"]


def test_a_collection_may_name_its_tool() -> None:
    base = {"name": "milestones", "description": "Our project milestones.", "paths": ["*.csv"]}
    assert CollectionSpec(**base).tool_name == "search_milestones"
    assert CollectionSpec(**base, tool="get_schedule").tool_name == "get_schedule"
    with pytest.raises(ValueError, match="pattern"):
        CollectionSpec(**base, tool="Get Schedule")
