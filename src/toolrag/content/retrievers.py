"""LlamaIndex views of the content indexes: a ``BaseRetriever`` and a ``QueryEngineTool`` per
content type (the "ask a question of this corpus" access pattern, with answer synthesis)."""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.llms import LLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import ResponseMode
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import QueryEngineTool

from toolrag.content.index import ContentIndex, SearchFilters, SearchMode

QA_DESCRIPTIONS = {
    "documents": (
        "Answer a question from the project documents (contracts, proposals, bids, change "
        "orders, RFIs, specifications, meeting minutes) with a short synthesized answer. Use it "
        "for open questions over text documents when no filter is needed. Returns an answer "
        "with the passages it used. It does not read drawings or schedules."
    ),
    "blueprints": (
        "Answer a question from the blueprint sheets' title blocks and plan notes with a "
        "short synthesized answer. Use it for open questions about drawings. Returns an answer "
        "with the sheets it used. It does not filter by date; use search_blueprints for that."
    ),
    "schedules": (
        "Answer a question from the project schedules' milestones with a short synthesized "
        "answer. Use it for open questions across projects' milestones. Returns an answer with "
        "the milestones it used. For one project's full schedule use get_project_schedule."
    ),
}


class ContentRetriever(BaseRetriever):
    """Hybrid (dense + BM25, RRF) retrieval over one content index, with fixed filters."""

    def __init__(
        self,
        index: ContentIndex,
        k: int = 5,
        filters: SearchFilters | None = None,
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
        nodes = []
        for h in hits:
            node = TextNode(
                id_=h.id,
                text=h.text,
                metadata={
                    "doc_id": h.doc_id,
                    "file": h.source,
                    "project": h.project,
                    "doc_type": h.doc_type,
                    "date": h.date,
                    "title": h.title,
                    **({"sheet": h.sheet} if h.sheet else {}),
                },
            )
            nodes.append(NodeWithScore(node=node, score=h.score))
        return nodes


def query_engine_tool(
    index: ContentIndex, llm: LLM, k: int = 3, description: str | None = None
) -> QueryEngineTool:
    """``ask_<content type or collection>``: a QueryEngineTool that retrieves and synthesizes
    an answer (``description`` for a collection; the sample's types have their own)."""
    engine = RetrieverQueryEngine.from_args(
        ContentRetriever(index, k=k), llm=llm, response_mode=ResponseMode.COMPACT
    )
    return QueryEngineTool.from_defaults(
        query_engine=engine,
        name=f"ask_{index.content_type}",
        description=description or QA_DESCRIPTIONS[str(index.content_type)],
    )
