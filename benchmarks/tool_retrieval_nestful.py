"""Tool retrieval on a second pool beside BFCL: NESTFUL's multi-step requests (:mod:`nestful`),
every strategy side by side in one process, plain LlamaIndex ObjectIndex first. (``best`` was
first measured here after being built on BFCL alone; its prerequisite step and the BM25 weight
of split requests were chosen with this pool in view: README, Benchmarks.)

    .venv/bin/python -m benchmarks.tool_retrieval_nestful [--limit N]
        [--out runs/tool_retrieval_nestful.json]
        [--synthetic benchmarks/records/synthetic_nestful.sqlite]

Two pools, the same 1,300 requests (each expects every distinct tool of its call sequence, so
Recall@k counts each of them):

- ``nestful``: NESTFUL's own 173 tools;
- ``nestful+bfcl``: the same with BFCL's functions as distractors (:mod:`bfcl`, about 1,700;
  the 15 whose names NESTFUL also uses for its own definitions are left out), so the pool is
  about the size of BFCL's.

``best`` places each tool's prerequisites after it (:mod:`toolrag.retrieval.prerequisites`); the row
``best without prerequisites`` is the same search without that step, which is how ``best``
scored on NESTFUL before that step existed. The JSON has every strategy's figures on the whole
request set and, per NESTFUL source (``executable``, ``sgd``, ``glaive``,
``complexfuncbench``), its quality figures (the latency is the whole set's).

``--synthetic`` adds ``dense+requests`` and ``best+requests``: the cards with the requests an
LLM wrote for them (``toolrag tools synth --tools runs/nestful/tools.json`` writes them; the
local model's are in ``benchmarks/records/synthetic_nestful.sqlite``, and the BFCL distractors
take theirs from ``--synthetic-bfcl``), indexed as :mod:`tool_retrieval` does.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from benchmarks.datasets import bfcl, nestful
from benchmarks.datasets.evalfiles import QUALITY, print_reports
from benchmarks.results import result_name, write_result
from toolrag import Settings
from toolrag.cards import SyntheticQueries, ToolCard, load_tool_list
from toolrag.evaluation import STRATEGIES, RetrievalQuery, evaluate, load_queries, searcher
from toolrag.models import embedding_name, make_embedding
from toolrag.retrieval import Stages, ToolIndex

ROOT = Path(__file__).resolve().parents[1]


def pools(tools_path: Path) -> dict[str, list[ToolCard]]:
    """The NESTFUL pool alone, and with BFCL's functions as distractors (those sharing a
    NESTFUL name left out: the name must keep meaning NESTFUL's tool)."""
    own = load_tool_list(tools_path)
    names = {c.name for c in own}
    bfcl_tools, _ = bfcl.load(ROOT / "runs" / "bfcl")
    distractors = [c for c in load_tool_list(bfcl_tools) if c.name not in names]
    return {"nestful": own, "nestful+bfcl": own + distractors}


def run_strategies(
    label: str,
    cards: Sequence[ToolCard],
    queries: Sequence[RetrievalQuery],
    sources: dict[str, str],
    strategies: Sequence[str],
    embed: BaseEmbedding,
    index_dir: Path,
    stages: Stages | None = None,
) -> list[dict[str, Any]]:
    """Each strategy on the whole request set, then per source from the same rankings
    (``stages``: the ToolIndex's search stages, the shipped ones by default)."""
    index = None
    if any(s != "objectindex-default" for s in strategies):
        index = ToolIndex(index_dir, embed, stages=stages)
        index.sync(cards)
    runs = [(s, s + label, True) for s in strategies]
    if "best" in strategies:  # best as it was before it placed prerequisites
        runs.append(("best", f"best{label} without prerequisites", False))
    rows = []
    for strategy, name, place in runs:
        if index is not None:
            index.place_requirements = place
        search = searcher(strategy, cards, embed, index)
        seen: dict[tuple[str, int], list[str]] = {}

        def remembered(
            query: str,
            k: int,
            search: Callable[[str, int], list[str]] = search,
            seen: dict[tuple[str, int], list[str]] = seen,
        ) -> list[str]:
            if (query, k) not in seen:
                seen[query, k] = search(query, k)
            return seen[query, k]

        row = evaluate(name, len(cards), queries, remembered).as_json()
        row["by_source"] = {}
        for source in dict.fromkeys(sources.values()):
            subset = [q for q in queries if sources[q.id] == source]
            part = evaluate(name, len(cards), subset, remembered).as_json()
            row["by_source"][source] = {k: part[k] for k in (*QUALITY, "n_queries")}
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None, stages: Stages | None = None) -> None:
    """The benchmark with the arguments ``argv`` (by default the command line's). ``stages``
    (an ablation's: the ToolIndex's search stages) writes no result file."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "tool_retrieval_nestful.json")
    parser.add_argument("--limit", type=int, default=0, help="Use every Nth request only.")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--pools", default="nestful,nestful+bfcl")
    parser.add_argument(
        "--synthetic", type=Path, default=None, help="synthetic.sqlite for NESTFUL's cards."
    )
    parser.add_argument(
        "--synthetic-bfcl",
        type=Path,
        default=ROOT / "benchmarks" / "records" / "synthetic_bfcl.sqlite",
        help="With --synthetic: the BFCL distractors' requests.",
    )
    args = parser.parse_args(argv)
    data_dir = ROOT / "runs" / "nestful"
    tools_path, queries_path = nestful.load(data_dir)
    queries = load_queries(queries_path, "expected_tools")
    items = [json.loads(line) for line in queries_path.read_text().splitlines()]
    sources = {str(item["id"]): item["source"] for item in items}
    if args.limit:
        # every Nth request, so each source keeps its share
        queries = queries[:: max(1, len(queries) // args.limit)][: args.limit]
    embed = make_embedding(Settings())
    strategies = args.strategies.split(",")
    t0 = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    requests: dict[str, Any] = {}
    for pool, cards in pools(tools_path).items():
        if pool not in args.pools.split(","):
            continue
        index_dir = data_dir / f"index_{pool.replace('+', '_')}"
        rows = run_strategies("", cards, queries, sources, strategies, embed, index_dir, stages)
        if args.synthetic is not None:
            augmented = SyntheticQueries(args.synthetic).augment(cards, by_name=True)
            if pool != "nestful":
                augmented = SyntheticQueries(args.synthetic_bfcl).augment(augmented, by_name=True)
            requests[pool] = {
                "cards_with_requests": sum(bool(c.synthetic) for c in augmented),
                "requests": sum(len(c.synthetic) for c in augmented),
            }
            wanted = [s for s in ("dense", "best") if s in strategies]
            rows += run_strategies(
                "+requests",
                augmented,
                queries,
                sources,
                wanted,
                embed,
                index_dir.with_name(index_dir.name + "_requests"),
                stages,
            )
        results[pool] = rows
    result = {
        "benchmark": "tool_retrieval_nestful",
        "data": f"NESTFUL nestful-wrapper=={nestful.VERSION} (distractors: BFCL bfcl-eval=="
        f"{bfcl.VERSION})",
        "embedding": embedding_name(Settings()),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.perf_counter() - t0, 1),
        "synthetic": str(args.synthetic) if args.synthetic else None,
        "requests": requests or None,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if stages is None:
        name = result_name(
            "tool_retrieval_nestful",
            limit=args.limit,
            strategies=args.strategies if args.strategies != ",".join(STRATEGIES) else "",
            pools=args.pools if args.pools != "nestful,nestful+bfcl" else "",
            norequests=args.synthetic is None,
        )
        write_result(name, result, argv=argv)
    for pool, rows in results.items():
        print_reports(
            f"NESTFUL tool retrieval, pool {pool}: {rows[0]['n_tools']} tools, "
            f"{rows[0]['n_queries']} multi-step requests (every tool counted)",
            rows,
        )
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
