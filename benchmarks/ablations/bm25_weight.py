"""The weight of BM25 in `best`, swept over two pools, single- and multi-step requests, with and
without LLM-written requests: the figures behind ``BM25_WEIGHT`` (cards' documents alone) and
``BM25_WEIGHT_WITH_REQUESTS`` in :mod:`toolrag.retrieval.index`.

    .venv/bin/python benchmarks/bm25_weight.py [--weights 0.1,0.2,0.3,0.5,shipped]
        [--sets bfcl,bfcl-multi,nestful,nestful+bfcl,scale-10k] [--requests]
        [--out runs/bm25_weight.json]

Sets: BFCL's 1,911 single-call and 207 multi-tool queries over its 1,703 tools
(:mod:`tool_retrieval`), NESTFUL's 1,300 multi-step requests over its 173 tools and with
BFCL's as distractors (:mod:`tool_retrieval_nestful`), and :mod:`tool_scale`'s 500 BFCL
queries over its 10k pool (BFCL plus OpenAPI operations; not with ``--requests``).
``--requests``: the cards carry the LLM-written requests of ``benchmarks/records/`` (the
``+requests`` indexes of those benchmarks). A number is one weight for every request;
``shipped`` is the rule `best` ships (:meth:`ToolIndex.bm25_weight`: one weight for one-step
requests, another for those that split into steps). Every weight runs on the same index and
the same query vectors; each set prints Recall@1, Recall@5 and MRR
(:func:`toolrag.evaluation.retrieval.evaluate`). Run those three benchmarks once first
(``tool_scale.py --sizes 10000``): they fetch the data and build the indexes this reopens.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.datasets import bfcl, nestful
from benchmarks.datasets.openapi_directory import SEED, distractors
from benchmarks.tool_retrieval_nestful import pools
from benchmarks.tool_scale import TABLE
from toolrag import Settings
from toolrag.cards import SyntheticQueries, ToolCard, load_tool_list
from toolrag.evaluation import RetrievalQuery, evaluate, load_queries
from toolrag.models import make_embedding
from toolrag.retrieval import ToolIndex, blend

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "benchmarks" / "records"


def _fixed(weight: float) -> Callable[..., tuple[dict[str, float], dict[str, float]]]:
    """:func:`toolrag.retrieval.blend` at BM25 ``weight``, the weight passed in ignored."""

    def fuse(
        index: ToolIndex,
        query: str,
        pool: int,
        _: float,
        embedding: Any = None,
        include: Sequence[str] = (),
    ) -> tuple[dict[str, float], dict[str, float]]:
        return blend(index, query, pool, weight, embedding, include)

    return fuse


def query_sets(
    with_requests: bool, with_scale: bool
) -> dict[str, tuple[Path, list[ToolCard], list[RetrievalQuery]]]:
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
        bfcl_cards = bfcl_written.augment(bfcl_cards, by_name=True)
        pool = {
            "nestful": nestful_written.augment(pool["nestful"], by_name=True),
            "nestful+bfcl": bfcl_written.augment(
                nestful_written.augment(pool["nestful+bfcl"], by_name=True), by_name=True
            ),
        }
    bfcl_index = ROOT / "runs" / "bfcl" / f"index{suffix}"
    sets = {
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
    if with_scale:  # tool_scale.py's 10k pool and its 500 sampled queries, in its own index
        sampled = random.Random(SEED).sample(single, 500)
        taken = {c.name for c in bfcl_cards}
        extra = itertools.islice(distractors(taken), 10_000 - len(bfcl_cards))
        sets["scale-10k"] = (ROOT / "runs" / "scale" / "index", bfcl_cards + list(extra), sampled)
    return sets


def sweep(
    index: ToolIndex, queries: list[RetrievalQuery], weights: list[str]
) -> list[dict[str, Any]]:
    """R@1, R@5 and MRR of `best` at each weight, the query vectors embedded once."""
    vectors = {q.query: index.embed.get_query_embedding(q.query) for q in queries}

    rows = []
    for weight in weights:
        # a number is one weight for every request and share of requests: a ``fuse`` stage
        # that blends at it whatever weight `best` passes in
        searched = index if weight == "shipped" else index.with_stages(fuse=_fixed(float(weight)))

        def search(query: str, k: int, searched: ToolIndex = searched) -> list[str]:
            return [h.name for h in searched.retrieve(query, k=k, embedding=vectors[query])]

        report = evaluate(f"best@{weight}", len(index), queries, search, ks=(1, 5)).as_json()
        rows.append({"weight": weight, **{k: report[k] for k in ("recall@1", "recall@5", "mrr")}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default="0.1,0.2,0.3,0.5,shipped")
    parser.add_argument(
        "--sets", default=None, help="Default: all (without scale-10k with --requests)."
    )
    parser.add_argument("--requests", action="store_true", help="Cards with written requests.")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    weights = args.weights.split(",")
    embed = make_embedding(Settings())
    every = "bfcl,bfcl-multi,nestful,nestful+bfcl" + ("" if args.requests else ",scale-10k")
    names = (args.sets or every).split(",")
    if args.requests and "scale-10k" in names:
        parser.error("scale-10k has no written requests: leave it out of --sets with --requests")
    sets = query_sets(args.requests, "scale-10k" in names)
    t0 = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        index_dir, cards, queries = sets[name]
        # tool_scale.py keeps its pools in its own table; the others use the default one
        index = ToolIndex(index_dir, embed, **({"table": TABLE} if name == "scale-10k" else {}))
        index.sync(cards)
        results[name] = sweep(index, queries, weights)
        for row in results[name]:
            print(f"{name:13} weight {row['weight']:>7}  R@1 {row['recall@1']:.4f}  "
                  f"R@5 {row['recall@5']:.4f}  MRR {row['mrr']:.4f}", flush=True)  # fmt: skip
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
