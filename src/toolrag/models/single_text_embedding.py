"""A ``HuggingFaceEmbedding`` that embeds one text without ``encode``'s batching machinery.

Import it through :func:`toolrag.models.embeddings.make_embedding`, which sets the offline settings
that huggingface_hub reads when it is first imported.
"""

from __future__ import annotations

import torch
from llama_index.embeddings.huggingface import HuggingFaceEmbedding


class SingleTextEmbedding(HuggingFaceEmbedding):
    """``HuggingFaceEmbedding`` whose single query or text runs the sentence-transformers modules
    directly (tokenize, transformer, pooling, normalise) instead of ``encode``; batches and
    models with a query or text prompt keep the library's path."""

    def _one(self, text: str, prompt_name: str) -> list[float] | None:
        model = self._model
        if getattr(model, "prompts", {}).get(prompt_name) or not self.normalize:
            return None
        with torch.inference_mode():
            # ``preprocess`` in sentence-transformers 6, ``tokenize`` before it
            prepare = getattr(model, "preprocess", None) or model.tokenize
            features = prepare([text])
            features = {
                k: v.to(model.device) if isinstance(v, torch.Tensor) else v
                for k, v in features.items()
            }
            vector = model.forward(features)["sentence_embedding"][0]
            vector = torch.nn.functional.normalize(vector, dim=0)
        return [float(x) for x in vector.tolist()]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._one(query, "query") or super()._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._one(text, "text") or super()._get_text_embedding(text)
