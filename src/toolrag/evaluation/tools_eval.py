"""Tool-retrieval evaluation on any tool pool: ours and the plain ObjectIndex baseline."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import get_args

from llama_index.core.base.embeddings.base import BaseEmbedding

from toolrag.cards.card import ToolCard
from toolrag.evaluation.baselines import objectindex_default, plain_objectindex
from toolrag.evaluation.retrieval import RetrievalQuery, RetrievalReport, evaluate
from toolrag.retrieval.index import Strategy, ToolIndex

STRATEGIES = ("objectindex-default", *get_args(Strategy))
# strategies whose scores are cosines, so a relevance floor or gate applies (BM25's are not)
FLOORED = ("objectindex-default", "dense", "hybrid", "best")


def searcher(
    strategy: str,
    cards: Sequence[ToolCard],
    embed: BaseEmbedding,
    index: ToolIndex | None = None,
    floor: float | None = None,
    gate: float | None = None,
) -> Callable[[str, int], list[str]]:
    """``search(query, k)`` for ``strategy``. ``floor``: tools whose cosine with the question
    is below it are dropped (the ToolIndex's own floor; LlamaIndex's ``SimilarityPostprocessor``
    for plain ObjectIndex), so a question no tool fits gets nothing. ``gate``: the k are kept
    or dropped together, by whether any of their cosines reaches it."""
    if (floor is not None or gate is not None) and strategy not in FLOORED:
        raise ValueError(f"a relevance floor or gate needs cosine scores, and {strategy} has none")
    if strategy == "objectindex-default":
        return objectindex_default(cards, embed, floor, gate)
    if index is None:
        raise ValueError("a ToolIndex is needed for toolrag strategies")
    return lambda q, k: [
        h.name
        for h in index.retrieve(
            q,
            k=k,
            strategy=strategy,  # type: ignore[arg-type]
            floor=floor,
            gate=gate,
        )
    ]


def scored_searcher(
    strategy: str,
    cards: Sequence[ToolCard],
    embed: BaseEmbedding,
    index: ToolIndex | None = None,
) -> Callable[[str, int], list[tuple[str, float | None]]]:
    """``search(query, k)`` for ``strategy`` returning (tool name, cosine) pairs, best first,
    uncut: what a floor or a gate would cut (:mod:`toolrag.evaluation.cuts`). For plain
    ObjectIndex the cosine is LlamaIndex's node score, which its ``SimilarityPostprocessor``
    cuts."""
    if strategy not in FLOORED:
        raise ValueError(f"a relevance cut needs cosine scores, and {strategy} has none")
    if strategy == "objectindex-default":
        obj_index = plain_objectindex(cards, embed)

        def plain(query: str, k: int) -> list[tuple[str, float | None]]:
            # the ObjectRetriever's own steps, keeping each node's score with its tool
            retriever = obj_index.as_retriever(similarity_top_k=k)
            mapping = retriever.object_node_mapping
            return [
                (mapping.from_node(n.node).metadata.get_name(), n.score)
                for n in retriever.retriever.retrieve(query)
            ]

        return plain
    if index is None:
        raise ValueError("a ToolIndex is needed for toolrag strategies")
    return lambda q, k: [
        (h.name, h.similarity)
        for h in index.retrieve(q, k=k, strategy=strategy)  # type: ignore[arg-type]
    ]


def run_tool_eval(
    cards: Sequence[ToolCard],
    queries: Sequence[RetrievalQuery],
    strategies: Sequence[str],
    embed: BaseEmbedding,
    ks: Sequence[int] = (1, 5, 10),
    index_dir: Path | None = None,
    translator: Callable[[str], str] | None = None,
    floor: float | None = None,
    gate: float | None = None,
) -> list[RetrievalReport]:
    """Evaluate each strategy on the same pool and queries, in this process. With a ``floor``
    or a ``gate``, the queries that expect no tool are scored too (``no_tool_accuracy``). A
    gate judges the k tools it offers together, so each Recall@k is searched at its own k and
    ``no_tool_accuracy`` is that of the largest k (what an agent offered that many gets)."""
    sets = {"queries": queries}
    return run_tool_evals(cards, sets, strategies, embed, ks, index_dir, translator, floor, gate)[
        "queries"
    ]


def run_tool_evals(
    cards: Sequence[ToolCard],
    query_sets: Mapping[str, Sequence[RetrievalQuery]],
    strategies: Sequence[str],
    embed: BaseEmbedding,
    ks: Sequence[int] = (1, 5, 10),
    index_dir: Path | None = None,
    translator: Callable[[str], str] | None = None,
    floor: float | None = None,
    gate: float | None = None,
) -> dict[str, list[RetrievalReport]]:
    """Each strategy on several query sets over one pool (say single- and multi-tool
    requests): the pool is indexed once per strategy, not once per set. ``translator``: the
    ToolIndex's (:class:`toolrag.retrieval.translation.QueryTranslator`), for toolrag's strategies;
    the
    plain ObjectIndex baseline searches every question as it is."""
    reports: dict[str, list[RetrievalReport]] = {name: [] for name in query_sets}
    with tempfile.TemporaryDirectory(prefix="toolrag-eval-") as tmp:
        index: ToolIndex | None = None
        if any(s != "objectindex-default" for s in strategies):
            index = ToolIndex(index_dir or Path(tmp), embed)
            index.sync(cards)
            index.translator = translator
        # a floor or a gate can answer "no tool fits": score those queries
        scored = floor is not None or gate is not None
        for strategy in strategies:
            search = searcher(strategy, cards, embed, index, floor, gate)
            for name, queries in query_sets.items():
                reports[name].append(
                    evaluate(strategy, len(cards), queries, search, ks, scored, gate is not None)
                )
    return reports
