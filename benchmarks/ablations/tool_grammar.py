"""The router's reply held to the offered tools' own schemas, against the decision's shape alone:
the same questions routed both ways, in one run, with the local model.

``Router(tool_grammar=True)`` (the default) gives llama.cpp a grammar in which each call names an
offered tool and gives it only its own arguments, of their types and listed values
(``toolrag.routing.call_schema``); ``tool_grammar=False`` is the grammar of the decision's shape
alone (``{"tool": string, "arguments": object}``), as before, with wrong calls found after the
reply and sent back for one repair round.

Sets (both development sets; ``benchmarks.route`` builds them):

- ``bfcl``: the first ``--limit`` (40) of the 200 drawn BFCL items (multiple, live_multiple and
  irrelevance mixed), the 200 items' functions as the pool;
- ``sample``: ``--limit`` of the sample's test questions whose tools are the sample's, spread
  evenly over it (the split is in order of kind).

Each set is routed ``dynamic`` (examples chosen per question, the default), first one way then
the other (the order alternates between sets, so a slower stretch of the shared cores does not
fall on one side only). Decisions are kept in ``runs/route/tool_grammar_<set>.jsonl`` (a
stopped run resumes; ``--fresh`` starts over).

Reported per set and grammar: tool precision and recall, no-tool accuracy, argument accuracy,
the share of valid decisions, how many needed a repair round, and the median seconds a decision
took (the repair round included).

    python -m benchmarks.ablations.tool_grammar [--limit 40]

Writes ``benchmarks/results/tool_grammar.json``.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.results import result_name, write_result
from benchmarks.route import bfcl_set, sample_set
from toolrag import Settings, Toolbox
from toolrag.evaluation import RouteReport, run_route_eval

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="bfcl,sample")
    parser.add_argument("--limit", type=int, default=40, help="Questions routed per set.")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "route")
    parser.add_argument("--fresh", action="store_true", help="Ignore earlier records.")
    args = parser.parse_args()

    tb = Toolbox(Settings())
    err = Console(stderr=True)
    t0 = time.perf_counter()
    sets: dict[str, Any] = {}
    for n, name in enumerate(args.sets.split(",")):
        cards, queries, examples = sample_set(tb) if name == "sample" else bfcl_set(200, 0)
        if args.limit and name == "bfcl":  # drawn in a shuffled order: the first N are mixed
            queries = queries[: args.limit]
        elif args.limit:  # the test split is in order of kind: spread over it
            step = len(queries) / min(args.limit, len(queries))
            queries = [queries[int(i * step)] for i in range(min(args.limit, len(queries)))]
        records = args.out / f"tool_grammar_{name}.jsonl"
        records.parent.mkdir(parents=True, exist_ok=True)
        if args.fresh:
            records.unlink(missing_ok=True)
        reports: dict[str, RouteReport] = {}
        order = [False, True] if n % 2 == 0 else [True, False]
        for grammar in order:
            err.print(f"{name}: {len(queries)} queries, {len(cards)} tools, tool grammar {grammar}")
            with tempfile.TemporaryDirectory(prefix="toolrag-grammar-") as tmp:
                (report,) = run_route_eval(
                    cards, queries, ["dynamic"], tb.llm, tb.embed, Path(tmp), examples=examples,
                    records=records, tool_grammar=grammar,
                    on_progress=lambda done, total: err.print(f"  {done}/{total}", end="\r"),
                )  # fmt: skip
            reports["tools" if grammar else "shape"] = report
        sets[name] = {
            "n_queries": len(queries),
            "n_tools": len(cards),
            "order": ["tools" if g else "shape" for g in order],
            "reports": {k: _figures(r) for k, r in reports.items()},
        }

    payload = {
        "benchmark": "tool_grammar",
        "llm": type(tb.llm).__name__,
        "model": tb.llm.metadata.model_name,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "examples": "dynamic",
        "k_tools": 5,
        "wall_s_this_run": round(time.perf_counter() - t0, 1),
        "sets": sets,
    }
    write_result(result_name("tool_grammar", limit=0 if args.limit == 40 else args.limit), payload)
    table = Table(
        "set", "grammar", "precision", "recall", "no-tool", "arg acc", "valid", "repaired", "p50 s"
    )
    for name, s in sets.items():
        for kind, f in s["reports"].items():
            table.add_row(
                name, kind, *(str(f[k]) for k in ("precision", "recall", "no_tool_accuracy")),
                str(f["argument_accuracy"]), str(f["valid_rate"]), str(f["repaired"]),
                str(f["p50_s"]),
            )  # fmt: skip
    Console().print(table)


FIGURES = (
    "n_queries", "precision", "recall", "no_tool_accuracy", "n_no_tool",
    "argument_accuracy", "n_argument_checks", "valid_rate", "repaired", "p50_s",
)  # fmt: skip


def _figures(report: RouteReport) -> dict[str, Any]:
    return {k: getattr(report, k) for k in FIGURES}


if __name__ == "__main__":
    main()
