"""Baselines every tool-retrieval report shows beside ours."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.objects import ObjectIndex
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.tools import FunctionTool, ToolMetadata
from pydantic import BaseModel

from toolrag.cards.card import ToolCard


def schema_model(card: ToolCard) -> type[BaseModel]:
    """A pydantic model whose JSON schema is the card's own parameters schema."""
    schema = card.parameters

    class Params(BaseModel):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return schema

    return Params


def plain_objectindex(cards: Sequence[ToolCard], embed: BaseEmbedding) -> ObjectIndex[Any]:
    """Plain LlamaIndex: ``ObjectIndex.from_objects`` over FunctionTools, default settings
    (it embeds name, description and schema as one text), the same embedding model."""
    tools = [
        FunctionTool(
            fn=lambda **kw: None,
            metadata=ToolMetadata(
                name=c.name, description=c.description, fn_schema=schema_model(c)
            ),
        )
        for c in cards
    ]
    return ObjectIndex.from_objects(tools, index_cls=VectorStoreIndex, embed_model=embed)


class GatePostprocessor(BaseNodePostprocessor):
    """All or nothing: the nodes stay when any of their scores reaches ``gate``, else none do
    (LlamaIndex's ``SimilarityPostprocessor`` cuts each node on its own)."""

    gate: float

    @classmethod
    def class_name(cls) -> str:
        return "GatePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return nodes if any(n.score is not None and n.score >= self.gate for n in nodes) else []


def objectindex_default(
    cards: Sequence[ToolCard],
    embed: BaseEmbedding,
    floor: float | None = None,
    gate: float | None = None,
) -> Callable[[str, int], list[str]]:
    """Search with :func:`plain_objectindex`. ``floor``: LlamaIndex's own cut-off, a
    ``SimilarityPostprocessor`` on the retriever. ``gate``: a :class:`GatePostprocessor`."""
    obj_index = plain_objectindex(cards, embed)

    cutoff: list[BaseNodePostprocessor] = []
    if floor is not None:
        cutoff.append(SimilarityPostprocessor(similarity_cutoff=floor))
    if gate is not None:
        cutoff.append(GatePostprocessor(gate=gate))

    def search(query: str, k: int) -> list[str]:
        retriever = obj_index.as_retriever(node_postprocessors=cutoff, similarity_top_k=k)
        return [t.metadata.get_name() for t in retriever.retrieve(query)]

    return search
