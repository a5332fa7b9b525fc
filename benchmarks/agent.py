"""Agent benchmark: three ways to give a ReAct agent 50 tools, on the sample test split, with the
local model, in one process over the same tools, guard and LLM.

The pool is the sample domain's tools plus BFCL functions as distractors (fixed seed), 50 in all.
A distractor is a real tool in the guard whose call reports that it is not connected to any data
(the BFCL functions have no backend); calling one is a wrong tool choice.

Setups, each over every selected question, one after the other:

- ``all_tools``: plain LlamaIndex ``ReActAgent(tools=<all 50>)``, stock prompt formatter;
- ``objectindex``: plain LlamaIndex ``ReActAgent(tool_retriever=ObjectIndex.from_objects(<50>)
  .as_retriever(similarity_top_k=tool_top_k))``, stock prompt formatter;
- ``toolrag``: toolrag's ``router+react`` mode: the ToolIndex retrieves, the few-shot router
  makes the first calls, the agent (compact prompt, repair turns) answers.

The baselines run through the same ``run_agent`` loop (trace, graceful stop at the cap, loop
stop) without toolrag's repair turns. Per question: answer accuracy (the expected keywords in
the answer), tool accuracy (every expected tool called), distractor calls, tool calls, LLM calls,
seconds, prompt tokens. Each setup first answers one untimed warm-up question (``WARMUP``).
Records are appended to ``runs/agent/records.jsonl`` as they come, so an
interrupted run resumes where it stopped (``--fresh`` starts over).

    .venv/bin/python -m benchmarks.agent [--limit N] [--setups all_tools,objectindex,toolrag]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.objects import ObjectIndex
from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl
from benchmarks.results import result_name, write_result
from toolrag import Settings, Toolbox
from toolrag.agent.loop import SYSTEM_PROMPT, Answer, run_agent
from toolrag.batch.questions import Question, answer_matches, load_questions
from toolrag.cards.card import ToolCard, cards_from_tools, load_tool_list
from toolrag.evaluation.baselines import _schema_model
from toolrag.guard.function_tools import RunState, guarded_tools
from toolrag.retrieval.index import ToolIndex
from toolrag.sample.demo import pick_questions
from toolrag.sample.field_api import running_server
from toolrag.tools.result import ErrorCode, ToolResult

ROOT = Path(__file__).resolve().parents[1]
SETUPS = ("all_tools", "objectindex", "toolrag")


def distractor(card: ToolCard) -> FunctionTool:
    """A BFCL function as a tool: its name, description and schema; no data behind it."""

    def call(**_: Any) -> ToolResult:
        return ToolResult.fail(
            ErrorCode.NOT_FOUND,
            f"{card.name} is not connected to any data source in this deployment.",
            suggestion="Use another tool.",
            recoverable=False,
        )

    return FunctionTool(
        fn=call,
        metadata=ToolMetadata(
            name=card.name, description=card.description, fn_schema=_schema_model(card)
        ),
    )


class PoolToolbox(Toolbox):
    """The sample toolbox plus distractor tools (guarded and indexed like the others)."""

    def __init__(self, settings: Settings, distractors: Sequence[ToolCard]) -> None:
        super().__init__(settings)
        self._distractors = [distractor(c) for c in distractors]

    def _spec_tools(self) -> list[FunctionTool]:
        return [*super()._spec_tools(), *self._distractors]

    @cached_property
    def tool_index(self) -> ToolIndex:
        index = ToolIndex(self.settings.state_dir / "toolindex", self.embed, table="tools_pool")
        index.sync(self.cards())
        return index


def plain_agent(tb: Toolbox, tools: Sequence[BaseTool] = (), retriever: Any = None) -> ReActAgent:
    """Stock LlamaIndex ReActAgent (default formatter), the same system prompt and LLM."""
    return ReActAgent(
        name="baseline",
        description="Answers questions with tools.",
        tools=list(tools) or None,
        tool_retriever=retriever,
        llm=tb.llm,
        system_prompt=SYSTEM_PROMPT,
        streaming=False,
        early_stopping_method="generate",
    )


class Runner:
    def __init__(self, tb: PoolToolbox) -> None:
        self.tb = tb
        self.run = RunState()
        self.tools = guarded_tools(tb.guard, tb.tools(), self.run)
        tb.settings.agent_mode = "router+react"  # the toolrag setup

    @cached_property
    def object_index(self) -> ObjectIndex[BaseTool]:
        return ObjectIndex.from_objects(
            self.tools, index_cls=VectorStoreIndex, embed_model=self.tb.embed
        )

    async def answer(self, setup: str, question: str) -> Answer:
        if setup == "toolrag":
            return await self.tb.aask(question)
        if setup == "all_tools":
            agent = plain_agent(self.tb, tools=self.tools)
        else:
            retriever = self.object_index.as_retriever(similarity_top_k=self.tb.settings.tool_top_k)
            agent = plain_agent(self.tb, retriever=retriever)
        cap = self.tb.settings.max_iterations
        return await run_agent(agent, question, cap, max_repairs=0, run_id=self.run.run_id)


def record(setup: str, q: Question, answer: Answer, distractors: set[str]) -> dict[str, Any]:
    called = answer.tools_called
    return {
        "setup": setup,
        "id": q.id,
        "ok": True,
        "matched": answer_matches(answer.answer, q.answer_keywords),
        "tool_ok": set(q.expected_tools) <= set(called),
        "distractor_calls": sum(1 for t in called if t in distractors),
        "tool_calls": len(called),
        "llm_calls": answer.llm_calls,
        "seconds": answer.seconds,
        "route_seconds": answer.route_seconds,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "tools_offered": answer.tools_offered,
        "tools_called": called,
        "answer": answer.answer[:500],
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["ok"]]

    def mean(key: str) -> float:
        return round(statistics.fmean(r.get(key, 0) for r in ok), 3) if ok else 0.0

    def median(key: str) -> float:
        return round(statistics.median(r.get(key, 0) for r in ok), 3) if ok else 0.0

    return {
        "n": len(rows),
        "failed": len(rows) - len(ok),
        "answer_accuracy": round(sum(r["matched"] for r in ok) / len(rows), 4) if rows else 0.0,
        "tool_accuracy": round(sum(r["tool_ok"] for r in ok) / len(rows), 4) if rows else 0.0,
        "distractor_calls": sum(r["distractor_calls"] for r in ok),
        "tool_calls_mean": mean("tool_calls"),
        "llm_calls_mean": mean("llm_calls"),
        "seconds_mean": mean("seconds"),
        "seconds_median": median("seconds"),
        "prompt_tokens_mean": mean("prompt_tokens"),
        "prompt_tokens_median": median("prompt_tokens"),
        # router+react: the seconds the router took to decide, before its calls ran
        "route_seconds_mean": mean("route_seconds"),
        "route_seconds_median": median("route_seconds"),
    }


WARMUP = "Hello! What can you help me with?"
"""Asked once, untimed, before a setup's first timed question in a process: the first call
of a process pages the model in, and a setup whose prompt starts with a fixed part (all 50
tools in the system prompt) has llama.cpp read that part once and keep it. Without it a
resumed run would charge that one-time cost to whichever question came first."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="Questions (0: all eligible).")
    parser.add_argument("--pool", type=int, default=50, help="Tools in all.")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--context", type=int, default=16384, help="Local model context.")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "agent.json")
    parser.add_argument("--fresh", action="store_true", help="Ignore earlier records.")
    args = parser.parse_args()
    setups = [s for s in args.setups.split(",") if s]
    if unknown := set(setups) - set(SETUPS):
        parser.error(f"unknown setups {sorted(unknown)}; choose from {', '.join(SETUPS)}")
    records_path = args.out.with_suffix("") / "records.jsonl"
    records_path.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        records_path.unlink(missing_ok=True)
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if records_path.is_file():
        for line in records_path.read_text().splitlines():
            r = json.loads(line)
            done[(r["setup"], r["id"])] = r

    console = Console(stderr=True)
    state = Path(tempfile.mkdtemp(prefix="toolrag-agent-bench-"))
    settings = Settings(data_dir=ROOT / "data", state_dir=state, context_window=args.context)
    sample = Toolbox(settings)
    if not sample.indexed():
        console.print("indexing the sample data first")
        sample.index()
    sample_names = {t.metadata.get_name() for t in sample.tools()}
    bfcl_cards = [
        c
        for c in load_tool_list(bfcl.load(ROOT / "runs" / "bfcl")[0])
        if c.name not in sample_names
    ]
    n_sample = len(cards_from_tools(sample.tools()))
    distractors = random.Random(args.seed).sample(bfcl_cards, args.pool - n_sample)
    names = {c.name for c in distractors}
    questions = load_questions(ROOT / "data" / "questions" / "test.jsonl")
    eligible = [q for q in questions if set(q.expected_tools) <= sample_names and q.answer_keywords]
    chosen = pick_questions(eligible, sample_names, args.limit or len(eligible))
    keywords = {q.id: q.answer_keywords for q in questions}
    for r in done.values():  # scored again: a recorded answer meets today's answer checking
        if r.get("ok") and r["id"] in keywords:
            r["matched"] = answer_matches(r["answer"], keywords[r["id"]])
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in setups}
    with running_server(settings.data_dir) as url:
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        tb = PoolToolbox(settings, distractors)
        runner = Runner(tb)
        console.print(
            f"{len(tb.tools())} tools, {len(chosen)} questions, setups {', '.join(setups)}; "
            f"LLM {type(tb.llm).__name__}"
        )
        for setup in setups:
            if any((setup, q.id) not in done for q in chosen):  # untimed: see WARMUP
                asyncio.run(runner.answer(setup, WARMUP))
            for n, q in enumerate(chosen, start=1):
                key = (setup, q.id)
                if key not in done:
                    try:
                        answer = asyncio.run(runner.answer(setup, q.query))
                        done[key] = record(setup, q, answer, names)
                    except Exception as exc:  # a failure is a record, never a crash
                        done[key] = {"setup": setup, "id": q.id, "ok": False,
                                     "error": f"{type(exc).__name__}: {exc}"[:300]}  # fmt: skip
                    with records_path.open("a") as fh:
                        fh.write(json.dumps(done[key]) + "\n")
                r = done[key]
                rows[setup].append(r)
                status = (
                    f"tool {'ok' if r.get('tool_ok') else 'MISS'}, "
                    f"answer {'ok' if r.get('matched') else 'miss'}, {r.get('seconds', 0):.1f}s"
                    if r["ok"]
                    else r["error"]
                )
                console.print(f"[{setup} {n}/{len(chosen)}] {q.id}: {status}", highlight=False)
    results = {s: summarize(rows[s]) for s in setups}
    verdict: dict[str, Any] = {}
    if {"all_tools", "objectindex", "toolrag"} <= set(results):
        ours, a, b = results["toolrag"], results["all_tools"], results["objectindex"]

        def ratio(key: str) -> float | None:
            return round(ours[key] / a[key], 3) if a[key] else None

        verdict = {
            "toolrag_beats_both_on_tool_accuracy": ours["tool_accuracy"]
            > max(a["tool_accuracy"], b["tool_accuracy"]),
            "seconds_ratio_toolrag_vs_all_tools": ratio("seconds_mean"),
            "median_seconds_ratio_toolrag_vs_all_tools": ratio("seconds_median"),
        }
        verdict["toolrag_at_most_half_the_seconds"] = (
            verdict["seconds_ratio_toolrag_vs_all_tools"] or 9
        ) <= 0.5
        # the router's decision alone against the whole time the target allows (half of (a)'s
        # median): at 1 or above, nothing is left to read the results and write the answer
        verdict["route_seconds_share_of_half_all_tools_median"] = (
            round(ours["route_seconds_median"] / (a["seconds_median"] / 2), 3)
            if a["seconds_median"]
            else None
        )
    report = {
        "benchmark": "agent",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.platform()}",
        "llm": type(tb.llm).__name__,
        "model": tb.llm.metadata.model_name,
        "context_window": args.context,
        "pool": len(tb.tools()),
        "distractor_seed": args.seed,
        "questions": [q.id for q in chosen],
        "warmup": WARMUP,
        "results": results,
        "targets": verdict,
    }
    args.out.write_text(json.dumps(report, indent=2))
    name = result_name(
        "agent",
        limit=args.limit,
        pool=args.pool if args.pool != 50 else 0,
        setups=args.setups if args.setups != ",".join(SETUPS) else "",
        seed=args.seed if args.seed != 7 else 0,
    )
    write_result(name, report)
    table = Table(
        "setup",
        "n",
        "answer acc",
        "tool acc",
        "distractor calls",
        "tool calls",
        "LLM calls",
        "s/question (mean)",
        "s (median)",
        "prompt tok/question",
        title=f"agent benchmark: {len(chosen)} questions, {len(tb.tools())} tools",
    )
    for s, r in results.items():
        table.add_row(
            s,
            str(r["n"]),
            f"{r['answer_accuracy']:.3f}",
            f"{r['tool_accuracy']:.3f}",
            str(r["distractor_calls"]),
            f"{r['tool_calls_mean']:.2f}",
            f"{r['llm_calls_mean']:.2f}",
            f"{r['seconds_mean']:.1f}",
            f"{r['seconds_median']:.1f}",
            f"{r['prompt_tokens_mean']:.0f}",
        )
    Console().print(table)
    if verdict:
        print(json.dumps(verdict))
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
