"""LLM factory: ``local`` (llama.cpp), ``openai``, ``openai_like`` and ``scripted``.

Resolution order for ``llm_provider="auto"``: ``openai`` when an OpenAI key is set, then
``openai_like`` when ``api_base`` is set, then ``local``. An explicit provider always wins.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
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
from llama_index.core.llms import LLM, CustomLLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import BaseTool, ToolSelection
from pydantic import Field, PrivateAttr

from toolrag.errors import ConfigError, ModelMissingError
from toolrag.local_model import INSTALL_HINT, require_model
from toolrag.settings import Settings

#: Stop sequences for the local model: end of a ChatML turn, and the point where a ReAct
#: step hands over to the tool (the model must not invent the observation itself).
LOCAL_STOP = ["<|im_end|>", "\nObservation:"]

Turn = str | Callable[[Sequence[ChatMessage]], str]


def chatml_messages_to_prompt(messages: Sequence[ChatMessage]) -> str:
    """Format chat messages in Qwen's ChatML (the LlamaCPP wrapper defaults to Llama-2)."""
    parts: list[str] = []
    if not messages or messages[0].role != MessageRole.SYSTEM:
        parts.append("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    for m in messages:
        role = "user" if m.role in (MessageRole.TOOL, MessageRole.FUNCTION) else m.role.value
        parts.append(f"<|im_start|>{role}\n{m.content or ''}<|im_end|>\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def chatml_completion_to_prompt(completion: str) -> str:
    return chatml_messages_to_prompt([ChatMessage(role=MessageRole.USER, content=completion)])


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


def resolve_provider(settings: Settings) -> str:
    """The provider that ``auto`` resolves to, in the order DESIGN.md gives."""
    if settings.llm_provider != "auto":
        return settings.llm_provider
    if settings.openai_key():
        return "openai"
    if settings.api_base:
        return "openai_like"
    return "local"


def make_llm(settings: Settings, scripted_turns: Sequence[Any] | None = None) -> LLM:
    """Build the configured LLM, or raise a one-sentence error that says what to run or set."""
    provider = resolve_provider(settings)
    if provider == "scripted":
        function = settings.agent_mode == "function"
        if scripted_turns is None and settings.scripted_turns_file:
            scripted_turns = _read_turns(settings.scripted_turns_file, allow_calls=function)
        if function:
            return ScriptedFunctionLLM(scripted_turns or [])
        return ScriptedLLM(scripted_turns or [])
    if provider == "openai":
        key = settings.openai_key()
        if not key:
            raise ConfigError(
                "llm_provider is 'openai' but no API key is set.",
                hint="Set OPENAI_API_KEY (or TOOLRAG_API_KEY), or use TOOLRAG_LLM_PROVIDER=local.",
            )
        from llama_index.llms.openai import OpenAI

        return OpenAI(
            model=settings.llm_model or "gpt-4o-mini",
            api_key=key,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.llm_timeout_s,
        )
    if provider == "openai_like":
        if not settings.api_base:
            raise ConfigError(
                "llm_provider is 'openai_like' but api_base is not set.",
                hint="Set TOOLRAG_API_BASE=http://127.0.0.1:8000/v1 (vLLM, Ollama, llama.cpp).",
            )
        if not settings.llm_model:
            raise ConfigError(
                "llm_provider is 'openai_like' but llm_model is not set.",
                hint="Set TOOLRAG_LLM_MODEL to the model name your server serves.",
            )
        from llama_index.llms.openai_like import OpenAILike

        return OpenAILike(
            model=settings.llm_model,
            api_base=settings.api_base,
            api_key=settings.openai_key() or "not-needed",
            # OpenAILike defaults to completion mode; every server we target speaks chat.
            is_chat_model=True,
            is_function_calling_model=settings.agent_mode == "function",
            context_window=settings.context_window,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.llm_timeout_s,
        )
    if provider == "local":
        return _local_llm(
            str(require_model(settings.model_dir)),
            settings.context_window,
            settings.llm_threads,
            settings.max_tokens,
        )
    raise ConfigError(
        f"Unknown llm_provider {provider!r}.",
        hint="Use one of auto, local, openai, openai_like, scripted.",
    )


def _read_turns(path: Path, allow_calls: bool = False) -> list[Any]:
    """The turns file: a JSON list of strings; with ``allow_calls`` (the function agent mode)
    also tool-call objects ``{"tool": ..., "arguments": {...}}`` or lists of them."""
    try:
        turns = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"Cannot read scripted turns from {path}: {exc}.",
            hint="TOOLRAG_SCRIPTED_TURNS_FILE must name a JSON list of strings.",
        ) from exc

    def ok(turn: Any) -> bool:
        if isinstance(turn, str):
            return True
        if not allow_calls:
            return False
        calls = turn if isinstance(turn, list) else [turn]
        return all(isinstance(c, dict) and isinstance(c.get("tool"), str) for c in calls)

    if not isinstance(turns, list) or not all(ok(t) for t in turns):
        raise ConfigError(
            f"{path} is not a JSON list of turns.",
            hint="Write the turns as a JSON list of strings (with agent_mode=function, also "
            '{"tool": name, "arguments": {...}} objects).',
        )
    return turns


@lru_cache(maxsize=2)
def _local_llm(path: str, n_ctx: int, threads: int, max_tokens: int) -> LLM:
    """Load the GGUF once per process: loading costs seconds and ~2 GB of RAM."""
    try:
        from llama_index.llms.llama_cpp import LlamaCPP
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelMissingError(
            f"The local model runtime is not installed ({exc.name}).", hint=INSTALL_HINT
        ) from exc
    return LlamaCPP(
        model_path=path,
        temperature=0.0,
        max_new_tokens=max_tokens,
        context_window=n_ctx,
        generate_kwargs={"stop": LOCAL_STOP, "repeat_penalty": 1.05},
        model_kwargs={"n_threads": threads, "n_threads_batch": threads, "n_batch": 256},
        messages_to_prompt=chatml_messages_to_prompt,
        completion_to_prompt=chatml_completion_to_prompt,
        verbose=False,
    )
