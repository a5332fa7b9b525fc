"""Evaluation helpers shared by the CLI, the demo and the benchmarks."""

from toolrag.evaluation.baselines import objectindex_default, plain_objectindex, schema_model
from toolrag.evaluation.cuts import choose, cut_grid, rank_queries, score_cut
from toolrag.evaluation.docs_eval import CHUNKS_PER_DOC, document_collection, run_docs_eval
from toolrag.evaluation.held_requests import rank_written_requests
from toolrag.evaluation.retrieval import (
    RetrievalQuery,
    RetrievalReport,
    evaluate,
    load_queries,
)
from toolrag.evaluation.route_eval import (
    RouteQuery,
    RouteReport,
    argument_hits,
    examples_from_queries,
    load_route_queries,
    prompt_key,
    run_route_eval,
    save_heatmap,
    score,
    stub_tools,
)
from toolrag.evaluation.tools_eval import (
    STRATEGIES,
    run_tool_eval,
    run_tool_evals,
    scored_searcher,
    searcher,
)
from toolrag.stats import percentile

__all__ = [
    "CHUNKS_PER_DOC",
    "STRATEGIES",
    "RetrievalQuery",
    "RetrievalReport",
    "RouteQuery",
    "RouteReport",
    "argument_hits",
    "choose",
    "cut_grid",
    "document_collection",
    "evaluate",
    "examples_from_queries",
    "load_queries",
    "load_route_queries",
    "objectindex_default",
    "percentile",
    "plain_objectindex",
    "prompt_key",
    "rank_queries",
    "rank_written_requests",
    "run_docs_eval",
    "run_route_eval",
    "run_tool_eval",
    "run_tool_evals",
    "save_heatmap",
    "schema_model",
    "score",
    "score_cut",
    "scored_searcher",
    "searcher",
    "stub_tools",
]
