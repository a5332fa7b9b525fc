"""Where a content index's fusion pseudo-queries come from (decision 0039, then 0056): the first
sentence of documents' first chunks (``first``, the rule until 0056), a sentence of any chunk
(``any``), or half of each (``mixed``).

Each corpus is indexed once as ``toolrag eval docs`` indexes it (a rows collection, the default
chunking); then, for each source, the weights are chosen again from that source's
pseudo-queries and the hybrid search is scored on the corpus's real queries. Dense, BM25 and
plain RRF are scored once beside them. The ``readmes`` corpus runs only when named: it was held
out until measured once at 1d131f0 (decision 0056), and a rule checked on it since is no longer
measured on unseen data.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.ablations.pseudo_queries \
        [--corpus stdlib --corpus sqlalchemy --corpus sample] [--margin-se 0]

Writes ``benchmarks/results/pseudo_queries.json`` (``pseudo_queries_margin_se0.json`` with
``--margin-se 0``).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any, get_args

from benchmarks.datasets import doc_corpora
from benchmarks.results import result_name, write_result
from toolrag import InputError, Settings, make_embedding
from toolrag.content import (
    MARGIN_SE,
    PSEUDO_QUERY_SOURCE,
    CollectionIndex,
    PseudoQuerySource,
    calibrate,
)
from toolrag.evaluation import CHUNKS_PER_DOC, document_collection, evaluate, load_queries

# measured once, held out, at 1d131f0 (retrieval_all); a set that later rules were checked on
SEEN_ONCE = ("readmes",)
DEV = tuple(c for c in doc_corpora.CORPORA if c not in (doc_corpora.HELD, *SEEN_ONCE))
SOURCES: tuple[str, ...] = get_args(PseudoQuerySource)


def _row(report: Any) -> dict[str, float]:
    js = report.as_json("n_docs")
    return {k: js[k] for k in ("recall@1", "recall@5", "recall@10", "mrr")}


def _distinct(ids: list[str], k: int) -> list[str]:
    return list(dict.fromkeys(ids))[:k]


def run_corpus(name: str, embed: Any, margin_se: float) -> dict[str, Any]:
    docs, queries_path = doc_corpora.cached(name)
    queries = load_queries(queries_path, "expected_docs")
    spec = document_collection(docs)
    out: dict[str, Any] = {"n_queries": len(queries), "strategies": {}, "sources": {}}
    with tempfile.TemporaryDirectory(prefix="toolrag-pq-") as tmp:
        index = CollectionIndex(Path(tmp), spec, embed)
        report = index.sync(index.loader(docs.parent))
        if report.errors:
            raise InputError(report.errors[0])
        out["n_docs"] = len({r["doc_id"] for r in index.table().to_arrow().to_pylist()})

        def scored(strategy: str, mode: str, fusion: str | None = None) -> dict[str, float]:
            def search(query: str, k: int) -> list[str]:
                hits = index.search(query, k=k * CHUNKS_PER_DOC, mode=mode, fusion=fusion)  # type: ignore[arg-type]
                return _distinct([h.doc_id for h in hits], k)

            return _row(evaluate(strategy, out["n_docs"], queries, search))

        for strategy, mode, fusion in (
            ("dense", "dense", None),
            ("bm25", "bm25", None),
            ("hybrid-rrf", "hybrid", "rrf"),
        ):
            out["strategies"][strategy] = scored(strategy, mode, fusion)
        version = int(index.table().version)
        for source in SOURCES:
            weights = calibrate(
                index.table(),
                embed,
                index._dense,
                index._fts,
                source=source,  # type: ignore[arg-type]
                margin_se=margin_se,
            )
            index._weights = (version, weights)
            out["sources"][source] = {
                "weights": weights.model_dump(),
                **scored(f"hybrid-auto-{source}", "hybrid", "auto"),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus",
        action="append",
        choices=(*DEV, *SEEN_ONCE),
        help="default: the development corpora; readmes was held out until it was measured "
        "once at 1d131f0, and is only run when named",
    )
    parser.add_argument(
        "--margin-se",
        default=None,
        help="standard errors a weighting must beat plain RRF by (default: the shipped "
        f"{MARGIN_SE}; 0: the best mean wins, the rule before decision 0056)",
    )
    args = parser.parse_args()
    names = args.corpus or list(DEV)
    margin_se = MARGIN_SE if args.margin_se is None else float(args.margin_se)
    embed = make_embedding(Settings())
    figures = {
        "shipped": PSEUDO_QUERY_SOURCE,
        "margin_se": margin_se,
        "corpora": {name: run_corpus(name, embed, margin_se) for name in names},
    }
    name = result_name(
        "pseudo_queries",
        partial=set(names) - set(SEEN_ONCE) != set(DEV),
        margin_se=args.margin_se or "",
        seen=bool(set(names) & set(SEEN_ONCE)),
    )
    write_result(name, figures)
    for name, corpus in figures["corpora"].items():
        print(f"{name}: {corpus['n_docs']} docs, {corpus['n_queries']} queries")
        rows = {**corpus["strategies"], **{f"auto, {k}": v for k, v in corpus["sources"].items()}}
        for label, r in rows.items():
            w = r.get("weights")
            extra = f"  weights {w['dense']}/{w['bm25']}" if w else ""
            print(
                f"  {label:14} R@1 {r['recall@1']:.3f} R@10 {r['recall@10']:.3f} "
                f"MRR {r['mrr']:.3f}{extra}"
            )


if __name__ == "__main__":
    main()
