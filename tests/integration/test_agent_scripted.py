"""The workflow ReActAgent over the content tools, driven by the scripted LLM."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolrag import Toolbox
from toolrag.errors import InputError

from ..conftest import final, react


def test_agent_calls_blueprint_tool_with_date_range(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    args = {"query": "structural", "start_date": "2025-01-01", "end_date": "2025-12-31"}
    tb = toolbox_factory([react("search_blueprints", args), final("See the sheets found.")])
    answer = tb.ask("Which structural sheets were revised in 2025?")
    assert answer.tools_called == ["search_blueprints"]
    step = answer.trace[0]
    assert step.success and step.arguments == args
    assert answer.sources and all(s.file.startswith("blueprints/") for s in answer.sources)
    assert answer.answer == "See the sheets found."
    # The model saw the tool's real observation in its next prompt.
    llm = tb.llm
    last_prompt = "\n".join(m.content or "" for m in llm.prompts[-1])  # type: ignore[attr-defined]
    assert "Observation:" in last_prompt and '"discipline"' in last_prompt


def test_agent_recovers_from_a_tool_error(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [
            react("get_project_schedule", {"project": "Summit Ridge Resort and Spa"}),
            react("get_project_schedule", {"project": "GRB-107"}),
            final("Substantial completion is planned for 2027-01-29."),
        ]
    )
    answer = tb.ask("When is substantial completion for the hotel?")
    assert [s.success for s in answer.trace] == [False, True]
    assert answer.trace[0].error_code == "INVALID_ARGUMENT"
    assert "closest project: GRB-107 / Summit Ridge Hotel" in answer.trace[0].observation
    assert "2027-01-29" in answer.answer


def test_unknown_tool_name_does_not_crash(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [
            react("delete_everything", {}),
            final("I could not do that."),  # gave up after an error: one repair turn follows
            final("There is no tool that deletes blueprints."),
        ]
    )
    answer = tb.ask("Delete all the blueprints")
    assert answer.repairs == 1
    assert answer.trace[0].tool == "delete_everything" and not answer.trace[0].success
    assert answer.trace[0].error_code == "UNKNOWN_TOOL"  # structured, with the closest names
    assert "There is no tool named 'delete_everything'" in answer.trace[0].observation


def test_graceful_stop_after_max_iterations(toolbox_factory: Callable[..., Toolbox]) -> None:
    loop = [
        react("get_project_schedule", {"project": p}) for p in ("GRB-101", "GRB-102", "GRB-103")
    ]
    tb = toolbox_factory([*loop, "Thought: stop.\nAnswer: I found the GRB-101 schedule."])
    tb.settings.max_iterations = 3
    answer = tb.ask("Read the schedules of GRB-101, GRB-102 and GRB-103, forever please")
    assert len(answer.trace) == 2 and answer.stopped_early  # the 3rd step hit the cap
    assert "GRB-101" in answer.answer  # the early-stopping turn answered instead of raising


def test_malformed_model_output_is_retried(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [
            "Thought: I will call a tool\nAction: search_documents\nAction Input: {not json",
            final("Recovered."),
        ]
    )
    answer = tb.ask("anything")
    assert answer.answer == "Recovered." and answer.trace == []
    # The parse error was shown to the model so it could fix its format.
    retry_prompt = "\n".join(m.content or "" for m in tb.llm.prompts[1])  # type: ignore[attr-defined]
    assert "Error while parsing the output" in retry_prompt


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question_is_refused(toolbox_factory: Callable[..., Toolbox], question: str) -> None:
    with pytest.raises(InputError, match="empty"):
        toolbox_factory([]).ask(question)


def test_trace_shows_the_tools_retrieved_for_each_step(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory(
        [react("get_project_schedule", {"project": "GRB-107"}), final("Done: 2027-01-29.")]
    )
    tb.settings.tool_top_k = 1
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.tools_offered == ["get_project_schedule"]  # Tool RAG picked one of many
    assert answer.trace[0].tools_offered == ["get_project_schedule"]
    # The prompt the model saw listed only the retrieved tool.
    first_prompt = "\n".join(m.content or "" for m in tb.llm.prompts[0])  # type: ignore[attr-defined]
    assert "get_project_schedule" in first_prompt and "search_blueprints" not in first_prompt


def test_a_repeated_identical_call_stops_with_an_explanation(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    bad = react("search_documents", {"query": "disputed invoices", "document_type": "invoice"})
    tb = toolbox_factory([bad, bad, bad, bad, bad, bad, final("never reached")])
    answer = tb.ask("What is the total of disputed invoices?")
    # Stopped at the first repeat, asked once to change course; the same call again stops.
    assert [s.tool for s in answer.trace] == ["search_documents"] * 3
    assert answer.loops_stopped == 2 and answer.repairs == 1
    assert answer.answer.startswith("I stopped: search_documents was called again")
    # document_type='invoice' is not a document type: left out (guard.grounding.choices), so
    # each repeat gives the same result
    assert "(no change)" in answer.answer
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "You called search_documents twice with the same arguments" in prompt


def test_a_call_that_found_data_and_loops_is_answered_from_its_result(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The model calls the schedule three times for the answer it already has: the run asks it
    to answer from the result, then reads the answer from the result with no tools."""
    same = react("get_project_schedule", {"project": "GRB-107", "query": "substantial completion"})
    read = "Substantial completion of the Summit Ridge Hotel is planned for 2027-01-29."
    tb = toolbox_factory([same, same, same, read])
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert [s.tool for s in answer.trace] == ["get_project_schedule"] * 3
    assert answer.loops_stopped == 2 and answer.repairs == 1
    assert answer.answer == read
    repair = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "If that result answers the question, answer now from it" in repair
    last = tb.llm.prompts[3][-1].content or ""  # type: ignore[attr-defined]
    assert "from this tool result only" in last and "2027-01-29" in last
    assert "Action:" not in last  # no tool is offered to the last call


def test_an_answer_read_from_a_loop_with_a_figure_the_result_lacks_is_refused(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    same = react("get_project_schedule", {"project": "GRB-107", "query": "substantial completion"})
    # 733 is no figure of the result nor a span between its dates (45 is: a task's start to finish)
    tb = toolbox_factory([same, same, same, "The hotel has lost 733 working days to weather."])
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.loops_stopped == 2
    assert answer.answer.startswith("I stopped: get_project_schedule was called again")


def test_a_loop_broken_by_the_repair_turn_gets_its_answer(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    bad = react("search_documents", {"query": "retainage", "document_type": "invoice"})
    # a call that runs differently: the checks leave the invoice type out of ``bad`` and add the
    # project the question names, so the same query with the project would run as ``bad`` did
    good = react("search_documents", {"query": "retainage percentage", "project": "GRB-105"})
    tb = toolbox_factory([bad, bad, good, final("Retainage is 10%.")])
    answer = tb.ask("What is the retainage on GRB-105?")
    assert answer.loops_stopped == 1 and answer.repairs == 1
    assert answer.trace[-1].success and answer.answer == "Retainage is 10%."


def test_data_found_then_unreadable_replies_is_answered_from_the_result(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The model reads the schedule, then writes replies that cannot be read, the repair turn
    included: the answer is read from the result by one tool-free completion."""
    call = react("get_project_schedule", {"project": "GRB-107", "query": "substantial completion"})
    read = "Substantial completion of the Summit Ridge Hotel is planned for 2027-01-29."
    tb = toolbox_factory([call, "%%% ???", "%%% ???", read])
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.unreadable == 2 and answer.repairs == 1
    assert answer.answer == read
    last = tb.llm.prompts[-1][-1].content or ""  # type: ignore[attr-defined]
    assert "from this tool result only" in last and "2027-01-29" in last
    # a read with a figure the result lacks is refused: the explanation stays
    guess = "The hotel has lost 733 working days to weather."
    tb = toolbox_factory([call, "%%% ???", "%%% ???", guess])
    answer = tb.ask("When is substantial completion planned for the Summit Ridge Hotel?")
    assert answer.answer.startswith("I could not answer: the model's replies could not be read")
