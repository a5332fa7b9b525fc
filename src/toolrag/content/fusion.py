"""Fusion weights that a content index chooses from its own chunks.

Plain reciprocal-rank fusion gives dense and BM25 the same say, so on a corpus where one of
them is much better the fused ranking can fall below it (issue 53: hybrid 0.327 against BM25's
0.340 Recall@10). Here the index asks itself: from a fixed, seeded sample of documents it takes
the first sentence of each one's first chunk as a pseudo-query, removes that sentence from what
is searched (a scratch copy of the table, the sampled chunks re-embedded without it), and
measures the reciprocal rank of the pseudo-query's document under dense, BM25 and each weighting
of :data:`GRID`. The weights with the best mean reciprocal rank win, plain RRF (1, 1) on a tie,
so on the pseudo-queries the fusion is never below its better part.

Cost is bounded: at most :data:`PSEUDO_QUERIES` queries (embeddings and searches), and a scratch
table of at most :data:`SCRATCH_ROWS` chunks; the index computes it once per table version.
"""

from __future__ import annotations

import random
import re
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, Literal

import lancedb
import pyarrow as pa
from lancedb.index import FTS
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import BaseModel

from toolrag.rank_fusion import reciprocal_rank_fusion

FusionMode = Literal["auto", "rrf"]

SEED = 53
PSEUDO_QUERIES = 64
MIN_PSEUDO_QUERIES = 8  # fewer: too noisy to move away from plain RRF
SCRATCH_ROWS = 5_000
POOL = 50
# (dense, bm25), from dense only to BM25 only; plain RRF in the middle
GRID: tuple[tuple[float, float], ...] = (
    (1.0, 0.0),
    (1.0, 0.25),
    (1.0, 0.5),
    (1.0, 1.0),
    (0.5, 1.0),
    (0.25, 1.0),
    (0.0, 1.0),
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_COLUMNS = ["id", "doc_id", "chunk", "text", "vector"]

Ranker = Callable[..., list[dict[str, Any]]]


class FusionWeights(BaseModel):
    """The RRF weights of a table's dense and BM25 rankings, and what they were chosen from."""

    dense: float = 1.0
    bm25: float = 1.0
    method: Literal["pseudo-queries", "rrf: too few pseudo-queries"] = "pseudo-queries"
    n_queries: int = 0
    dense_mrr: float | None = None
    bm25_mrr: float | None = None
    fused_mrr: float | None = None


def pseudo_query(text: str) -> tuple[str, str] | None:
    """The first sentence of ``text`` with 5 to 40 words, and the text without it; None when
    there is none or too little would remain."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    for n, sentence in enumerate(parts):
        if 5 <= len(sentence.split()) <= 40:
            rest = " ".join(parts[:n] + parts[n + 1 :])
            return (sentence, rest) if len(rest.split()) >= 5 else None
    return None


def _first_rank(ranking: Sequence[str], docs: dict[str, str], target: str) -> float:
    for rank, chunk_id in enumerate(ranking, start=1):
        if docs.get(chunk_id) == target:
            return 1.0 / rank
    return 0.0


def calibrate(table: Any, embed: BaseEmbedding, dense: Ranker, fts: Ranker) -> FusionWeights:
    """Choose the weights for ``table`` (see the module docstring); ``dense`` and ``fts`` are
    the index's own rankers, so the pseudo-queries are searched as real ones are."""
    data = table.to_arrow().select(_COLUMNS)
    ids = data.column("id").to_pylist()
    doc_ids = data.column("doc_id").to_pylist()
    chunks = data.column("chunk").to_pylist()
    first: dict[str, int] = {}
    for n, (doc, chunk) in enumerate(zip(doc_ids, chunks, strict=True)):
        if doc not in first or chunk < chunks[first[doc]]:
            first[doc] = n
    rng = random.Random(SEED)
    candidates = sorted(first.values())
    rng.shuffle(candidates)
    texts = data.column("text")
    picked: list[tuple[int, str, str]] = []  # (row, pseudo-query, rest)
    for row in candidates:
        found = pseudo_query(str(texts[row].as_py() or ""))
        if found:
            picked.append((row, *found))
        if len(picked) >= PSEUDO_QUERIES:
            break
    if len(picked) < MIN_PSEUDO_QUERIES:
        return FusionWeights(method="rrf: too few pseudo-queries", n_queries=len(picked))
    chosen = {row for row, _, _ in picked}
    others = [n for n in range(len(ids)) if n not in chosen]
    if len(others) > SCRATCH_ROWS - len(picked):
        others = sorted(rng.sample(others, SCRATCH_ROWS - len(picked)))
    vectors = embed.get_text_embedding_batch([rest for _, _, rest in picked])
    schema = data.schema
    changed = pa.table(
        {
            "id": [ids[row] for row, _, _ in picked],
            "doc_id": [doc_ids[row] for row, _, _ in picked],
            "chunk": [chunks[row] for row, _, _ in picked],
            "text": [rest for _, _, rest in picked],
            "vector": vectors,
        }
    ).cast(schema)
    scratch_data = pa.concat_tables([data.take(pa.array(others, pa.int64())), changed])
    docs = dict(zip(ids, doc_ids, strict=True))
    ranks: list[tuple[list[str], list[str], str]] = []
    with tempfile.TemporaryDirectory(prefix="toolrag-fusion-") as tmp:
        scratch = lancedb.connect(tmp).create_table("scratch", data=scratch_data)
        scratch.create_index("text", config=FTS(), replace=True)
        for row, query, _ in picked:
            vector = embed.get_query_embedding(query)
            by_dense = [r["id"] for r in dense(scratch, vector, None, POOL, ["id", "_distance"])]
            by_bm25 = [r["id"] for r in fts(scratch, query, None, POOL, ["id"])]
            ranks.append((by_dense, by_bm25, doc_ids[row]))
    n = len(ranks)

    def mrr(weights: tuple[float, float]) -> float:
        total = 0.0
        for by_dense, by_bm25, target in ranks:
            fused = reciprocal_rank_fusion([by_dense, by_bm25], weights=weights)
            order = sorted(fused, key=lambda i: (-fused[i], i))
            total += _first_rank(order, docs, target)
        return total / n

    scores = {w: mrr(w) for w in GRID}
    # best first; on a tie the weighting nearest to plain RRF
    best = min(GRID, key=lambda w: (-round(scores[w], 9), abs(GRID.index(w) - 3)))
    return FusionWeights(
        dense=best[0],
        bm25=best[1],
        n_queries=n,
        dense_mrr=round(sum(_first_rank(d, docs, t) for d, _, t in ranks) / n, 4),
        bm25_mrr=round(sum(_first_rank(b, docs, t) for _, b, t in ranks) / n, 4),
        fused_mrr=round(scores[best], 4),
    )
