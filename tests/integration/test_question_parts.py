"""The filters a question names, every part of a question, and no action for a question that
asks for information: through the real toolbox (LanceDB, the field API), the LLM scripted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from toolrag import ScriptedLLM, Toolbox
from toolrag.agent.loop import TraceStep, answer_from_result

from ..conftest import final, react

ACTIONS = {"create_inspection_note", "create_rfi_draft", "update_rfi_status",
           "cancel_inspection", "submit_change_order"}  # fmt: skip


def test_the_project_and_discipline_the_question_names_are_added(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    args = {"query": "structural", "start_date": "2026-01-01", "end_date": "2026-03-31"}
    tb = toolbox_factory([react("search_blueprints", args), final("S-201.")])
    answer = tb.ask(
        "Which structural sheets for the Summit Ridge Hotel were revised between January and "
        "March 2026?"
    )
    step = answer.trace[0]
    assert step.arguments == args  # what the model wrote
    assert step.ran_with == {**args, "project": "GRB-107", "discipline": "STRUCTURAL"}
    rows = json.loads(step.observation)["data"]
    assert rows and {r["project"] for r in rows} == {"GRB-107"}
    assert {r["discipline"] for r in rows} == {"STRUCTURAL"}  # as the title blocks read
    assert "Filters applied" in step.observation and "added" in step.observation


def test_a_question_that_asks_for_information_is_offered_no_action(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    tb = rest_toolbox([react("run_sql", {"sql": "SELECT 1"}), final("None.")])
    answer = tb.ask("Which invoices of Cedar Valley Fire Station 7 are still unpaid?")
    assert not ACTIONS & set(answer.tools_offered)
    tb = rest_toolbox([final("Submitted.")])
    answer = tb.ask("Submit change order GRB-101-CO-002 to the owner.")
    assert "submit_change_order" in answer.tools_offered


def test_every_part_of_a_question_gets_a_tool(rest_toolbox: Callable[..., Toolbox]) -> None:
    question = (
        "When is substantial completion planned for the Summit Ridge Hotel, and how many "
        "workers are on its site today?"
    )
    tb = rest_toolbox(
        [
            react(
                "get_project_schedule", {"project": "GRB-107", "query": "substantial completion"}
            ),
            final("Substantial completion is planned for 2027-01-29."),
            react("get_site_status", {"project": "GRB-107"}),
            final("Substantial completion is planned for 2027-01-29; 72 workers are on site."),
        ]
    )
    answer = tb.ask(question)
    parts = tb.tool_retriever().retriever  # a fresh retriever reads the question the same way
    parts.retrieve(question)
    assert [tool for _, tool in parts.last_parts] == ["get_project_schedule", "get_site_status"]
    assert answer.tools_called == ["get_project_schedule", "get_site_status"]
    assert answer.repairs == 1
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "no tool was called for this part" in prompt and "get_site_status" in prompt
    assert "72 workers" in answer.answer


def test_a_part_left_open_is_asked_for_before_a_repeat_is_answered(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    """The model repeats its schedule call while no tool was called for the site part: the
    turn after the loop asks for that part, and the answer covers both."""
    question = (
        "When is substantial completion planned for the Summit Ridge Hotel, and how many "
        "workers are on its site today?"
    )
    schedule = react(
        "get_project_schedule", {"project": "GRB-107", "query": "substantial completion"}
    )
    tb = rest_toolbox(
        [
            schedule,
            schedule,
            react("get_site_status", {"project": "GRB-107"}),
            final("Substantial completion is planned for 2027-01-29; 72 workers are on site."),
        ]
    )
    answer = tb.ask(question)
    assert answer.loops_stopped == 1 and answer.repairs == 1
    assert answer.tools_called == ["get_project_schedule"] * 2 + ["get_site_status"]
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "no tool was called for this part" in prompt and "get_site_status" in prompt
    assert "72 workers" in answer.answer


def test_a_question_of_one_part_is_not_asked_again(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [react("get_project_schedule", {"project": "GRB-107"}), final("2027-01-29.")]
    )
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.repairs == 0 and answer.answer == "2027-01-29."


def test_in_router_mode_the_routers_calls_count_for_the_parts(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    question = (
        "When is substantial completion planned for the Summit Ridge Hotel, and how many "
        "workers are on its site today?"
    )
    calls = [
        {"tool": "get_project_schedule",
         "arguments": {"project": "GRB-107", "query": "substantial completion"}},
        {"tool": "get_site_status", "arguments": {"project": "GRB-107"}},
    ]  # fmt: skip
    tb = rest_toolbox(
        [
            json.dumps({"action": "call_tools", "calls": calls}),
            final("Substantial completion is planned for 2027-01-29; 72 workers are on site."),
        ]
    )
    tb.settings.agent_mode = "router+react"
    answer = tb.ask(question)
    assert answer.tools_called == ["get_project_schedule", "get_site_status"]
    assert answer.repairs == 0 and answer.llm_calls == 2  # no turn asks for a part again
    router, agent = tb.llm.prompts  # type: ignore[attr-defined]
    assert "This question asks 2 things; give a call for each" in (router[0].content or "")
    rules = agent[-1].content or ""
    assert "The question asks 2 things: (1) When is substantial completion" in rules
    assert "72 workers" in answer.answer


def test_an_answer_after_a_loop_is_read_from_every_result_that_found_data() -> None:
    """After a loop, a question of several parts is answered from the results that found
    data (the router's included), and the answer may say which part they do not give."""
    site = TraceStep(step=1, tool="get_site_status", arguments={}, success=True,
                     observation='{"phase": "roof replacement"}')  # fmt: skip
    plan = TraceStep(step=2, tool="get_project_schedule", arguments={}, success=True,
                     observation='{"planned": "2026-03-02"}')  # fmt: skip
    read = "The site is in roof replacement; the subcontract was not found."
    llm = ScriptedLLM([read, "It is worth $971,350."])
    question = "What phase is the site in, and what is the subcontract worth there?"
    assert asyncio.run(answer_from_result(llm, question, site, plan, site)) == read
    prompt = llm.prompts[0][-1].content or ""
    assert "from these tool results only" in prompt and "say which part they do not" in prompt
    assert prompt.count("get_site_status:") == 1 and "get_project_schedule:" in prompt
    # a figure no result holds is not taken
    assert asyncio.run(answer_from_result(llm, question, site, plan)) is None


def test_an_answer_after_a_loop_reads_the_whole_result_not_the_traces_cut() -> None:
    """The trace keeps 600 characters of a result; the answer read after a loop reads what
    the model read, whole: the twelfth row of a listing is past any 600-character cut."""
    rows = [{"id": f"M-{n:02}", "title": f"Milestone {n}", "days_late": n} for n in range(12)]
    whole = json.dumps({"success": True, "data": rows})
    step = TraceStep(step=1, tool="get_schedule", arguments={}, success=True,
                     observation=whole[:600]).keep_read(whole)  # fmt: skip
    assert step.observation != whole and step.read_text() == whole
    assert "_read" not in step.model_dump() and whole not in step.model_dump_json()
    llm = ScriptedLLM(["Milestone 11 was 11 days late."])
    question = "How many days late was milestone 11?"
    assert asyncio.run(answer_from_result(llm, question, step)) == "Milestone 11 was 11 days late."
    assert '"id": "M-11"' in (llm.prompts[0][-1].content or "")


def _schedule_step(toolbox_factory: Callable[..., Toolbox], question: str) -> TraceStep:
    """The one step of a run whose model lists GRB-109's schedule, naming only the project."""
    tb = toolbox_factory([react("get_project_schedule", {"project": "GRB-109"}), final("Done.")])
    return tb.ask(question).trace[0]


def test_a_status_word_the_question_uses_in_passing_does_not_hide_the_row_it_asks_about(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    # "complete" is a status value; the drywall milestone is not complete yet, so with the
    # status added the listing held only finished rows, and the model read one of them
    step = _schedule_step(
        toolbox_factory, "When is drywall planned to be complete at Pinecrest Senior Living?"
    )
    assert step.ran_with in (None, {"project": "GRB-109"})
    assert "M-109-09" in step.read_text() and "2026-05-06" in step.read_text()
    assert "status='complete'" in step.read_text() and "results without it" in step.read_text()
    assert "status='complete' (added" not in step.read_text()  # not said to be applied


def test_a_status_the_question_asks_for_stays_added(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    step = _schedule_step(
        toolbox_factory, "Which milestones at Pinecrest Senior Living are in progress?"
    )
    assert step.ran_with == {"project": "GRB-109", "status": "in_progress"}
    rows = json.loads(step.read_text())["data"]
    assert rows and {r["status"] for r in rows} == {"in_progress"}
