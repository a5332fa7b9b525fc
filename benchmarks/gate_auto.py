"""The automatic "no tool fits" gate on the sample toolbox: the gate ``tool_gate = "auto"`` chooses
from the pool's written requests (``toolspecs/cards/requests.yaml``) and the off-topic reference
requests, and what it does to the labelled questions, beside no gate (the baseline: every
question offered tools), the cosine gate alone chosen from the same requests (``auto-cosine``,
the default before the evidence gate) and fixed cosine gates.

For each question set it reports the share of questions with an expected tool that keep their
tools (any of the top ``tool_top_k`` reaching the gate) and the share of questions no tool
serves that the gate leaves without tools. The gate is chosen without these questions; they
only measure it. The unseen quarter is left out.

    .venv/bin/python -m benchmarks.gate_auto [--sets test,fresh,no_tool]

``--pools nestful,bfcl`` (the default) also chooses both gates for those public pools from
their own written requests (``benchmarks/records/synthetic_*.sqlite``) and reports the share of
their real requests that keep their tools and of the sample's no-tool questions (off-topic
there) that lose them.

No LLM: a minute for the sample, several more per public pool on two cores.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.datasets import bfcl, nestful
from benchmarks.results import ROOT, write_result
from toolrag import Settings, Toolbox
from toolrag.batch import load_questions
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.models import make_embedding
from toolrag.retrieval import EvidenceGate, Gate, ToolIndex, choose_gate

FIXED = (0.20, 0.25, 0.30, 0.35)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="test,fresh,no_tool")
    parser.add_argument("--pools", default="nestful,bfcl", help="Public pools to check too.")
    args = parser.parse_args(argv)
    tb = Toolbox(Settings(data_dir=ROOT / "data", llm_provider="scripted"))
    if not tb.indexed():
        tb.index()
    choice = tb.gate
    index, k = tb.tool_index, tb.settings.tool_top_k

    def offered(query: str, gate: Gate | None) -> bool:
        return bool(index.retrieve(query, k=k, translate=False, gate=gate))

    gates: dict[str, Gate | None] = {"none": None, "auto": choice.rule()}
    gates |= {"auto-cosine": choice.gate} | {f"{g:.2f}": g for g in FIXED}
    sets: dict[str, Any] = {}
    for name in [s for s in args.sets.split(",") if s]:
        questions = load_questions(ROOT / "data" / "questions" / f"{name}.jsonl")
        answerable = [q.query for q in questions if q.expected_tools]
        none_fits = [q.query for q in questions if q.no_tool]
        rows = {}
        for label, gate in gates.items():
            rows[label] = {
                "gate": gate if not isinstance(gate, EvidenceGate) else "evidence",
                "keep_tools": round(sum(offered(q, gate) for q in answerable)
                                    / len(answerable), 4) if answerable else None,
                "no_tool_emptied": round(sum(not offered(q, gate) for q in none_fits)
                                         / len(none_fits), 4) if none_fits else None,
            }  # fmt: skip
        sets[name] = {"answerable": len(answerable), "no_tool": len(none_fits), "gates": rows}
    figures = {"chosen": choice.model_dump(), "k": k, "sets": sets}
    for name, data in sets.items():
        auto = data["gates"]["auto"]
        kept, emptied = auto["keep_tools"], auto["no_tool_emptied"]
        cosine = data["gates"]["auto-cosine"]
        print(
            f"{name}: auto gate: keeps tools for {kept} of {data['answerable']}, "
            f"empties {emptied} of {data['no_tool']} (cosine gate {choice.gate} alone: "
            f"{cosine['keep_tools']}, {cosine['no_tool_emptied']})"
        )
    figures["pools"] = {name: pool_figures(name, k) for name in POOLS if name in args.pools}
    for name, data in figures["pools"].items():
        auto, cosine = data["gates"]["auto"], data["gates"]["auto-cosine"]
        print(
            f"{name}: auto gate keeps tools for {auto['keep_tools']} of {data['answerable']} "
            f"real requests and empties {auto['no_tool_emptied']} of {data['no_tool']} sample "
            f"questions no tool serves (cosine gate {cosine['gate']} alone: "
            f"{cosine['keep_tools']}, {cosine['no_tool_emptied']})"
        )
    write_result("gate_auto", figures, argv=argv)


POOLS = {
    "nestful": (nestful.load, ROOT / "benchmarks" / "records" / "synthetic_nestful.sqlite"),
    "bfcl": (bfcl.load, ROOT / "benchmarks" / "records" / "synthetic_bfcl.sqlite"),
}
POOL_QUESTIONS = 400  # real requests measured per pool, taken evenly


def pool_figures(name: str, k: int) -> dict[str, Any]:
    """The gates chosen for a public pool from its own written requests, on its real requests
    (each has a tool, so each should keep its tools) and on the sample's questions no tool
    serves (off-topic for that pool: each should lose them)."""
    load, synthetic = POOLS[name]
    tools_path, queries_path = load(ROOT / "runs" / name)
    cards = SyntheticQueries(synthetic).augment(load_tool_list(tools_path), by_name=True)
    with tempfile.TemporaryDirectory(prefix=f"toolrag-gate-{name}-") as tmp:
        index = ToolIndex(Path(tmp), make_embedding(Settings()))
        index.sync(cards)
        choice = choose_gate(index, k=k)
        real = [json.loads(x)["query"] for x in queries_path.read_text().splitlines() if x]
        real = real[:: max(1, len(real) // POOL_QUESTIONS)][:POOL_QUESTIONS]
        none_fits = [
            q.query
            for qset in ("no_tool", "fresh", "test")
            for q in load_questions(ROOT / "data" / "questions" / f"{qset}.jsonl")
            if q.no_tool
        ]
        gates = {"none": None, "auto": choice.rule(), "auto-cosine": choice.gate}
        rows = {}
        for label, gate in gates.items():
            kept = [bool(index.retrieve(q, k=k, translate=False, gate=gate)) for q in real]
            emptied = [not index.retrieve(q, k=k, translate=False, gate=gate) for q in none_fits]
            rows[label] = {
                "gate": gate if not isinstance(gate, EvidenceGate) else "evidence",
                "keep_tools": round(sum(kept) / len(kept), 4),
                "no_tool_emptied": round(sum(emptied) / len(emptied), 4),
            }
    return {
        "chosen": choice.model_dump(mode="json"),
        "answerable": len(real),
        "no_tool": len(none_fits),
        "gates": rows,
    }


if __name__ == "__main__":
    main()
