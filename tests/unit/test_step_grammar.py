"""The ReAct reply's form held by a grammar: the grammar llama.cpp reads, and the agent passing
it to an LLM that takes one (and to no other)."""

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from llama_cpp import LlamaGrammar
from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse
from llama_index.core.tools import FunctionTool
from pydantic import PrivateAttr

from toolrag import ScriptedLLM
from toolrag.agent.loop import build_agent, run_agent
from toolrag.agent.step_grammar import StepGrammarReActAgent, react_step_gbnf
from toolrag.models.llms import takes_grammar
from toolrag.routing.router import Router


def test_the_grammar_names_the_offered_tools_and_llama_cpp_reads_it() -> None:
    gbnf = react_step_gbnf(["run_sql", "search_documents", 'odd"name'])
    assert 'name ::= "odd\\"name" | "run_sql" | "search_documents"' in gbnf
    assert 'root ::= "Thought: " line "\\n" ( answer | action )' in gbnf
    LlamaGrammar.from_string(gbnf, verbose=False)  # raises on a grammar llama.cpp cannot parse


def test_with_no_tools_the_reply_can_only_answer() -> None:
    gbnf = react_step_gbnf([])
    assert "action" not in gbnf
    LlamaGrammar.from_string(gbnf, verbose=False)


class _GrammarLLM(ScriptedLLM):
    """A scripted LLM that takes a grammar, as the local model does, and keeps what it got."""

    takes_grammar: ClassVar[bool] = True
    _grammars: list[Any] = PrivateAttr(default_factory=list)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self._grammars.append(kwargs.get("grammar"))
        return super().chat(messages, **kwargs)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._grammars.append(kwargs.get("grammar"))
        return super().complete(prompt, formatted, **kwargs)


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_each_reply_of_an_llm_that_takes_a_grammar_is_held_to_it() -> None:
    llm = _GrammarLLM(
        turns=[
            'Thought: I add.\nAction: _add\nAction Input: {"a": 2, "b": 3}',
            "Thought: I know.\nAnswer: 5",
        ]
    )
    assert takes_grammar(llm) and not takes_grammar(ScriptedLLM(turns=[]))
    agent = build_agent([FunctionTool.from_defaults(_add)], llm)
    assert isinstance(agent, StepGrammarReActAgent)
    answer = asyncio.run(run_agent(agent, "What is 2 + 3?"))
    assert answer.answer == "5"
    assert [s.tool for s in answer.trace] == ["_add"]
    assert len(llm._grammars) == 2 and all(isinstance(g, LlamaGrammar) for g in llm._grammars)


def test_the_setting_off_builds_the_stock_agent() -> None:
    tools = [FunctionTool.from_defaults(_add)]
    agent = build_agent(tools, ScriptedLLM(turns=[]), step_grammar=False)
    assert type(agent) is ReActAgent


def test_an_llm_without_grammars_gets_the_plain_call() -> None:
    llm = ScriptedLLM(turns=["Thought: I know.\nAnswer: 4"])
    agent = build_agent([FunctionTool.from_defaults(_add)], llm)
    assert asyncio.run(run_agent(agent, "What is 2 + 2?")).answer == "4"


def test_the_router_gives_an_llm_that_takes_a_grammar_its_grammar_per_call() -> None:
    llm = _GrammarLLM(
        turns=[
            '{"action": "call_tools", "calls": [{"tool": "_add", "arguments": {"a": 2, "b": 3}}]}'
        ]
    )
    result = Router(llm).route("What is 2 + 3?", [FunctionTool.from_defaults(_add)])
    assert result.valid and result.decision is not None
    assert [c.tool for c in result.decision.calls] == ["_add"]
    assert len(llm._grammars) == 1 and isinstance(llm._grammars[0], LlamaGrammar)
