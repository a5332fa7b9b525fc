"""Ingest benchmark: indexing throughput and query latency per content index, with plain
LlamaIndex (VectorStoreIndex over LanceDBVectorStore, default settings, same embedding model)
run side by side on the documents in the same process.

    .venv/bin/python -m benchmarks.ingest [--out runs/ingest.json] [--repeats 3]

Writes JSON and prints a table. Times are wall-clock on this machine; quote medians/ratios.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.results import result_name, write_result
from toolrag import Settings, Toolbox, load_questions
from toolrag.content import LOADERS

ROOT = Path(__file__).resolve().parents[1]
TOOL_OF = {
    "documents": "search_documents",
    "blueprints": "search_blueprints",
    "schedules": "get_project_schedule",
}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def queries_for(content_type: str) -> list[str]:
    qs = []
    for split in ("examples", "test"):
        qs += [
            q.query
            for q in load_questions(ROOT / "data" / "questions" / f"{split}.jsonl")
            if TOOL_OF[content_type] in q.expected_tools
        ]
    return qs


def bench_toolrag(data_dir: Path, repeats: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tb = Toolbox(Settings(data_dir=data_dir, index_dir=Path(tmp)))
        tb.embed.get_text_embedding("warm up")
        for ct in ("documents", "blueprints", "schedules"):
            loader = LOADERS[ct](data_dir)
            t0 = time.perf_counter()
            report = tb.indexes[ct].sync(loader)
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = tb.indexes[ct].sync(loader)
            rerun = time.perf_counter() - t0
            n_files = len(report.added)
            lat = []
            for _ in range(repeats):
                for q in queries_for(ct):
                    t0 = time.perf_counter()
                    tb.indexes[ct].search(q, k=3)
                    lat.append((time.perf_counter() - t0) * 1000)
            out[ct] = {
                "files": n_files,
                "chunks": report.chunks_written,
                "build_s": round(build, 2),
                "files_per_s": round(n_files / build, 2),
                "chunks_per_s": round(report.chunks_written / build, 2),
                "rerun_unchanged_s": round(rerun, 3),
                "rerun_chunks_written": again.chunks_written,
                "query_p50_ms": round(statistics.median(lat), 2),
                "query_p95_ms": round(pct(lat, 0.95), 2),
                "n_queries": len(lat),
            }
    return out


def bench_plain_llamaindex(data_dir: Path, repeats: int) -> dict[str, float]:
    """Plain LlamaIndex on the same documents: VectorStoreIndex + LanceDBVectorStore."""
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    tb = Toolbox(Settings(data_dir=data_dir))
    loader = LOADERS["documents"](data_dir)
    docs = []
    for path in loader.files():
        for rec in loader.load(path):
            docs.append(
                Document(
                    text=rec.text,
                    doc_id=rec.doc_id,
                    metadata={"project": rec.project, "doc_type": rec.doc_type},
                )
            )
    with tempfile.TemporaryDirectory() as tmp:
        store = LanceDBVectorStore(uri=tmp, table_name="documents")
        t0 = time.perf_counter()
        index = VectorStoreIndex.from_documents(
            docs,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=tb.embed,
        )
        build = time.perf_counter() - t0
        chunks = store.table.count_rows()
        retriever = index.as_retriever(similarity_top_k=3)
        lat = []
        for _ in range(repeats):
            for q in queries_for("documents"):
                t0 = time.perf_counter()
                retriever.retrieve(q)
                lat.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()  # a re-run re-inserts everything: there is no manifest
        for d in docs:
            index.insert(d)
        rerun = time.perf_counter() - t0
        rows_after = store.table.count_rows()
    return {
        "files": len(docs),
        "chunks": chunks,
        "build_s": round(build, 2),
        "files_per_s": round(len(docs) / build, 2),
        "chunks_per_s": round(chunks / build, 2),
        "rerun_unchanged_s": round(rerun, 3),
        "rerun_rows_after": rows_after,
        "query_p50_ms": round(statistics.median(lat), 2),
        "query_p95_ms": round(pct(lat, 0.95), 2),
        "n_queries": len(lat),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "ingest.json")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    ours = bench_toolrag(args.data_dir, args.repeats)
    base = bench_plain_llamaindex(args.data_dir, args.repeats)
    result = {
        "benchmark": "ingest",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": f"{platform.node()} {platform.processor() or platform.machine()}",
        "toolrag": ours,
        "baseline_plain_llamaindex_documents": base,
        "ratios_documents": {
            "query_p50_toolrag_over_baseline": round(
                ours["documents"]["query_p50_ms"] / base["query_p50_ms"], 2
            ),
            "rerun_unchanged_toolrag_over_baseline": round(
                ours["documents"]["rerun_unchanged_s"] / max(base["rerun_unchanged_s"], 1e-9), 3
            ),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    write_result(result_name("ingest", repeats=args.repeats if args.repeats != 3 else 0), result)
    table = Table(
        "index",
        "files",
        "chunks",
        "files/s",
        "chunks/s",
        "re-run s",
        "p50 ms",
        "p95 ms",
        title="ingest benchmark",
    )
    rows = [*[(f"toolrag {k}", v) for k, v in ours.items()], ("plain LlamaIndex documents", base)]
    for name, v in rows:
        table.add_row(
            name,
            str(v["files"]),
            str(v["chunks"]),
            str(v["files_per_s"]),
            str(v["chunks_per_s"]),
            str(v["rerun_unchanged_s"]),
            str(v["query_p50_ms"]),
            str(v["query_p95_ms"]),
        )
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
