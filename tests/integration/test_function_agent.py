"""The ``function`` agent mode: the stock FunctionAgent over the retrieved tools, for
function-calling LLMs (played here by the scripted function-calling LLM); the same trace,
sources, loop detection and graceful stop as the ReAct mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrag import ScriptedFunctionLLM, ScriptedLLM, Toolbox
from toolrag.errors import ConfigError
from toolrag.models.llms import make_llm
from toolrag.settings import Settings
from toolrag.tools.compute import COMPUTE_TOOLS

SCHEDULE = "get_project_schedule"
QUESTION = "When is substantial completion planned for the Summit Ridge Hotel?"


@pytest.fixture
def function_toolbox(sample_settings: Settings) -> Callable[[list[Any]], Toolbox]:
    def make(turns: list[Any]) -> Toolbox:
        settings = sample_settings.model_copy(update={"agent_mode": "function"})
        return Toolbox(settings, llm=ScriptedFunctionLLM(turns))

    return make


def _tool_messages(llm: Any, turn: int) -> str:
    return "\n".join(m.content or "" for m in llm.prompts[turn] if m.role.value == "tool")


def test_function_agent_calls_a_tool_and_answers_from_its_result(
    function_toolbox: Callable[[list[Any]], Toolbox],
) -> None:
    tb = function_toolbox(
        [
            {"tool": SCHEDULE, "arguments": {"project": "GRB-107"}},
            "Substantial completion is planned for 2027-01-29.",
        ]
    )
    answer = tb.ask(QUESTION)
    assert isinstance(tb.llm, ScriptedFunctionLLM)
    assert answer.tools_called == [SCHEDULE] and answer.trace[0].success
    assert answer.trace[0].arguments == {"project": "GRB-107"}
    assert answer.sources and answer.sources[0].file == "schedules/GRB-107.csv"
    assert answer.answer == "Substantial completion is planned for 2027-01-29."
    # The function-calling LLM was offered the retrieved tools, not every tool.
    offered = tb.llm.tools_offered[0]
    assert SCHEDULE in offered
    # at most tool_top_k retrieved tools (an action tool among them is left out for a question
    # that asks for information), plus any compute tool that ranked among them (a companion)
    retrieved = [n for n in offered if n not in COMPUTE_TOOLS]
    assert 1 <= len(retrieved) <= tb.settings.tool_top_k < len(tb.tools())
    # Its second turn read the tool's real result as a tool message.
    assert "2027-01-29" in _tool_messages(tb.llm, 1)


def test_parallel_calls_in_one_turn_are_both_traced(
    function_toolbox: Callable[[list[Any]], Toolbox],
) -> None:
    tb = function_toolbox(
        [
            [
                {"tool": SCHEDULE, "arguments": {"project": "GRB-107"}},
                {"tool": SCHEDULE, "arguments": {"project": "GRB-104"}},
            ],
            "Both schedules found.",
        ]
    )
    answer = tb.ask("Compare the schedules of GRB-107 (Summit Ridge Hotel) and GRB-104.")
    assert sorted(s.arguments["project"] for s in answer.trace) == ["GRB-104", "GRB-107"]
    assert all(s.success for s in answer.trace)
    files = {s.file for s in answer.sources}
    assert {"schedules/GRB-107.csv", "schedules/GRB-104.csv"} <= files


def test_function_agent_loop_is_stopped_with_an_explanation(
    function_toolbox: Callable[[list[Any]], Toolbox],
) -> None:
    bad = {"tool": "search_documents", "arguments": {"query": "x", "document_type": "invoice"}}
    tb = function_toolbox([bad, bad, bad, bad, bad, bad, "never reached"])
    answer = tb.ask("What is the total of disputed invoices?")
    assert answer.loops_stopped == 2 and answer.repairs == 1
    assert answer.answer.startswith("I stopped: search_documents was called again")


def test_function_agent_stops_gracefully_at_the_cap(
    function_toolbox: Callable[[list[Any]], Toolbox],
) -> None:
    projects = ["GRB-101", "GRB-102", "GRB-103", "GRB-104", "GRB-105", "GRB-106", "GRB-107"]
    calls = [{"tool": SCHEDULE, "arguments": {"project": p}} for p in projects]
    tb = function_toolbox([*calls, "I found several schedules but stopped early."])
    tb.settings.max_iterations = 3
    answer = tb.ask(QUESTION)  # never raises
    assert answer.answer and len(answer.trace) <= 4


def test_function_mode_needs_a_function_calling_llm(sample_settings: Settings) -> None:
    settings = sample_settings.model_copy(update={"agent_mode": "function"})
    tb = Toolbox(settings, llm=ScriptedLLM(["Answer: no"]))
    with pytest.raises(ConfigError, match="function-calling LLM"):
        tb.ask(QUESTION)


def test_turns_file_takes_tool_calls_in_function_mode(tmp_path: Path) -> None:
    path = tmp_path / "turns.json"
    path.write_text(json.dumps([{"tool": SCHEDULE, "arguments": {}}, "done"]))
    settings = Settings(llm_provider="scripted", agent_mode="function", scripted_turns_file=path)
    llm = make_llm(settings)
    assert isinstance(llm, ScriptedFunctionLLM) and llm.remaining == 2
    with pytest.raises(ConfigError, match="list of turns"):
        make_llm(settings.model_copy(update={"agent_mode": "react"}))
