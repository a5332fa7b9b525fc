"""The README's main job as a result file: ``toolrag demo`` (index the sample, answer sample
questions with the agent on the configured LLM, score them strictly) run once, its report
written to ``benchmarks/results/demo.json``.

    python -m benchmarks.demo [--limit 8]
    python -m benchmarks.demo --report runs/demo.json   # record a report `toolrag demo` wrote
    python -m benchmarks.demo --name demo_x            # under another name (an experiment)

The demo answers questions of one setup only (toolrag's defaults); the baselines of the same
questions are in ``benchmarks/agent.py``'s result file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.results import ROOT, write_result


def figures_of(report: dict[str, Any]) -> dict[str, Any]:
    """The demo report's figures: counts, and per question what matched and how long it took."""
    results = report.get("results", [])
    seconds = sorted(float(r.get("seconds", 0.0)) for r in results)
    median = seconds[len(seconds) // 2] if seconds else None
    return {
        "when": report.get("when"),
        "n": report.get("n", len(results)),
        "matched": report.get("matched"),
        "tool_ok": report.get("tool_ok"),
        "median_seconds": round(median, 1) if median is not None else None,
        "llm": report.get("llm"),
        "questions": [
            {
                "id": r["id"],
                "matched": r["matched"],
                "tool_ok": r["tool_ok"],
                "tools_called": [s.get("tool") for s in r.get("trace", [])],
                "seconds": round(float(r.get("seconds", 0.0)), 1),
                "answer": str(r.get("answer", ""))[:400],
                "expected_answer": r.get("expected_answer", ""),
            }
            for r in results
        ],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=8, help="Questions the demo answers.")
    parser.add_argument(
        "--report", type=Path, help="Record this `toolrag demo` report instead of running it."
    )
    parser.add_argument("--name", default="demo", help="The result file's name.")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report_path = args.report
    if report_path is None:
        report_path = ROOT / "runs" / "demo.json"
        toolrag = Path(sys.executable).with_name("toolrag")
        subprocess.run(
            [str(toolrag), "demo", "--limit", str(args.limit), "--report", str(report_path)],
            cwd=ROOT,
            check=True,
        )
    report = json.loads(report_path.read_text())
    figures = figures_of(report)
    # the settings given in the environment (a demo run differs by them, not by its arguments)
    figures["env"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("TOOLRAG_")}
    write_result(
        args.name,
        figures,
        argv=sys.argv[1:] if argv is None else argv,
        seconds=time.perf_counter() - started if args.report is None else None,
    )


if __name__ == "__main__":
    main()
