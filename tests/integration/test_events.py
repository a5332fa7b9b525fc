"""Events stream to callers: ``Toolbox.astream`` yields the run's events as they happen, and
``toolrag.events.listening`` hands them to a callback, also through the sync API inside a
running event loop (a notebook cell)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from toolrag import Toolbox
from toolrag.agent.loop import Answer
from toolrag.events import AgentEvent, listening

from ..conftest import final, react

QUESTION = "When is substantial completion planned for the Summit Ridge Hotel?"
SCHEDULE = "get_project_schedule"


def test_astream_yields_each_step_then_the_answer(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory(
        [react(SCHEDULE, {"project": "GRB-107"}), final("Planned for 2027-01-29.")]
    )

    async def collect() -> list[AgentEvent]:
        return [e async for e in tb.astream(QUESTION)]

    events = asyncio.run(collect())
    kinds = [e.kind for e in events]
    assert kinds[0] == "tools_retrieved" and SCHEDULE in events[0].tools
    assert kinds.index("tool_call") < kinds.index("tool_result") < len(kinds) - 1
    assert kinds.count("model_step") == 2 and kinds[-1] == "answer"
    call = next(e for e in events if e.kind == "tool_call")
    assert call.tool == SCHEDULE and call.arguments == {"project": "GRB-107"}
    result = next(e for e in events if e.kind == "tool_result")
    assert result.success and '"project":"GRB-107"' in result.text
    answer = events[-1].data["answer"]
    assert isinstance(answer, Answer) and answer.answer == "Planned for 2027-01-29."
    assert [e.seconds for e in events] == sorted(e.seconds for e in events)


def test_listener_follows_the_sync_api_inside_a_running_loop(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([react(SCHEDULE, {"project": "GRB-107"}), final("2027-01-29.")])
    seen: list[AgentEvent] = []

    async def cell() -> None:  # a notebook cell: the loop runs, ask() uses a thread
        with listening(seen.append):
            tb.ask(QUESTION)

    asyncio.run(cell())
    assert [e.kind for e in seen if e.kind in ("tool_call", "tool_result", "answer")] == [
        "tool_call",
        "tool_result",
        "answer",
    ]


def test_router_mode_streams_the_decision(toolbox_factory: Callable[..., Toolbox]) -> None:
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    tb = toolbox_factory([json.dumps(decision), final("Planned for 2027-01-29.")])
    tb.settings.agent_mode = "router+react"
    seen: list[AgentEvent] = []
    with listening(seen.append):
        answer = tb.ask(QUESTION)
    route = next(e for e in seen if e.kind == "route")
    assert route.success and json.loads(route.text)["calls"][0]["tool"] == SCHEDULE
    assert route.data["decision_id"] == answer.route_id
    assert [e.kind for e in seen].count("answer") == 1 and seen[-1].kind == "answer"
    assert seen[-1].tools == [SCHEDULE]


def test_a_failing_listener_does_not_break_the_run(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([react(SCHEDULE, {"project": "GRB-107"}), final("2027-01-29.")])

    def broken(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    with listening(broken):
        answer = tb.ask(QUESTION)
    assert answer.answer == "2027-01-29."
