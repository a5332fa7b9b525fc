"""The automatic "no tool fits" gate on the sample toolbox: the gate ``tool_gate = "auto"`` chooses
from the pool's written requests (``toolspecs/cards/requests.yaml``), and what it does to the
labelled questions, beside no gate (the baseline: every question offered tools) and fixed gates.

For each question set it reports the share of questions with an expected tool that keep their
tools (any of the top ``tool_top_k`` reaching the gate) and the share of questions no tool
serves that the gate leaves without tools. The gate is chosen without these questions; they
only measure it. The unseen quarter is left out.

    .venv/bin/python -m benchmarks.gate_auto [--sets test,fresh,no_tool]

No LLM: about a minute on two cores.
"""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks.results import ROOT, write_result
from toolrag import Settings, Toolbox
from toolrag.batch import load_questions

FIXED = (0.20, 0.25, 0.30, 0.35)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="test,fresh,no_tool")
    args = parser.parse_args(argv)
    tb = Toolbox(Settings(data_dir=ROOT / "data", llm_provider="scripted"))
    if not tb.indexed():
        tb.index()
    choice = tb.gate
    index, k = tb.tool_index, tb.settings.tool_top_k

    def best(query: str) -> float:
        hits = index.retrieve(query, k=k, translate=False)
        return max((h.similarity for h in hits if h.similarity is not None), default=-1.0)

    gates: dict[str, float | None] = {"none": None, "auto": choice.gate}
    gates |= {f"{g:.2f}": g for g in FIXED}
    sets: dict[str, Any] = {}
    for name in [s for s in args.sets.split(",") if s]:
        questions = load_questions(ROOT / "data" / "questions" / f"{name}.jsonl")
        answerable = [best(q.query) for q in questions if q.expected_tools]
        none_fits = [best(q.query) for q in questions if q.no_tool]
        rows = {}
        for label, gate in gates.items():
            rows[label] = {
                "gate": gate,
                "keep_tools": round(sum(gate is None or b >= gate for b in answerable)
                                    / len(answerable), 4) if answerable else None,
                "no_tool_emptied": round(sum(gate is not None and b < gate for b in none_fits)
                                         / len(none_fits), 4) if none_fits else None,
            }  # fmt: skip
        sets[name] = {"answerable": len(answerable), "no_tool": len(none_fits), "gates": rows}
    figures = {"chosen": choice.model_dump(), "k": k, "sets": sets}
    for name, data in sets.items():
        auto = data["gates"]["auto"]
        kept, emptied = auto["keep_tools"], auto["no_tool_emptied"]
        print(
            f"{name}: auto gate {choice.gate}: keeps tools for {kept} of {data['answerable']}, "
            f"empties {emptied} of {data['no_tool']}"
        )
    write_result("gate_auto", figures, argv=argv)


if __name__ == "__main__":
    main()
