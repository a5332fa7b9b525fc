"""The evaluation files (DESIGN.md's formats) a benchmark writes, and the table it prints of
tool-retrieval reports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

QUALITY = ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10")


def write_pool(
    out_dir: Path, tools: Sequence[dict[str, Any]], queries: Sequence[dict[str, Any]]
) -> tuple[Path, Path]:
    """``tools.json`` (a JSON list) and ``queries.jsonl`` under ``out_dir``; their paths."""
    tools_path = out_dir / "tools.json"
    queries_path = out_dir / "queries.jsonl"
    tools_path.write_text(json.dumps(list(tools)))
    with queries_path.open("w") as fh:
        for q in queries:
            fh.write(json.dumps(q) + "\n")
    return tools_path, queries_path


def print_reports(title: str, rows: Sequence[dict[str, Any]]) -> None:
    """One table row per strategy's report (``RetrievalReport.as_json()``)."""
    table = Table(
        "strategy", "R@1", "R@5", "R@10", "MRR", "nDCG@10", "p50 ms", "p95 ms", title=title
    )
    for r in rows:
        table.add_row(
            str(r["strategy"]),
            *(f"{r[k]:.3f}" for k in QUALITY),
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
        )
    Console().print(table)
