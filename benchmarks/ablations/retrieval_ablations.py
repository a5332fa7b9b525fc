"""Ablations of `best+requests` on BFCL: ideas measured and not adopted, kept so that their
figures can be repeated. Each prints the unchanged `best+requests` beside the variant, over the
same index and the same query vectors, and writes JSON.

    .venv/bin/python -m benchmarks.ablations.retrieval_ablations ABLATION
        [--synthetic benchmarks/records/synthetic_bfcl.sqlite] [--out runs/ablation_<name>.json]

ABLATION is one of:

- ``rerank``: a learned reranker over the top 30 of `best`, trained on the pool's own written
  requests (never on the evaluation queries). Each card's last request is a training question;
  its own vector is left out of the card's nearest-request feature, and the query adapter that
  scores it is fitted on the other requests only. Features: the `best` score and its parts (raw
  and adapted document cosine, nearest and mean request cosine, hub penalty, relative BM25), how
  many of the name's words and of the required parameters' words the question uses, and rank.
  A linear model and small MLPs, softmax over the candidates.
- ``values``: the dense side embeds the question with its numbers removed (or replaced by
  ``x``), alone or averaged with the plain question; BM25 reads the question as it is.
- ``steps``: `best` with and without covering each step of a multi-step request
  (:func:`toolrag.retrieval.index.cover_steps`), with a step's best tool placed only when it
  looks like a real step's tool (its cosine with the step at least the cosine of the tool it
  would displace with the whole request, or at least 0.35: a clause of context such as "I'm
  planning a vacation" otherwise brings a tool of its own), and with every split request (not
  only those that mark their steps with sequence words) scored by its best step, on the
  single-call and the multi-tool queries.
- ``vectors``: other ways to score a card's vector. Pseudo-relevance feedback (Rocchio: the
  question moved halfway towards the mean of its 3 best cards' documents, then ranked again);
  a second vector per card of its name and description only (no parameters), taken as the
  card's maximum with the document or averaged with it; and the hub correction applied to the
  written requests too (each request ranked down by half its mean cosine with its ``HUB_K``
  nearest requests of other cards, CSLS's settings as for the documents).
- ``diversity``: in `best`'s top 5, a card whose document has cosine >= 0.95 (the lint's
  near-duplicate threshold), 0.9 or 0.85 with a card placed before it is moved to just after
  the top 5, so near-copies do not take several of its places (the same top 10 as `best`).
- ``finetune``: the embedding model itself fine-tuned on (written request, card document)
  pairs, one epoch of in-batch negatives (the settings of the sentence-transformers and
  LlamaIndex fine-tuning guides), then the pool indexed again with it, query adapter included
  (about 12 minutes of training and 5 of embedding on two cores; ``runs/ablation_finetune/``).
- ``fusion``: distribution-based score fusion (Qdrant's DBSF) instead of `best`'s cosine plus
  the weighted BM25 score relative to the best match: each side is scaled per request by the
  spread of its own candidates, (score - (mean - 3 sd)) / (6 sd), dense over the top of the
  ranking and BM25 over its matches, then summed with BM25 at weight 0.15, 0.3, 0.5 or 0.8.
- ``intents``: the query side of Re-Invoke (Chen et al. 2024), whose document side the written
  requests already are: the LLM restates the question as the one thing its tool must do
  ("Check the weather forecast for Vancouver, Canada on March 10, 2023." for "Can you tell me
  if it will rain in Vancouver ...?"), and `best` searches that restatement alone, fused with
  the question by reciprocal rank, averaged into the question's vector, or appended to the
  question's text. One LLM call per question is too slow for all 1,911 here, so it runs on a
  recorded sample of single-call questions, misses of `best+requests` (expected tool outside
  its top 5) and hits, and extrapolates: net = fixed / sampled misses x all misses - lost /
  sampled hits x all hits. The record is ``benchmarks/records/intents_bfcl.jsonl``;
  ``--write-intents N`` draws N more misses and 2N hits (seeded) and has the configured LLM
  restate the ones the record lacks.

- ``kinds``: the kinds of values a question carries ("on March 1st 2023": a date; "at 3pm": a
  time; a URL; an email address) added as words ("date", "time", "url", "email") to `best`'s
  BM25 search, so a card with a parameter for the value matches them (a question rarely says
  "date"). Variants: every kind; dates only; every kind but, for a request that splits into
  steps, only in each step's own search (the value belongs to its step). With ``--nestful``
  the same variants also run through ``tool_retrieval_nestful.py --strategies best
  --synthetic benchmarks/records/synthetic_nestful.sqlite`` (about 11 minutes each), the pool
  the rule was not designed on.

- ``seeds``: not an idea but the spread of the shipped one: the query adapter fitted with
  seeds 0-4 of its held-out split and batch order (0 is the shipped seed), each scored on both
  sets and on the single-call set with the recorded translations
  (``benchmarks/records/translations_bfcl.sqlite``), as ``best+requests+translated``.

These read the ToolIndex's private arrays: they are experiments, not part of the package.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import bfcl
from toolrag import Settings
from toolrag.cards import SyntheticQueries, ToolCard, load_tool_list, split_name
from toolrag.evaluation import evaluate, load_queries
from toolrag.models import embed_model_path, embedding_name, make_embedding
from toolrag.retrieval import (
    HUB_K,
    HUB_WEIGHT,
    REQUEST_WEIGHT,
    QueryAdapter,
    QueryTranslator,
    Stages,
    ToolIndex,
    bm25_scores,
    fit_query_adapter,
    rank_order,
    reciprocal_rank_fusion,
    split_steps,
    sub_queries,
)

ROOT = Path(__file__).resolve().parents[2]
POOL = 30
KEYS = ("recall@1", "recall@5", "recall@10", "mrr")
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"(?<![A-Za-z])[-+]?[$€£]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?(?![A-Za-z])")


def words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 1}


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def request_ends(index: ToolIndex) -> np.ndarray:
    """Where each card's group of written requests ends in ``_req_matrix`` (its starts are
    ``_req_starts``)."""
    return np.r_[index._req_starts[1:], len(index._req_matrix)]


def request_owners(index: ToolIndex) -> np.ndarray:
    """The card row of each written request, row by row of ``_req_matrix``."""
    return np.repeat(index._req_rows, request_ends(index) - index._req_starts)


class Bench:
    """BFCL's pool with its written requests in a ToolIndex, the query sets and their vectors."""

    def __init__(self, synthetic: Path, index_dir: Path, settings: Settings | None = None) -> None:
        tools_path, queries_path = bfcl.load(ROOT / "runs" / "bfcl")
        self.synthetic = synthetic
        self.embed = make_embedding(settings or Settings())
        self.cards: list[ToolCard] = SyntheticQueries(synthetic).augment(
            load_tool_list(tools_path), by_name=True
        )
        self.sets = {
            "single": load_queries(queries_path, "expected_tools"),
            "multi": load_queries(bfcl.load_multi(ROOT / "runs" / "bfcl"), "expected_tools"),
        }
        self.index = ToolIndex(index_dir, self.embed)
        print(self.index.sync(self.cards), flush=True)
        self.vectors = {
            name: self.vectorize([q.query for q in qs]) for name, qs in self.sets.items()
        }

    @contextlib.contextmanager
    def staged(self, **changes: Any) -> Iterator[ToolIndex]:
        """For the duration, ``self.index`` is the same index searching with ``changes``
        (:class:`toolrag.retrieval.index.Stages` fields) replaced; restored after."""
        base = self.index
        self.index = base.with_stages(**changes)
        try:
            yield self.index
        finally:
            self.index = base

    def vectorize(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embed.get_text_embedding_batch(list(texts)), dtype=np.float32)

    def best(self, name: str, vectors: np.ndarray | None = None) -> dict[str, float]:
        """`best` over query set ``name``, each query ranked with its row of ``vectors``."""
        queries = self.sets[name]
        rows = self.vectors[name] if vectors is None else vectors
        by_text = {q.query: rows[n] for n, q in enumerate(queries)}

        def search(query: str, k: int) -> list[str]:
            hits = self.index.retrieve(query, k=k, strategy="best", embedding=by_text[query])
            return [h.name for h in hits]

        return self.scored(name, search)

    def scored(self, name: str, search: Callable[[str, int], list[str]]) -> dict[str, float]:
        """Recall@1/5/10 (every expected tool counted) and MRR of ``search`` over query set
        ``name``, by toolrag's own :func:`evaluate`."""
        report = evaluate(name, len(self.cards), self.sets[name], search)
        scores = {f"recall@{k}": v for k, v in report.recall.items()} | {"mrr": report.mrr}
        return {k: round(scores[k], 4) for k in KEYS}


# --- rerank ------------------------------------------------------------------------------------
class Features:
    """Candidate features for the learned reranker, from the index's arrays."""

    def __init__(self, index: ToolIndex, cards: dict[str, ToolCard]) -> None:
        self.index = index
        self.docs, self.reqs = index._matrix, index._req_matrix
        self.starts, self.rows = index._req_starts, index._req_rows
        ids = index._ids
        self.name_words = [words(split_name(cards[i].name)) for i in ids]
        self.required = [
            [words(split_name(p)) for p in cards[i].parameters.get("required") or []] for i in ids
        ]

    def __call__(
        self, text: str, vector: np.ndarray, adapter: QueryAdapter | None, leave_out: int = -1
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top POOL cards by `best`'s score for the question, and their feature rows."""
        q = unit(vector)
        n = len(self.docs)
        raw = self.docs @ q
        adapted = raw if adapter is None else self.docs @ adapter.apply(q)
        to_reqs = self.reqs @ q
        if leave_out >= 0:
            to_reqs[leave_out] = -1.0
        counted = to_reqs > -1.0
        count = np.add.reduceat(counted.astype(np.float32), self.starts)
        nearest, mean, has = np.zeros(n), np.zeros(n), np.zeros(n)
        ok = count > 0
        nearest[self.rows[ok]] = np.maximum.reduceat(to_reqs, self.starts)[ok]
        total = np.add.reduceat(np.where(counted, to_reqs, 0.0), self.starts)
        mean[self.rows[ok]] = total[ok] / count[ok]
        has[self.rows[ok]] = 1.0
        blended = np.where(
            has > 0, (adapted + REQUEST_WEIGHT * nearest) / (1 + REQUEST_WEIGHT), adapted
        )
        lexical = self.index.stages.lexical(self.index, text, 50)
        bm25 = np.zeros(n)
        top_bm25 = max((s for _, s in lexical), default=0.0)
        for tid, s in lexical:
            bm25[self.index._row[tid]] = s / top_bm25
        score = blended - self.index._penalty + self.index.bm25_weight() * bm25
        top = np.argpartition(-score, POOL)[:POOL]
        top = top[np.argsort(-score[top], kind="stable")]
        asked = words(text)
        rows = []
        for rank, c in enumerate(top):
            required = self.required[c]
            rows.append(
                [
                    score[c], raw[c], adapted[c], nearest[c], mean[c], has[c],
                    self.index._penalty[c], bm25[c],
                    len(self.name_words[c] & asked) / max(len(self.name_words[c]), 1),
                    float(np.mean([bool(w & asked) for w in required])) if required else 1.0,
                    len(required) / 5.0, 1.0 / (rank + 1), score[c] - score[top[0]],
                ]
            )  # fmt: skip
        return top, np.asarray(rows, dtype=np.float32)


def rerank(bench: Bench) -> dict[str, Any]:
    import torch

    torch.manual_seed(0)
    index = bench.index
    features = Features(index, {c.id: c for c in bench.cards})
    ends = request_ends(index)
    owner = request_owners(index)
    train_rows = [e - 1 for s, e in zip(index._req_starts, ends, strict=True) if e - s >= 3]
    rest = np.ones(len(owner), dtype=bool)
    rest[train_rows] = False
    fold = fit_query_adapter(index._matrix, index._req_matrix[rest], owner[rest], "fold")
    table = index._requests_table().to_arrow().select(["id", "text"])
    row_of = np.array([index._row.get(i, -1) for i in table.column("id").to_pylist()])
    kept = np.flatnonzero(row_of >= 0)
    texts = table.column("text").take(kept[np.argsort(row_of[kept], kind="stable")]).to_pylist()
    xs, ys = [], []
    for r in train_rows:
        top, feats = features(texts[r], index._req_matrix[r], fold, leave_out=r)
        hit = np.flatnonzero(top == owner[r])
        if len(hit):
            xs.append(feats)
            ys.append(int(hit[0]))
    names = np.array([index.cards[i].name for i in index._ids])
    candidates = {
        q.query: features(q.query, vector, index.adapter)
        for q, vector in zip(bench.sets["single"], bench.vectors["single"], strict=True)
    }

    def reordered(order: Callable[[np.ndarray], np.ndarray]) -> dict[str, float]:
        """The single-call queries scored on their candidates reordered by ``order``."""

        def search(query: str, k: int) -> list[str]:
            top, feats = candidates[query]
            return list(names[top[order(feats)]][:k])

        return bench.scored("single", search)

    x, y = torch.tensor(np.stack(xs)), torch.tensor(ys)
    flat = x.reshape(-1, x.shape[-1])
    mu, sd = flat.mean(0), flat.std(0) + 1e-6
    result: dict[str, Any] = {
        "training_questions": len(xs),
        "training_top1_best": round(float(np.mean([v == 0 for v in ys])), 4),
        "best_top30": reordered(lambda f: np.arange(len(f))),
    }
    for hidden in (0, 8, 32):
        for decay in (1e-3, 1e-2):
            layers: list[torch.nn.Module] = (
                [torch.nn.Linear(x.shape[-1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)]
                if hidden
                else [torch.nn.Linear(x.shape[-1], 1)]
            )
            net = torch.nn.Sequential(*layers)
            opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=decay)
            for _ in range(300):
                loss = torch.nn.functional.cross_entropy(net((x - mu) / sd).squeeze(-1), y)
                opt.zero_grad()
                loss.backward()
                opt.step()

            def order(feats: np.ndarray, net: torch.nn.Module = net) -> np.ndarray:
                with torch.no_grad():
                    s = net((torch.tensor(feats) - mu) / sd).squeeze(-1).numpy()
                return np.argsort(-s, kind="stable")

            with torch.no_grad():
                fit = (net((x - mu) / sd).squeeze(-1).argmax(1) == y).float().mean().item()
            result[f"hidden={hidden},decay={decay}"] = {
                "training_top1": round(fit, 4),
                **reordered(order),
            }
            print(hidden, decay, result[f"hidden={hidden},decay={decay}"], flush=True)
    return result


# --- values and steps ---------------------------------------------------------------------------
def values(bench: Bench) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, queries in bench.sets.items():
        result[name] = {"best+requests": bench.best(name)}
        for mode, repl in (("numbers removed", ""), ("numbers as x", "x")):
            texts = [re.sub(r"\s+", " ", _NUMBER.sub(repl, q.query)).strip() for q in queries]
            stripped = bench.vectorize(texts)
            both = unit(bench.vectors[name]) + unit(stripped)
            result[name][mode] = bench.best(name, stripped)
            result[name][f"{mode}, averaged with the question"] = bench.best(name, both)
        print(name, json.dumps(result[name]), flush=True)
    result["single_queries_with_numbers"] = sum(
        bool(_NUMBER.search(q.query)) for q in bench.sets["single"]
    )
    return result


# a step's best tool, its cosine with the step, the ranking it would enter, the whole
# request's cosines, its place among the missing step tools, and how many of them there are
StepFilter = Callable[[str, float, list[tuple[str, float]], dict[str, float], int, int], bool]


def _filtered_cover(keep: StepFilter) -> Callable[..., list[tuple[str, float]]]:
    """A ``cover`` stage: :func:`toolrag.retrieval.index.cover_steps` as it was before it
    required the step's tool among the request's candidates, a step's best tool placed only
    where ``keep`` says."""

    def cover(
        index: ToolIndex,
        ranked: list[tuple[str, float]],
        sims: dict[str, float],
        steps: list[tuple[dict[str, float], dict[str, float]]],
    ) -> list[tuple[str, float]]:
        tops: list[tuple[str, float, float]] = []
        for part_scores, part_sims in steps:
            if not part_scores:
                continue
            tid, score = min(part_scores.items(), key=rank_order)
            if tid not in (t for t, _, _ in tops):
                tops.append((tid, score, part_sims.get(tid, -1.0)))
        if not tops:
            return ranked
        window = len(tops) + 1
        placed = {t for t, _ in ranked[:window]}
        missing = [(t, s, c) for t, s, c in tops if t not in placed]
        missing = [
            (t, s, c) for j, (t, s, c) in enumerate(missing)
            if keep(t, c, ranked, sims, window - len(missing) + j, len(missing))
        ]  # fmt: skip
        head = ranked[: window - len(missing)] + [(t, s) for t, s, _ in missing]
        taken = {t for t, _ in head}
        return head + [(t, s) for t, s in ranked if t not in taken]

    return cover


def _fits_as_well(
    tid: str,
    cosine: float,
    ranked: list[tuple[str, float]],
    sims: dict[str, float],
    place: int,
    n: int,
) -> bool:
    """The step's tool fits its step at least as well as the tool whose place it would take
    fits the whole request (cosines)."""
    return place >= len(ranked) or cosine >= sims.get(ranked[place][0], -1.0)


STEP_FILTERS: dict[str, StepFilter] = {
    "a step's tool only where its cosine with the step is at least the displaced tool's with "
    "the request": _fits_as_well,
    "a step's tool only where its cosine with the step reaches 0.35": (
        lambda tid, cosine, ranked, sims, place, n: cosine >= 0.35
    ),
}


def steps(bench: Bench) -> dict[str, Any]:
    result: dict[str, Any] = {name: {"best+requests": bench.best(name)} for name in bench.sets}
    with bench.staged(cover=lambda index, ranked, sims, steps: ranked):
        for name in bench.sets:
            result[name]["without step covering"] = bench.best(name)
    for label, keep in STEP_FILTERS.items():
        with bench.staged(cover=_filtered_cover(keep)):
            for name in bench.sets:
                result[name][label] = bench.best(name)

    # every split request scored by its best step, not only those marked with sequence words
    def every_split(query: str, min_words: int = 3) -> tuple[list[str], bool]:
        parts = split_steps(query, min_words)[0]
        return parts, bool(parts)

    with bench.staged(split=every_split):
        for name in bench.sets:
            result[name]["best step for every split request"] = bench.best(name)
    result["single_queries_split"] = sum(bool(sub_queries(q.query)) for q in bench.sets["single"])
    result["single_queries_marked"] = sum(split_steps(q.query)[1] for q in bench.sets["single"])
    return result


# --- vectors -------------------------------------------------------------------------------------
Scorer = Callable[[ToolIndex, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _request_hubness(index: ToolIndex) -> np.ndarray:
    """Each written request's mean cosine with its HUB_K nearest requests of other cards."""
    reqs = index._req_matrix
    owner = request_owners(index)
    out = np.zeros(len(reqs), dtype=np.float32)
    for start in range(0, len(reqs), 512):
        sims = reqs[start : start + 512] @ reqs.T
        sims[owner[start : start + 512, None] == owner[None, :]] = -1.0
        out[start : start + 512] = np.partition(sims, -HUB_K, axis=1)[:, -HUB_K:].mean(axis=1)
    return out


def _scored(
    index: ToolIndex, q: np.ndarray, docs: np.ndarray, request_penalty: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`best`'s dense scores (ranking score, cosine) for the unit question ``q`` with ``docs``
    as the cards' document vectors, as :func:`toolrag.retrieval.index.dense_scores`
    computes them."""
    sims = index._matrix @ q
    ranked = docs @ (q if index.adapter is None else index.adapter.apply(q))
    to_reqs = index._req_matrix @ q
    nearest = REQUEST_WEIGHT * np.maximum.reduceat(to_reqs, index._req_starts)
    ranked_nearest = nearest
    if request_penalty is not None:
        adjusted = to_reqs - HUB_WEIGHT * (request_penalty - request_penalty.mean())
        ranked_nearest = REQUEST_WEIGHT * np.maximum.reduceat(adjusted, index._req_starts)
    rows = index._req_rows
    sims[rows] = (sims[rows] + nearest) / (1 + REQUEST_WEIGHT)
    ranked[rows] = (ranked[rows] + ranked_nearest) / (1 + REQUEST_WEIGHT)
    return ranked - index._penalty, sims


def vectors(bench: Bench) -> dict[str, Any]:
    index = bench.index
    texts = [index.cards[i].document().split("\nParameters:")[0] for i in index._ids]
    short = unit(bench.vectorize(texts))
    full = index._matrix
    hub = _request_hubness(index)

    def prf(self: ToolIndex, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ranked, sims = _scored(self, q, full)
        moved = unit(q + 0.5 * full[np.argpartition(-ranked, 3)[:3]].mean(axis=0))
        return _scored(self, moved, full)[0], sims

    def short_max(self: ToolIndex, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, sims = _scored(self, q, full)
        return np.maximum(a, _scored(self, q, short)[0]), sims

    def short_mean(self: ToolIndex, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, sims = _scored(self, q, full)
        return (a + _scored(self, q, short)[0]) / 2, sims

    variants: dict[str, Scorer] = {
        "pseudo-relevance feedback": prf,
        "name+description vector, max with the document": short_max,
        "name+description vector, mean with the document": short_mean,
        "hub correction on the written requests": lambda self, q: _scored(self, q, full, hub),
    }
    result: dict[str, Any] = {name: {"best+requests": bench.best(name)} for name in bench.sets}
    for label, scorer in variants.items():

        def dense(
            index: ToolIndex,
            query: str,
            embedding: Sequence[float] | None = None,
            scorer: Scorer = scorer,
        ) -> tuple[np.ndarray, np.ndarray]:
            if embedding is None:
                embedding = index.embed.get_query_embedding(query)
            return scorer(index, unit(np.asarray(embedding, dtype=np.float32)))

        with bench.staged(dense=dense):
            for name in bench.sets:
                result[name][label] = bench.best(name)
        print(label, json.dumps({n: result[n][label] for n in bench.sets}), flush=True)
    return result


# --- diversity -----------------------------------------------------------------------------------
def _deferred(index: ToolIndex, hits: list[Any], threshold: float, window: int = 5) -> list[str]:
    """``best``'s ranking with every card whose document has cosine >= ``threshold`` with a card
    already placed in the first ``window`` moved to just after them (its place goes to the next
    card that is not a near-copy), so the window holds different tools."""
    placed: list[int] = []
    later: list[str] = []
    head: list[str] = []
    for hit in hits:
        row = index._row[hit.id]
        if len(head) < window:
            if placed and float(np.max(index._matrix[placed] @ index._matrix[row])) >= threshold:
                later.append(hit.name)
                continue
            placed.append(row)
            head.append(hit.name)
        else:
            later.append(hit.name)
    return head + later


def diversity(bench: Bench) -> dict[str, Any]:
    result: dict[str, Any] = {name: {"best+requests": bench.best(name)} for name in bench.sets}
    for threshold in (0.95, 0.9, 0.85):
        label = f"near-copies (document cosine >= {threshold}) deferred past the top 5"
        for name, queries in bench.sets.items():
            by_text = {q.query: bench.vectors[name][n] for n, q in enumerate(queries)}

            def search(
                query: str, k: int, threshold: float = threshold, by_text: Any = by_text
            ) -> list[str]:
                hits = bench.index.retrieve(query, k=10, strategy="best", embedding=by_text[query])
                return _deferred(bench.index, hits, threshold)[:k]

            result[name][label] = bench.scored(name, search)
        print(label, json.dumps({n: result[n][label] for n in bench.sets}), flush=True)
    return result


# --- finetune ------------------------------------------------------------------------------------
def _fine_tune(cards: Sequence[ToolCard], base: Path, out: Path, seed: int = 0) -> dict[str, Any]:
    """One epoch of in-batch-negatives training (MultipleNegativesRankingLoss, scale 20) of the
    embedding model on (written request, card document) pairs: batches of 32 with one pair per
    card, AdamW at 2e-5 with 10% warm-up then linear decay, documents cut at 128 tokens. The
    settings of sentence-transformers' and LlamaIndex's fine-tuning guides, not tuned here."""
    import random

    import torch
    from sentence_transformers import SentenceTransformer

    random.seed(seed)
    torch.manual_seed(seed)
    pairs = [(r, c.document(), c.name) for c in cards for r in c.synthetic]
    random.shuffle(pairs)
    batches: list[list[tuple[str, str, str]]] = []
    for pair in pairs:  # the first batch without a pair of the same card
        home = next((b for b in batches if len(b) < 32 and all(p[2] != pair[2] for p in b)), None)
        if home is None:
            batches.append(home := [])
        home.append(pair)
    model = SentenceTransformer(str(base), device="cpu")
    model.max_seq_length = 128
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    total = len(batches)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / (0.1 * total)) * max(0.0, 1 - s / total)
    )

    def encode(texts: list[str]) -> torch.Tensor:
        out = model(model.tokenize(texts))["sentence_embedding"]
        return torch.nn.functional.normalize(out, dim=-1)

    model.train()
    t0 = time.perf_counter()
    for batch in batches:
        logits = 20.0 * encode([p[0] for p in batch]) @ encode([p[1] for p in batch]).T
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
    model.save(str(out))
    return {"pairs": len(pairs), "batches": total, "train_s": round(time.perf_counter() - t0, 1)}


def finetune(bench: Bench) -> dict[str, Any]:
    result: dict[str, Any] = {name: {"best+requests": bench.best(name)} for name in bench.sets}
    work = ROOT / "runs" / "ablation_finetune"
    base = embed_model_path(Settings().embed_model)
    result["training"] = _fine_tune(bench.cards, base, work / "model")
    print(result["training"], flush=True)
    tuned = Bench(bench.synthetic, work / "index", Settings(embed_model=str(work / "model")))
    label = "embedding model fine-tuned on the written requests"
    for name in bench.sets:
        result[name][label] = tuned.best(name)
    print(label, json.dumps({n: result[n][label] for n in bench.sets}), flush=True)
    return result


# --- fusion --------------------------------------------------------------------------------------
def _dbsf(weight: float) -> Callable[..., tuple[dict[str, float], dict[str, float]]]:
    """A ``fuse`` stage: :func:`toolrag.retrieval.index.blend` with distribution-based score
    fusion at BM25 ``weight`` (the weight `best` passes in is ignored)."""

    def blended(
        self: ToolIndex,
        query: str,
        pool: int,
        _: float,
        embedding: Any = None,
        include: Sequence[str] = (),
    ) -> tuple[dict[str, float], dict[str, float]]:
        if not self._ids:
            return {}, {}
        ranked, sims, lexical = self.candidates(query, pool, embedding, include)
        dense = np.sort(ranked)[-pool:]  # the ranking scores of the pool's dense candidates
        low, spread = dense.mean() - 3 * dense.std(), 6 * dense.std() or 1.0
        scores = {tid: float((ranked[self._row[tid]] - low) / spread) for tid in sims}
        bm25 = np.array([s for _t, s in lexical])
        if len(bm25) and bm25.std() > 0:
            low, spread = bm25.mean() - 3 * bm25.std(), 6 * bm25.std()
            for tid, s in lexical:
                scores[tid] += weight * float((s - low) / spread)
        return scores, sims

    return blended


def with_variants(
    bench: Bench, stage: str, variants: dict[str, Callable[..., Any]]
) -> dict[str, Any]:
    """`best+requests` as it is, then with the index's stage ``stage`` (a field of
    :class:`toolrag.retrieval.index.Stages`) replaced by each variant."""
    result: dict[str, Any] = {name: {"best+requests": bench.best(name)} for name in bench.sets}
    for label, variant in variants.items():
        with bench.staged(**{stage: variant}):
            for name in bench.sets:
                result[name][label] = bench.best(name)
        print(label, json.dumps({n: result[n][label] for n in bench.sets}), flush=True)
    return result


def fusion(bench: Bench) -> dict[str, Any]:
    weights = (0.15, 0.3, 0.5, 0.8)
    return with_variants(bench, "fuse", {f"DBSF, BM25 weight {w}": _dbsf(w) for w in weights})


# --- intents -------------------------------------------------------------------------------------
INTENTS = ROOT / "benchmarks" / "records" / "intents_bfcl.jsonl"
INTENT_PROMPT = (
    "A user asked an assistant that has many tools (functions). Say what the tool it needs "
    "must do: one short line starting with a verb, in plain English, like the first line of "
    "a function's description. Leave out the user's specific values and any background that "
    "does not say what the tool does.\n\nRequest: {text}\n\nThe tool must:"
)


def _intent(reply: str) -> str:
    """The restatement in an LLM reply: its first line, without quotes."""
    lines = [line.strip().strip('"') for line in reply.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _write_intents(found: dict[str, bool], n: int, seed: int = 0) -> None:
    """Draws ``n`` misses and ``2 n`` hits of `best+requests` (``found``: whether a question's
    tools were in its top 5; seeded) and records the configured LLM's restatement of each one
    ``INTENTS`` lacks."""
    import random

    from toolrag.models import make_llm

    recorded = {json.loads(line)["query"] for line in INTENTS.read_text().splitlines()}
    rng = random.Random(seed)
    misses = sorted(q for q, hit in found.items() if not hit and q not in recorded)
    hits = sorted(q for q, hit in found.items() if hit and q not in recorded)
    draw = rng.sample(misses, min(n, len(misses))) + rng.sample(hits, min(2 * n, len(hits)))
    llm = make_llm(Settings())
    with INTENTS.open("a") as record:
        for query in draw:
            t0 = time.perf_counter()
            reply = llm.complete(INTENT_PROMPT.format(text=query[:1500])).text
            seconds = round(time.perf_counter() - t0, 2)
            record.write(
                json.dumps({"query": query, "intent": _intent(reply), "seconds": seconds}) + "\n"
            )
            record.flush()
            print(seconds, "|", query[:70], "->", _intent(reply)[:70], flush=True)


def intents(bench: Bench, write: int = 0) -> dict[str, Any]:
    queries = bench.sets["single"]
    vectors = bench.vectors["single"]

    def ranked(text: str, vector: np.ndarray, k: int = POOL) -> list[str]:
        hits = bench.index.retrieve(text, k=k, strategy="best", embedding=vector.tolist())
        return [h.name for h in hits]

    def found(names: list[str], n: int) -> bool:
        """Every expected tool of query ``n`` in the top 5 of ``names``."""
        return set(queries[n].expected) <= set(names[:5])

    def fused(lists: Sequence[list[str]], weights: Sequence[float]) -> list[str]:
        scores = reciprocal_rank_fusion(lists, weights)
        return sorted(scores, key=lambda name: -scores[name])

    # the baseline searched as the benchmarks search (k = 10), its deeper list for the fusions
    before = [found(ranked(q.query, vectors[n], 10), n) for n, q in enumerate(queries)]
    if write:
        _write_intents({q.query: before[n] for n, q in enumerate(queries)}, write)
    said = {}
    for line in INTENTS.read_text().splitlines():
        row = json.loads(line)
        said[row["query"]] = row
    sample = [n for n, q in enumerate(queries) if q.query in said]
    texts = [said[queries[n].query]["intent"] or queries[n].query for n in sample]
    intent_vectors = bench.vectorize(texts)
    # each sampled question's and restatement's own rankings, searched once for every variant
    asked = {n: ranked(queries[n].query, vectors[n]) for n in sample}
    restated = {n: ranked(i, v) for n, i, v in zip(sample, texts, intent_vectors, strict=True)}
    variants: dict[str, Callable[[int, str, np.ndarray], list[str]]] = {
        "the restatement alone": lambda n, i, v: restated[n],
        "fused with the question by reciprocal rank": lambda n, i, v: fused(
            [asked[n], restated[n]], [1.0, 1.0]
        ),
        "the same, restatement at half weight": lambda n, i, v: fused(
            [asked[n], restated[n]], [1.0, 0.5]
        ),
        "half its vector added to the question's": lambda n, i, v: ranked(
            queries[n].query, unit(vectors[n]) + 0.5 * unit(v)
        ),
        "its vector added to the question's": lambda n, i, v: ranked(
            queries[n].query, unit(vectors[n]) + unit(v)
        ),
        "appended to the question's text": lambda n, i, v: ranked(
            f"{queries[n].query} {i}",
            np.asarray(bench.embed.get_query_embedding(f"{queries[n].query} {i}")),
        ),
    }
    all_hits = sum(before)
    all_misses = len(queries) - all_hits
    sampled_hits = sum(before[n] for n in sample)
    sampled_misses = len(sample) - sampled_hits
    result: dict[str, Any] = {
        "best+requests": {"recall@5": round(all_hits / len(queries), 4)},
        "single_misses": all_misses,
        "sampled": {"misses": sampled_misses, "hits": sampled_hits},
        "llm_seconds_median": float(np.median([said[queries[n].query]["seconds"] for n in sample])),
    }
    for label, search in variants.items():
        fixed = lost = 0
        for n, text, vector in zip(sample, texts, intent_vectors, strict=True):
            now = found(search(n, text, vector), n)
            fixed += now and not before[n]
            lost += before[n] and not now
        net = fixed / max(sampled_misses, 1) * all_misses - lost / max(sampled_hits, 1) * all_hits
        result[label] = {
            "fixed": fixed,
            "lost": lost,
            "net_estimate": round(net, 1),
            "recall@5_estimate": round((all_hits + net) / len(queries), 4),
        }
        print(label, json.dumps(result[label]), flush=True)
    return result


# --- kinds -------------------------------------------------------------------------------------
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
VALUE_KINDS: dict[str, re.Pattern[str]] = {
    "date": re.compile(
        # 2023-03-01, 2023.10.10, 2023/3/1, 03/01/2023; March 1st, 1 March, the 4th of July;
        # weekdays and the days named relative to today
        r"\b\d{4}\s?[-./]\s?\d{1,2}\s?[-./]\s?\d{1,2}\b|\b\d{1,2}[-./]\d{1,2}[-./]\d{2,4}\b"
        rf"|\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?"
        rf"{_MONTH}\b|\b{_DAY}s?\b|\b(?:today|tomorrow|yesterday|tonight)\b"
        r"|\b(?:next|last|this)\s+week\b",
        re.IGNORECASE,
    ),
    "time": re.compile(
        r"\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)?(?!\d)|\b\d{1,2}\s?(?:am|pm)\b",
        re.IGNORECASE,
    ),
    "url": re.compile(r"\bhttps?://\S+|\bwww\.\S+\.\S+", re.IGNORECASE),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"),
}


def value_kinds(text: str) -> list[str]:
    """The kinds of values ``text`` carries and does not name itself ("date", "time", ...)."""
    said = set(re.findall(r"[a-z]+", text.lower()))
    return [k for k, pattern in VALUE_KINDS.items() if k not in said and pattern.search(text)]


KIND_VARIANTS: dict[str, Callable[[str], list[str]]] = {
    "every kind": value_kinds,
    "dates only": lambda text: [k for k in value_kinds(text) if k == "date"],
    "every kind, in each step's own search only": lambda text: (
        [] if split_steps(text)[0] else value_kinds(text)
    ),
}


def _with_kinds(find: Callable[[str], list[str]]) -> Callable[..., list[tuple[str, float]]]:
    """A ``lexical`` stage: the shipped :func:`toolrag.retrieval.index.bm25_scores` searching
    the query's words and ``find(query)``."""

    def bm25(index: ToolIndex, query: str, pool: int) -> list[tuple[str, float]]:
        return bm25_scores(index, " ".join([query, *find(query)]), pool)

    return bm25


def kinds(bench: Bench) -> dict[str, Any]:
    result = with_variants(bench, "lexical", {k: _with_kinds(v) for k, v in KIND_VARIANTS.items()})
    result["single_queries_with_a_kind"] = {
        k: sum(k in value_kinds(q.query) for q in bench.sets["single"]) for k in VALUE_KINDS
    }
    return result


def kinds_nestful() -> dict[str, Any]:
    """``kinds``'s variants on NESTFUL: :mod:`benchmarks.tool_retrieval_nestful` run once
    unchanged and once per variant (its indexes built with the variant's ``lexical`` stage) in
    this process; its R@5 / R@10 rows of `best` and `best+requests`."""
    from benchmarks import tool_retrieval_nestful

    out: dict[str, Any] = {}
    for label, variant in {"unchanged": None, **KIND_VARIANTS}.items():
        stages = Stages() if variant is None else Stages(lexical=_with_kinds(variant))
        path = ROOT / "runs" / f"ablation_kinds_nestful_{len(out)}.json"
        tool_retrieval_nestful.main(
            ["--strategies", "best", "--out", str(path),
             "--synthetic", str(ROOT / "benchmarks/records/synthetic_nestful.sqlite")],
            stages=stages,
        )  # fmt: skip
        rows = json.loads(path.read_text())["results"]
        out[label] = {
            pool: {
                r["strategy"]: {"recall@5": r["recall@5"], "recall@10": r["recall@10"]}
                for r in pool_rows
                if r["strategy"] in ("best", "best+requests")
            }
            for pool, pool_rows in rows.items()
        }
        print(label, json.dumps(out[label]), flush=True)
    return out


# --- seeds ---------------------------------------------------------------------------------------
TRANSLATIONS = ROOT / "benchmarks" / "records" / "translations_bfcl.sqlite"
SEEDS = range(5)


def seeds(bench: Bench) -> dict[str, Any]:
    """`best+requests` (single-call also with the recorded translations) with the query adapter
    fitted on other seeds of its held-out split and batch order; seed 0 is the shipped one."""
    index = bench.index
    shipped = index.adapter
    if shipped is None:
        raise SystemExit("seeds: the index has no query adapter (too few written requests)")
    owners = request_owners(index)
    translator, recorded = index.translator, QueryTranslator(TRANSLATIONS)
    rows: dict[str, Any] = {}
    try:
        for seed in SEEDS:
            adapter = fit_query_adapter(
                index._matrix, index._req_matrix, owners, shipped.key, seed=seed
            )
            index.adapter = adapter
            row: dict[str, Any] = {
                "holdout_top1": None
                if adapter is None
                else [round(adapter.holdout_before, 4), round(adapter.holdout_after, 4)],
                "multi": bench.best("multi"),
                "single": bench.best("single"),
            }
            index.translator = recorded
            row["single+translated"] = bench.best("single")
            index.translator = translator
            rows[f"seed {seed}"] = row
            print(f"seed {seed}", json.dumps(row), flush=True)
    finally:
        index.adapter, index.translator = shipped, translator
    r5 = [row["single+translated"]["recall@5"] for row in rows.values()]
    return {
        "seeds": rows,
        "single+translated recall@5": {
            "min": min(r5),
            "median": float(np.median(r5)),
            "mean": round(float(np.mean(r5)), 4),
            "max": max(r5),
        },
    }


ABLATIONS: dict[str, Callable[[Bench], dict[str, Any]]] = {
    "rerank": rerank,
    "values": values,
    "steps": steps,
    "vectors": vectors,
    "diversity": diversity,
    "finetune": finetune,
    "fusion": fusion,
    "intents": intents,
    "kinds": kinds,
    "seeds": seeds,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("ablation", choices=sorted(ABLATIONS))
    parser.add_argument(
        "--synthetic", type=Path, default=ROOT / "benchmarks/records/synthetic_bfcl.sqlite"
    )
    parser.add_argument(
        "--index-dir",
        type=Path,
        default=ROOT / "runs" / "bfcl" / "index_requests",
        help="The ToolIndex of tool_retrieval.py --synthetic (reused: nothing embedded again).",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--nestful",
        action="store_true",
        help="kinds: run its variants on NESTFUL too (about 45 minutes more).",
    )
    parser.add_argument(
        "--write-intents",
        type=int,
        default=0,
        help="intents: draw N more misses and 2N hits and record the configured LLM's "
        "restatements of them first.",
    )
    args = parser.parse_args()
    t0 = time.perf_counter()
    bench = Bench(args.synthetic, args.index_dir)
    result = {
        "benchmark": f"retrieval_ablations:{args.ablation}",
        "data": f"BFCL bfcl-eval=={bfcl.VERSION}",
        "embedding": embedding_name(Settings()),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "n_tools": len(bench.index),
        "n_queries": {name: len(qs) for name, qs in bench.sets.items()},
        **(
            intents(bench, args.write_intents)
            if args.ablation == "intents"
            else ABLATIONS[args.ablation](bench)
        ),
    }
    if args.ablation == "kinds" and args.nestful:
        result["nestful"] = kinds_nestful()
    result["seconds"] = round(time.perf_counter() - t0, 1)
    out = args.out or ROOT / "runs" / f"ablation_{args.ablation}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"JSON written to {out}")


if __name__ == "__main__":
    main()
