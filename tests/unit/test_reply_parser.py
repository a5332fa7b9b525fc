"""The ReAct reply parser: the stock shapes unchanged, an answer written before an action read
as the answer alone, a call written on the Action line read as the action."""

from __future__ import annotations

import pytest
from llama_index.core.agent.react.types import ActionReasoningStep, ResponseReasoningStep

from toolrag.agent.reply_parser import ReActReplyParser

parse = ReActReplyParser().parse


def test_the_stock_action_form_is_read_as_before() -> None:
    step = parse('Thought: I need data.\nAction: run_sql\nAction Input: {"sql": "SELECT 1"}')
    assert isinstance(step, ActionReasoningStep)
    assert (step.action, step.action_input) == ("run_sql", {"sql": "SELECT 1"})
    assert step.thought == "I need data."


def test_the_stock_answer_form_is_read_as_before() -> None:
    step = parse("Thought: I know it.\nAnswer: 42 days.")
    assert isinstance(step, ResponseReasoningStep)
    assert (step.thought, step.response) == ("I know it.", "42 days.")


def test_an_action_before_an_answer_is_the_action() -> None:
    step = parse('Thought: t\nAction: get_status\nAction Input: {"id": "A-1"}\nAnswer: ok')
    assert isinstance(step, ActionReasoningStep) and step.action == "get_status"


def test_an_answer_before_an_action_is_the_answer_without_the_action_lines() -> None:
    reply = (
        "Thought: To find the amount I searched.\n"
        "Answer: The subcontract is worth $971,350.\n"
        "Action: search_documents\n"
        'Action Input: {"query": "subcontract", "document_type": "rfi"}'
    )
    step = parse(reply)
    assert isinstance(step, ResponseReasoningStep)
    assert step.response == "The subcontract is worth $971,350."
    assert step.thought == "To find the amount I searched."


def test_an_answer_of_several_lines_keeps_them_up_to_the_next_step() -> None:
    step = parse("Answer: Two sheets:\n- S-201\n- A-101\nThought: done\nObservation: x")
    assert isinstance(step, ResponseReasoningStep)
    assert step.response == "Two sheets:\n- S-201\n- A-101"


@pytest.mark.parametrize(
    "line",
    [
        'Action: run_sql({"sql": "SELECT SUM(amount) FROM invoices WHERE name = \'Pool\'"})',
        'Action: run_sql({"sql": "SELECT SUM(amount) FROM invoices WHERE name = \'Pool\'"}',
        'Action: run_sql {"sql": "SELECT SUM(amount) FROM invoices WHERE name = \'Pool\'"}',
        "Action: run_sql({'sql': \"SELECT SUM(amount) FROM invoices WHERE name = 'Pool'\"})",
    ],
)
def test_a_call_on_the_action_line_is_the_action(line: str) -> None:
    step = parse(f"Thought: The total is in the database.\n{line}")
    assert isinstance(step, ActionReasoningStep)
    assert step.action == "run_sql"
    assert step.action_input == {"sql": "SELECT SUM(amount) FROM invoices WHERE name = 'Pool'"}
    assert step.thought == "The total is in the database."


@pytest.mark.parametrize(
    "reply",
    [
        "Thought: I should ask.\nAction: ask_to_user",  # no input at all
        "Thought: hmm\nAction: run_sql(SELECT 1)",  # not a JSON object
        "Thought: I am thinking",  # neither an action nor an answer
    ],
)
def test_what_still_cannot_be_read_raises_for_a_retry(reply: str) -> None:
    with pytest.raises(ValueError):
        parse(reply)


def test_a_long_unreadable_reply_is_refused_quickly() -> None:
    reply = "Thought: " + "Action: x(" * 5_000
    with pytest.raises(ValueError):
        parse(reply)


def test_a_thought_alone_or_a_copied_format_is_not_an_answer() -> None:
    from toolrag.agent.loop import readable

    assert readable("The drawings are A-201 and C-101.")
    assert readable("Thought: I found them.\nAnswer: A-201 and C-101.")
    assert not readable("Thought: The results showed three drawings: A-201, C-101 and E-301.")
    copied = (
        "Thought: The results showed three drawings.\n\nThe output should be in one of the "
        "following formats:\n1. To call a tool:\n```\nThought: <thought>\nAction: <action>\n"
        "Action Input: <action_input>\n```\n2. To answer the question:\n```\n"
        "Thought: <thought>\nAnswer: <answer>\n```"
    )
    assert not readable(copied)
    assert not readable("Thought: x\nAnswer: <answer>")


def test_an_answer_written_in_the_thought_line_and_again_is_read_once() -> None:
    step = parse("Thought: Two sheets were revised. Answer: A-101, A-102.\nAnswer: A-101, A-102")
    assert isinstance(step, ResponseReasoningStep)
    assert step.response == "A-101, A-102."


def test_a_final_answer_loses_the_react_lines_written_after_it() -> None:
    from toolrag.agent.loop import answer_text

    # the local model's answer to "Write a haiku about autumn leaves." in the first-hour run
    written = (
        "The leaves fall to the ground, creating a blanket of gold and brown.\n"
        'Action: search_handbook\nAction Input: {"query":"autumn leaves"}'
    )
    assert answer_text(written) == (
        "The leaves fall to the ground, creating a blanket of gold and brown."
    )
    assert answer_text("  25 days.\nObservation: made up ") == "25 days."
    assert answer_text("The Action: line is kept inside prose.") == (
        "The Action: line is kept inside prose."
    )
    step = "Thought: I need a tool.\nAction: run_sql"  # a step, for readable() to judge
    assert answer_text(step) == step
