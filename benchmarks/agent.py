"""Agent benchmark: three ways to give a ReAct agent 50 tools, on the sample's question sets (the
test split, the fresh questions and the unseen quarter, answers strictly scored), with the local
model, in one process over the same tools, guard and LLM.

The pool is the sample domain's tools plus BFCL functions as distractors (fixed seed), 50 in all.
A distractor is a real tool in the guard whose call reports that it is not connected to any data
(the BFCL functions have no backend); calling one is a wrong tool choice.

Setups, each over every selected question, one after the other:

- ``all_tools``: plain LlamaIndex ``ReActAgent(tools=<all 50>)``, stock prompt formatter;
- ``objectindex``: plain LlamaIndex ``ReActAgent(tool_retriever=ObjectIndex.from_objects(<50>)
  .as_retriever(similarity_top_k=tool_top_k))``, stock prompt formatter;
- ``toolrag``: ``Toolbox.aask`` with toolrag's default settings (what a user gets without
  flags: the ToolIndex with its gate, named filters, the guard);
- ``toolrag_router`` (on request): the same in ``router+react`` mode, to compare agent modes.

The baselines run through the same ``run_agent`` loop (trace, graceful stop at the cap, loop
stop) without toolrag's repair turns. Per question: strict answer accuracy (every expected
keyword, numbers and dates by value, exactly the expected ids: ``toolrag.batch.question_matches``),
tool accuracy (every expected tool called), no-tool accuracy (a question no tool serves left
without a tool call), multi-tool coverage (every tool of a question that needs two or more),
distractor calls, tool calls, LLM calls, seconds, prompt tokens. Figures are reported per
question set and for all of them. Each setup first answers one untimed warm-up question
(``WARMUP``). Records are appended to ``runs/agent/records.jsonl`` as they come, so an
interrupted run resumes where it stopped (``--fresh`` starts over).

    .venv/bin/python -m benchmarks.agent [--sets test,fresh,unseen] [--limit N] [--every N]
        [--setups all_tools,objectindex,toolrag] [--name agent_x]
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
from toolrag import AgentEvent, Settings, Toolbox
from toolrag.agent import SYSTEM_PROMPT, Answer, run_agent
from toolrag.batch import Question, load_questions, question_matches
from toolrag.cards import SyntheticQueries, ToolCard, cards_from_tools, load_tool_list
from toolrag.evaluation import schema_model as _schema_model
from toolrag.guard import RunState, guarded_tools
from toolrag.retrieval import ToolIndex
from toolrag.sample import pick_questions, running_server
from toolrag.tools import ErrorCode, ToolResult

ROOT = Path(__file__).resolve().parents[1]
BFCL_REQUESTS = ROOT / "benchmarks" / "records" / "synthetic_bfcl.sqlite"
SETUPS = ("all_tools", "objectindex", "toolrag")
OPTIONAL_SETUPS = ("toolrag_router",)
SETS = ("test", "fresh", "unseen")


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
    """The sample toolbox plus distractor tools (guarded and indexed like the others).

    ``requests``: a cache of written requests (``toolrag tools synth``) whose entries the
    distractors take by name, as a user's pool has them once the background writer is done;
    without it only the sample's own cards have requests."""

    def __init__(
        self, settings: Settings, distractors: Sequence[ToolCard], requests: Path | None = None
    ) -> None:
        super().__init__(settings)
        self._distractors = [distractor(c) for c in distractors]
        self._requests = requests

    def _spec_tools(self) -> list[FunctionTool]:
        return [*super()._spec_tools(), *self._distractors]

    @cached_property
    def tool_index(self) -> ToolIndex:
        index = ToolIndex(
            self.settings.state_dir / "toolindex",
            self.embed,
            table="tools_pool",
            name_weight=self.settings.tool_name_weight,  # TOOLRAG_TOOL_NAME_WEIGHT
        )
        cards = self.cards()
        if self._requests is not None:
            cards = SyntheticQueries(self._requests).augment(cards, by_name=True)
        index.sync(cards)
        return index


def pick_distractors(sample: Toolbox, pool: int, seed: int) -> list[ToolCard]:
    """BFCL functions (none named like a sample tool) that fill the sample's tools up to
    ``pool``, drawn with ``seed``."""
    names = {t.metadata.get_name() for t in sample.tools()}
    cards = [c for c in load_tool_list(bfcl.load(ROOT / "runs" / "bfcl")[0]) if c.name not in names]
    return random.Random(seed).sample(cards, pool - len(cards_from_tools(sample.tools())))


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
        self.default_mode = tb.settings.agent_mode

    @cached_property
    def object_index(self) -> ObjectIndex[BaseTool]:
        return ObjectIndex.from_objects(
            self.tools, index_cls=VectorStoreIndex, embed_model=self.tb.embed
        )

    async def answer(
        self, setup: str, question: str, events: list[AgentEvent] | None = None
    ) -> Answer:
        """``setup``'s answer to ``question``; toolrag's events go to ``events``."""
        if setup in ("toolrag", "toolrag_router"):
            mode = self.default_mode if setup == "toolrag" else "router+react"
            self.tb.settings.agent_mode = mode
            answer: Answer | None = None
            async for event in self.tb.astream(question):
                if event.kind == "answer":
                    answer = event.data["answer"]
                elif events is not None:
                    events.append(event)
            assert answer is not None  # astream's last event carries it
            return answer
        if setup == "all_tools":
            agent = plain_agent(self.tb, tools=self.tools)
        else:
            retriever = self.object_index.as_retriever(similarity_top_k=self.tb.settings.tool_top_k)
            agent = plain_agent(self.tb, retriever=retriever)
        cap = self.tb.settings.max_iterations
        return await run_agent(agent, question, cap, max_repairs=0, run_id=self.run.run_id)


def failed_record(setup: str, q: Question, qset: str, error: str) -> dict[str, Any]:
    """The record of a question the setup gave no answer to: wrong on every score the
    question has (its answer, its tools, calling none), and counted on no other."""
    return {
        "setup": setup,
        "set": qset,
        "id": q.id,
        "ok": False,
        "error": error[:300],
        "matched": False if not q.no_tool else None,
        "tool_ok": False if q.expected_tools else None,
        "no_tool_ok": False if q.no_tool else None,
        "multi_tool": len(set(q.expected_tools)) >= 2,
    }


def record(
    setup: str,
    q: Question,
    answer: Answer,
    distractors: set[str],
    actions: set[str],
    qset: str,
    events: Sequence[AgentEvent] = (),
) -> dict[str, Any]:
    """One question's record; ``events``: the run's, whose route decisions and model replies
    are kept (cut) to see why an answer went wrong."""
    called = answer.tools_called
    if answer.context_overflow and not answer.llm_calls:
        # the prompt never fitted the model's context (all tools at 500): no answer was given,
        # so neither its seconds nor its calling no tool count
        return failed_record(setup, q, qset, f"context overflow: {answer.answer}")
    return {
        "setup": setup,
        "set": qset,
        "id": q.id,
        "ok": True,
        "matched": question_matches(answer.answer, q) if not q.no_tool else None,
        "tool_ok": set(q.expected_tools) <= set(called) if q.expected_tools else None,
        "no_tool_ok": not called if q.no_tool else None,
        "multi_tool": len(set(q.expected_tools)) >= 2,
        "distractor_calls": sum(1 for t in called if t in distractors),
        "action_calls": sum(1 for t in called if t in actions),
        "tool_calls": len(called),
        "llm_calls": answer.llm_calls,
        "seconds": answer.seconds,
        "route_seconds": answer.route_seconds,
        "prompt_tokens": answer.prompt_tokens,
        # prompt tokens the server read from its cache (None: it does not say)
        "cached_prompt_tokens": answer.cached_prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "tools_offered": answer.tools_offered,
        "tools_called": called,
        "answer": answer.answer[:500],
        # what each call ran with and read back, to see why an answer went wrong
        "trace": [
            {
                "tool": s.tool,
                "arguments": s.ran_with or s.arguments,
                "observation": s.observation[:300],
            }
            for s in answer.trace
        ],
        "model": [f"{e.kind}: {e.text[:600]}" for e in events if e.kind in ("route", "model_step")],
    }


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["ok"]]

    def mean(key: str) -> float:
        return round(statistics.fmean(r.get(key, 0) for r in ok), 3) if ok else 0.0

    def median(key: str) -> float:
        return round(statistics.median(r.get(key, 0) for r in ok), 3) if ok else 0.0

    def share(key: str, where: Any = None) -> float | None:
        # over every row that is scored on ``key`` (a failed question counts as wrong)
        scored = [r for r in rows if (where is None or where(r)) and r.get(key, False) is not None]
        return round(sum(bool(r.get(key)) for r in scored) / len(scored), 4) if scored else None

    answerable = [r for r in rows if r.get("matched", False) is not None]
    return {
        "n": len(rows),
        "failed": len(rows) - len(ok),
        "answer_accuracy": share("matched"),
        "n_answer_scored": len(answerable),
        "tool_accuracy": share("tool_ok"),
        "no_tool_accuracy": share("no_tool_ok"),
        "n_no_tool": sum(r.get("no_tool_ok") is not None for r in rows),
        "multi_tool_coverage": share("tool_ok", lambda r: r.get("multi_tool")),
        "n_multi_tool": sum(bool(r.get("multi_tool")) for r in rows),
        "write_or_external_calls": sum(r.get("action_calls", 0) for r in ok),
        "distractor_calls": sum(r["distractor_calls"] for r in ok),
        "tool_calls_mean": mean("tool_calls"),
        "llm_calls_mean": mean("llm_calls"),
        "seconds_mean": mean("seconds"),
        "seconds_median": median("seconds"),
        "seconds_p95": _p95([r.get("seconds", 0) for r in ok]),
        "prompt_tokens_mean": mean("prompt_tokens"),
        "prompt_tokens_median": median("prompt_tokens"),
        **_cache_share(ok),
        # router+react: the seconds the router took to decide, before its calls ran
        "route_seconds_mean": mean("route_seconds"),
        "route_seconds_median": median("route_seconds"),
    }


def _cache_share(ok: list[dict[str, Any]]) -> dict[str, Any]:
    """The share of prompt tokens the LLM server read from its prompt cache, over the
    questions whose replies said (llama.cpp's server and OpenAI do; the in-process model and
    llama-cpp-python's server do not, and get None)."""
    said = [r for r in ok if r.get("cached_prompt_tokens") is not None]
    prompt = sum(r.get("prompt_tokens", 0) for r in said)
    cached = sum(r["cached_prompt_tokens"] for r in said)
    return {
        "cached_prompt_tokens_mean": round(cached / len(said), 1) if said else None,
        "cache_hit_share": round(cached / prompt, 4) if said and prompt else None,
    }


WARMUP = "Hello! What can you help me with?"
"""Asked once, untimed, before a setup's first timed question in a process: the first call
of a process pages the model in, and a setup whose prompt starts with a fixed part (all 50
tools in the system prompt) has llama.cpp read that part once and keep it. Without it a
resumed run would charge that one-time cost to whichever question came first."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="Questions (0: all eligible).")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        help="Keep every Nth eligible question of each set (sets are ordered by kind, so this "
        "keeps every kind); with --limit, the stride applies first.",
    )
    parser.add_argument("--pool", type=int, default=50, help="Tools in all.")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument(
        "--sets", default=",".join(SETS), help="Question sets of data/questions/, by file stem."
    )
    parser.add_argument(
        "--kinds",
        default="",
        help="Only questions of these kinds (comma-separated), e.g. multi_tool.",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--distractor-requests",
        action="store_true",
        help="Give the distractors the requests the local model wrote for BFCL's pool "
        f"({BFCL_REQUESTS.relative_to(ROOT)}), as a user's pool has them once the background "
        "writer is done (default: only the sample's cards have requests).",
    )
    parser.add_argument("--context", type=int, default=16384, help="Local model context.")
    parser.add_argument(
        "--router-examples",
        type=int,
        default=None,
        help="Example questions the router shows (default: the setting, 8).",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "agent.json")
    parser.add_argument("--fresh", action="store_true", help="Ignore earlier records.")
    parser.add_argument(
        "--name", default="", help="Result file name (default: from the options given)."
    )
    args = parser.parse_args()
    setups = [s for s in args.setups.split(",") if s]
    if unknown := set(setups) - set(SETUPS) - set(OPTIONAL_SETUPS):
        choices = ", ".join(SETUPS + OPTIONAL_SETUPS)
        parser.error(f"unknown setups {sorted(unknown)}; choose from {choices}")
    sets = [s for s in args.sets.split(",") if s]
    kinds = {k for k in args.kinds.split(",") if k}
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
    # no background writer of example requests: it would share the cores with the questions
    # and change the tool index between them (the sample ships reviewed requests)
    settings = Settings(
        data_dir=ROOT / "data",
        state_dir=state,
        context_window=args.context,
        write_requests="off",
        **({} if args.router_examples is None else {"router_examples": args.router_examples}),
    )
    sample = Toolbox(settings)
    if not sample.indexed():
        console.print("indexing the sample data first")
        sample.index()
    sample_names = {t.metadata.get_name() for t in sample.tools()}
    distractors = pick_distractors(sample, args.pool, args.seed)
    names = {c.name for c in distractors}
    chosen: list[Question] = []
    set_of: dict[str, str] = {}
    for qset in sets:
        questions = load_questions(ROOT / "data" / "questions" / f"{qset}.jsonl")
        eligible = [
            q
            for q in questions
            if set(q.expected_tools) <= sample_names
            and (q.answer_keywords or q.answer_ids or q.no_tool)
            and (not kinds or q.kind in kinds)
        ][:: max(1, args.every)]
        picked = pick_questions(eligible, sample_names, args.limit) if args.limit else eligible
        chosen += picked
        set_of.update({q.id: qset for q in picked})
    by_id = {q.id: q for q in chosen}
    for r in done.values():  # scored again: a recorded answer meets today's answer checking
        q = by_id.get(r["id"])
        if r.get("ok") and q is not None and not q.no_tool:
            r["matched"] = question_matches(r["answer"], q)
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in setups}
    with running_server(settings.data_dir) as url:
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        tb = PoolToolbox(settings, distractors, BFCL_REQUESTS if args.distractor_requests else None)
        actions = {c.name for c in tb.cards() if c.side_effect in ("write", "delete", "external")}
        runner = Runner(tb)
        console.print(
            f"{len(tb.tools())} tools, {len(chosen)} questions, setups {', '.join(setups)}; "
            f"LLM {type(tb.llm).__name__}"
        )
        for setup in setups:
            if any((setup, q.id) not in done for q in chosen):  # untimed: see WARMUP
                try:
                    asyncio.run(runner.answer(setup, WARMUP))
                except Exception as exc:  # the questions record it (all tools past the context)
                    console.print(f"[{setup}] warm-up failed: {exc}"[:300], highlight=False)
            for n, q in enumerate(chosen, start=1):
                key = (setup, q.id)
                if key not in done:
                    events: list[AgentEvent] = []
                    try:
                        answer = asyncio.run(runner.answer(setup, q.query, events))
                        done[key] = record(setup, q, answer, names, actions, set_of[q.id], events)
                    except Exception as exc:  # a failure is a record, never a crash
                        done[key] = failed_record(
                            setup, q, set_of[q.id], f"{type(exc).__name__}: {exc}"
                        )
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
    by_set = {
        qset: {s: summarize([r for r in rows[s] if set_of.get(r["id"]) == qset]) for s in setups}
        for qset in sets
    }
    verdict: dict[str, Any] = {}
    if "toolrag" in results and "all_tools" in results:
        ours, a = results["toolrag"], results["all_tools"]
        verdict["median_seconds_ratio_toolrag_vs_all_tools"] = (
            round(ours["seconds_median"] / a["seconds_median"], 3) if a["seconds_median"] else None
        )
    unseen = by_set.get("unseen", {}).get("toolrag")
    if unseen:  # issue 49's targets, on the quarter nobody tuned on

        def at_least(value: float | None, target: float) -> bool:
            return value is not None and value >= target

        verdict["unseen_targets"] = {
            "answer_accuracy_at_least_0.70": at_least(unseen["answer_accuracy"], 0.70),
            "no_tool_accuracy_at_least_0.80": at_least(unseen["no_tool_accuracy"], 0.80),
            "multi_tool_coverage_at_least_0.80": at_least(unseen["multi_tool_coverage"], 0.80),
            "median_seconds_at_most_20": unseen["seconds_median"] <= 20.0,
        }
    report = {
        "benchmark": "agent",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.platform()}",
        "llm": type(tb.llm).__name__,
        "model": tb.llm.metadata.model_name,
        "context_window": args.context,
        "pool": len(tb.tools()),
        "distractor_seed": args.seed,
        "distractor_requests": args.distractor_requests,
        "cards_with_requests": sum(bool(c.synthetic) for c in tb.tool_index.cards.values()),
        "question_sets": {qset: [q.id for q in chosen if set_of[q.id] == qset] for qset in sets},
        "gate": tb.gate.model_dump(),
        "agent_mode": runner.default_mode,
        "router_examples": settings.router_examples,
        "collections": [c.name for c in sample.collections],
        "collections_file": str(settings.resolved_collections_file),
        "warmup": WARMUP,
        "results": results,
        "results_by_set": by_set,
        "targets": verdict,
    }
    args.out.write_text(json.dumps(report, indent=2))
    name = args.name or result_name(
        "agent",
        limit=args.limit,
        every=args.every if args.every != 1 else 0,
        pool=args.pool if args.pool != 50 else 0,
        setups=args.setups if args.setups != ",".join(SETUPS) else "",
        sets=args.sets if args.sets != ",".join(SETS) else "",
        kinds=args.kinds,
        seed=args.seed if args.seed != 7 else 0,
        requests="distractors" if args.distractor_requests else "",
        # an OpenAI-compatible server (TOOLRAG_LLM_PROVIDER=openai_like) rather than in process
        llm="server" if type(tb.llm).__name__ == "ServerLLM" else "",
    )
    write_result(name, report)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    table = Table(
        "set",
        "setup",
        "n",
        "answer acc",
        "tool acc",
        "no-tool acc",
        "multi-tool",
        "write/ext calls",
        "s (median)",
        "s (p95)",
        "prompt tok/question",
        "cache hit",
        title=f"agent benchmark: {len(chosen)} questions, {len(tb.tools())} tools",
    )
    for qset, per_setup in [*by_set.items(), ("all", results)]:
        for s, r in per_setup.items():
            table.add_row(
                qset,
                s,
                str(r["n"]),
                pct(r["answer_accuracy"]),
                pct(r["tool_accuracy"]),
                pct(r["no_tool_accuracy"]),
                pct(r["multi_tool_coverage"]),
                str(r["write_or_external_calls"]),
                f"{r['seconds_median']:.1f}",
                f"{r['seconds_p95']:.1f}",
                f"{r['prompt_tokens_mean']:.0f}",
                pct(r.get("cache_hit_share")),
            )
    Console().print(table)
    if verdict:
        print(json.dumps(verdict))
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
