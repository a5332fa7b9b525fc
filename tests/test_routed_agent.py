"""The router+react agent mode with the scripted LLM: the router's calls are the first steps and
the agent answers from their results; a direct answer skips the agent; an invalid decision
falls back to the plain ReAct run."""

from __future__ import annotations

import json
from collections.abc import Callable

from toolrag import Toolbox

from .conftest import final, react

SCHEDULE = "get_project_schedule"


def _routed(tb: Toolbox) -> Toolbox:
    tb.settings.agent_mode = "router+react"
    return tb


def test_router_calls_are_the_first_steps(toolbox_factory: Callable[..., Toolbox]) -> None:
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    tb = _routed(
        toolbox_factory([json.dumps(decision), final("Substantial completion: 2027-01-29.")])
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert [s.tool for s in answer.trace] == [SCHEDULE] and answer.trace[0].success
    assert answer.trace[0].arguments == {"project": "GRB-107"}
    assert answer.sources and answer.sources[0].file == "schedules/GRB-107.csv"
    assert "2027-01-29" in answer.answer and answer.route_id
    messages = tb.llm.prompts[-1]  # type: ignore[attr-defined]
    # the router's call is the agent's own first step: Action, then the fenced Observation
    action = next(m.content or "" for m in messages if "Action: " + SCHEDULE in (m.content or ""))
    assert "GRB-107" in action and messages[-1].content.count("<tool_output>") == 1
    assert "2027-01-29" in (messages[-1].content or "")
    assert answer.question.startswith("When is substantial completion")


def test_a_direct_answer_skips_the_agent(toolbox_factory: Callable[..., Toolbox]) -> None:
    reply = json.dumps({"action": "ask_clarification", "message": "Which project do you mean?"})
    tb = _routed(toolbox_factory([reply]))
    answer = tb.ask("How late is it?")
    assert answer.answer == "Which project do you mean?" and answer.trace == []


def test_an_invalid_decision_falls_back_to_react(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = _routed(
        toolbox_factory(
            [
                "no json at all",
                "still no json",  # the repair round
                react(SCHEDULE, {"project": "GRB-107"}),
                final("Planned for 2027-01-29."),
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.tools_called == [SCHEDULE] and "2027-01-29" in answer.answer
    record = tb.decisions.records()[-1]
    assert record.id == answer.route_id and not record.valid
