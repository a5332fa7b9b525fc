"""The project catalog resolves what a person or a model calls a project to its code."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrag.content.projects import ProjectCatalog
from toolrag.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog() -> ProjectCatalog:
    return ProjectCatalog.load(ROOT / "data" / "domain.yaml")


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
    catalog: ProjectCatalog, value: str, code: str
) -> None:
    assert catalog.resolve(value) == code


def test_words_that_fit_several_projects_do_not_pick_one() -> None:
    catalog = ProjectCatalog.model_validate(
        {
            "projects": [
                {"code": "A-1", "name": "North Valley Fire Station 3"},
                {"code": "A-2", "name": "South Valley Fire Station 4"},
            ]
        }
    )
    assert catalog.resolve("station 3 valley") == "A-1"
    with pytest.raises(InputError) as caught:
        catalog.resolve("valley fire station")
    assert str(caught.value) == (
        "Several projects fit 'valley fire station'. Say which: "
        "A-1 (North Valley Fire Station 3), A-2 (South Valley Fire Station 4)."
    )


def test_an_unknown_project_names_the_closest_known_ones(catalog: ProjectCatalog) -> None:
    with pytest.raises(InputError) as caught:
        catalog.resolve("Lakeside Parking Garage")
    assert "Unknown project 'Lakeside Parking Garage'" in str(caught.value)
    assert "GRB-10" in (caught.value.hint or "")
    with pytest.raises(InputError):
        catalog.resolve("  ")


def test_a_guessed_code_is_answered_with_every_project_of_a_small_catalog(
    catalog: ProjectCatalog,
) -> None:
    with pytest.raises(InputError) as caught:
        catalog.resolve("GRB-7")
    hint = caught.value.hint or ""
    assert "GRB-104 (Cedar Valley Fire Station 7)" in hint
    assert hint.count("GRB-") == len(catalog.projects)


def test_a_large_catalog_names_the_closest_projects_and_how_many_more() -> None:
    catalog = ProjectCatalog.model_validate(
        {"projects": [{"code": f"P-{n}", "name": f"Depot {n}"} for n in range(30)]}
    )
    described = catalog.describe_closest("Depot 17")
    assert described.startswith("P-17 (Depot 17)")
    assert described.endswith(" and 18 more")
