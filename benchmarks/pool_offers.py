"""What the agent is offered in a bigger pool: the agent benchmark's pool (the sample's tools
plus BFCL functions as distractors, ``benchmarks.agent.PoolToolbox``, seed 7) at 50 and 500
tools, with and without written requests for the distractors, on the sample's development
questions. No LLM: this measures the tool search and the gate the agent's first step gets.

Per pool and requests setting: the gate chosen (``Toolbox.gate``), and over the questions
with expected tools the share whose expected tools are all offered, whose first offered tool
is an expected one, and that the gate leaves with no tool; the distractors offered a
question; over the questions no tool serves, the share left with no tool. Beside it, in the
same run, plain LlamaIndex ``ObjectIndex`` over the same tools (top ``tool_top_k``, no gate).

"Without" is the benchmark's default pool: only the sample's 16 cards carry written requests
(``toolspecs/cards/requests.yaml``). "With" gives each distractor the requests the local model
wrote for BFCL's pool (``benchmarks/records/synthetic_bfcl.sqlite``), as a user's pool has them
once the background writer is done (``write_requests = "background"``, the default).

    .venv/bin/python -m benchmarks.pool_offers [--pools 50,500] [--sets test,fresh,no_tool]

writes ``benchmarks/results/pool_offers.json``. The unseen quarter is left out. A few minutes
on two cores (the 500-tool pools embed their cards).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.objects import ObjectIndex

from benchmarks.agent import BFCL_REQUESTS, ROOT, PoolToolbox, pick_distractors
from benchmarks.results import write_result
from toolrag import Settings, Toolbox
from toolrag.batch import Question, load_questions
from toolrag.sample import running_server


def offers(
    rows: list[tuple[Question, list[str]]], distractors: set[str]
) -> dict[str, float | None]:
    """The shares of :mod:`benchmarks.pool_offers` over ``rows`` (a question, the tools it
    was offered, best first)."""
    answerable = [(q, o) for q, o in rows if q.expected_tools]
    none_fits = [o for q, o in rows if q.no_tool]

    def share(hits: int, n: int) -> float | None:
        return round(hits / n, 4) if n else None

    return {
        "all_expected_offered": share(
            sum(set(q.expected_tools) <= set(o) for q, o in answerable), len(answerable)
        ),
        "first_offered_expected": share(
            sum(bool(o) and o[0] in q.expected_tools for q, o in answerable), len(answerable)
        ),
        "answerable_emptied": share(sum(not o for _, o in answerable), len(answerable)),
        "distractors_offered_mean": round(
            statistics.fmean(sum(t in distractors for t in o) for _, o in answerable), 3
        )
        if answerable
        else None,
        "no_tool_emptied": share(sum(not o for o in none_fits), len(none_fits)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", default="50,500")
    parser.add_argument("--sets", default="test,fresh,no_tool")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    state = Path(tempfile.mkdtemp(prefix="toolrag-pool-offers-"))
    settings = Settings(data_dir=ROOT / "data", state_dir=state, write_requests="off")
    sample = Toolbox(settings)
    if not sample.indexed():
        sample.index()
    sample_names = {t.metadata.get_name() for t in sample.tools()}
    questions = [
        q
        for qset in args.sets.split(",")
        if qset
        for q in load_questions(ROOT / "data" / "questions" / f"{qset}.jsonl")
        if q.no_tool or (q.expected_tools and set(q.expected_tools) <= sample_names)
    ]
    k = settings.tool_top_k
    pools: dict[str, Any] = {}
    with running_server(settings.data_dir) as url:
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        for size in [int(p) for p in args.pools.split(",") if p]:
            chosen = pick_distractors(sample, size, args.seed)
            names = {c.name for c in chosen}
            for label, requests in (("without", None), ("with", BFCL_REQUESTS)):
                # a state of its own: each pool's tool index and gate are built from scratch
                pool_settings = settings.model_copy(
                    update={"state_dir": Path(tempfile.mkdtemp(dir=state))}
                )
                tb = PoolToolbox(pool_settings, chosen, requests)
                ours = [
                    (q, [t.metadata.get_name() for t in tb.tool_retriever().retrieve(q.query)])
                    for q in questions
                ]
                row: dict[str, Any] = {
                    "tools": len(tb.tools()),
                    "cards_with_requests": sum(
                        bool(c.synthetic) for c in tb.tool_index.cards.values()
                    ),
                    "gate": tb.gate.model_dump(mode="json"),
                    "toolrag": offers(ours, names),
                }
                if label == "without":  # plain ObjectIndex indexes no requests: one run a pool
                    plain = ObjectIndex.from_objects(
                        tb.tools(), index_cls=VectorStoreIndex, embed_model=tb.embed
                    ).as_retriever(similarity_top_k=k)
                    theirs = [
                        (q, [t.metadata.get_name() for t in plain.retrieve(q.query)])
                        for q in questions
                    ]
                    row["objectindex"] = offers(theirs, names)
                pools[f"{size}_{label}_requests"] = row
                print(f"{size} tools, {label} distractor requests: {row['toolrag']}", flush=True)
    figures = {
        "benchmark": "pool_offers",
        "sets": args.sets,
        "questions": len(questions),
        "answerable": sum(bool(q.expected_tools) for q in questions),
        "no_tool": sum(q.no_tool for q in questions),
        "k": k,
        "distractor_seed": args.seed,
        "pools": pools,
    }
    write_result("pool_offers", figures, argv=argv)


if __name__ == "__main__":
    main()
