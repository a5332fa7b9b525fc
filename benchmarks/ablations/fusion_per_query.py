"""Fusion weighted per query: can `best` follow whichever side of a search is sure of itself?
(issue 53, item 2)

`best` adds to each card's cosine a fixed weight times its BM25 score relative to the query's
best match (:func:`toolrag.retrieval.index.blend`). On a pool whose queries repeat the cards'
words (``openapi``: operation names and summaries) BM25 alone beats it; on BFCL's single calls
the same weight is right. Decision 0049 found that no weight a pool could pick for itself fits
both, and pointed at the query: each query shows how sure each side is by how far its best
candidates stand above the rest of the pool. The variants here read that, with no labels:

- ``shipped``: the rule `best` ships (cosine + w x BM25 / best BM25);
- ``z:L``: both sides as z-scores over the whole pool (a card BM25 does not match scores 0),
  added with BM25 at weight L: a side whose best candidates stand far above the pool's mean
  counts for more, on that query only (CombSUM over z-scores, Montague and Aslam 2001);
- ``zd:L``: the cosine as a z-score over the pool, BM25 relative to its best at weight L (only
  the dense side's spread adapts);
- ``fixed:W``: `blend` at weight W for every query (decision 0049's grid, for reference);
- ``name:W[+V]``: the card's cosine blends in its name alone, embedded as words:
  (document + W x name) / (1 + W), fused by variant V (default ``shipped``). Decision 0053
  adopted ``name:0.5`` (``NAME_WEIGHT``). ``namelift:W[+V]``: the name counts only where its
  cosine is above the document's, (document + W x max(name, document)) / (1 + W).

Every variant starts from the cards' documents alone (``ToolIndex.name_weight`` 0), so
``shipped`` is the rule before decision 0053 and ``name:0.5`` the one after it (which, unlike
the shipped ``NAME_WEIGHT``, blends the name into the reported cosine too; rankings are the
same).

Every variant runs on the same index, query vectors and BM25 matches (memoised), over every tool
pool of :mod:`benchmarks.retrieval_all` with no written requests, beside dense and BM25 alone.
``--held`` runs the held-out pool only, once, at the end.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.ablations.fusion_per_query \
        [--pool NAME ...] [--variant NAME ...] [--held]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.ablations.bm25_weight import _fixed
from benchmarks.results import result_name, write_result
from benchmarks.retrieval_all import tool_sets
from toolrag import Settings, make_embedding
from toolrag.cards import load_tool_list, split_name
from toolrag.evaluation import evaluate, load_queries
from toolrag.retrieval import BM25_WEIGHT, ToolIndex, bm25_scores, dense_scores

DEVELOPMENT = ("bfcl", "nestful", "openapi", "networkx")
HELD = ("skimage",)
VARIANTS = (
    "shipped",
    "fixed:1.0",
    "z:0.3",
    "z:0.5",
    "zd:3",
    "name:0.25",
    "name:0.5",
    "name:1.0",
    "namelift:0.5",
    "namelift:1.0",
    "name:0.5+z:0.3",
)
Fuse = Callable[..., tuple[dict[str, float], dict[str, float]]]


def _z_fuse(lam: float, lexical_z: bool) -> Fuse:
    """Cosine as a z-score over the pool, plus BM25 at ``lam`` (scaled by the rule's own
    weight for the request, so steps keep their extra lexical weight) as a z-score over the pool
    (``lexical_z``) or relative to the query's best match."""

    def fuse(
        index: ToolIndex,
        query: str,
        pool: int,
        weight: float,
        embedding: Any = None,
        include: Sequence[str] = (),
    ) -> tuple[dict[str, float], dict[str, float]]:
        if not index._ids:
            return {}, {}
        ranked, sims, lexical = index.candidates(query, pool, embedding, include)
        sd = float(ranked.std()) or 1.0
        mu = float(ranked.mean())
        scores = {tid: (float(ranked[index._row[tid]]) - mu) / sd for tid in sims}
        found = np.array([s for _, s in lexical], dtype=np.float64)
        if found.size and found.max() > 0:
            if lexical_z:
                n = len(ranked)
                mean = found.sum() / n
                spread = float(np.sqrt(max((found**2).sum() / n - mean**2, 1e-12)))
            else:
                spread = float(found.max())
            scale = lam * weight / BM25_WEIGHT / spread
            for tid, s in lexical:
                scores[tid] += scale * s
        return scores, sims

    return fuse


def variant(name: str) -> Fuse | None:
    """The fuse stage a variant name stands for (None: the shipped one)."""
    kind, _, value = name.partition(":")
    if kind == "shipped":
        return None
    if kind == "fixed":
        return _fixed(float(value))
    if kind in ("z", "zd"):
        return _z_fuse(float(value), lexical_z=kind == "z")
    raise ValueError(f"unknown variant {name!r}")


def memoised(index: ToolIndex) -> ToolIndex:
    """The index with its query vectors and BM25 matches computed once per query."""
    dense: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    lexical: dict[tuple[str, int], list[tuple[str, float]]] = {}
    vectors: dict[str, np.ndarray] = {}

    def vector(query: str) -> np.ndarray:
        if query not in vectors:
            q = np.asarray(index.embed.get_query_embedding(query), dtype=np.float32)
            vectors[query] = q / max(float(np.linalg.norm(q)), 1e-12)
        return vectors[query]

    def dense_once(ix: ToolIndex, query: str, embedding: Any = None) -> Any:
        if query not in dense:
            dense[query] = dense_scores(ix, query, vector(query))
        return dense[query]

    def lexical_once(ix: ToolIndex, query: str, pool: int) -> list[tuple[str, float]]:
        if (query, pool) not in lexical:
            lexical[(query, pool)] = bm25_scores(ix, query, pool)
        return lexical[(query, pool)]

    view = index.with_stages(dense=dense_once, lexical=lexical_once)
    view.query_vector = vector  # type: ignore[attr-defined]
    return view


def name_matrix(index: ToolIndex) -> np.ndarray:
    """Each active card's name in words, embedded (unit rows, in ``index._ids`` order)."""
    names = [split_name(index.cards[i].name) for i in index._ids]
    matrix = np.asarray(index.embed.get_text_embedding_batch(names), dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def with_names(
    index: ToolIndex, weight: float, matrix: np.ndarray, lift: bool = False
) -> ToolIndex:
    """The (memoised) index whose cosine blends in the card's name alone (``matrix``):
    (document + weight x name) / (1 + weight); with ``lift``, the name counts only where it is
    above the document: (document + weight x max(name, document)) / (1 + weight)."""
    dense = index.stages.dense

    def dense_names(ix: ToolIndex, query: str, embedding: Any = None) -> Any:
        ranked, sims = dense(ix, query, embedding)
        by_name = matrix @ index.query_vector(query)  # type: ignore[attr-defined]
        if lift:
            by_name = np.maximum(by_name, ranked)
        return (ranked + weight * by_name) / (1 + weight), (sims + weight * by_name) / (1 + weight)

    return index.with_stages(dense=dense_names)


def run_pool(name: str, names: Sequence[str], embed: Any) -> dict[str, Any]:
    tools_path, query_files = tool_sets(name)
    cards = load_tool_list(tools_path)
    sets = {key: load_queries(path, "expected_tools") for key, path in query_files.items()}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="toolrag-fpq-") as tmp:
        base = ToolIndex(Path(tmp), embed)
        base.sync(cards)
        base.name_weight = 0.0  # every variant starts from the documents alone
        index = memoised(base)
        names_matrix: np.ndarray | None = None
        for key, queries in sets.items():
            rows: dict[str, Any] = {}
            for strategy in ("dense", "bm25"):
                rep = evaluate(strategy, len(cards), queries, _search(index, strategy))
                rows[strategy] = _row(rep.as_json())
            for v in names:
                named, _, v_fuse = v.partition("+") if v.startswith("name") else ("", "", v)
                fuse = variant(v_fuse or "shipped")
                if named and names_matrix is None:
                    names_matrix = name_matrix(index)
                view = (
                    index
                    if not named or names_matrix is None
                    else with_names(
                        index,
                        float(named.split(":")[1]),
                        names_matrix,
                        lift=named.startswith("namelift:"),
                    )
                )
                view = view if fuse is None else view.with_stages(fuse=fuse)
                rep = evaluate(v, len(cards), queries, _search(view, "best"))
                rows[v] = _row(rep.as_json())
                print(name, key, v, rows[v], flush=True)
            out[key] = {"n_tools": len(cards), "n_queries": len(queries), "rows": rows}
    return out


def _search(index: ToolIndex, strategy: str) -> Callable[[str, int], list[str]]:
    return lambda q, k: [h.name for h in index.retrieve(q, k=k, strategy=strategy)]  # type: ignore[arg-type]


def _row(report: dict[str, Any]) -> dict[str, Any]:
    return {k: report[k] for k in ("recall@1", "recall@5", "recall@10", "mrr") if k in report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", action="append", choices=(*DEVELOPMENT, *HELD))
    parser.add_argument("--variant", action="append")
    parser.add_argument("--held", action="store_true", help="the held-out pool only")
    args = parser.parse_args()
    pools = args.pool or (list(HELD) if args.held else list(DEVELOPMENT))
    names = args.variant or list(VARIANTS)
    embed = make_embedding(Settings())
    t0 = time.perf_counter()
    figures: dict[str, Any] = {"variants": names, "pools": {}}
    for name in pools:
        figures["pools"].update(run_pool(name, names, embed))
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    tag = "-".join(pools) if pools != list(DEVELOPMENT) else ""
    write_result(
        result_name("fusion_per_query", pools=tag),
        figures,
        module="ablations.fusion_per_query",
    )


if __name__ == "__main__":
    main()
