"""Filters a router call copied from a shown example's question are left out before it runs;
the question's own filters, and required arguments, stay."""

from __future__ import annotations

import pytest
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field

from toolrag.guard.grounding.copied import drop_copied_filters, stem
from toolrag.guard.grounding.decision import RouteDecision, ToolCallSpec
from toolrag.guard.grounding.filters import FilterValues, Vocabulary, date_parameters
from toolrag.tools.prompting import tool_schema


class InspectionArgs(BaseModel):
    project: str | None = Field(None, description="Project code.")
    result: str | None = Field(None, description="passed, failed, partial or scheduled.")
    since: str | None = Field(None, description="Earliest inspection date, YYYY-MM-DD.")
    until: str | None = Field(None, description="Latest inspection date, YYYY-MM-DD.")


class RFIArgs(BaseModel):
    status: str = Field(description="open, answered or closed.")
    project: str | None = Field(None, description="Project code.")


def nothing(**_: object) -> str:
    return ""


TOOLS = {
    name: FunctionTool.from_defaults(nothing, name=name, description=name, fn_schema=schema)
    for name, schema in (("list_inspections", InspectionArgs), ("find_rfis", RFIArgs))
}
VOCAB = Vocabulary(
    by_parameter={
        "project": FilterValues.of({"GRB-104": ["Harbor Point"], "GRB-107": ["Summit Ridge"]})
    },
    by_tool={
        "list_inspections": {
            "result": FilterValues.of(["passed", "failed", "partial", "scheduled", "cancelled"])
        },
        "find_rfis": {"status": FilterValues.of(["open", "answered", "closed"])},
    },
)


EXAMPLES = [
    "Show the inspection history for GRB-104, including the final inspection.",
    "Which projects had failed inspections between September and November 2025?",
    "Which RFIs are still open on the hotel?",
]


def decide(tool: str, **arguments: object) -> RouteDecision:
    return RouteDecision(action="call_tools", calls=[ToolCallSpec(tool=tool, arguments=arguments)])


def test_stems_join_a_words_forms() -> None:
    assert stem("failed") == stem("fails") == stem("fail") == "fail"
    assert stem("scheduled") == stem("schedule")


def test_a_description_with_a_date_format_makes_a_date_parameter() -> None:
    assert date_parameters(tool_schema(TOOLS["list_inspections"])) == ("since", "until")


def test_the_filters_and_period_of_an_example_question_are_left_out() -> None:
    decision = decide(
        "list_inspections",
        project="GRB-104",
        result="failed",
        since="2025-09-01",
        until="2025-11-30",
    )
    question = "Which inspections are on the calendar but have not taken place yet?"
    notes = drop_copied_filters(question, decision, EXAMPLES, TOOLS, VOCAB)
    assert decision.calls[0].arguments == {}
    assert len(notes) == 4
    assert notes[1] == (
        "list_inspections.result: 'failed' left out (from an example question, not this one)"
    )
    assert "an example question's period; this question names none" in notes[2]


@pytest.mark.parametrize(
    ("question", "arguments"),
    [
        # the question says it too, in another form
        ("Did any inspection at Harbor Point fail?", {"project": "GRB-104", "result": "failed"}),
        # the question names its own period: the dates are the question's to check
        (
            "Which inspections failed between September and November 2025?",
            {"result": "failed", "since": "2025-09-01", "until": "2025-11-30"},
        ),
        # a period no example names is the model's reading of this question
        ("Which inspections are scheduled this month?", {"since": "2025-12-01"}),
        # a value no example question mentions
        ("What is still to be inspected?", {"result": "scheduled"}),
    ],
)
def test_the_questions_own_filters_stay(question: str, arguments: dict[str, str]) -> None:
    decision = decide("list_inspections", **arguments)
    assert drop_copied_filters(question, decision, EXAMPLES, TOOLS, VOCAB) == []
    assert decision.calls[0].arguments == arguments


def test_a_required_argument_is_never_left_out() -> None:
    decision = decide("find_rfis", status="open", project="GRB-107")
    question = "Which RFIs on the Summit Ridge job are unanswered?"
    assert drop_copied_filters(question, decision, EXAMPLES, TOOLS, VOCAB) == []
    assert decision.calls[0].arguments == {"status": "open", "project": "GRB-107"}


def test_no_examples_shown_nothing_dropped() -> None:
    decision = decide("list_inspections", result="failed")
    assert drop_copied_filters("Any news?", decision, [], TOOLS, VOCAB) == []
    assert decision.calls[0].arguments == {"result": "failed"}
