"""The ReAct reply's form held by a grammar on the local model.

A small model sometimes writes its findings as a ``Thought:`` and stops there: no ``Answer:``
line, no ``Action:``. The reply cannot be read, the agent is told so, and the model writes the
same thought again, or the error message's own example, until the iteration cap (a fresh
question lost three model calls and 56 s so). With a llama.cpp grammar the model can only
write one of the two forms the prompt asks for:

    Thought: <one line>
    Answer: <the answer>

    Thought: <one line>
    Action: <the name of one offered tool>
    Action Input: <a JSON object>

so after its thought it must choose: answer, or call a tool by a name that exists. What the
answer says and which arguments the call gives stay the model's (the guard checks them).

Only the in-process llama.cpp model takes a grammar per call
(:class:`toolrag.models.local_llm.LocalLlamaCPP`); other LLMs get the plain prompt.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.memory import BaseMemory
from llama_index.core.tools import AsyncBaseTool

from toolrag.models.llms import takes_grammar

__all__ = ["StepGrammarReActAgent", "react_step_gbnf"]

# A JSON object with any keys and values, no line breaks between tokens (llama.cpp's json.gbnf,
# with its whitespace cut to one optional space).
_JSON = r"""
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}"
value ::= ( object | array | string | number | "true" | "false" | "null" ) ws
array ::= "[" ws ( value ( "," ws value )* )? "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"" ws
number ::= "-"? ( [0-9] | [1-9] [0-9]{0,15} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{1,4} )? ws
ws ::= " "?
"""

_tool_names: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "toolrag_step_tools", default=None
)


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal (json.dumps escapes what GBNF escapes)."""
    return json.dumps(text, ensure_ascii=False)


def react_step_gbnf(tool_names: Sequence[str]) -> str:
    """The GBNF grammar of one ReAct reply: a one-line thought, then an answer, or an action
    naming one of ``tool_names`` with a JSON object as its input (no action when there are no
    tools)."""
    names = sorted({n for n in tool_names if n})
    lines = [
        'root ::= "Thought: " line "\\n" ' + ("( answer | action )" if names else "answer"),
        "line ::= [^\\n]+",
        'answer ::= "Answer: " line ( "\\n" line )*',
    ]
    if names:
        lines += [
            # the model ends the object with a line break where a free reply goes on to
            # "Observation:" (the stop sequence): refused, it would add keys instead of ending
            'action ::= "Action: " name "\\nAction Input: " object "\\n"?',
            "name ::= " + " | ".join(_literal(n) for n in names),
        ]
        return "\n".join(lines) + "\n" + _JSON
    return "\n".join(lines) + "\n"


class StepGrammarReActAgent(ReActAgent):
    """LlamaIndex's workflow ``ReActAgent`` whose every reply, on an LLM that takes a grammar,
    is held to :func:`react_step_gbnf` over the tools offered at that step."""

    async def take_step(
        self,
        ctx: Any,
        llm_input: list[ChatMessage],
        tools: Sequence[AsyncBaseTool],
        memory: BaseMemory,
    ) -> Any:
        token = _tool_names.set(tuple(t.metadata.get_name() for t in tools))
        try:
            return await super().take_step(ctx, llm_input, tools, memory)
        finally:
            _tool_names.reset(token)

    async def _get_response(self, current_llm_input: list[ChatMessage]) -> ChatResponse:
        names = _tool_names.get()
        if names is None or not takes_grammar(self.llm):
            return await super()._get_response(current_llm_input)
        from llama_cpp import LlamaGrammar

        grammar = LlamaGrammar.from_string(react_step_gbnf(names), verbose=False)
        return await self.llm.achat(current_llm_input, grammar=grammar)
