"""Every retrieval strategy on every set, side by side with plain LlamaIndex, in one run and one
result file (issue 53's table).

Tool pools (Recall@k over the expected tools; ``objectindex-default`` is plain LlamaIndex
``ObjectIndex`` over ``FunctionTool``s, the baseline), no LLM-written requests anywhere:

- ``bfcl`` and ``bfcl-multi``: BFCL's single-call and multi-tool requests (:mod:`bfcl`);
- ``nestful``: NESTFUL's own pool and multi-step requests (:mod:`nestful`);
- ``openapi``: real REST operations, summaries as queries (:mod:`tool_pools`);
- ``networkx``: a library's functions as tools, docstring summaries as queries (held out until
  decision 0044 measured it once);
- ``skimage`` (held out): the same, from another library.

Document corpora (Recall@k over the expected documents; ``vectorstoreindex-default`` is plain
LlamaIndex ``VectorStoreIndex``, the baseline; ``hybrid-rrf`` is the content index's default,
``hybrid-auto`` its self-calibrated option; ``dense-whole`` and ``hybrid-whole`` the same with
chunks embedded whole, decision 0061): ``stdlib``,
``sqlalchemy``, ``scipy`` and ``sklearn`` (docstrings), ``sample`` (the sample's documents and
its own questions), ``readmes`` (long READMEs, another genre) and the ``docs_small`` sanity
fixture (:mod:`doc_retrieval`, :mod:`doc_corpora`).

BFCL, NESTFUL, ``openapi``, ``networkx``, ``stdlib``, ``sqlalchemy`` (held out until decision
0044 measured it once), ``sample``, ``scipy`` and ``readmes`` (held out until 1d131f0) are
development sets; ``skimage`` and ``sklearn`` are not tuned on. Writes
``benchmarks/results/retrieval_all.json`` and prints, per set, each strategy and the margins the
issue sets: ``best`` over ObjectIndex in R@5 (target +0.10), the default document search over
VectorStoreIndex in R@10 (target +0.10) and against BM25 and dense alone.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.retrieval_all [--set NAME ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import doc_retrieval
from benchmarks.datasets import bfcl, doc_corpora, nestful, tool_pools
from benchmarks.datasets.evalfiles import print_reports
from benchmarks.results import ROOT, result_name, write_result
from toolrag import Settings, make_embedding
from toolrag.cards import load_tool_list
from toolrag.content import DEFAULT_FUSION
from toolrag.evaluation import STRATEGIES, load_queries, run_tool_evals
from toolrag.models import embedding_name

TOOL_SETS = ("bfcl", "nestful", "openapi", "networkx", "skimage")
DOC_SETS = doc_retrieval.ALL
HELD = {tool_pools.HELD, doc_corpora.HELD}
BASELINE_TOOLS = "objectindex-default"
BASELINE_DOCS = "vectorstoreindex-default"
DEFAULT_DOCS = f"hybrid-{DEFAULT_FUSION}"  # the content index's default search


def tool_sets(name: str) -> tuple[Path, dict[str, Path]]:
    """The pool's tools file and its query files by set name."""
    runs = ROOT / "runs"
    if name == "bfcl":
        tools, single = bfcl.load(runs / "bfcl")
        return tools, {"bfcl": single, "bfcl-multi": bfcl.load_multi(runs / "bfcl")}
    if name == "nestful":
        tools, queries = nestful.load(runs / "nestful")
        return tools, {"nestful": queries}
    tools, queries = tool_pools.cached(name)
    return tools, {name: queries}


def margins_tools(rows: list[dict[str, Any]]) -> dict[str, float]:
    by = {r["strategy"]: r for r in rows}
    return {
        "best_minus_objectindex_r5": round(
            by["best"]["recall@5"] - by[BASELINE_TOOLS]["recall@5"], 4
        )
    }


def margins_docs(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    auto = rows[DEFAULT_DOCS]["recall@10"]
    return {
        "default_minus_vectorstoreindex_r10": round(auto - rows[BASELINE_DOCS]["recall@10"], 4),
        "default_minus_bm25_r10": round(auto - rows["bm25"]["recall@10"], 4),
        "default_minus_dense_r10": round(auto - rows["dense"]["recall@10"], 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--set", action="append", choices=(*TOOL_SETS, *DOC_SETS), help="default: every set"
    )
    args = parser.parse_args()
    chosen = args.set or [*TOOL_SETS, *DOC_SETS]
    embed = make_embedding(Settings())
    t0 = time.perf_counter()
    tools: dict[str, Any] = {}
    for name in (s for s in TOOL_SETS if s in chosen):
        tools_path, query_files = tool_sets(name)
        cards = load_tool_list(tools_path)
        sets = {key: load_queries(path, "expected_tools") for key, path in query_files.items()}
        with tempfile.TemporaryDirectory(prefix="toolrag-all-") as tmp:
            reports = run_tool_evals(cards, sets, STRATEGIES, embed, index_dir=Path(tmp))
        for key, rs in reports.items():
            rows = [r.as_json() for r in rs]
            tools[key] = {
                "n_tools": len(cards),
                "n_queries": rows[0]["n_queries"],
                "held": name in HELD,
                "strategies": rows,
                "margins": margins_tools(rows),
            }
            print_reports(f"{key}: {len(cards)} tools, {rows[0]['n_queries']} queries", rows)
            print(tools[key]["margins"])
    docs: dict[str, Any] = {}
    for name in (s for s in DOC_SETS if s in chosen):
        corpus = doc_retrieval.run_corpus(name, embed)
        corpus["held"] = name in HELD
        corpus["margins"] = margins_docs(corpus["strategies"])
        corpus["default"] = DEFAULT_DOCS
        docs[name] = corpus
        rows = [dict(r, strategy=s) for s, r in corpus["strategies"].items()]
        print_reports(f"{name}: {corpus['n_docs']} docs, {corpus['n_queries']} queries", rows)
        print(corpus["margins"])
    figures = {
        "embedding": embedding_name(Settings()),
        "seconds": round(time.perf_counter() - t0, 1),
        "tool_sets": tools,
        "doc_sets": docs,
    }
    partial = set(chosen) != {*TOOL_SETS, *DOC_SETS}
    write_result(result_name("retrieval_all", sets="-".join(chosen) if partial else ""), figures)


if __name__ == "__main__":
    main()
