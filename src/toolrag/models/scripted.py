"""Scripted LLMs: fakes that play a fixed list of turns, for deterministic agent tests.

``Toolbox(llm=ScriptedLLM([...]))`` runs the ReAct agent on the given turns;
``ScriptedFunctionLLM`` does the same for the ``function`` agent mode (tool calls as dicts).
"""

import threading
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import BaseTool, ToolSelection
from pydantic import Field, PrivateAttr

Turn = str | Callable[[Sequence[ChatMessage]], str]


class ScriptedLLM(CustomLLM):
    """Plays a fixed list of turns, for deterministic agent tests.

    Each turn is the text the model "says" (for the ReAct agent: ``Thought/Action/Action Input``
    or ``Thought/Answer``), or a function of the messages it was sent. Every prompt is kept in
    ``prompts`` so tests can check what the model saw (for example which tools were offered).
    """

    turns: list[Any] = Field(default_factory=list)
    model_name: str = "scripted"
    _cursor: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _prompts: list[list[ChatMessage]] = PrivateAttr(default_factory=list)

    def __init__(self, turns: Sequence[Turn] | None = None, **kwargs: Any) -> None:
        super().__init__(turns=list(turns or []), **kwargs)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=32768, num_output=512, model_name=self.model_name)

    @property
    def prompts(self) -> list[list[ChatMessage]]:
        return self._prompts

    @property
    def remaining(self) -> int:
        return len(self.turns) - self._cursor

    def extend(self, turns: Sequence[Turn]) -> None:
        self.turns.extend(turns)

    def _next(self, messages: Sequence[ChatMessage]) -> str:
        with self._lock:
            self._prompts.append(list(messages))
            if self._cursor >= len(self.turns):
                raise RuntimeError(
                    f"ScriptedLLM ran out of turns after {len(self.turns)}; the agent asked for "
                    "one more step than the script has."
                )
            turn = self.turns[self._cursor]
            self._cursor += 1
        return turn(messages) if callable(turn) else str(turn)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = self._next(messages)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        text = self._next(messages)

        def gen() -> ChatResponseGen:
            yield ChatResponse(
                message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=text
            )

        return gen()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        text = self._next([ChatMessage(role=MessageRole.USER, content=prompt)])
        return CompletionResponse(text=text)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._next([ChatMessage(role=MessageRole.USER, content=prompt)])

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()


FunctionTurn = str | dict[str, Any] | list[dict[str, Any]]


class ScriptedFunctionLLM(FunctionCallingLLM):
    """A function-calling LLM that plays a fixed list of turns (tests of the ``function`` agent
    mode, whose real counterpart is OpenAI or a tool-calling server).

    A turn is the final text (a string), one tool call ``{"tool": name, "arguments": {...}}``,
    several calls in a list (parallel calls), or a function of (messages, offered tool names)
    returning one of those. ``prompts`` and ``tools_offered`` keep what each turn was shown.
    """

    turns: list[Any] = Field(default_factory=list)
    model_name: str = "scripted-function"
    _cursor: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _prompts: list[list[ChatMessage]] = PrivateAttr(default_factory=list)
    _offered: list[list[str]] = PrivateAttr(default_factory=list)

    def __init__(self, turns: Sequence[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(turns=list(turns or []), **kwargs)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=32768,
            num_output=512,
            model_name=self.model_name,
            is_chat_model=True,
            is_function_calling_model=True,
        )

    @property
    def prompts(self) -> list[list[ChatMessage]]:
        return self._prompts

    @property
    def tools_offered(self) -> list[list[str]]:
        return self._offered

    @property
    def remaining(self) -> int:
        return len(self.turns) - self._cursor

    def _next(self, messages: Sequence[ChatMessage], tools: Sequence[str]) -> ChatMessage:
        with self._lock:
            self._prompts.append(list(messages))
            self._offered.append(list(tools))
            if self._cursor >= len(self.turns):
                raise RuntimeError(f"ScriptedFunctionLLM ran out of turns after {len(self.turns)}.")
            turn = self.turns[self._cursor]
            self._cursor += 1
        if callable(turn):
            turn = turn(messages, tools)
        if isinstance(turn, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=turn)
        calls = [turn] if isinstance(turn, dict) else list(turn)
        selections = [
            ToolSelection(
                tool_id=f"call_{self._cursor}_{n}",
                tool_name=str(c["tool"]),
                tool_kwargs=dict(c.get("arguments") or {}),
            )
            for n, c in enumerate(calls)
        ]
        return ChatMessage(
            role=MessageRole.ASSISTANT, content="", additional_kwargs={"tool_calls": selections}
        )

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(
                user_msg
                if isinstance(user_msg, ChatMessage)
                else ChatMessage(role=MessageRole.USER, content=user_msg)
            )
        return {"messages": messages, "tool_names": [t.metadata.get_name() for t in tools]}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        calls = list(response.message.additional_kwargs.get("tool_calls") or [])
        if not calls and error_on_no_tool_call:
            raise ValueError("The reply has no tool call.")
        return calls

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return ChatResponse(message=self._next(messages, kwargs.get("tool_names") or []))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        message = self._next(messages, kwargs.get("tool_names") or [])

        def gen() -> ChatResponseGen:
            yield ChatResponse(message=message, delta=message.content or "")

        return gen()

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages, **kwargs)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        message = self._next([ChatMessage(role=MessageRole.USER, content=prompt)], [])
        return CompletionResponse(text=message.content or "")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self.complete(prompt).text

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        return self.complete(prompt)

    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise NotImplementedError("ScriptedFunctionLLM does not stream; use streaming=False.")

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("ScriptedFunctionLLM does not stream.")
