"""Models: the LLM factory (local llama.cpp, OpenAI, OpenAI-compatible, scripted), the bundled
local model and the embedding model."""

from toolrag.models.embeddings import (
    embed_model_path,
    embedding_name,
    make_embedding,
    text_windows,
    whole_text_embeddings,
)
from toolrag.models.llms import chatml_messages_to_prompt, make_llm, resolve_provider
from toolrag.models.local import model_path, require_model
from toolrag.models.ray_pool import EmbedBatches, connect_ray, ray_embed_batches
from toolrag.models.scripted import ScriptedFunctionLLM, ScriptedLLM
from toolrag.settings import DEFAULT_EMBED_MODEL

__all__ = [
    "DEFAULT_EMBED_MODEL",
    "EmbedBatches",
    "ScriptedFunctionLLM",
    "ScriptedLLM",
    "chatml_messages_to_prompt",
    "connect_ray",
    "embed_model_path",
    "embedding_name",
    "make_embedding",
    "make_llm",
    "model_path",
    "ray_embed_batches",
    "require_model",
    "resolve_provider",
    "text_windows",
    "whole_text_embeddings",
]
