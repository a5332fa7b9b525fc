"""Prompt lookup decoding for the local model: drafts copied from the prompt, checked in one pass.

On a CPU the local model writes a token in about 0.07 s and reads one in about 0.012 s (it
reads a batch of tokens in one pass over its weights). Much of what the agent writes is copied
from what it read: tool names and argument values from the question and the tool cards,
figures, ids and names from the tool results, the question's own words in the answer.

Prompt lookup decoding (Saxena, 2023; llama-cpp-python ships it as
``LlamaPromptLookupDecoding``): before each token, :class:`PromptLookup` looks for the last few
tokens written earlier in the prompt or the reply and drafts the tokens that followed them
there. The model evaluates the next token and the draft in one batch, and the sampler then
writes token by token from those logits: drafted tokens it would have written are kept, and
the first one it would not ends the draft (its KV entries are dropped). At temperature 0 the
text is the one the model writes alone up to llama.cpp's kernels: a batch goes through other
matrix kernels than one token (as a prompt does), and on this CPU build their logits differed
by up to 0.6 from one token's (decision 0065), so where the best two tokens are that close the
choice can differ, as it already can between a prompt read in one batch and one written.

llama-cpp-python's own path (``Llama(draft_model=...)``) keeps the logits of every token of
every evaluation: a context x vocabulary float table (16,384 x 151,936 floats, 10 GB, for the
local model) and the output layer computed for every prompt token. :func:`draft_from_prompt`
gives a loaded model its draft model instead, and asks for every token's logits only in the
short evaluations that carry a draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from llama_cpp.llama import Llama
from llama_cpp.llama_speculative import LlamaDraftModel

__all__ = ["DraftCounts", "PromptLookup", "draft_from_prompt"]

# tokens drafted at a time: a wrong draft costs its evaluation, so drafts stay short
DRAFT_TOKENS = 4


@dataclass
class DraftCounts:
    """Lookups made (one per evaluation while writing), tokens drafted by them, and the
    short evaluations (a written token and its draft) that wrote the replies: fewer of those
    than tokens written means drafted tokens were kept."""

    lookups: int = 0
    drafted: int = 0
    evaluations: int = 0


class PromptLookup(LlamaDraftModel):
    """Drafts the ``tokens`` that followed the latest earlier occurrence of the last
    ``max_ngram`` tokens (down to ``min_ngram``: one token alone matches too often to pay)."""

    def __init__(self, tokens: int = DRAFT_TOKENS, max_ngram: int = 3, min_ngram: int = 2) -> None:
        if tokens < 1 or not 1 <= min_ngram <= max_ngram:
            raise ValueError("need tokens >= 1 and 1 <= min_ngram <= max_ngram")
        self.tokens = tokens
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self.counts = DraftCounts()

    def draft(self, input_ids: Sequence[int] | npt.NDArray[Any]) -> npt.NDArray[np.intc]:
        """The draft for the tokens ``input_ids`` (prompt and reply so far); empty when no
        earlier occurrence of their last ``min_ngram`` tokens or more is followed by a token.
        One vectorised pass over the tokens for each n-gram length."""
        ids = np.asarray(input_ids, dtype=np.int64)
        n = len(ids)
        for size in range(min(self.max_ngram, n - 1), self.min_ngram - 1, -1):
            # windows that start before the tail's own start and end before the last token,
            # so each is followed by at least one token
            windows = np.lib.stride_tricks.sliding_window_view(ids[: n - 1], size)
            hits = np.flatnonzero(np.all(windows == ids[n - size :], axis=1))
            if hits.size:
                start = int(hits[-1]) + size
                return ids[start : min(start + self.tokens, n)].astype(np.intc)
        return np.zeros(0, dtype=np.intc)

    def __call__(self, input_ids: npt.NDArray[np.intc], /, **kwargs: Any) -> npt.NDArray[np.intc]:
        found = self.draft(input_ids)
        self.counts.lookups += 1
        self.counts.drafted += len(found)
        return found


def draft_from_prompt(model: Llama, tokens: int = DRAFT_TOKENS) -> PromptLookup:
    """Give the loaded ``model`` a :class:`PromptLookup` of ``tokens`` a draft, and make its
    evaluations of at most ``tokens`` + 1 tokens (a written token and its draft) keep every
    token's logits, which sampling the draft's positions reads; a prompt's evaluation keeps
    the last token's only, as before. Returns the draft model (its ``counts``)."""
    lookup = PromptLookup(tokens)
    limit = tokens + 1
    if model._logits_all:  # its own eval keeps every logit already
        model.draft_model = lookup
        return lookup

    def evaluate(batch_tokens: Sequence[int]) -> None:
        # ``Llama.eval`` with the logits of every token kept in a short evaluation; the
        # sampler reads them from the context (the ``scores`` table is for logprobs only)
        model._ctx.kv_cache_seq_rm(-1, model.n_tokens, -1)
        if len(batch_tokens) <= limit:
            lookup.counts.evaluations += 1
        for i in range(0, len(batch_tokens), model.n_batch):
            batch = list(batch_tokens[i : i + model.n_batch])
            n_past = model.n_tokens
            model._batch.set_batch(
                batch=batch,
                n_past=n_past,
                logits_all=model.draft_model is not None and 1 < len(batch) <= limit,
            )
            model._ctx.decode(model._batch)
            model.input_ids[n_past : n_past + len(batch)] = batch
            model.n_tokens += len(batch)
            model._requires_eval = False

    model.eval = evaluate  # type: ignore[method-assign,assignment]
    model.draft_model = lookup
    return lookup
