"""LlamaIndex views of a content index: a ``BaseRetriever``, and the ``QueryEngineTool``
``ask_<collection>`` that answers a question from its passages (the "ask a question of this
corpus" access pattern, with answer synthesis)."""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.llms import LLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import ResponseMode
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import QueryEngineTool

from toolrag.content.index import ContentIndex, Filters, SearchMode


class ContentRetriever(BaseRetriever):
    """Hybrid (dense + BM25, RRF) retrieval over one content index, with fixed filters. Each
    node's metadata holds the unit's id, file, title and field values."""

    def __init__(
        self,
        index: ContentIndex,
        k: int = 5,
        filters: Filters | None = None,
        mode: SearchMode = "hybrid",
    ) -> None:
        super().__init__()
        self.index = index
        self.k = k
        self.filters = filters
        self.mode = mode

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.index.search(
            query_bundle.query_str, k=self.k, filters=self.filters, mode=self.mode
        )
        return [
            NodeWithScore(
                node=TextNode(
                    id_=h.id,
                    text=h.text,
                    metadata={"doc_id": h.doc_id, "file": h.source, "title": h.title, **h.extra},
                ),
                score=h.score,
            )
            for h in hits
        ]


def query_engine_tool(index: ContentIndex, llm: LLM, k: int, description: str) -> QueryEngineTool:
    """``ask_<name>``: a QueryEngineTool that retrieves ``k`` passages of ``index`` and
    synthesizes an answer from them."""
    engine = RetrieverQueryEngine.from_args(
        ContentRetriever(index, k=k), llm=llm, response_mode=ResponseMode.COMPACT
    )
    return QueryEngineTool.from_defaults(
        query_engine=engine, name=f"ask_{index.name}", description=description
    )
