"""A keyword field's alias file resolves what a person or a model calls a value (the sample's
projects: a code and a name) to the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrag.content.aliases import KeywordValues, load_aliases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def projects() -> KeywordValues:
    return KeywordValues([], load_aliases(ROOT / "data" / "domain.yaml"))


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("GRB-104", "GRB-104"),
        ("grb 104", "GRB-104"),
        ("Cedar Valley Fire Station 7", "GRB-104"),
        ("fire station", "GRB-104"),  # a fragment that fits one project
        ("the GRB-104 job", "GRB-104"),  # a code inside a longer string
        ("Cedar Valley 7", "GRB-104"),  # some of the name's words
        ("station 7 cedar valley", "GRB-104"),  # in another order
        ("Cedar Valley 7号消防站", "GRB-104"),  # a name written half in another script
        ("Harbour Point Apartments", "GRB-103"),  # a close spelling
    ],
)
def test_resolves_codes_names_and_paraphrases(
    projects: KeywordValues, value: str, code: str
) -> None:
    assert projects.resolve(value) == code


def test_words_that_fit_several_values_do_not_pick_one() -> None:
    values = KeywordValues(
        ["A-1", "A-2"],
        {"A-1": ["North Valley Fire Station 3"], "A-2": ["South Valley Fire Station 4"]},
    )
    assert values.resolve("station 3 valley") == "A-1"
    assert values.resolve("valley fire station") is None
    assert values.closest("valley fire station", n=2) == [
        "A-1 / North Valley Fire Station 3",
        "A-2 / South Valley Fire Station 4",
    ]


def test_an_unknown_value_resolves_to_none_and_lists_the_closest(
    projects: KeywordValues,
) -> None:
    assert projects.resolve("Lakeside Parking Garage") is None
    assert projects.resolve("  ") is None
    assert projects.resolve("GRB-7") is None
    assert any("GRB-104" in c for c in projects.closest("Cedar Valley", n=3))
