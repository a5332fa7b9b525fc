"""The router+react agent mode with the scripted LLM: the router's calls are the first steps and
the agent answers from their results; a clarifying question, or a direct answer when no tool
fits, skips the agent; an invalid decision falls back to the plain ReAct run."""

from __future__ import annotations

import json
from collections.abc import Callable

from toolrag import Toolbox
from toolrag.events import AgentEvent, listening
from toolrag.models.llms import chatml_messages_to_prompt

from ..conftest import final, react

SCHEDULE = "get_project_schedule"
FENCED = "Observation: <tool_output>"  # one tool result, as the model reads it


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
    assert 0 < answer.route_seconds <= answer.seconds  # the router's share of the time
    router, agent = tb.llm.prompts  # type: ignore[attr-defined]
    # the agent continues the router's conversation: the router's prompt and reply, unchanged,
    # are the start of the agent's prompt (the local model does not read them again) ...
    routed = chatml_messages_to_prompt(router).removesuffix("<|im_start|>assistant\n")
    reply = f"<|im_start|>assistant\n{json.dumps(decision)}<|im_end|>\n"
    assert chatml_messages_to_prompt(agent).startswith(routed + reply)
    # ... then one turn with the call's fenced result, the reply format and the question
    turn = agent[-1].content or ""
    assert len(agent) == 3 and turn.count(FENCED) == 1 and "2027-01-29" in turn
    assert f'{SCHEDULE}({{"project": "GRB-107"}})' in turn and "Answer:" in turn
    assert turn.endswith("Question: " + answer.question)
    assert answer.question.startswith("When is substantial completion")


def test_a_further_call_follows_the_routed_turn(toolbox_factory: Callable[..., Toolbox]) -> None:
    """When the routed results are not enough, the agent calls another tool; its step and
    observation follow the routed turn and the routed result is not repeated."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-999"}}]}  # fmt: skip
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react(SCHEDULE, {"project": "GRB-107"}, thought="That project does not exist."),
                final("Substantial completion: 2027-01-29."),
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel, GRB-999?")
    assert [s.tool for s in answer.trace] == [SCHEDULE, SCHEDULE]
    assert [s.arguments["project"] for s in answer.trace] == ["GRB-999", "GRB-107"]
    assert "2027-01-29" in answer.answer
    last = tb.llm.prompts[-1]  # type: ignore[attr-defined]
    assert last[-2].role == "assistant" and "GRB-107" in (last[-2].content or "")
    assert last[-1].content.count(FENCED) == 1 and "2027-01-29" in last[-1].content
    assert sum((m.content or "").count(FENCED) for m in last) == 2


def test_a_direct_answer_skips_the_agent(toolbox_factory: Callable[..., Toolbox]) -> None:
    reply = json.dumps({"action": "ask_clarification", "message": "Which project do you mean?"})
    tb = _routed(toolbox_factory([reply]))
    answer = tb.ask("How late is it?")
    assert answer.answer == "Which project do you mean?" and answer.trace == []


def test_a_direct_answer_with_tools_offered_goes_to_the_agent(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """A router that answers a data question from memory while fitting tools were offered is
    not trusted: the ReAct agent gets the question and reads the data."""
    guess = json.dumps({"action": "answer_directly", "message": "It is planned for 2026-05-01."})
    tb = _routed(
        toolbox_factory(
            [guess, react(SCHEDULE, {"project": "GRB-107"}), final("Planned for 2027-01-29.")]
        )
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert SCHEDULE in answer.tools_offered
    assert [s.tool for s in answer.trace] == [SCHEDULE] and answer.trace[0].success
    assert answer.answer == "Planned for 2027-01-29." and answer.route_id
    assert answer.llm_calls == 3  # the router's reply, then the agent's two steps


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


def test_a_copied_id_is_put_back_before_the_call_runs(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The router's reply names another project's code than the one the question gives: the
    call runs on the question's project, and the route event says what was changed."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-101"}}]}  # fmt: skip
    tb = _routed(toolbox_factory([json.dumps(decision), final("Final completion: 2027-03-15.")]))
    events: list[AgentEvent] = []
    with listening(events.append):
        answer = tb.ask("When is final completion planned for GRB-107?")
    assert answer.trace[0].arguments == {"project": "GRB-107"}
    assert answer.sources[0].file == "schedules/GRB-107.csv"
    route = next(e for e in events if e.kind == "route")
    assert route.data["grounded"] == [f"{SCHEDULE}.project: 'GRB-101' -> 'GRB-107'"]


def test_a_question_no_tool_fits_is_answered_without_tools(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = _routed(toolbox_factory(["I answer that without the project's data: Paris."]))
    tb.settings.tool_gate = 0.99  # no sample tool reaches it
    answer = tb.ask("What is the capital of France?")
    assert answer.answer == "I answer that without the project's data: Paris."
    assert answer.trace == [] and answer.tools_offered == [] and answer.llm_calls == 1
    record = tb.decisions.records()[-1]
    assert record.id == answer.route_id and record.valid
    assert record.decision is not None and record.decision["action"] == "answer_directly"
    # the plain ReAct agent, offered no tools, is told so and answers in its first step
    tb = toolbox_factory([final("Paris.")])
    tb.settings.agent_mode = "react"  # the settings object is shared with the toolbox above
    plain = tb.ask("What is the capital of France?")
    assert plain.answer == "Paris." and plain.trace == [] and plain.tools_offered == []
    system = tb.llm.prompts[0][0].content or ""  # type: ignore[attr-defined]
    assert system.startswith("No tool fits this question") and "Action" not in system


def test_unreadable_replies_after_the_router_found_data_are_answered_from_it(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The router's call found the schedule; the agent then writes replies that cannot be
    read: the answer is read from the router's result, with no tools."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    read = "Substantial completion of the Summit Ridge Hotel is planned for 2027-01-29."
    tb = _routed(toolbox_factory([json.dumps(decision), "%%% ???", "%%% ???", read]))
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert [s.tool for s in answer.trace] == [SCHEDULE] and answer.unreadable == 2
    assert answer.answer == read
    last = tb.llm.prompts[-1][-1].content or ""  # type: ignore[attr-defined]
    assert "from this tool result only" in last and "2027-01-29" in last


def test_a_call_written_in_the_routers_form_runs_as_the_tool_it_names(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    wrapped = {
        "tool": SCHEDULE,
        "arguments": {"project": "GRB-101", "query": "substantial completion"},
    }
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react("call_tools", wrapped, thought="I also need GRB-101."),
                final("GRB-107: 2027-01-29; GRB-101: 2026-06-30."),
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for GRB-107 and for GRB-101?")
    step = answer.trace[1]  # the trace records the tool that ran, with its arguments
    assert step.tool == SCHEDULE and step.arguments == wrapped["arguments"] and step.success
    assert "2026-06-30" in step.observation and "Ran as get_project_schedule" in step.observation
    # a made-up name with no offered tool inside is still UNKNOWN_TOOL
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react("call_tools", {"tool": "nope", "arguments": {}}),
                final("2027-01-29."),
                final("2027-01-29."),  # the repair turn after an error
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for GRB-107?")
    assert answer.trace[1].error_code == "UNKNOWN_TOOL"


def test_a_made_up_one_word_action_runs_as_the_one_tool_its_arguments_fit(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """``Action: call`` (a bare word, not a tool name) with arguments only one tool takes runs
    as that tool; with arguments several tools take, it is UNKNOWN_TOOL naming them."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    sheets = {"discipline": "structural", "project": "GRB-107"}  # only one tool takes both
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react("call", sheets, thought="I also need the structural sheets."),
                final("Planned for 2027-01-29; the structural sheets are S-101 and S-201."),
            ]
        )
    )
    answer = tb.ask(
        "When is substantial completion planned for GRB-107, and which structural sheets "
        "does it have?"
    )
    step = answer.trace[1]
    assert (step.tool, step.arguments, step.success) == ("search_blueprints", sheets, True)
    assert "Ran as search_blueprints: there is no tool named 'call'" in step.observation
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react("call", {"project": "GRB-107"}),  # many tools take a project
                final("Planned for 2027-01-29."),
                final("Planned for 2027-01-29."),  # the repair turn after an error
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for GRB-107?")
    step = answer.trace[1]
    assert step.tool == "call" and step.error_code == "UNKNOWN_TOOL"
    assert "The tools that take these arguments:" in step.observation
    assert SCHEDULE in step.observation


def test_repeating_the_routers_call_is_a_loop_at_once(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The agent calls again what the router's call already found: the first repeat stops
    the run and asks for the answer from that result; a second repeat gets the answer read
    from it with no tools."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    again = react(SCHEDULE, {"project": "GRB-107"}, thought="Let me look again.")
    read = "Substantial completion of the Summit Ridge Hotel is planned for 2027-01-29."
    tb = _routed(toolbox_factory([json.dumps(decision), again, again, read]))
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert [s.tool for s in answer.trace] == [SCHEDULE] * 3
    assert answer.loops_stopped == 2 and answer.answer == read
    prompts = tb.llm.prompts  # type: ignore[attr-defined]
    assert "got the same result" in (prompts[2][-1].content or "")  # asked after one repeat
    assert "from this tool result only" in (prompts[3][-1].content or "")


def test_a_failed_side_trip_after_data_is_answered_from_the_data(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The router's call found the schedule; the agent then calls another tool wrongly and
    answers about that failure: it is asked to answer from the data it has, and that answer
    is kept."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    tb = _routed(
        toolbox_factory(
            [
                json.dumps(decision),
                react("get_site_status", {"site": "hotel"}, thought="Check the site too."),
                final("The site status is not available."),
                final("Substantial completion is planned for 2027-01-29."),
            ]
        )
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert [s.success for s in answer.trace] == [True, False] and answer.repairs == 1
    assert answer.answer == "Substantial completion is planned for 2027-01-29."
    asked = tb.llm.prompts[-1][-1].content or ""  # type: ignore[attr-defined]
    assert "The last call, get_site_status, failed" in asked
    assert f"Your calls of {SCHEDULE} found data" in asked


def test_the_answer_after_a_repeat_of_the_routers_call_is_kept(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """Asked to answer from the call it repeated, the model answers with no tool call: that
    answer is the answer, not the note that the run stopped."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    again = react(SCHEDULE, {"project": "GRB-107"}, thought="Let me look again.")
    said = "Substantial completion is planned for 2027-01-29."
    tb = _routed(toolbox_factory([json.dumps(decision), again, final(said)]))
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.loops_stopped == 1 and answer.answer == said


def test_a_denial_of_the_repeated_calls_data_is_read_from_the_data(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """Asked to answer from the call it repeated, which found data, the model answers that
    nothing was found: the answer is read from that data instead."""
    decision = {"action": "call_tools",
                "calls": [{"tool": SCHEDULE, "arguments": {"project": "GRB-107"}}]}  # fmt: skip
    again = react(SCHEDULE, {"project": "GRB-107"}, thought="Let me look again.")
    denial = "There is no substantial completion date in the schedule."
    read = "Substantial completion of the Summit Ridge Hotel is planned for 2027-01-29."
    tb = _routed(toolbox_factory([json.dumps(decision), again, final(denial), read]))
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.loops_stopped == 1 and answer.answer == read
    prompts = tb.llm.prompts  # type: ignore[attr-defined]
    assert "got the same result, which holds data" in (prompts[2][-1].content or "")
    assert "from this tool result only" in (prompts[3][-1].content or "")


def test_filters_copied_from_a_shown_example_are_left_out(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    """The router and then the agent copy the filters of the shown example "Which projects had
    failed inspections between September and November 2025?" into a question that names no
    result and no period: both calls run without them, and say so. Written differently, the
    agent's call runs as the router's did: a repeat."""
    copied = {"result": "failed", "since": "2025-09-01", "until": "2025-11-30"}
    call = {"tool": "list_inspections", "arguments": copied}
    decision = {"action": "call_tools", "calls": [call]}
    tb = _routed(
        rest_toolbox(
            [
                json.dumps(decision),
                react("list_inspections", {**copied, "project": "GRB-107"}),
                final("INSP-107-05 is on the calendar."),
            ]
        )
    )
    question = "Which inspections on the Summit Ridge Hotel are on the calendar but not held yet?"
    events: list[AgentEvent] = []
    with listening(events.append):
        answer = tb.ask(question)
    route = next(e for e in events if e.kind == "route")
    assert sorted(route.data["grounded"]) == [
        "list_inspections.result: 'failed' left out (from an example question, not this one)",
        "list_inspections.since: '2025-09-01' left out (an example question's period; this "
        "question names none)",
        "list_inspections.until: '2025-11-30' left out (an example question's period; this "
        "question names none)",
    ]
    routed, agent = answer.trace
    assert routed.arguments == {} and routed.success
    # the filters the question names, added: the project by its name, the result by the gloss
    # its description gives "scheduled" ("on the calendar, not held yet")
    named = {"project": "GRB-107", "result": "scheduled"}
    assert routed.ran_with == named
    assert agent.arguments == {**copied, "project": "GRB-107"}
    assert agent.ran_with == named  # the project is the question's own
    assert "Left out: list_inspections.result: 'failed'" in agent.observation
    # written differently, the agent's call ran as the router's and got its result: a repeat,
    # caught at once, and the model is asked to answer from that data
    assert answer.loops_stopped == 1 and answer.answer == "INSP-107-05 is on the calendar."
    asked = tb.llm.prompts[-1][-1].content or ""  # type: ignore[attr-defined]
    assert "You called list_inspections twice with the same arguments" in asked
