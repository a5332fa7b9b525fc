"""The REST tools inside the toolbox, against the sample field API on 127.0.0.1: the agent's
trace shows the HTTP call, the answer comes from the response, and a repeated write is
applied once."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

import pytest
from llama_index.core.llms import ChatMessage

from toolrag import Toolbox
from toolrag.batch.questions import Question, answer_matches, load_questions

from ..conftest import DATA, final, react


def _total_days(messages: Sequence[ChatMessage]) -> str:
    observation = next(m.content for m in reversed(messages) if "Observation:" in (m.content or ""))
    payload = json.loads(re.search(r"\{.*\}", observation or "", re.S).group(0))  # type: ignore[union-attr]
    days = payload["data"]["body"]["total_days_lost"]
    return f"Thought: I can answer.\nAnswer: The project lost {days} working days to weather."


def test_agent_answers_from_the_field_api(rest_toolbox: Callable[..., Toolbox]) -> None:
    tb = rest_toolbox(
        [react("list_weather_delays", {"project": "Summit Ridge Hotel"}), _total_days]
    )
    answer = tb.ask("How many working days has the Summit Ridge Hotel lost to weather?")
    assert "list_weather_delays" in answer.tools_offered
    step = answer.trace[0]
    assert step.tool == "list_weather_delays" and step.success
    assert answer.answer == "The project lost 6 working days to weather."
    assert any(s.locator == "GET /weather-delays" for s in answer.sources)


def test_agent_write_is_applied_once(rest_toolbox: Callable[..., Toolbox]) -> None:
    args = {
        "inspection_id": "INSP-109-02",
        "note": "Drain hangers added.",
        "author": "Elena Morales",
    }
    tb = rest_toolbox(
        [
            react("create_inspection_note", args),
            react("create_inspection_note", args),
            final("Noted."),
        ]
    )
    answer = tb.ask(
        "Add a note from Elena Morales to inspection INSP-109-02: the drain hangers were added."
    )
    first, second = (json.loads(s.observation)["data"]["body"] for s in answer.trace)
    assert first == second  # same Idempotency-Key: one note, replayed


def test_agent_recovers_from_an_unknown_project(rest_toolbox: Callable[..., Toolbox]) -> None:
    tb = rest_toolbox(
        [
            react("get_site_status", {"project": "Harbour Pointe"}),
            react("get_site_status", {"project": "GRB-103"}),
            final("61 workers are on site."),
        ]
    )
    answer = tb.ask("How many workers are on site at Harbor Point Apartments?")
    assert [s.error_code for s in answer.trace] == ["NOT_FOUND", None]
    assert "Known projects" in answer.trace[0].observation
    assert json.loads(answer.trace[1].observation)["data"]["body"]["crew_count"] == 61


def test_dates_the_question_never_gave_are_left_out_when_they_find_nothing(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    """The local model added a January 2023 range to a question that names no time, found
    nothing and answered "0 days". The read call runs once more without the dates, as its own
    audited step, and the model reads the project's delays with a note naming what was left
    out."""
    invented = {"project": "Summit Ridge Hotel", "since": "2023-01-01", "until": "2023-01-31"}
    tb = rest_toolbox([react("list_weather_delays", invented), _total_days])
    answer = tb.ask("How many working days has the Summit Ridge Hotel lost to weather?")
    first = json.loads(answer.trace[0].observation)
    assert not answer.trace[0].empty and first["data"]["body"]["total_days_lost"] == 6
    assert "since='2023-01-01', until='2023-01-31'" in first["suggestion"]
    assert "dates the question does not give" in first["suggestion"]
    assert answer.repairs == 0 and answer.answer == "The project lost 6 working days to weather."
    records = tb.guard.audit.tail(10) if tb.guard.audit else []
    calls = [r for r in records if r.run_id == answer.run_id and r.tool == "list_weather_delays"]
    assert len(calls) == 2  # the call as the model made it, then the wider one


def test_in_a_chat_the_dates_an_earlier_turn_gave_are_kept(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    january = {"since": "2023-01-01", "until": "2023-01-31"}
    hotel = {"project": "Summit Ridge Hotel", **january}
    harbor = {"project": "Harbor Point Apartments", **january}
    turns = [react("list_weather_delays", hotel), final("None."), final("None.")]
    tb = rest_toolbox([*turns, react("list_weather_delays", harbor), final("None."), final("-")])
    tb.chat("s", "Did the Summit Ridge Hotel lose days to weather in January 2023?")
    follow_up = tb.chat("s", "And Harbor Point Apartments?")
    assert follow_up.trace[0].empty  # the first turn gave January 2023: the dates stand
    fresh = rest_toolbox([react("list_weather_delays", harbor), final("Some.")])
    alone = fresh.chat("t", "And Harbor Point Apartments?")
    assert not alone.trace[0].empty and "dates the question does not give" in (
        alone.trace[0].observation
    )


def test_the_router_leaves_out_invented_dates_the_same_way(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    invented = {"project": "Summit Ridge Hotel", "since": "2023-01-01", "until": "2023-01-31"}
    call = {"tool": "list_weather_delays", "arguments": invented}
    tb = rest_toolbox([json.dumps({"action": "call_tools", "calls": [call]})])
    routed = tb.route("How many working days has the Summit Ridge Hotel lost to weather?")
    [result] = routed.results
    assert routed.valid and result.data["body"]["total_days_lost"] == 6
    assert result.suggestion and "until='2023-01-31'" in result.suggestion
    dated = rest_toolbox([json.dumps({"action": "call_tools", "calls": [call]})])
    kept = dated.route("How many working days did the Summit Ridge Hotel lose in January 2023?")
    assert kept.results[0].empty  # the question gives the month: its dates stand


def test_dates_the_question_gives_are_kept_and_an_empty_result_gets_another_turn(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    dated = {"project": "Summit Ridge Hotel", "since": "2023-01-01", "until": "2023-01-31"}
    tb = rest_toolbox(
        [
            react("list_weather_delays", dated),
            final("The hotel lost 0 working days."),
            react("list_weather_delays", {"project": "Summit Ridge Hotel"}),
            _total_days,
        ]
    )
    answer = tb.ask("How many working days did the Summit Ridge Hotel lose to weather in 2023?")
    first = json.loads(answer.trace[0].observation)
    assert answer.trace[0].empty and "since='2023-01-01'" in first["suggestion"]
    assert "optional filters" in first["suggestion"]  # the REST tool names what it was given
    assert answer.repairs == 1 and answer.answer == "The project lost 6 working days to weather."


API_QUESTIONS = [
    q
    for name in ("examples", "test")
    for q in load_questions(DATA / "questions" / f"{name}.jsonl")
    if q.id.startswith("api-")
]


@pytest.mark.parametrize("question", API_QUESTIONS, ids=[q.id for q in API_QUESTIONS])
def test_field_api_questions_are_answerable(
    rest_toolbox: Callable[..., Toolbox], question: Question
) -> None:
    """The expected tool with the expected arguments returns the expected answer."""
    tool = rest_toolbox([]).tool(question.expected_tools[0])
    out = tool(**question.expected_args).raw_output
    assert out.success, out
    body = json.dumps(out.data["body"])
    if question.id in ("api-004", "api-103"):
        assert out.data["body"]["total_days_lost"] == 6
    else:
        assert answer_matches(body, question.answer_keywords), body[:300]
