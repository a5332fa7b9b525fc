"""``days_between:START,END`` fields: the days between two date fields of a unit, computed when
it is indexed, so a result reads "6 days after" instead of leaving a small model to count."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrag.content.collection_index import CollectionLoader
from toolrag.content.collection_spec import CollectionSpec
from toolrag.content.fields import days_text

CSV = """milestone_id,milestone,planned_finish,actual_finish
M-1,Roofing complete,2025-08-27,2025-09-02
M-2,Framing topped out,2025-11-05,2025-11-03
M-3,Slab poured,2025-01-10,2025-01-10
M-4,Final inspection,2026-03-20,
"""


def _spec(**changes: object) -> CollectionSpec:
    raw: dict[str, object] = {
        "name": "milestones",
        "description": "Project milestones with planned and actual finish dates.",
        "paths": ["*.csv"],
        "reader": "rows",
        "id_column": "milestone_id",
        "fields": [
            {"name": "planned_finish", "type": "date", "source": "column:planned_finish"},
            {"name": "actual_finish", "type": "date", "source": "column:actual_finish"},
            {
                "name": "days_after_plan",
                "type": "number",
                "source": "days_between:planned_finish,actual_finish",
            },
        ],
    }
    raw.update(changes)
    return CollectionSpec.model_validate(raw)


def test_each_row_gets_the_signed_days_shown_in_words(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text(CSV)
    spec = _spec()
    loader = CollectionLoader(tmp_path, spec)
    records = {r.doc_id: r for r in loader.load(tmp_path / "m.csv")}
    days = {k: r.extra.get("days_after_plan") for k, r in records.items()}
    # no actual finish yet: no value, and no problem reported
    assert days == {"M-1": "6.0", "M-2": "-2.0", "M-3": "0.0", "M-4": None}
    assert loader.problems == []
    # the text that is searched is the row's own; a result shows the value in words
    assert "days_after_plan" not in records["M-1"].text
    field = spec.field("days_after_plan")
    assert days_text(field, 6.0) == "6 (actual_finish is 6 days after planned_finish)"
    assert days_text(field, -1.0) == "-1 (actual_finish is 1 day before planned_finish)"
    assert days_text(field, 0.0) == "0 (actual_finish is on the same day as planned_finish)"


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            {
                "name": "gap",
                "type": "keyword",
                "source": "days_between:planned_finish,actual_finish",
            },
            "has type number",
        ),
        ({"name": "gap", "type": "number", "source": "days_between:planned_finish"}, "two date"),
        (
            {"name": "gap", "type": "number", "source": "days_between:planned_finish,milestone"},
            "both must be declared date fields",
        ),
    ],
)
def test_a_bad_days_between_field_is_refused_with_the_reason(
    field: dict[str, str], message: str
) -> None:
    fields = [
        {"name": "planned_finish", "type": "date", "source": "column:planned_finish"},
        {"name": "milestone", "type": "keyword", "source": "column:milestone"},
        field,
    ]
    with pytest.raises(ValidationError, match=message):
        _spec(fields=fields)
