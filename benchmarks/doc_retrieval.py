"""Document retrieval on corpora nobody here tuned for: plain VectorStoreIndex, dense, BM25,
plain RRF hybrid and the self-calibrated hybrid (weights chosen per index from its own chunks),
through the ``toolrag eval docs`` code path (a rows collection in LanceDB); ``dense-whole`` and
``hybrid-whole`` search a second index whose chunks are embedded whole, as windows the model
reads and their mean (``chunking.vectors: whole``, decision 0061).

Corpora: ``benchmarks.datasets.doc_corpora`` (``stdlib``, ``sqlalchemy``, ``scipy``, the long
READMEs, ``readmes`` (held out until 1d131f0), and the sample's own documents and questions,
``sample``, for development; ``sklearn`` held out until the end) and
the hand-computed fixture ``tests/fixtures/docs_small.jsonl`` as a sanity set. Writes
benchmarks/results/doc_retrieval.json.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.doc_retrieval [--corpus NAME ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchmarks.datasets import doc_corpora
from benchmarks.results import ROOT, result_name, write_result
from toolrag import Settings, make_embedding
from toolrag.evaluation import load_queries, run_docs_eval

STRATEGIES = (
    "vectorstoreindex-default",
    "dense",
    "bm25",
    "hybrid-rrf",
    "hybrid-auto",
    "dense-whole",  # chunks embedded whole, from windows (decision 0061: not the default)
    "hybrid-whole",
)
FIXTURES = ROOT / "tests" / "fixtures"
SANITY = "docs_small"
ALL = (*doc_corpora.CORPORA, SANITY)


def corpus_files(name: str) -> tuple[Path, Path]:
    if name == SANITY:
        return FIXTURES / "docs_small.jsonl", FIXTURES / "doc_queries_small.jsonl"
    return doc_corpora.cached(name)


def run_corpus(name: str, embed: Any) -> dict[str, Any]:
    docs, queries_path = corpus_files(name)
    queries = load_queries(queries_path, "expected_docs")
    chosen: dict[str, Any] = {}

    def on_indexed(index: Any) -> None:  # weights chosen before any timed search
        chosen.update(index.fusion_weights().model_dump())

    reports = run_docs_eval(docs, queries, STRATEGIES, embed, on_indexed=on_indexed)
    rows = {r.strategy: r.as_json("n_docs") for r in reports}
    first = next(iter(rows.values()))
    return {
        "n_docs": first["n_docs"],
        "n_queries": first["n_queries"],
        "held": name == doc_corpora.HELD,
        "weights": chosen,
        "strategies": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=ALL, help="default: all")
    args = parser.parse_args()
    names = args.corpus or list(ALL)
    embed = make_embedding(Settings())
    figures = {"corpora": {name: run_corpus(name, embed) for name in names}}
    write_result(result_name("doc_retrieval", partial=set(names) != set(ALL)), figures)
    for name, corpus in figures["corpora"].items():
        w = corpus["weights"]
        print(f"{name}: {corpus['n_docs']} docs, {corpus['n_queries']} queries, weights {w}")
        for strategy, r in corpus["strategies"].items():
            print(
                f"  {strategy:26} R@1 {r['recall@1']:.3f} R@5 {r['recall@5']:.3f} "
                f"R@10 {r['recall@10']:.3f} MRR {r['mrr']:.3f} nDCG@10 {r['ndcg@10']:.3f} "
                f"p50 {r['p50_ms']:.1f} ms"
            )


if __name__ == "__main__":
    main()
