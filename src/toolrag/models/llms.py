"""LLM factory: ``local`` (llama.cpp), ``openai``, ``openai_like`` and ``scripted``.

Resolution order for ``llm_provider="auto"``: ``openai`` when an OpenAI key is set, then
``openai_like`` when ``api_base`` is set, then ``local``. An explicit provider always wins.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    MessageRole,
)
from llama_index.core.llms import LLM

from toolrag.errors import ConfigError, ModelMissingError
from toolrag.models.local import INSTALL_HINT, require_model
from toolrag.models.scripted import ScriptedFunctionLLM, ScriptedLLM
from toolrag.settings import Settings

#: Stop sequences for the local model: end of a ChatML turn, and the point where a ReAct
#: step hands over to the tool (the model must not invent the observation itself).
LOCAL_STOP = ["<|im_end|>", "\nObservation:"]


def takes_grammar(llm: Any) -> bool:
    """Whether ``llm`` takes a llama.cpp grammar for one completion (``complete(...,
    grammar=LlamaGrammar)``): the local model (:class:`toolrag.models.local_llm.LocalLlamaCPP`)."""
    return bool(getattr(llm, "takes_grammar", False))


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


def resolve_provider(settings: Settings) -> str:
    """The provider that ``auto`` resolves to, in the order docs/contracts.md gives."""
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
        from toolrag.models.server import REACT_STOP, ServerLLM

        function = settings.agent_mode == "function"
        return ServerLLM(
            model=settings.llm_model,
            api_base=settings.api_base,
            api_key=settings.openai_key() or "not-needed",
            # OpenAILike defaults to completion mode; every server we target speaks chat.
            is_chat_model=True,
            is_function_calling_model=function,
            context_window=settings.context_window,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.llm_timeout_s,
            # A server stops only where the request says: a ReAct step ends at the observation.
            additional_kwargs={} if function else {"stop": REACT_STOP},
            agent_mode=settings.agent_mode,
            tool_result_role=settings.tool_result_role,
            response_format=settings.response_format,
        )
    if provider == "local":
        return _local_llm(
            str(require_model(settings.model_dir)),
            settings.context_window,
            settings.llm_threads,
            settings.max_tokens,
            settings.local_prompt_states_mb,
            settings.local_draft_tokens,
            settings.local_repacked_weights,
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
def _local_llm(
    path: str,
    n_ctx: int,
    threads: int,
    max_tokens: int,
    states_mb: int,
    draft_tokens: int,
    repacked: bool,
) -> LLM:
    """Load the GGUF once per process: loading costs seconds and ~2 GB of RAM. ``states_mb``:
    megabytes of earlier prompts' model states kept (``local_llm.PromptStates``);
    ``draft_tokens``: prompt lookup drafts (``prompt_lookup``); ``repacked``: llama.cpp may
    repack the weights for this CPU (its extra buffer types)."""
    try:
        from toolrag.models.local_llm import LocalLlamaCPP
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelMissingError(
            f"The local model runtime is not installed ({exc.name}).", hint=INSTALL_HINT
        ) from exc
    return LocalLlamaCPP(
        model_url=None,
        model_path=path,
        temperature=0.0,
        max_new_tokens=max_tokens,
        context_window=n_ctx,
        generate_kwargs={"stop": LOCAL_STOP, "repeat_penalty": 1.05},
        model_kwargs={"n_threads": threads, "n_threads_batch": threads, "n_batch": 256},
        messages_to_prompt=chatml_messages_to_prompt,
        completion_to_prompt=chatml_completion_to_prompt,
        verbose=False,
        prompt_states_bytes=states_mb << 20,
        draft_tokens=draft_tokens,
        repacked_weights=repacked,
    )
