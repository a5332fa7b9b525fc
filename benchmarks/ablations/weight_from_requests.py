"""Can a pool choose its own BM25 weight for `best` from LLM-written requests? (issue 53, item 2)

For each development pool, `best` over the cards' documents alone (no written requests in the
index) is run at each weight of a grid on the pool's real queries, and, separately, on the
LLM-written requests of a seeded sample of its cards used as pseudo-queries (the way a user's
pool could calibrate itself with no labelled questions). The weight the pseudo-queries pick
(best MRR) is then read off the real queries' rows beside the shipped rule.

Pools: BFCL (single-call and multi-tool), NESTFUL and `openapi`, each with the requests of
`benchmarks/records/` (for `openapi`, 100 cards written by the local model for this run:
``synthetic_openapi_sample.sqlite``). The held-out `networkx` pool is left alone.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.ablations.weight_from_requests
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.ablations.bm25_weight import _fixed
from benchmarks.results import ROOT, write_result
from benchmarks.retrieval_all import tool_sets
from toolrag import Settings, make_embedding
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.evaluation import load_queries
from toolrag.retrieval import ToolIndex

GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 2.0)
SAMPLE_CARDS = 100
SEED = 53
RECORDS = ROOT / "benchmarks" / "records"
WRITTEN = {
    "bfcl": RECORDS / "synthetic_bfcl.sqlite",
    "nestful": RECORDS / "synthetic_nestful.sqlite",
    "openapi": RECORDS / "synthetic_openapi_sample.sqlite",
}


def _mrr_rows(index: ToolIndex, queries: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """R@5 and MRR of `best` at each weight of GRID and at the shipped rule."""
    vectors = {q: index.embed.get_query_embedding(q) for q, _ in queries}
    rows: dict[str, Any] = {}
    for weight in (*GRID, "shipped"):
        searched = index if weight == "shipped" else index.with_stages(fuse=_fixed(weight))
        found = {
            q: [h.name for h in searched.retrieve(q, k=20, embedding=vectors[q])]
            for q, _ in queries
        }
        recall = mrr = 0.0
        for q, expected in queries:
            hits = found[q]
            recall += len(set(hits[:5]) & set(expected)) / len(expected)
            mrr += next((1 / n for n, h in enumerate(hits, 1) if h in expected), 0.0)
        rows[str(weight)] = {
            "recall@5": round(recall / len(queries), 4),
            "mrr": round(mrr / len(queries), 4),
        }
    return rows


def main() -> None:
    embed = make_embedding(Settings())
    figures: dict[str, Any] = {"grid": list(GRID), "sample_cards": SAMPLE_CARDS, "pools": {}}
    for name in ("openapi", "nestful", "bfcl"):
        tools_path, query_files = tool_sets(name)
        cards = load_tool_list(tools_path)
        with tempfile.TemporaryDirectory(prefix="toolrag-wfr-") as tmp:
            index = ToolIndex(Path(tmp), embed)
            index.sync(cards)
            written = {
                c.name: c.synthetic
                for c in SyntheticQueries(WRITTEN[name]).augment(cards, by_name=True)
                if c.synthetic
            }
            names = sorted(written)
            random.Random(SEED).shuffle(names)
            pseudo = [(r, [n]) for n in names[:SAMPLE_CARDS] for r in written[n]]
            calibration = _mrr_rows(index, pseudo)
            pick = max(GRID, key=lambda w: (calibration[str(w)]["mrr"], -abs(w - 0.2)))
            pool: dict[str, Any] = {
                "n_tools": len(cards),
                "pseudo_queries": len(pseudo),
                "calibration": calibration,
                "picked": pick,
                "sets": {},
            }
            for key, path in query_files.items():
                real = [(q.query, list(q.expected)) for q in load_queries(path, "expected_tools")]
                rows = _mrr_rows(index, real)
                best = max(GRID, key=lambda w: rows[str(w)]["mrr"])
                pool["sets"][key] = {
                    "n_queries": len(real),
                    "rows": rows,
                    "best_weight": best,
                    "picked_minus_shipped_mrr": round(
                        rows[str(pick)]["mrr"] - rows["shipped"]["mrr"], 4
                    ),
                    "picked_minus_shipped_r5": round(
                        rows[str(pick)]["recall@5"] - rows["shipped"]["recall@5"], 4
                    ),
                }
                print(name, key, "picked", pick, "best", best, pool["sets"][key], flush=True)
            figures["pools"][name] = pool
    write_result("weight_from_requests", figures, module="ablations.weight_from_requests")


if __name__ == "__main__":
    main()
