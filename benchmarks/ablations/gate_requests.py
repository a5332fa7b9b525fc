"""Choosing the gate from a pool's LLM-written requests instead of labelled questions
(``toolrag eval gate --requests --keep S``): does the gate that keeps a share S of the requests
keep about S of the real questions?

For each pool (BFCL; NESTFUL alone; NESTFUL with BFCL's functions as distractors) and its
written requests (``benchmarks/records/synthetic_*.sqlite``), each request is searched with
``best`` as a question its card fits, three ways:

- ``withheld`` (what ``eval gate --requests`` does): the card's written requests are withheld,
  so the card is found by its document alone (:meth:`ToolIndex.requests_withheld`);
- ``own left out``: only the request's own vector is withheld, its sibling requests stay;
- ``document alone``: the card ranks by its unblended document cosine, as if it had no requests.

The real questions (BFCL's single-call questions, NESTFUL's requests) are searched as they are.
For each share S in 0.90, 0.95, 0.98 it reports the gate each way chooses (the highest cut, on
a grid of 0.01, that offers tools to at least S of its questions: ``cuts.choose``), and the share
of real questions that gate keeps, beside the gate the real questions would choose themselves.

    .venv/bin/python -m benchmarks.ablations.gate_requests [--pools bfcl,nestful,nestful+bfcl]

writes ``runs/gate_requests.json``. About 4 minutes per pool on two cores (plus indexing on a
first run: NESTFUL's indexes are built in ``runs/nestful/index_*_requests`` as
``tool_retrieval_nestful.py`` builds them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl, nestful
from toolrag import Settings
from toolrag.cards import SyntheticQueries, ToolCard, load_tool_list
from toolrag.evaluation import (
    RetrievalQuery,
    choose,
    cut_grid,
    load_queries,
    rank_queries,
    rank_written_requests,
    score_cut,
    scored_searcher,
)
from toolrag.models import make_embedding
from toolrag.retrieval import ToolIndex, dense_scores

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "benchmarks" / "records"
SHARES = (0.90, 0.95, 0.98)
K = 5


def load_pool(name: str) -> tuple[list[ToolCard], list[RetrievalQuery], Path]:
    """The pool's cards with their written requests, its real questions, its index folder."""
    bfcl_tools, bfcl_queries = bfcl.load(ROOT / "runs" / "bfcl")
    if name == "bfcl":
        cards = SyntheticQueries(RECORDS / "synthetic_bfcl.sqlite").augment(
            load_tool_list(bfcl_tools), by_name=True
        )
        index_dir = ROOT / "runs" / "bfcl" / "index_requests"
        return cards, load_queries(bfcl_queries, "expected_tools"), index_dir
    data_dir = ROOT / "runs" / "nestful"
    tools_path, queries_path = nestful.load(data_dir)
    own = load_tool_list(tools_path)
    cards = SyntheticQueries(RECORDS / "synthetic_nestful.sqlite").augment(own, by_name=True)
    if name == "nestful+bfcl":
        names = {c.name for c in own}
        distractors = [c for c in load_tool_list(bfcl_tools) if c.name not in names]
        cards += SyntheticQueries(RECORDS / "synthetic_bfcl.sqlite").augment(
            distractors, by_name=True
        )
    index_dir = data_dir / f"index_{name.replace('+', '_')}_requests"
    return cards, load_queries(queries_path, "expected_tools"), index_dir


@contextlib.contextmanager
def own_left_out(index: ToolIndex, card_id: str, text: str) -> Iterator[None]:
    """Only the request's own vector withheld (the one of its card nearest its embedding)."""
    span = index._request_span(card_id)
    assert span is not None  # written_requests lists only cards with requests
    start, end = span
    q = np.asarray(index.embed.get_query_embedding(text), dtype=np.float32)
    own = start + int(np.argmax(index._req_matrix[start:end] @ q))
    saved = index._req_matrix[own].copy()
    index._req_matrix[own] = 0.0
    try:
        yield
    finally:
        index._req_matrix[own] = saved


# the card row ``document_alone`` ranks by its document alone, while one is withheld
_ALONE: list[int] = []


def _dense_document_alone(
    index: ToolIndex, query: str, embedding: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """A ``dense`` stage: :func:`toolrag.retrieval.index.dense_scores`, with the card of
    ``document_alone`` (if any) scored by its unblended document cosine."""
    ranked, sims = dense_scores(index, query, embedding)
    if not _ALONE:
        return ranked, sims
    row = _ALONE[-1]
    e = embedding if embedding is not None else index.embed.get_query_embedding(query)
    q = np.asarray(e, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    sims[row] = float(index._matrix[row] @ q)
    adapted = q if index.adapter is None else index.adapter.apply(q)
    ranked[row] = float(index._matrix[row] @ adapted) - index._penalty[row]
    return ranked, sims


@contextlib.contextmanager
def document_alone(index: ToolIndex, card_id: str, text: str) -> Iterator[None]:
    """The card ranked by its unblended document cosine, as a card without requests is: on an
    index searching with :func:`_dense_document_alone` (``with_stages(dense=...)``)."""
    _ALONE.append(index._row[card_id])
    try:
        yield
    finally:
        _ALONE.pop()


def run_pool(name: str, grid: list[float]) -> dict[str, Any]:
    t0 = time.perf_counter()
    cards, queries, index_dir = load_pool(name)
    index = ToolIndex(index_dir, make_embedding(Settings()))
    index.sync(cards)
    real = rank_queries(queries, scored_searcher("best", cards, index.embed, index), K)
    ways = {
        "withheld": rank_written_requests(index, "best", K),
        "own left out": rank_written_requests(index, "best", K, withhold=own_left_out),
        "document alone": rank_written_requests(
            index.with_stages(dense=_dense_document_alone), "best", K, withhold=document_alone
        ),
    }
    # every cut scored once per set of questions; each share then only chooses among them
    real_points = [score_cut(real, "gate", g, K) for g in grid]
    kept_at = {p.at: p.answered for p in real_points}
    way_points = {
        way: [score_cut(ranked, "gate", g, K) for g in grid] for way, ranked in ways.items()
    }
    rows = []
    for share in SHARES:
        row: dict[str, Any] = {"share": share, "real_gate": choose(real_points, share).at}
        for way, points in way_points.items():
            gate = choose(points, share).at
            row[way] = {"gate": gate, "real_kept": kept_at[gate]}
        rows.append(row)
    return {
        "pool": name,
        "n_tools": len(index),
        "n_real_questions": len(real),
        "n_requests_searched": len(ways["withheld"]),
        "shares": rows,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pools", default="bfcl,nestful,nestful+bfcl")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "gate_requests.json")
    args = parser.parse_args()
    grid = cut_grid(0.10, 0.70, 0.01)
    results = [run_pool(p, grid) for p in args.pools.split(",")]
    payload = {
        "benchmark": "gate_requests",
        "k": K,
        "when": time.strftime("%F %T"),
        "pools": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2))
    table = Table(
        "pool",
        "share S",
        "real questions' gate",
        "withheld",
        "own left out",
        "document alone",
        title="Gate keeping S of the written requests -> share of real questions it keeps",
    )
    for r in results:
        for s in r["shares"]:
            cells = [
                f"{s[w]['gate']:.2f} -> {s[w]['real_kept']:.3f}"
                for w in ("withheld", "own left out", "document alone")
            ]
            table.add_row(r["pool"], f"{s['share']:.2f}", f"{s['real_gate']:.2f}", *cells)
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
