"""Tool outputs are cut so a ReAct prompt fits the model's context (the local model raised
"Requested tokens (4168) exceed context window of 4096" on a question whose routed results were
long, and the question was lost)."""

from __future__ import annotations

from types import SimpleNamespace

from llama_index.core.agent.react.types import ActionReasoningStep, ObservationReasoningStep
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from toolrag.tools.prompting import (
    MIN_OUTPUT_CHARS,
    CompactReActFormatter,
    estimate_tokens,
    fence,
    fit_to_context,
    prompt_budget,
)


def _messages(*outputs: str) -> list[ChatMessage]:
    msgs = [ChatMessage(role=MessageRole.SYSTEM, content="You answer questions. " * 20)]
    for text in outputs:
        msgs.append(ChatMessage(role=MessageRole.ASSISTANT, content="Action: run_sql"))
        msgs.append(ChatMessage(role=MessageRole.USER, content=fence(text)))
    return msgs


def _size(msgs: list[ChatMessage]) -> int:
    return sum(estimate_tokens(m.content or "") + 4 for m in msgs)


def test_within_budget_nothing_changes() -> None:
    msgs = _messages("a short result", "another")
    assert fit_to_context(msgs, 10_000) is msgs


def test_long_outputs_are_cut_to_a_common_cap_and_short_ones_stay_whole() -> None:
    short, long_a, long_b = "row 1: 42", "A" * 9_000, "B" * 6_000
    msgs = _messages(short, long_a, long_b)
    fitted = fit_to_context(msgs, 2_000)
    assert _size(fitted) <= 2_000
    texts = [m.content or "" for m in fitted]
    assert any(short in t for t in texts)  # the short output is whole
    assert texts[0] == msgs[0].content  # no other text changes
    cut = [t for t in texts if "characters cut to fit the model's context" in t]
    assert len(cut) == 2
    kept_a, kept_b = (t.count(c) for t, c in zip(cut, "AB", strict=True))
    assert kept_a == kept_b >= MIN_OUTPUT_CHARS  # one cap for both
    assert f"{9_000 - kept_a} characters cut" in cut[0]


def test_outputs_are_never_cut_below_the_floor() -> None:
    fitted = fit_to_context(_messages("C" * 5_000), 50)
    body = fitted[-1].content or ""
    assert body.count("C") == MIN_OUTPUT_CHARS
    assert body.endswith("</tool_output>")


def test_formatter_fits_the_budget_it_is_given() -> None:
    formatter = CompactReActFormatter(token_budget=1_500)
    steps = [
        ActionReasoningStep(thought="t", action="run_sql", action_input={"sql": "SELECT 1"}),
        ObservationReasoningStep(observation="x" * 12_000),
    ]
    msgs = formatter.format([], [ChatMessage(role=MessageRole.USER, content="q?")], steps)
    assert _size(msgs) <= 1_500
    assert "characters cut to fit" in (msgs[-1].content or "")
    assert CompactReActFormatter().format([], [], steps)[-1].content == fence("x" * 12_000)


def test_budget_leaves_room_for_the_reply() -> None:
    llm = SimpleNamespace(metadata=SimpleNamespace(context_window=4096, num_output=384))
    budget = prompt_budget(llm)  # type: ignore[arg-type]
    assert budget is not None and budget < 4096 - 384
    assert prompt_budget(SimpleNamespace()) is None  # type: ignore[arg-type]
