"""The name's own vector on pools whose cards carry LLM-written requests (decision 0053).

`best` with ``ToolIndex.name_weight`` 0 (documents and requests) and at ``NAME_WEIGHT`` (the
name blended in too), on the same index and query vectors, for each pool whose requests
``benchmarks/records/`` holds: NESTFUL (173 of 173 cards) and BFCL (1,699 of 1,703 cards,
single-call and multi-tool queries). Development sets only.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.ablations.names_with_requests
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.results import ROOT, write_result
from benchmarks.retrieval_all import tool_sets
from toolrag import Settings, make_embedding
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.evaluation import evaluate, load_queries
from toolrag.retrieval import NAME_WEIGHT, ToolIndex

Search = Callable[[str, int], list[str]]


def _search(index: ToolIndex, vectors: dict[str, list[float]]) -> Search:
    return lambda q, k: [h.name for h in index.retrieve(q, k=k, embedding=vectors[q])]


RECORDS = ROOT / "benchmarks" / "records"
POOLS = ("nestful", "bfcl")


def main() -> None:
    embed = make_embedding(Settings())
    figures: dict[str, Any] = {"name_weight": NAME_WEIGHT, "sets": {}}
    for name in POOLS:
        tools_path, query_files = tool_sets(name)
        written = SyntheticQueries(RECORDS / f"synthetic_{name}.sqlite")
        cards = written.augment(load_tool_list(tools_path), by_name=True)
        with tempfile.TemporaryDirectory(prefix="toolrag-nwr-") as tmp:
            index = ToolIndex(Path(tmp), embed, name_weight=NAME_WEIGHT)  # names embedded
            index.sync(cards)
            for key, path in query_files.items():
                queries = load_queries(path, "expected_tools")
                vectors = {q.query: embed.get_query_embedding(q.query) for q in queries}
                rows: dict[str, Any] = {}
                for label, weight in (("without the name", 0.0), ("with the name", NAME_WEIGHT)):
                    index.name_weight = weight
                    report = evaluate(
                        label,
                        len(cards),
                        queries,
                        _search(index, vectors),
                    ).as_json()
                    rows[label] = {m: report[m] for m in ("recall@1", "recall@5", "mrr")}
                    print(name, key, label, rows[label], flush=True)
                figures["sets"][key] = {
                    "n_tools": len(cards),
                    "with_requests": sum(1 for c in cards if c.synthetic),
                    "n_queries": len(queries),
                    "rows": rows,
                }
    write_result("names_with_requests", figures, module="ablations.names_with_requests")


if __name__ == "__main__":
    main()
