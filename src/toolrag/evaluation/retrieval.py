"""Retrieval metrics (Recall@k, MRR, nDCG@10, latency) for tools and documents.

A query may expect several tools (a multi-step request): Recall@k counts every expected tool.
Queries with no expected item ("no tool should be used") are left out of these metrics; with
``score_no_tool`` (a search that can answer "no tool fits", such as one with a relevance floor)
they are scored apart: ``no_tool_accuracy`` is the share of them that got nothing back.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from toolrag.errors import InputError
from toolrag.stats import percentile


class RetrievalQuery(BaseModel):
    id: str
    query: str
    expected: list[str] = Field(description="Expected tool names or document ids.")


def load_queries(path: Path, key: str) -> list[RetrievalQuery]:
    """JSONL ``{id, query, <key>: [...]}`` with key ``expected_tools`` or ``expected_docs``."""
    if not path.is_file():
        raise InputError(
            f"Query file {path} does not exist.",
            hint=f"Pass a JSONL file of {{id, query, {key}}} objects.",
        )
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            expected = item.get(key) or []
            if isinstance(expected, str):  # one name written without its list
                expected = [expected]
            query = RetrievalQuery(
                id=str(item["id"]), query=item["query"], expected=[str(e) for e in expected]
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValidationError) as exc:
            raise InputError(
                f"{path}:{n}: not a valid query line ({exc}).",
                hint=f"Each line needs id, query and {key}.",
            ) from exc
        if not query.query.strip():
            raise InputError(
                f"{path}:{n}: query {query.id!r} has no text.",
                hint="Write the question in its query field, or remove the line.",
            )
        out.append(query)
    return out


def unknown_expected(queries: Sequence[RetrievalQuery], known: Iterable[str]) -> list[str]:
    """The expected names or ids that are not in the pool (a typo, another version of the
    file): each counts as a miss, so the caller should say so."""
    pool = set(known)
    return sorted({e for q in queries for e in q.expected if e not in pool})


class RetrievalReport(BaseModel):
    strategy: str
    n_items: int
    n_queries: int
    recall: dict[int, float]
    mrr: float
    ndcg10: float
    p50_ms: float
    p95_ms: float
    # queries expecting no tool; scored only when the search can answer "no tool fits"
    n_no_tool: int = 0
    no_tool_accuracy: float | None = None
    misses: list[dict[str, object]] = Field(default_factory=list, exclude=True)

    def as_json(self, items_key: str = "n_tools") -> dict[str, object]:
        out: dict[str, object] = {f"recall@{k}": round(v, 4) for k, v in self.recall.items()}
        out.update(
            {
                "mrr": round(self.mrr, 4),
                "ndcg@10": round(self.ndcg10, 4),
                "p50_ms": round(self.p50_ms, 2),
                "p95_ms": round(self.p95_ms, 2),
                items_key: self.n_items,
                "n_queries": self.n_queries,
                "strategy": self.strategy,
            }
        )
        if self.no_tool_accuracy is not None:
            out["no_tool_accuracy"] = round(self.no_tool_accuracy, 4)
            out["n_no_tool"] = self.n_no_tool
        return out


def evaluate(
    strategy: str,
    n_items: int,
    queries: Sequence[RetrievalQuery],
    search: Callable[[str, int], list[str]],
    ks: Sequence[int] = (1, 5, 10),
    score_no_tool: bool = False,
    each_k: bool = False,
) -> RetrievalReport:
    """Run ``search(query, k)`` for each query (timed, query embedding included) and score.
    With ``score_no_tool``, a query expecting nothing is right when the search returns nothing
    (``no_tool_accuracy``); its time is not in the latency, which is the answerable queries'.

    ``each_k``: the search is not a prefix of a deeper one (a relevance gate judges the k tools
    it is asked for together), so each Recall@k comes from its own ``search(query, k)``: what
    an agent offered k tools gets. ``no_tool_accuracy`` and the misses are then those of the
    largest k; MRR and nDCG@10 still read one search ``max(ks, 10)`` deep, as latency does."""
    depth = max(*ks, 10)
    widest = max(ks)
    recalls: dict[int, list[float]] = {k: [] for k in ks}
    rr: list[float] = []
    ndcg: list[float] = []
    lat: list[float] = []
    misses = []
    scored = [q for q in queries if q.expected]
    for q in scored:
        t0 = time.perf_counter()
        got = search(q.query, depth)
        lat.append((time.perf_counter() - t0) * 1000)
        expected = set(q.expected)
        # with each_k, a k as deep as the timed search is that search itself
        offered = {k: search(q.query, k) if each_k and k != depth else got[:k] for k in ks}
        for k in ks:
            recalls[k].append(len(expected & set(offered[k])) / len(expected))
        rank = next((i for i, g in enumerate(got) if g in expected), None)
        rr.append(0.0 if rank is None else 1.0 / (rank + 1))
        dcg = sum(1 / math.log2(i + 2) for i, g in enumerate(got[:10]) if g in expected)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(expected), 10)))
        ndcg.append(dcg / ideal)
        if not expected <= set(offered[widest]):
            misses.append(
                {"id": q.id, "query": q.query, "expected": q.expected, "got": offered[widest]}
            )
    no_tool = [q for q in queries if not q.expected]
    empty = 0
    for q in no_tool if score_no_tool else []:
        got = search(q.query, widest if each_k else depth)[:widest]
        if got:
            misses.append({"id": q.id, "query": q.query, "expected": [], "got": got})
        else:
            empty += 1
    n = max(len(scored), 1)
    return RetrievalReport(
        strategy=strategy,
        n_items=n_items,
        n_queries=len(scored),
        recall={k: sum(v) / n for k, v in recalls.items()},
        mrr=sum(rr) / n,
        ndcg10=sum(ndcg) / n,
        p50_ms=statistics.median(lat) if lat else 0.0,
        p95_ms=percentile(lat, 0.95),
        n_no_tool=len(no_tool),
        no_tool_accuracy=empty / len(no_tool) if score_no_tool and no_tool else None,
        misses=misses,
    )
