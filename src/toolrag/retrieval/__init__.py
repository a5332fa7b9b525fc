"""Tool RAG: the ToolIndex that finds the few tools a question needs, its query handling
(translation, the adapter, steps, named tools, prerequisites) and the agent's retriever."""

from toolrag.rank_fusion import reciprocal_rank_fusion
from toolrag.retrieval.adapter import QueryAdapter, fit_query_adapter
from toolrag.retrieval.agent_retriever import ToolIndexRetriever, make_tool_retriever
from toolrag.retrieval.gate import GateChoice, choose_gate, offtopic_requests
from toolrag.retrieval.index import (
    BM25_WEIGHT,
    CANDIDATES,
    HUB_K,
    HUB_WEIGHT,
    NAME_WEIGHT,
    REQUEST_WEIGHT,
    EvidenceGate,
    Gate,
    Stages,
    Strategy,
    ToolHit,
    ToolIndex,
    ToolSyncReport,
    admit,
    blend,
    bm25_scores,
    cover_steps,
    dense_scores,
    place_prerequisites,
    rank_order,
)
from toolrag.retrieval.steps import split_steps, sub_queries
from toolrag.retrieval.translation import QueryTranslator, needs_translation

__all__ = [
    "BM25_WEIGHT",
    "CANDIDATES",
    "HUB_K",
    "HUB_WEIGHT",
    "NAME_WEIGHT",
    "REQUEST_WEIGHT",
    "EvidenceGate",
    "Gate",
    "GateChoice",
    "QueryAdapter",
    "QueryTranslator",
    "Stages",
    "Strategy",
    "ToolHit",
    "ToolIndex",
    "ToolIndexRetriever",
    "ToolSyncReport",
    "admit",
    "blend",
    "bm25_scores",
    "choose_gate",
    "cover_steps",
    "dense_scores",
    "fit_query_adapter",
    "make_tool_retriever",
    "needs_translation",
    "offtopic_requests",
    "place_prerequisites",
    "rank_order",
    "reciprocal_rank_fusion",
    "split_steps",
    "sub_queries",
]
