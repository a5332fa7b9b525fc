"""The retrieval gate on the agent: the sample toolbox's agent (the configured LLM, the local
model by default) on questions none of its tools can serve, without a gate and with
``TOOLRAG_TOOL_GATE``, one setup after the other in one process, over the same toolbox, the
same sample field API (in memory, started on 127.0.0.1) and the same questions.

Each setup answers every question through ``Toolbox.batch`` (the ``toolrag batch`` records, in
``runs/gate_agent/<setup>.jsonl``; a re-run resumes from them, ``--fresh`` starts over). Per
setup: how many questions the gate left without tools (``offered_none``, from the ToolIndex
alone), how many the agent answered without calling a tool, tool calls, calls of write,
delete or external tools (each one a side effect or a request for approval that the question
never asked for), seconds per question and prompt tokens.

    .venv/bin/python -m benchmarks.agent_gate [--gate 0.25]
        [--questions data/questions/no_tool.jsonl] [--fresh]

writes ``runs/agent_gate.json``. 0.25 is what ``toolrag eval gate --keep 0.98`` chooses on the
sample toolbox from ``data/questions/test.jsonl`` and ``no_tool.jsonl`` (see the README).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.results import result_name, write_result
from toolrag import Toolbox, load_settings
from toolrag.batch import load_batch_questions, read_records
from toolrag.evaluation import percentile
from toolrag.models import resolve_provider
from toolrag.sample import running_server

ROOT = Path(__file__).resolve().parents[1]


def summarize(toolbox: Toolbox, records: list[Any], offered_none: int) -> dict[str, Any]:
    effects = {c.name: c.side_effect for c in toolbox.cards()}
    seconds = [r.seconds for r in records]
    calls = [t for r in records for t in r.tools_called]
    return {
        "questions": len(records),
        "offered_none": offered_none,
        "answered_without_tools": sum(not r.tools_called for r in records),
        "tool_calls": len(calls),
        "side_effect_calls": sum(effects.get(t, "read") != "read" for t in calls),
        "failed": sum(not r.ok for r in records),
        "median_s": round(statistics.median(seconds), 2),
        "p95_s": round(percentile(seconds, 0.95), 2),
        "total_s": round(sum(seconds), 1),
        "prompt_tokens": sum(r.prompt_tokens for r in records),
        "median_prompt_tokens": statistics.median(r.prompt_tokens for r in records),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gate", type=float, default=0.25)
    parser.add_argument(
        "--questions", type=Path, default=ROOT / "data" / "questions" / "no_tool.jsonl"
    )
    parser.add_argument("--records", type=Path, default=ROOT / "runs" / "gate_agent")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "agent_gate.json")
    parser.add_argument("--fresh", action="store_true", help="Ignore earlier records.")
    args = parser.parse_args()
    questions = load_batch_questions(args.questions)
    args.records.mkdir(parents=True, exist_ok=True)
    base = load_settings()
    setups = {"no gate": None, f"gate {args.gate:g}": args.gate}
    results: dict[str, Any] = {}
    t0 = time.perf_counter()
    with running_server(base.data_dir) as url:
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        for name, gate in setups.items():
            settings = load_settings(tool_gate=gate)
            toolbox = Toolbox(settings)
            path = args.records / f"{name.replace(' ', '_')}.jsonl"
            if args.fresh:
                path.unlink(missing_ok=True)
            offered_none = sum(
                not toolbox.tool_index.retrieve(q.query, k=settings.tool_top_k, gate=gate)
                for q in questions
            )
            summary = toolbox.batch(questions, path)
            records = list(read_records(path).values())
            results[name] = summarize(toolbox, records, offered_none) | {
                "records": str(path.relative_to(ROOT)),
                "answered_this_run": summary.answered,
            }
            print(name, json.dumps(results[name]), flush=True)
    result = {
        "benchmark": "agent_gate",
        "questions": str(args.questions.relative_to(ROOT)),
        "llm": base.llm_model or resolve_provider(base),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.perf_counter() - t0, 1),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    write_result(
        result_name("agent_gate", gate=f"{args.gate:g}" if args.gate != 0.25 else ""), result
    )
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
