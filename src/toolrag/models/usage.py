"""Token usage as an LLM's reply reports it, whatever the server: read by the agent's trace and
the router alike."""

from __future__ import annotations

from typing import Any

__all__ = ["cached_tokens", "token_counts"]


def cached_tokens(raw: Any) -> int | None:
    """Prompt tokens the model read from its prompt cache, where the reply says: OpenAI's (and
    vLLM's) ``usage.prompt_tokens_details.cached_tokens`` (the local model reports it there
    too, :mod:`toolrag.models.local_llm`), llama.cpp's ``timings.cache_n``. None when the reply
    does not say (llama-cpp-python's server)."""
    if not isinstance(raw, dict):
        return None
    details = (raw.get("usage") or {}).get("prompt_tokens_details") or {}
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        return int(details["cached_tokens"])
    timings = raw.get("timings") or {}
    if isinstance(timings, dict) and timings.get("cache_n") is not None:
        return int(timings["cache_n"])
    return None


def token_counts(raw: Any) -> tuple[int, int]:
    """The reply's prompt and completion tokens (``usage``; 0 and 0 where it does not say)."""
    if isinstance(raw, dict):
        usage = raw.get("usage") or {}
        if isinstance(usage, dict):
            return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return 0, 0
