"""The agent's tool_retriever: ToolIndex hits, pinned and sticky tools, resolution by name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llama_index.core.tools import FunctionTool

from toolrag import ScriptedLLM, Settings
from toolrag.agent.loop import build_agent, run_agent
from toolrag.cards.card import cards_from_tools, load_tool_list
from toolrag.events import AgentEvent, listening
from toolrag.models.embeddings import make_embedding
from toolrag.retrieval.agent_retriever import make_tool_retriever
from toolrag.retrieval.index import ToolIndex

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture
def parts(tmp_path: Path):
    cards = load_tool_list(FIXTURES / "tools_small.json")
    tools = [
        FunctionTool.from_defaults(fn=lambda **kw: "ok", name=c.name, description=c.description)
        for c in cards
    ]
    index = ToolIndex(tmp_path, make_embedding(Settings()))
    index.sync(cards_from_tools(tools))
    return index, tools


def names(tools) -> list[str]:
    return [t.metadata.get_name() for t in tools]


def test_retrieves_few_relevant_tools(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=2)
    got = names(retriever.retrieve("How many euros is 100 dollars?"))
    assert len(got) == 2 and got[0] == "convert_currency"


def test_resolves_a_tool_by_name_even_when_retrieval_would_not(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=1)
    assert names(retriever.retrieve("Will it rain in Paris?")) == ["get_weather"]
    # The workflow agent re-retrieves with the bare tool name when it executes a call.
    assert names(retriever.retrieve("send_email")) == ["send_email"]
    assert names(retriever.retrieve("get_weather")) == ["get_weather"]


def test_a_tool_the_question_names_is_offered(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=1)
    asked = "Will it rain in Paris? Send the answer to me with send_email."
    assert names(retriever.retrieve(asked)) == ["send_email"]
    assert names(make_tool_retriever(index, tools, k=2).retrieve(asked)) == [
        "send_email",
        "get_weather",
    ]
    assert retriever.retriever.last_named == ["send_email"]  # type: ignore[attr-defined]


def test_the_trace_says_which_offered_tool_the_question_named(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=2)
    llm = ScriptedLLM(turns=["Thought: I can answer without using any more tools.\nAnswer: ok"] * 2)
    events: list[AgentEvent] = []
    asked = "Will it rain in Paris? Send the answer to me with send_email."
    with listening(events.append):
        answer = asyncio.run(run_agent(build_agent([], llm, tool_retriever=retriever), asked))
    assert answer.tools_offered == ["send_email", "get_weather"]
    assert answer.tools_named == ["send_email"]
    (found,) = [e for e in events if e.kind == "tools_retrieved"]
    assert found.line().endswith("send_email (named), get_weather")
    plain = asyncio.run(run_agent(build_agent([], llm, tool_retriever=retriever), "Rain in Paris?"))
    assert plain.tools_named == []


def test_sticky_tools_survive_later_turns(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=1)
    assert names(retriever.retrieve("Will it rain in Paris?")) == ["get_weather"]
    retriever.retriever.remember("get_weather")  # type: ignore[attr-defined]
    later = names(retriever.retrieve("Now book me a flight to Rome"))
    assert later == ["get_weather", "book_flight"]


def test_pinned_tools_always_offered(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=1, pinned=["send_email"])
    assert names(retriever.retrieve("Will it rain in Paris?")) == ["send_email", "get_weather"]


def test_no_tool_fits(parts) -> None:
    index, tools = parts
    retriever = make_tool_retriever(index, tools, k=3, floor=0.2)
    assert retriever.retrieve("Tell me a joke about penguins") == []


def test_a_gate_offers_the_k_together_or_none(parts) -> None:
    index, tools = parts
    question = "How many euros is 100 dollars?"
    # convert_currency's cosine is about 0.51, the others' at most about 0.12
    gated = make_tool_retriever(index, tools, k=3, gate=0.2)
    got = names(gated.retrieve(question))
    assert len(got) == 3 and got[0] == "convert_currency"  # all k, low cosines included
    floored = make_tool_retriever(index, tools, k=3, floor=0.2)
    assert names(floored.retrieve(question)) == ["convert_currency"]  # each cut on its own
    assert gated.retrieve("Tell me a joke about penguins") == []  # every cosine below 0.06
    pinned = make_tool_retriever(index, tools, k=3, gate=0.2, pinned=["send_email"])
    assert names(pinned.retrieve("Tell me a joke about penguins")) == ["send_email"]
