"""The ToolIndex as a plain LlamaIndex ``ObjectIndex``, reopened without re-embedding.

LlamaIndex reloads an ObjectIndex with ``ObjectIndex.from_objects_and_index(objects, index)``
over an index whose vectors are already stored. :class:`ToolIndexVectorStore` is that storage:
a LlamaIndex vector store over the ToolIndex's LanceDB table, so the index behind the
ObjectIndex is the persisted one and its retrieval is toolrag's (``best`` by default: dense and
BM25 fused, multi-step requests split). Code written against ObjectIndex
(``obj_index.as_retriever(similarity_top_k=3)``, ``tool_retriever=`` of an agent) works
unchanged; nodes carry the tool's name, and the mapping resolves names to the registry's tools.

    index = ToolIndex(index_dir, embed)
    index.sync(cards)                       # embeds only new or changed cards
    obj_index = tool_object_index(index, tools)
    tools_for_q = obj_index.as_retriever(similarity_top_k=4).retrieve("Will it rain in Paris?")

Cards are added and removed with :meth:`ToolIndex.sync`, which keeps ids stable and rows
unique; the store refuses LlamaIndex's node-level inserts and deletes with that hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.objects import ObjectIndex
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.tools import BaseTool
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from pydantic import ConfigDict, Field

from toolrag.errors import InputError
from toolrag.retrieval.agent_retriever import RegistryNodeMapping
from toolrag.retrieval.index import Strategy, ToolIndex

SYNC_HINT = "Add, change or remove tools with ToolIndex.sync(cards): it embeds only what changed."


class ToolIndexVectorStore(BasePydanticVectorStore):
    """A read-only LlamaIndex vector store over a :class:`ToolIndex` (its LanceDB table)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    stores_text: bool = True
    is_embedding_query: bool = True
    index: Any = Field(description="The ToolIndex whose stored cards are searched.")
    strategy: Strategy = "best"

    @property
    def client(self) -> ToolIndex:
        index: ToolIndex = self.index
        return index

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        raise InputError("Tools cannot be inserted node by node.", hint=SYNC_HINT)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        raise InputError("Tools cannot be deleted node by node.", hint=SYNC_HINT)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        hits = self.client.retrieve(
            query.query_str or "",
            k=query.similarity_top_k,
            strategy=self.strategy,
            embedding=query.query_embedding,
        )
        nodes = [
            TextNode(id_=h.id, text=self.client.cards[h.id].document(), metadata={"name": h.name})
            for h in hits
        ]
        return VectorStoreQueryResult(
            nodes=nodes, similarities=[h.score for h in hits], ids=[h.id for h in hits]
        )


def tool_object_index(
    index: ToolIndex, tools: Sequence[BaseTool], strategy: Strategy = "best"
) -> ObjectIndex[BaseTool]:
    """A LlamaIndex ObjectIndex over ``index``'s stored vectors (nothing is embedded), mapping
    each hit to the tool of the same name in ``tools``."""
    names = {t.metadata.get_name() for t in tools}
    missing = sorted({c.name for c in index.cards.values()} - names)
    if missing:
        raise InputError(
            f"{len(missing)} indexed tool(s) have no tool object: {', '.join(missing[:5])}.",
            hint="Pass every registered tool, or sync the index to the same tool set.",
        )
    store = ToolIndexVectorStore(index=index, strategy=strategy)
    vector_index = VectorStoreIndex.from_vector_store(store, embed_model=index.embed)
    return ObjectIndex.from_objects_and_index(
        list(tools), vector_index, object_mapping=RegistryNodeMapping(tools)
    )
