"""Tool retrieval on BFCL: every strategy side by side in one process, plain LlamaIndex
ObjectIndex first, on the single-call queries and on the multi-tool queries (two or more
distinct functions per request; Recall@k counts every expected tool). Writes JSON and prints a
table for each set.

    .venv/bin/python -m benchmarks.tool_retrieval [--limit N] [--out runs/tool_retrieval.json]
        [--synthetic benchmarks/records/synthetic_bfcl.sqlite]

``--synthetic`` adds ``dense+requests`` and ``best+requests``: the same strategies over the cards
with the requests an LLM wrote for them (the local model's are in
``benchmarks/records/synthetic_bfcl.sqlite``; ``toolrag tools synth --tools runs/bfcl/tools.json``
writes them again), one vector per request beside each card's document, in a separate index,
which also learns its query adapter from them; the JSON says how many cards have requests and
how the adapter did on the requests it held out. ``--requests-per-card N`` keeps the first N of
each card's requests (the ablation of how many to write).

With ``--synthetic`` there is also ``best+requests+translated``: ``best+requests`` where a
question not in English (another alphabet, or another language by the language identifier) is
searched in the English the local model translated it into (:mod:`toolrag.retrieval.translation`).
The
translations are replayed from ``benchmarks/records/translations_bfcl.sqlite``;
``--translate-live`` has the configured LLM translate the questions the record lacks (and
records them). Its p50/p95 are the search's: the LLM's seconds per translation, as recorded,
are in the JSON (``translation``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.datasets import bfcl
from benchmarks.datasets.evalfiles import print_reports
from benchmarks.results import result_name, write_result
from toolrag import Settings
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.evaluation import (
    STRATEGIES,
    RetrievalQuery,
    RetrievalReport,
    evaluate,
    load_queries,
    run_tool_evals,
)
from toolrag.models import embedding_name, make_embedding
from toolrag.retrieval import QueryTranslator, ToolIndex, needs_translation

ROOT = Path(__file__).resolve().parents[1]
# the record of LLM-written requests the committed result uses
SYNTHETIC = ROOT / "benchmarks" / "records" / "synthetic_bfcl.sqlite"


def translated_run(
    index: ToolIndex,
    sets: dict[str, list[RetrievalQuery]],
    reports: dict[str, list[RetrievalReport]],
    n_tools: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """``best+requests+translated`` on every query set, appended to ``reports``; returns what
    the JSON says about the translations."""
    llm = None
    if args.translate_live:
        from toolrag.models import make_llm

        llm = make_llm(Settings())
    translator = QueryTranslator(args.translations, llm)
    index.translator = translator

    def search(query: str, k: int) -> list[str]:
        return [h.name for h in index.retrieve(query, k=k, strategy="best")]

    for name, queries in sets.items():
        reports[name].append(evaluate("best+requests+translated", n_tools, queries, search))
    index.translator = None
    seconds = translator.seconds()
    return {
        "record": str(args.translations.relative_to(ROOT))
        if args.translations.is_relative_to(ROOT)
        else str(args.translations),
        "questions_translated": {
            name: sum(needs_translation(q.query) for q in qs) for name, qs in sets.items()
        },
        "missing_from_record": translator.missing,
        "llm_seconds_median": round(statistics.median(seconds), 2) if seconds else None,
        "llm_seconds_max": round(max(seconds), 2) if seconds else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "tool_retrieval.json")
    parser.add_argument("--limit", type=int, default=0, help="Use only the first N queries.")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument(
        "--index-dir",
        type=Path,
        default=ROOT / "runs" / "bfcl" / "index",
        help="Persistent ToolIndex: re-runs embed only changed cards.",
    )
    parser.add_argument(
        "--synthetic", type=Path, default=None, help="synthetic.sqlite of `toolrag tools synth`."
    )
    parser.add_argument(
        "--requests-per-card",
        type=int,
        default=0,
        help="With --synthetic, index at most the first N requests of each card (0: all).",
    )
    parser.add_argument(
        "--translations",
        type=Path,
        default=ROOT / "benchmarks" / "records" / "translations_bfcl.sqlite",
        help="With --synthetic: the recorded translations best+requests+translated replays.",
    )
    parser.add_argument(
        "--translate-live",
        action="store_true",
        help="Translate the questions the record lacks with the configured LLM, and record them.",
    )
    args = parser.parse_args()
    tools_path, queries_path = bfcl.load(ROOT / "runs" / "bfcl")
    cards = load_tool_list(tools_path)
    sets = {
        "single": load_queries(queries_path, "expected_tools"),
        "multi": load_queries(bfcl.load_multi(ROOT / "runs" / "bfcl"), "expected_tools"),
    }
    if args.limit:
        sets = {name: qs[: args.limit] for name, qs in sets.items()}
    embed = make_embedding(Settings())
    t0 = time.perf_counter()
    reports = run_tool_evals(
        cards, sets, args.strategies.split(","), embed, index_dir=args.index_dir
    )
    covered = adapter = requests = translation = None
    if args.synthetic is not None:
        augmented = SyntheticQueries(args.synthetic).augment(cards, by_name=True)
        if args.requests_per_card:
            keep = args.requests_per_card
            augmented = [c.model_copy(update={"synthetic": c.synthetic[:keep]}) for c in augmented]
        covered = sum(bool(c.synthetic) for c in augmented)
        requests = sum(len(c.synthetic) for c in augmented)
        index_dir = args.index_dir.with_name(args.index_dir.name + "_requests")
        more = run_tool_evals(augmented, sets, ["dense", "best"], embed, index_dir=index_dir)
        for name, extra in more.items():
            for report in extra:
                report.strategy = f"{report.strategy}+requests"
                reports[name].append(report)
        index = ToolIndex(index_dir, embed)
        index.sync(augmented)  # reopens: nothing embedded or fitted again
        if index.adapter is not None:
            adapter = {
                "holdout_top1_identity": index.adapter.holdout_before,
                "holdout_top1_adapted": index.adapter.holdout_after,
                "epochs": index.adapter.epochs,
            }
        if "best" in args.strategies.split(","):
            translation = translated_run(index, sets, reports, len(cards), args)
    results = {name: [r.as_json() for r in rs] for name, rs in reports.items()}
    result = {
        "benchmark": "tool_retrieval",
        "data": f"BFCL bfcl-eval=={bfcl.VERSION}",
        "embedding": embedding_name(Settings()),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.perf_counter() - t0, 1),
        "cards_with_requests": covered,
        "requests": requests,
        "requests_per_card_cap": args.requests_per_card or None,
        "query_adapter": adapter,
        "translation": translation,
        "results": results["single"],
        "results_multi_tool": results["multi"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    shipped = ",".join(STRATEGIES)
    name = result_name(
        "tool_retrieval",
        limit=args.limit,
        strategies=args.strategies if args.strategies != shipped else "",
        norequests=args.synthetic is None,
        requests=args.synthetic is not None
        and args.synthetic.resolve() != SYNTHETIC
        and args.synthetic.stem,
        per_card=args.requests_per_card,
    )
    write_result(name, result)
    titles = {"single": "single-call queries", "multi": "multi-tool queries (every tool counted)"}
    for name, rows in results.items():
        print_reports(
            f"BFCL tool retrieval, {titles[name]}: {len(cards)} tools, "
            f"{rows[0]['n_queries']} queries",
            rows,
        )
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
