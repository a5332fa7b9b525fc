"""The weight of BM25 in `best`, swept over two pools, single- and multi-step requests, with and
without LLM-written requests: the figures behind ``BM25_WEIGHT`` (cards' documents alone) and
``BM25_WEIGHT_WITH_REQUESTS`` in :mod:`toolrag.toolindex`.

    .venv/bin/python benchmarks/bm25_weight.py [--weights 0.1,0.2,0.3,0.5]
        [--sets bfcl,bfcl-multi,nestful,nestful+bfcl] [--requests] [--out runs/bm25_weight.json]

Sets: BFCL's 1,911 single-call and 207 multi-tool queries over its 1,703 tools
(:mod:`tool_retrieval`), and NESTFUL's 1,300 multi-step requests over its 173 tools and with
BFCL's as distractors (:mod:`tool_retrieval_nestful`). ``--requests``: the cards carry the
LLM-written requests of ``benchmarks/records/`` (the ``+requests`` indexes of those
benchmarks). Every weight runs on the same index and the same query vectors; each set prints
Recall@5 and the share of queries whose first tool is expected (hit@1). Run those two
benchmarks once first: they fetch the data and build the indexes this reopens.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bfcl
import nestful
from tool_retrieval_nestful import pools

from toolrag import Settings, toolindex
from toolrag.cards import ToolCard, load_tool_list
from toolrag.embeddings import make_embedding
from toolrag.evaluation.retrieval import RetrievalQuery, load_queries
from toolrag.synthetic import SyntheticQueries
from toolrag.toolindex import ToolIndex

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "records"


def query_sets(with_requests: bool) -> dict[str, tuple[Path, list[ToolCard], list[RetrievalQuery]]]:
    """Each set's index folder, cards and queries."""
    tools, queries = bfcl.load(ROOT / "runs" / "bfcl")
    bfcl_cards = load_tool_list(tools)
    single = load_queries(queries, "expected_tools")
    multi = load_queries(bfcl.load_multi(ROOT / "runs" / "bfcl"), "expected_tools")
    nestful_tools, nestful_queries = nestful.load(ROOT / "runs" / "nestful")
    requests = load_queries(nestful_queries, "expected_tools")
    pool = pools(nestful_tools)
    suffix = "_requests" if with_requests else ""
    if with_requests:
        bfcl_written = SyntheticQueries(RECORDS / "synthetic_bfcl.sqlite")
        nestful_written = SyntheticQueries(RECORDS / "synthetic_nestful.sqlite")
        bfcl_cards = bfcl_written.augment(bfcl_cards)
        pool = {
            "nestful": nestful_written.augment(pool["nestful"]),
            "nestful+bfcl": bfcl_written.augment(nestful_written.augment(pool["nestful+bfcl"])),
        }
    bfcl_index = ROOT / "runs" / "bfcl" / f"index{suffix}"
    return {
        "bfcl": (bfcl_index, bfcl_cards, single),
        "bfcl-multi": (bfcl_index, bfcl_cards, multi),
        "nestful": (
            ROOT / "runs" / "nestful" / f"index_nestful{suffix}",
            pool["nestful"],
            requests,
        ),
        "nestful+bfcl": (
            ROOT / "runs" / "nestful" / f"index_nestful_bfcl{suffix}",
            pool["nestful+bfcl"],
            requests,
        ),
    }


def sweep(
    index: ToolIndex, queries: list[RetrievalQuery], weights: list[float]
) -> list[dict[str, Any]]:
    """Recall@5 and hit@1 of `best` at each weight, the query vectors embedded once."""
    vectors = {q.id: index.embed.get_query_embedding(q.query) for q in queries}
    rows = []
    for weight in weights:
        # every constant, so the weight holds for every request and share of written requests
        toolindex.BM25_WEIGHT = toolindex.BM25_WEIGHT_STEPS = weight
        toolindex.BM25_WEIGHT_WITH_REQUESTS = weight
        recall = hit = 0.0
        for q in queries:
            got = [h.name for h in index.retrieve(q.query, k=5, embedding=vectors[q.id])]
            expected = set(q.expected)
            recall += len(expected & set(got)) / len(expected)
            hit += bool(got) and got[0] in expected
        n = len(queries)
        rows.append(
            {"weight": weight, "recall@5": round(recall / n, 4), "hit@1": round(hit / n, 4)}
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default="0.1,0.2,0.3,0.5")
    parser.add_argument("--sets", default="bfcl,bfcl-multi,nestful,nestful+bfcl")
    parser.add_argument("--requests", action="store_true", help="Cards with written requests.")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    embed = make_embedding(Settings())
    sets = query_sets(args.requests)
    t0 = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    for name in args.sets.split(","):
        index_dir, cards, queries = sets[name]
        index = ToolIndex(index_dir, embed)
        index.sync(cards)
        results[name] = sweep(index, queries, weights)
        for row in results[name]:
            print(f"{name:13} weight {row['weight']:.2f}  R@5 {row['recall@5']:.4f}  "
                  f"hit@1 {row['hit@1']:.4f}", flush=True)  # fmt: skip
    out = args.out or ROOT / "runs" / f"bm25_weight{'_requests' if args.requests else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "benchmark": "bm25_weight",
                "requests": args.requests,
                "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "seconds": round(time.perf_counter() - t0, 1),
                "results": results,
            },
            indent=2,
        )
    )
    print(f"JSON written to {out}")


if __name__ == "__main__":
    main()
