"""The rows of a listing that name the question's distinctive words come first
(toolrag.guard.focus)."""

from __future__ import annotations

from typing import Any

from toolrag.guard.focus import focus_rows
from toolrag.tools.result import ToolResult

MILESTONES = [
    ("Mobilization", "complete", "0 days after"),
    ("Foundations", "complete", "2 days after"),
    ("MEP rough-in", "complete", "1 day after"),
    ("Framing top-out", "complete", "0 days after"),
    ("Roofing complete", "complete", "6 days after"),
    ("Balcony waterproofing", "late", ""),
    ("Drywall", "planned", ""),
]


def _rows() -> list[dict[str, Any]]:
    return [
        {"doc_id": f"M-{i}", "title": t, "status": s, "days_after_plan": d}
        for i, (t, s, d) in enumerate(MILESTONES)
    ]


def test_the_row_a_question_names_comes_first_and_every_row_stays() -> None:
    question = "How many days late was roofing completed at Harbor Point compared with the plan?"
    result = focus_rows(question, ToolResult.ok(_rows(), suggestion="Filters applied."))
    titles = [r["title"] for r in result.data]
    # roofing and late each name one row; 'days' names most rows and moves nothing
    assert titles[:2] == ["Roofing complete", "Balcony waterproofing"]
    assert sorted(titles) == sorted(t for t, _, _ in MILESTONES)
    assert titles[2:] == [t for t, _, _ in MILESTONES if t not in titles[:2]]  # their order
    assert result.suggestion is not None
    assert "2 of 7 rows name 'late', 'roofing'" in result.suggestion
    # both name one rare word each: both are repeated at the end, where a small model reads
    assert 'naming most of them: {"doc_id":"M-4","title":"Roofing complete"' in result.suggestion
    assert '; {"doc_id":"M-5","title":"Balcony waterproofing"' in result.suggestion
    assert result.suggestion.endswith("Filters applied.")


def test_a_listing_under_one_key_is_reordered_in_place() -> None:
    body = {"status": 200, "body": _rows()}
    result = focus_rows("Is the drywall milestone planned?", ToolResult.ok(body))
    assert result.data["status"] == 200
    assert result.data["body"][0]["title"] == "Drywall"
    assert body["body"][0]["title"] == "Mobilization"  # the tool's own data is not changed


def test_nothing_moves_without_a_distinctive_word_or_when_order_is_asked() -> None:
    rows = _rows()
    unchanged = [
        "Which milestones are complete?",  # most rows: tells none apart
        "What is the latest status of roofing?",  # the order is the question's
        "Tell me about concrete",  # names no row
    ]
    for question in unchanged:
        result = ToolResult.ok(_rows())
        assert focus_rows(question, result) is result, question
    first = focus_rows("How was mobilization?", ToolResult.ok(_rows()))
    assert first.data == _rows() and first.suggestion is not None  # first already: repeated
    assert first.suggestion.startswith("1 of 7 rows name 'mobilization' from the question: they")
    assert 'naming most of them: {"doc_id":"M-0","title":"Mobilization"' in first.suggestion
    short = ToolResult.ok(rows[:3])
    assert focus_rows("roofing", short) is short  # three rows are read whole
    table = ToolResult.ok({"columns": ["title"], "rows": [[t] for t, _, _ in MILESTONES]})
    assert focus_rows("roofing", table) is table  # SQL rows keep their ORDER BY
    failed = ToolResult.fail("NOT_FOUND", "no")
    assert focus_rows("roofing", failed) is failed
