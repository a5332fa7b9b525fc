"""The in-process local model: LlamaIndex's ``LlamaCPP``, reporting the prompt tokens it reused.

llama-cpp-python keeps the tokens of its last prompt and reply in the model's KV cache and
evaluates a new prompt only past the longest prefix the two share. A chat-completions server
reports that count (``usage.prompt_tokens_details.cached_tokens``, llama.cpp's
``timings.cache_n``); the in-process model does not. :class:`LocalLlamaCPP` measures it before
each completion, the way llama-cpp-python decides it, and adds it to the reply's usage in
OpenAI's shape, so the trace and ``benchmarks/agent.py`` count cached prompt tokens on the local
path too (issue 51: what a prompt layout saves is read from this count).

The model's KV cache holds one prompt, and a question's calls take turns between prompts that
open differently (the router's instructions, the ReAct header, a tool-free read), so each call
read its fixed opening again. :class:`PromptStates` keeps the model's state after each call,
a few of them (by bytes, least recently used out first), and a call starts from the state
whose tokens share the longest prefix with its prompt: llama-cpp-python's own cache hook
(``Llama.set_cache``), with lean states that leave out the 150 MB logits table it copies on
every save (the first new token is always evaluated again, so those logits are never read).

A llama-cpp-python built with llama.cpp's AMX kernels (pip's default build on an Intel CPU with
AMX, Sapphire Rapids and later) segfaults on the first evaluation of a Q4_K model in a virtual
machine (llama.cpp issue 20824). :func:`amx_build` tells such a build from its system info, and
:class:`LocalLlamaCPP` then loads the weights without llama.cpp's extra buffer types (the AMX
and repacked layouts): slower, but it runs. ``scripts/llama_build.sh`` builds without AMX.

Only this module imports the optional ``llama_index.llms.llama_cpp`` package; it is imported when
the local model is loaded (:func:`toolrag.models.llms.make_llm`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import llama_cpp
import numpy as np
from llama_cpp.llama import Llama, LlamaState
from llama_cpp.llama_cache import BaseLlamaCache
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.llms.llama_cpp import LlamaCPP
from pydantic import PrivateAttr

from .grammar_first import GreedyFirstCounts, full_grammar_check, greedy_first
from .prompt_lookup import DraftCounts, draft_from_prompt

__all__ = ["LocalLlamaCPP", "PromptStates", "amx_build", "reused_prefix", "shared_prefix"]

log = logging.getLogger(__name__)

# The prompt states kept by default: a 1.5B model's state takes about 28 KB a token, so this
# holds about six prompts of 6,000 tokens (the router's, the agent's turns, a read).
PROMPT_STATES_BYTES = 1 << 30


def shared_prefix(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> int:
    """How many leading tokens ``a`` and ``b`` share (vectorised: prompts run to thousands)."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64)
    y = np.asarray(b[:n], dtype=np.int64)
    differ = np.flatnonzero(x != y)
    return int(differ[0]) if differ.size else n


class PromptStates(BaseLlamaCache):
    """Model states after earlier completions, keyed by their tokens (prompt and reply), at
    most ``capacity_bytes`` of them, least recently used out first. A state whose tokens all
    begin a newer one's is dropped when that one is kept: every prompt shares at least as much
    with the newer. Lookup returns the state sharing the longest prefix with a prompt (a
    ``KeyError`` when none shares a token), as llama-cpp-python's ``LlamaRAMCache`` does."""

    def __init__(self, capacity_bytes: int = PROMPT_STATES_BYTES) -> None:
        super().__init__(capacity_bytes)
        self.states: OrderedDict[tuple[int, ...], LlamaState] = OrderedDict()

    @property
    def cache_size(self) -> int:
        return sum(s.llama_state_size for s in self.states.values())

    def longest(self, key: Sequence[int]) -> tuple[tuple[int, ...] | None, int]:
        """The stored key sharing the longest prefix with ``key``, and that length."""
        best, length = None, 0
        for stored in self.states:
            n = shared_prefix(stored, key)
            if n > length:
                best, length = stored, n
        return best, length

    def _find_longest_prefix_key(self, key: tuple[int, ...]) -> tuple[int, ...] | None:
        return self.longest(key)[0]

    def __getitem__(self, key: Sequence[int]) -> LlamaState:
        found, _ = self.longest(key)
        if found is None:
            raise KeyError("no stored state shares a token with this prompt")
        self.states.move_to_end(found)
        return self.states[found]

    def __contains__(self, key: Sequence[int]) -> bool:
        return self.longest(key)[0] is not None

    def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
        # the key a completion saves under ends with its last token, which llama-cpp-python
        # samples but never evaluates: keyed by what the state holds, lookups count it right
        key = tuple(key)[: value.n_tokens]
        for stored in list(self.states):
            if len(stored) <= len(key) and shared_prefix(stored, key) == len(stored):
                del self.states[stored]
        self.states[key] = value
        while self.cache_size > self.capacity_bytes and len(self.states) > 1:
            self.states.popitem(last=False)


def lean_save_state(model: Llama) -> LlamaState:
    """``Llama.save_state`` without the logits table (``scores``: n_batch x vocabulary floats,
    150 MB for Qwen2.5): a restored state always evaluates its next token again
    (``Llama.generate`` replays one when the whole prompt is cached), so they are never read."""
    ctx = model._ctx.ctx
    size = int(llama_cpp.llama_state_get_size(ctx))
    buffer = (ctypes.c_uint8 * size)()
    n_bytes = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
    if n_bytes > size:
        raise RuntimeError("Failed to copy llama state data")
    return LlamaState(
        input_ids=model.input_ids[: model.n_tokens].copy(),
        scores=np.zeros((1, 1), dtype=np.single),
        n_tokens=model.n_tokens,
        # the buffer itself, not a bytes copy of it: a state runs to hundreds of megabytes
        llama_state=buffer,  # type: ignore[arg-type]
        llama_state_size=n_bytes,
        seed=model._seed,
    )


def lean_load_state(model: Llama, state: LlamaState) -> None:
    """``Llama.load_state`` for a :func:`lean_save_state` state: the KV cache and tokens back,
    the next token marked for evaluation."""
    held = state.llama_state  # read, never written: no copy needed
    buffer = (
        held
        if isinstance(held, ctypes.Array)
        else ((ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(held))
    )
    if llama_cpp.llama_state_set_data(model._ctx.ctx, buffer, state.llama_state_size) != (
        state.llama_state_size
    ):
        model.reset()  # the KV cache is cleared: nothing of the last prompt can be reused
        raise RuntimeError("Failed to set llama state data")
    model.input_ids[: state.n_tokens] = state.input_ids[: state.n_tokens]
    model.n_tokens = state.n_tokens
    model._requires_eval = True
    model._seed = state.seed


def keep_prompt_states(model: Llama, capacity_bytes: int = PROMPT_STATES_BYTES) -> PromptStates:
    """Give ``model`` a :class:`PromptStates` cache with lean saves and loads; returns it."""
    states = PromptStates(capacity_bytes)
    model.save_state = lambda: lean_save_state(model)  # type: ignore[method-assign]
    model.load_state = lambda state: lean_load_state(model, state)  # type: ignore[method-assign]
    model.set_cache(states)
    return states


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
    if not len(tokens):
        return 0
    shared = shared_prefix(held, tokens)
    cache = getattr(model, "cache", None)
    if isinstance(cache, PromptStates):  # a stored state with a longer prefix is loaded
        shared = max(shared, cache.longest(tokens)[1])
    return shared - 1 if shared == len(tokens) else shared


def amx_build(system_info: str | None = None) -> bool:
    """Whether the installed llama.cpp runs its AMX kernels (``AMX_INT8 = 1`` in its system
    info: built with them, on a CPU that has them)."""
    if system_info is None:
        system_info = llama_cpp.llama_print_system_info().decode(errors="replace")
    return "AMX_INT8 = 1" in system_info


@contextlib.contextmanager
def _without_extra_buffers() -> Iterator[None]:
    """Models loaded inside get ``use_extra_bufts = False`` (no AMX or repacked weight
    layouts). ``Llama.__init__`` takes its model parameters from
    ``llama_cpp.llama_model_default_params`` and has no argument for this one."""
    module = llama_cpp.llama_cpp
    default = module.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = False
        return p

    module.llama_model_default_params = params
    try:
        yield
    finally:
        module.llama_model_default_params = default


class LocalLlamaCPP(LlamaCPP):
    """``LlamaCPP`` whose completions say how many prompt tokens came from the KV cache
    (``raw["usage"]["prompt_tokens_details"]["cached_tokens"]``, OpenAI's field), so the
    local path reports cache reuse as a server does. ``chat`` goes through ``complete``.
    ``prompt_states_bytes`` > 0 keeps earlier prompts' states (:class:`PromptStates`).
    Greedy completions under a grammar check the greedy token first (:func:`greedy_first`).
    ``draft_tokens`` > 0 drafts that many tokens from the prompt before each written token
    (:mod:`toolrag.models.prompt_lookup`). ``repacked_weights=False`` loads the weights
    without llama.cpp's extra buffer types (no repacked layouts), as an AMX build always
    does."""

    # one completion at a time: llama.cpp's context is not thread-safe, and the router runs in
    # a worker thread while the agent completes on the event loop's
    _lock: Any = PrivateAttr(default_factory=threading.RLock)
    # ``complete(..., grammar=LlamaGrammar)`` holds that one completion to the grammar
    takes_grammar: ClassVar[bool] = True
    # greedy completions under a grammar test the greedy token first (``grammar_first``)
    _grammar_counts: GreedyFirstCounts = PrivateAttr(default_factory=GreedyFirstCounts)
    _draft_counts: DraftCounts | None = PrivateAttr(default=None)

    def __init__(
        self,
        *args: Any,
        prompt_states_bytes: int = PROMPT_STATES_BYTES,
        draft_tokens: int = 0,
        repacked_weights: bool = True,
        **kw: Any,
    ) -> None:
        guard: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        if not repacked_weights:
            guard = _without_extra_buffers()
        elif amx_build():
            log.warning(
                "llama.cpp was built with AMX kernels, which crash on some CPUs: loading the "
                "model without them (slower); scripts/llama_build.sh builds without AMX"
            )
            guard = _without_extra_buffers()
        with guard:
            super().__init__(*args, **kw)
        if prompt_states_bytes > 0:  # reached as the model's cache (``reused_prefix``)
            keep_prompt_states(self._model, prompt_states_bytes)
        self._grammar_counts = greedy_first(self._model)
        if draft_tokens > 0:
            self._draft_counts = draft_from_prompt(self._model, draft_tokens).counts

    @property
    def draft_counts(self) -> DraftCounts | None:
        """Lookups and drafted tokens of prompt lookup decoding; None when it is off."""
        return self._draft_counts

    @contextlib.contextmanager
    def without_drafts(self) -> Iterator[None]:
        """Inside, completions write one token at a time (the baseline drafts are compared
        against); the draft model is put back after."""
        with self._lock:
            held = self._model.draft_model
            self._model.draft_model = None
            try:
                yield
            finally:
                self._model.draft_model = held

    @property
    def grammar_counts(self) -> GreedyFirstCounts:
        """Tokens written under a grammar that the greedy token's own check settled, and
        those that needed the whole vocabulary tested (:mod:`toolrag.models.grammar_first`)."""
        return self._grammar_counts

    def full_grammar_check(self) -> contextlib.AbstractContextManager[None]:
        """Inside, completions under a grammar test every candidate at every token, as
        llama-cpp-python's own chain does (the baseline the greedy-first check is timed and
        compared against)."""
        return full_grammar_check(self._model)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """``grammar``: a ``LlamaGrammar`` for this completion only (``LlamaCPP`` reads its
        generation options from ``generate_kwargs`` and ignores the call's)."""
        to_prompt = self.completion_to_prompt  # set by LlamaCPP.__init__
        if not formatted and to_prompt is not None:
            prompt = to_prompt(prompt)
        grammar = kwargs.pop("grammar", None)
        with self._lock:
            reused = reused_prefix(self._model, prompt)
            if grammar is None:
                response = super().complete(prompt, formatted=True, **kwargs)
            else:
                earlier = self.generate_kwargs.get("grammar")
                self.generate_kwargs["grammar"] = grammar
                try:
                    response = super().complete(prompt, formatted=True, **kwargs)
                finally:
                    if earlier is None:
                        self.generate_kwargs.pop("grammar", None)
                    else:
                        self.generate_kwargs["grammar"] = earlier
        raw = response.raw
        if reused is not None and isinstance(raw, dict):
            usage = raw.setdefault("usage", {})
            if isinstance(usage, dict):
                usage["prompt_tokens_details"] = {"cached_tokens": reused}
        return response
