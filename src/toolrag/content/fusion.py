"""Fusion weights that a content index chooses from its own chunks: ``fusion="auto"``, an
option. The default is plain RRF (``DEFAULT_FUSION``, decision 0056), because no way of drawing
pseudo-queries tried here stayed above dense and BM25 alone on a corpus held out from its design.

Plain reciprocal-rank fusion gives dense and BM25 the same say, so on a corpus where one of
them is much better the fused ranking can fall below it (issue 53: hybrid 0.327 against BM25's
0.340 Recall@10). Here the index asks itself: from a fixed, seeded sample of its chunks it takes
a sentence of each as a pseudo-query, removes that sentence from what is searched (a scratch
copy of the table, the sampled chunks re-embedded without it), and measures the reciprocal rank
of the pseudo-query's document under dense, BM25 and each weighting of :data:`GRID`.

The pseudo-queries are of two kinds, half each: the first sentence of a document's first chunk
(a question about what a document is) and a sentence of any chunk (a question about a detail
inside it). Which kind users ask is not known in advance, and each kind alone picked weights
that lost on real questions of the other (decision 0056). So the weighting with the best mean
reciprocal rank replaces plain RRF (1, 1) only when it beats it by more than :data:`MARGIN_SE`
standard errors of the paired per-query difference, and is not worse than RRF on either kind;
otherwise, on a tie, or with fewer than :data:`MIN_PSEUDO_QUERIES`, plain RRF stays.

Cost is bounded: at most :data:`PSEUDO_QUERIES` queries (embeddings and searches), and a scratch
table of at most :data:`SCRATCH_ROWS` chunks; the index computes it once per table version.
"""

from __future__ import annotations

import math
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
# plain RRF: every pseudo-query rule moved some corpus below its better part (decision 0056)
DEFAULT_FUSION: FusionMode = "rrf"
PseudoQuerySource = Literal["first", "any", "mixed"]

SEED = 53
PSEUDO_QUERIES = 128
MIN_PSEUDO_QUERIES = 8  # fewer: too noisy to move away from plain RRF
SCRATCH_ROWS = 5_000
POOL = 50
# the rule's version, kept with the weights beside a table: weights chosen by an earlier rule
# are chosen again (1: first sentences, best MRR; 2: any sentence, clear evidence; 3: 0056)
CALIBRATION_RULE = 3
MARGIN_SE = 2.0  # standard errors a weighting must beat plain RRF by (paired, per query)
PSEUDO_QUERY_SOURCE: PseudoQuerySource = "mixed"
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
RRF = (1.0, 1.0)
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
    rrf_mrr: float | None = None
    fused_mrr: float | None = None


def pseudo_query(text: str, rng: random.Random | None = None) -> tuple[str, str] | None:
    """The first sentence of ``text`` with 5 to 40 words (with ``rng``, such a sentence drawn
    at random), and the text without it; None when there is none or too little would remain."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    order = list(range(len(parts)))
    if rng is not None:
        rng.shuffle(order)
    for n in order:
        sentence = parts[n]
        if 5 <= len(sentence.split()) <= 40:
            rest = " ".join(parts[:n] + parts[n + 1 :])
            return (sentence, rest) if len(rest.split()) >= 5 else None
    return None


def clearly_better(
    candidate: Sequence[float], baseline: Sequence[float], margin_se: float = MARGIN_SE
) -> bool:
    """Whether ``candidate``'s per-query scores beat ``baseline``'s on the same queries by more
    than ``margin_se`` standard errors of their paired difference: a weighting moves away
    from plain RRF only on evidence that a few lucky pseudo-queries do not give."""
    diffs = [c - b for c, b in zip(candidate, baseline, strict=True)]
    n = len(diffs)
    if n < 2:
        return False
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > 0 and mean > margin_se * math.sqrt(var / n)


def _first_rank(ranking: Sequence[str], docs: dict[str, str], target: str) -> float:
    for rank, chunk_id in enumerate(ranking, start=1):
        if docs.get(chunk_id) == target:
            return 1.0 / rank
    return 0.0


def calibrate(
    table: Any,
    embed: BaseEmbedding,
    dense: Ranker,
    fts: Ranker,
    source: PseudoQuerySource = PSEUDO_QUERY_SOURCE,
    margin_se: float = MARGIN_SE,
) -> FusionWeights:
    """Choose the weights for ``table`` (see the module docstring); ``dense`` and ``fts`` are
    the index's own rankers, so the pseudo-queries are searched as real ones are. ``source``:
    where the pseudo-queries come from (``first``: the first sentence of documents' first
    chunks; ``any``: a sentence of any chunk; ``mixed``: half of each); ``margin_se``: the
    standard errors a weighting must beat plain RRF by (0: the best mean wins)."""
    data = table.to_arrow().select(_COLUMNS)
    ids = data.column("id").to_pylist()
    doc_ids = data.column("doc_id").to_pylist()
    chunks = data.column("chunk").to_pylist()
    first: dict[str, int] = {}
    for n, (doc, chunk) in enumerate(zip(doc_ids, chunks, strict=True)):
        if doc not in first or chunk < chunks[first[doc]]:
            first[doc] = n
    rng = random.Random(SEED)
    texts = data.column("text")
    picked: list[tuple[int, str, str]] = []  # (row, pseudo-query, rest)
    kind_of: list[str] = []  # each pseudo-query's kind, as picked
    kinds = {"first": ["first"], "any": ["any"], "mixed": ["first", "any"]}[source]
    for kind in kinds:
        candidates = sorted(first.values()) if kind == "first" else list(range(len(ids)))
        rng.shuffle(candidates)
        want = len(picked) + PSEUDO_QUERIES // len(kinds)
        taken = {row for row, _, _ in picked}
        for row in candidates:
            if row in taken:
                continue
            found = pseudo_query(str(texts[row].as_py() or ""), None if kind == "first" else rng)
            if found:
                picked.append((row, *found))
                kind_of.append(kind)
            if len(picked) >= want:
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

    def reciprocal_ranks(weights: tuple[float, float]) -> list[float]:
        out = []
        for by_dense, by_bm25, target in ranks:
            fused = reciprocal_rank_fusion([by_dense, by_bm25], weights=weights)
            order = sorted(fused, key=lambda i: (-fused[i], i))
            out.append(_first_rank(order, docs, target))
        return out

    per_query = {w: reciprocal_ranks(w) for w in GRID}
    scores = {w: sum(rr) / n for w, rr in per_query.items()}
    # best first; on a tie the weighting nearest to plain RRF
    best = min(GRID, key=lambda w: (-round(scores[w], 9), abs(GRID.index(w) - 3)))
    if not clearly_better(per_query[best], per_query[RRF], margin_se) or any(
        sum(per_query[best][i] - per_query[RRF][i] for i, k in enumerate(kind_of) if k == kind) < 0
        for kind in kinds
    ):
        best = RRF  # not clearly better, or worse for one kind of question
    return FusionWeights(
        dense=best[0],
        bm25=best[1],
        n_queries=n,
        dense_mrr=round(sum(_first_rank(d, docs, t) for d, _, t in ranks) / n, 4),
        bm25_mrr=round(sum(_first_rank(b, docs, t) for _, b, t in ranks) / n, 4),
        rrf_mrr=round(scores[RRF], 4),
        fused_mrr=round(scores[best], 4),
    )
