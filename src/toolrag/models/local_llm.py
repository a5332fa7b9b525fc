"""The in-process local model: LlamaIndex's ``LlamaCPP``, reporting the prompt tokens it reused.

llama-cpp-python keeps the tokens of its last prompt and reply in the model's KV cache and
evaluates a new prompt only past the longest prefix the two share. A chat-completions server
reports that count (``usage.prompt_tokens_details.cached_tokens``, llama.cpp's
``timings.cache_n``); the in-process model does not. :class:`LocalLlamaCPP` measures it before
each completion, the way llama-cpp-python decides it, and adds it to the reply's usage in
OpenAI's shape, so the trace and ``benchmarks/agent.py`` count cached prompt tokens on the local
path too (issue 51: what a prompt layout saves is read from this count).

Only this module imports the optional ``llama_index.llms.llama_cpp`` package; it is imported when
the local model is loaded (:func:`toolrag.models.llms.make_llm`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.llms.llama_cpp import LlamaCPP

__all__ = ["LocalLlamaCPP", "reused_prefix"]


def reused_prefix(model: Any, prompt: str) -> int | None:
    """How many of ``prompt``'s tokens ``model`` (a ``llama_cpp.Llama``) will take from its KV
    cache rather than evaluate: the longest prefix its tokens share with the tokens the cache
    holds, less the one token llama-cpp-python evaluates again when the whole prompt is cached
    (its logits must be fresh). None when the model does not expose its tokens."""
    try:
        tokens = model.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        bos = model.token_bos()
        if bos != -1 and model._model.add_bos_token():  # as Llama._create_completion adds it
            tokens = [bos, *tokens]
        held = np.asarray(model._input_ids)  # the evaluated tokens: input_ids[:n_tokens]
    except (AttributeError, TypeError, ValueError):
        return None
    if not len(tokens) or not len(held):
        return 0
    n = min(len(tokens), len(held))
    differ = np.flatnonzero(held[:n] != np.asarray(tokens[:n], dtype=held.dtype))
    shared = int(differ[0]) if differ.size else n
    return shared - 1 if shared == len(tokens) else shared


class LocalLlamaCPP(LlamaCPP):
    """``LlamaCPP`` whose completions say how many prompt tokens came from the KV cache
    (``raw["usage"]["prompt_tokens_details"]["cached_tokens"]``, OpenAI's field), so the
    local path reports cache reuse as a server does. ``chat`` goes through ``complete``."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        to_prompt = self.completion_to_prompt  # set by LlamaCPP.__init__
        if not formatted and to_prompt is not None:
            prompt = to_prompt(prompt)
        reused = reused_prefix(self._model, prompt)
        response = super().complete(prompt, formatted=True, **kwargs)
        raw = response.raw
        if reused is not None and isinstance(raw, dict):
            usage = raw.setdefault("usage", {})
            if isinstance(usage, dict):
                usage["prompt_tokens_details"] = {"cached_tokens": reused}
        return response
