"""Filters the question names, added to calls that left them out; periods read from words."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.cards.card import ToolCard
from toolrag.content.aliases import KeywordValues
from toolrag.guard import ToolGuard
from toolrag.guard.grounding.filters import (
    FilterValues,
    Vocabulary,
    complete_filters,
    date_parameters,
    described_values,
)
from toolrag.guard.grounding.narrow import Narrowed, call_with_named_filters
from toolrag.guard.grounding.periods import question_period
from toolrag.tools.result import ToolResult

SCHEMA = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "start_date": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
        "end_date": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
        "project": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "discipline": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "document_type": {
            "anyOf": [{"enum": ["change_order", "rfi", "contract"]}, {"type": "null"}]
        },
    },
    "required": ["description"],
}
PROJECTS = KeywordValues(
    ["GRB-107", "GRB-101", "GRB-109"],
    {
        "GRB-107": ["Summit Ridge Hotel"],
        "GRB-101": ["Riverside Medical Office Building"],
        "GRB-109": ["Foundry Street Office Building"],
    },
)
VOCAB = Vocabulary(
    by_parameter={"project": FilterValues.of(PROJECTS.question_names())},
    by_tool={"search": {"discipline": FilterValues.of(["Structural", "Fire Protection"])}},
)


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("revised between January and March 2026?", (date(2026, 1, 1), date(2026, 3, 31))),
        ("between January 1 and March 31, 2026", (date(2026, 1, 1), date(2026, 3, 31))),
        ("in the first quarter of 2026", (date(2026, 1, 1), date(2026, 3, 31))),
        ("during Q3 2025", (date(2025, 7, 1), date(2025, 9, 30))),
        ("in the second half of 2025", (date(2025, 7, 1), date(2025, 12, 31))),
        ("from Oct 1, 2025 to Jan 31, 2026", (date(2025, 10, 1), date(2026, 1, 31))),
        ("between November and February 2026", (date(2025, 11, 1), date(2026, 2, 28))),
        ("in November 2025", (date(2025, 11, 1), date(2025, 11, 30))),
        ("since 2025-10-01", (date(2025, 10, 1), None)),
        ("before December 5, 2025", (None, date(2025, 12, 5))),
        ("in 2025", (date(2025, 1, 1), date(2025, 12, 31))),
    ],
)
def test_periods_in_words(question: str, period: tuple[date | None, date | None]) -> None:
    assert question_period(question) == period


@pytest.mark.parametrize(
    "question",
    ["How many days were lost?", "INSP-109-02's result", "the GRB-2024 budget",
     "Was 2025-12-10 a holiday?", "Which inspection failed?"],
)  # fmt: skip
def test_no_period_is_guessed(question: str) -> None:
    assert question_period(question) is None


def test_the_project_and_period_the_question_names_are_added() -> None:
    q = (
        "Which structural sheets for the Summit Ridge Hotel were revised between January "
        "and March 2026?"
    )
    done = complete_filters(q, "search", SCHEMA, {"description": "structural"}, VOCAB)
    assert done.added == {
        "project": "GRB-107",
        "discipline": "Structural",
        "start_date": "2026-01-01",
        "end_date": "2026-03-31",
    }
    assert "project='GRB-107' (added" in (done.note() or "")


def test_values_the_model_gave_are_never_changed() -> None:
    q = "Which sheets for the Summit Ridge Hotel were revised in 2026?"
    done = complete_filters(
        q, "search", SCHEMA, {"description": "x", "project": "GRB-101", "start_date": "2026-02-01"},
        VOCAB,
    )  # fmt: skip
    assert done.arguments["project"] == "GRB-101"
    assert done.arguments["start_date"] == "2026-02-01"
    assert done.added == {"end_date": "2026-12-31"}


def test_two_named_values_are_ambiguous_and_nothing_is_added() -> None:
    q = "Compare the Summit Ridge Hotel and GRB-101 structural sheets."
    done = complete_filters(q, "search", SCHEMA, {"description": "x"}, VOCAB)
    assert "project" not in done.added
    assert done.added == {"discipline": "Structural"}


STATUS_SCHEMA = {
    "type": "object",
    "properties": {
        "project": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "status": {"anyOf": [{"enum": ["complete", "late", "in_progress"]}, {"type": "null"}]},
    },
}


@pytest.mark.parametrize(
    ("question", "added"),
    [
        ("Which milestones are late at the Summit Ridge Hotel?", "late"),
        ("Which milestones are complete at the Summit Ridge Hotel?", "complete"),
        # "late" is named, and "completed" mentions a second status: neither is sure
        ("How many days late was roofing completed at the Summit Ridge Hotel?", None),
        ("Was the roofing completed late at the Summit Ridge Hotel?", None),
        # one side of an either-or: the question asks which, it does not filter
        ("Did framing finish early or late at the Summit Ridge Hotel?", None),
        ("Is framing on time or late at the Summit Ridge Hotel?", None),
    ],
)
def test_a_value_is_added_only_when_no_other_value_is_mentioned(
    question: str, added: str | None
) -> None:
    done = complete_filters(question, "schedule", STATUS_SCHEMA, {}, VOCAB)
    assert done.added.get("project") == "GRB-107"
    assert done.added.get("status") == added


def test_inflected_values_are_mentioned_not_named() -> None:
    values = FilterValues.of(["complete", "closed", "open"])
    assert values.named_in("Which milestones completed?") == []
    assert values.mentioned_in("Which milestones completed?") == ["complete"]
    assert values.mentioned_in("closing and opened items") == ["closed", "open"]
    assert values.mentioned_in("the closet door") == []  # whole words only


def test_aliases_are_whole_words_and_distinctive() -> None:
    aliases = PROJECTS.question_names()
    assert "summit ridge" in aliases["GRB-107"]
    assert "office building" not in aliases["GRB-101"]  # two names hold it
    values = FilterValues.of(aliases)
    assert values.named_in("What did the Riverside Medical team decide?") == ["GRB-101"]
    assert values.named_in("the office building lobby") == []
    assert values.named_in("summitridge") == []
    # a value named only inside a longer alias of another does not count
    nested = FilterValues.of({"fire": ["fire"], "fire protection": ["fire protection"]})
    assert nested.named_in("fire protection sheets") == ["fire protection"]


def test_schema_enums_are_a_vocabulary_of_their_own() -> None:
    q = "What change orders did the Summit Ridge Hotel approve?"
    done = complete_filters(q, "search", SCHEMA, {"description": "approved"}, Vocabulary())
    assert done.added == {"document_type": "change_order"}  # plural, underscore as a space


RESULTS = (
    "passed, failed or partial (held); scheduled (on the calendar, not held yet) or cancelled."
)
INSPECTIONS = {
    "type": "object",
    "properties": {
        "project": {"type": "string"},
        "result": {
            "enum": ["passed", "failed", "partial", "scheduled", "cancelled"],
            "description": RESULTS,
        },
    },
}


def test_a_listed_value_is_named_by_the_gloss_its_description_gives_it() -> None:
    values = described_values(["passed", "partial", "scheduled", "in_review"], RESULTS)
    # a gloss of one word belongs to the list before it, not to the value it follows
    assert values == {
        "passed": ["passed"],
        "partial": ["partial"],
        "scheduled": ["scheduled", "on the calendar", "not held yet"],
        "in_review": ["in review"],
    }
    q = "Which inspections are on the calendar but have not taken place yet?"
    done = complete_filters(q, "list_inspections", INSPECTIONS, {}, Vocabulary())
    assert done.added == {"result": "scheduled"}
    # "held" glosses no one value, so a question that says it names none
    q = "Which inspections were held in October at GRB-107?"
    assert complete_filters(q, "list_inspections", INSPECTIONS, {}, Vocabulary()).added == {}
    # a value inside a longer word, and a bracket that never closes, gloss nothing
    assert described_values(["ok"], "look (at it again); ok (" + "x " * 5000) == {"ok": ["ok"]}


def test_date_parameters_by_name() -> None:
    assert date_parameters(SCHEMA) == ("start_date", "end_date")
    since = {
        "properties": {"since": {"type": "string", "format": "date"}, "until": {"format": "date"}}
    }
    assert date_parameters(since) == ("since", "until")
    assert date_parameters({"properties": {"date": {"format": "date"}}}) == (None, None)


def _guard(rows_for: Any, side_effect: str = "read") -> tuple[ToolGuard, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def search(description: str, project: str | None = None) -> ToolResult:
        calls.append({"description": description, "project": project})
        return ToolResult.ok(rows_for(project))

    tool = FunctionTool.from_defaults(fn=search, name="search")
    card = ToolCard(
        name="search",
        description="Search.",
        side_effect=side_effect,  # type: ignore[arg-type]
        parameters=tool.metadata.get_parameters_dict(),
    )
    return ToolGuard([tool], [card], vocabulary=VOCAB), calls


def _ask(guard: ToolGuard) -> Narrowed:
    """One search call that left out the project, for a question that names one."""
    question = "Summit Ridge Hotel sheets?"
    return asyncio.run(
        call_with_named_filters(
            guard, "search", {"description": "x"}, question=question, run_id="r", step=1
        )
    )


def test_the_completed_call_runs_and_says_so() -> None:
    guard, calls = _guard(lambda project: [{"sheet": "S-201", "project": project}])
    done = _ask(guard)
    assert calls == [{"description": "x", "project": "GRB-107"}]
    assert done.arguments == {"description": "x", "project": "GRB-107"}
    assert "Filters applied: project='GRB-107' (added" in (done.result.suggestion or "")


def test_an_added_filter_that_finds_nothing_falls_back_to_the_call_as_written() -> None:
    guard, calls = _guard(lambda project: [] if project else [{"sheet": "S-201"}])
    done = _ask(guard)
    assert [c["project"] for c in calls] == ["GRB-107", None]
    assert done.steps == 2 and done.arguments == {"description": "x"}
    assert not done.result.empty


def test_actions_are_never_completed() -> None:
    guard, calls = _guard(lambda project: [{"ok": True}], side_effect="write")
    _ask(guard)
    assert calls == [{"description": "x", "project": None}]


def test_a_value_named_by_its_gloss_is_kept_when_other_rows_name_the_question_better() -> None:
    """A filter added from a plain word ("complete") is run without, too, and dropped when
    that leaves out the rows naming the question's words best. A value the question names by
    a gloss of several words is not a word used in passing: it stays."""
    rows = [
        {"id": "INSP-1", "result": "passed", "notes": "Calendar slot moved; taken place on time."},
        {"id": "INSP-2", "result": "scheduled", "notes": "Framing."},
    ]
    calls: list[Any] = []

    def inspections(result: str | None = None) -> ToolResult:
        calls.append(result)
        return ToolResult.ok([r for r in rows if result in (None, r["result"])])

    tool = FunctionTool.from_defaults(fn=inspections, name="inspections")
    parameters = {"type": "object", "properties": {"result": INSPECTIONS["properties"]["result"]}}
    card = ToolCard(name="inspections", description="Inspections.", parameters=parameters)
    guard = ToolGuard([tool], [card], vocabulary=Vocabulary())

    def ask(question: str) -> Narrowed:
        return asyncio.run(
            call_with_named_filters(guard, "inspections", {}, question=question, run_id="r", step=1)
        )

    done = ask("Which inspections are on the calendar but have not taken place yet?")
    assert calls == ["scheduled"] and done.arguments == {"result": "scheduled"}
    assert [r["id"] for r in done.result.data] == ["INSP-2"]
    # named by its own word, the same value gets the check: the call runs without it too
    calls.clear()
    ask("Which scheduled inspections have a calendar slot that moved?")
    assert calls == ["scheduled", None]
