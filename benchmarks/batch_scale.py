"""Batch answering and tool-pool building past one machine: the local engine against Ray.

In one run, on the same questions and the sample domain's index:

- questions per second of ``run_batch`` locally (one question at a time, as for the local
  model) and on a local Ray cluster with 1 and with 2 actors (one question at a time each).
  The LLM is scripted; each of its turns waits ``--llm-latency`` seconds, standing in for a
  remote LLM server, so the figures show what the engine adds and what more actors buy when
  the answers wait on the model. A tool question takes two turns (the call, the answer), a
  plain one a single turn.
- embedding throughput (cards per second) of a tool-pool build: ``ToolIndex.sync`` locally and
  with ``embed_batches=ray_embed_batches(...)`` on 2 actors, on the first N1 and N2 cards of
  the BFCL pool (``--cards``, ``benchmarks.datasets.bfcl``). Each Ray build includes starting
  its actors and loading one embedding model in each; the marginal rate between the two sizes
  leaves that start out.
- with ``--local-model N`` (default 4), N questions answered by the local model, locally and on
  1 actor: the same comparison where each question costs tens of seconds of CPU.

Each engine's clock starts before its toolbox is built and warmed up (the local one in this
process, each actor's in its own); Ray itself is started before any clock.

    python -m benchmarks.batch_scale              # writes benchmarks/results/batch_scale.json
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ray

from benchmarks.datasets import bfcl
from benchmarks.results import ROOT, result_name, write_result
from toolrag import ScriptedLLM, Settings, Toolbox, run_batch
from toolrag.batch import Question, read_records
from toolrag.cards import load_tool_list
from toolrag.models import make_embedding, ray_embed_batches
from toolrag.retrieval import ToolIndex

DATA = ROOT / "data"
TOOL_QUERY = "When did Fire Station 7 reach substantial completion?"
ID = re.compile(r"\[(q\d+)\]")


class Turns:
    """A scripted turn decided by the question (any actor may get any question), after
    ``latency`` seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __call__(self, messages: Sequence[Any]) -> str:
        time.sleep(self.latency)
        contents = [str(m.content) for m in messages]
        question = next((c for c in contents if ID.search(c)), "")
        if contents[-1].lstrip().startswith("Observation"):
            return "Thought: I can answer now.\nAnswer: It was reached on 2025-12-12."
        if TOOL_QUERY in question:
            return (
                "Thought: I need a tool.\nAction: get_project_schedule\n"
                'Action Input: {"project": "Cedar Valley Fire Station 7"}'
            )
        return "Thought: No tool is needed.\nAnswer: Hello."


def scripted_toolbox(settings: Settings, latency: float) -> Toolbox:
    return Toolbox(settings, llm=ScriptedLLM([Turns(latency)] * 100_000))


def questions(n: int) -> list[Question]:
    out = []
    for i in range(n):
        qid = f"q{i:03d}"
        if i % 2 == 0:
            out.append(Question(id=qid, query=f"[{qid}] {TOOL_QUERY}", expected_tools=[
                "get_project_schedule"], answer_keywords=["2025-12-12"]))  # fmt: skip
        else:
            out.append(Question(id=qid, query=f"[{qid}] Say hello.", expected_tools=[]))
    return out


def timed_batch(
    label: str,
    qs: list[Question],
    out: Path,
    toolbox: Callable[[], Toolbox] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Wall time from the start of the batch to its last record, and the steady rate: from the
    first record to the last, leaving out the start. Both engines' clocks start before their
    toolboxes are built and warmed up: the local engine's ``toolbox()`` here, each Ray actor's
    in its process (after Ray itself has started, which the caller did beforehand)."""
    stamps: list[float] = []
    start = time.perf_counter()
    if toolbox is not None:
        tb = toolbox()
        tb.warm_up()  # as each actor does before its first question
        kwargs["toolbox"] = tb
    else:
        kwargs["toolbox"] = None  # the Ray engine builds one in each actor
    summary = run_batch(
        questions=qs, output=out, progress=lambda r: stamps.append(time.perf_counter()), **kwargs
    )
    seconds = time.perf_counter() - start
    ok = sum(1 for r in read_records(out).values() if r.ok)
    steady = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else None
    print(f"{label}: {len(qs)} questions in {seconds:.1f} s ({ok} ok), steady {steady} q/s")
    return {
        "questions": len(qs),
        "ok": ok,
        "tool_accuracy": summary.tool_accuracy,
        "seconds": round(seconds, 2),
        # to the first record: building and warming the toolbox (on Ray: starting the actors)
        "start_s": round(stamps[0] - start, 2) if stamps else None,
        "questions_per_s": round(len(qs) / seconds, 3),
        "steady_questions_per_s": round(steady, 3) if steady else None,
    }


def batch_figures(
    settings: Settings, n: int, latency: float, tmp: Path, cpus: float
) -> dict[str, Any]:
    qs = questions(n)
    factory = functools.partial(scripted_toolbox, settings, latency)
    factory().warm_up()  # the tool index is synced once, before either clock starts
    local = timed_batch("local", qs, tmp / "local.jsonl", toolbox=factory, concurrency=1)
    figures: dict[str, Any] = {"local": local}
    for actors in (1, 2):
        figures[f"ray_{actors}_actor{'s' if actors > 1 else ''}"] = timed_batch(
            f"ray, {actors} actor(s)",
            qs,
            tmp / f"ray{actors}.jsonl",
            toolbox=None,
            engine="ray",
            actors=actors,
            threads_per_actor=1,
            asker_factory=factory,
            ray_options={"cpus_per_actor": cpus},
        )
    one, two = figures["ray_1_actor"], figures["ray_2_actors"]

    def ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float | None:
        return round(a[key] / b[key], 2) if a[key] and b[key] else None

    figures["ratios"] = {
        # seconds Ray's start adds once, before its first record (actors' processes and imports)
        "ray_1_actor_extra_start_s": round(one["start_s"] - local["start_s"], 2),
        # seconds a question on 1 actor / locally (> 1: Ray is slower a question)
        "ray_1_actor_vs_local_s_per_question": ratio(local, one, "questions_per_s"),
        "ray_1_actor_vs_local_s_per_question_steady": ratio(local, one, "steady_questions_per_s"),
        # questions a second, 2 actors / 1 actor
        "ray_2_vs_1_actors_throughput": ratio(two, one, "questions_per_s"),
        "ray_2_vs_1_actors_throughput_steady": ratio(two, one, "steady_questions_per_s"),
    }
    return figures


def embed_figures(
    settings: Settings, sizes: Sequence[int], tmp: Path, cpus: float
) -> dict[str, Any]:
    """Cards per second of a pool build, locally and on 2 Ray actors, at each of ``sizes``
    (the first cards of the BFCL pool), and the marginal rate between the smallest and the
    largest: (n2 - n1) / (t2 - t1), what each further card costs once the start is paid (on
    Ray: the actors' processes and one embedding model loaded in each)."""
    tools_path, _ = bfcl.load(ROOT / "runs" / "bfcl")
    pool = load_tool_list(tools_path)
    embed = make_embedding(settings)
    embed.get_text_embedding_batch(["warm up"])  # loaded before the clock, as in a toolbox
    figures: dict[str, Any] = {"pool_cards": len(pool)}
    for label in ("local", "ray_2_actors"):
        runs = []
        for n in sizes:
            cards = pool[:n]
            embedder = (
                ray_embed_batches(settings, actors=2, cpus_per_actor=cpus)
                if label != "local"
                else None
            )
            folder = tmp / f"{label}-{n}"
            start = time.perf_counter()
            report = ToolIndex(folder, embed, embed_batches=embedder).sync(cards)
            seconds = time.perf_counter() - start
            print(f"pool build, {label}: {report.embedded} cards in {seconds:.1f} s")
            runs.append(
                {
                    "cards": report.embedded,
                    "seconds": round(seconds, 2),
                    "cards_per_s": round(report.embedded / seconds, 1),
                }
            )
        first, last = runs[0], runs[-1]
        marginal = (last["cards"] - first["cards"]) / (last["seconds"] - first["seconds"])
        figures[label] = {
            "runs": runs,
            "marginal_cards_per_s": round(marginal, 1),
            # what the build costs before its first card: the start, by extrapolation
            "start_s": round(first["seconds"] - first["cards"] / marginal, 1),
        }
    again = ToolIndex(tmp / f"ray_2_actors-{sizes[-1]}", embed).sync(pool[: sizes[-1]])
    figures["local_resync_after_ray_embedded"] = again.embedded
    local, on_ray = figures["local"], figures["ray_2_actors"]
    figures["ray_vs_local_throughput"] = round(
        on_ray["runs"][-1]["cards_per_s"] / local["runs"][-1]["cards_per_s"], 2
    )
    figures["ray_vs_local_marginal_throughput"] = round(
        on_ray["marginal_cards_per_s"] / local["marginal_cards_per_s"], 2
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--llm-latency", type=float, default=0.25, help="seconds a turn")
    parser.add_argument(
        "--cards", type=int, nargs=2, default=[400, 1600], metavar=("N1", "N2"),
        help="two pool sizes (BFCL cards): the marginal rate is taken between them",
    )  # fmt: skip
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2, help="Ray's CPUs")
    parser.add_argument("--local-model", type=int, default=4, metavar="N")
    args = parser.parse_args()
    # actors take half a CPU: the two of them and Ray Data's own tasks fit on two cores
    cpus_per_actor = 0.5
    ray.init(
        num_cpus=args.cpus,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}},
    )
    tmp = Path(tempfile.mkdtemp(prefix="toolrag-batch-scale-"))
    try:
        index_dir = tmp / "indexes"
        settings = Settings(
            data_dir=DATA, index_dir=index_dir, state_dir=tmp / "state", llm_provider="scripted"
        )
        Toolbox(settings).index()
        figures: dict[str, Any] = {
            "llm": f"scripted, {args.llm_latency:g} s a turn",
            "ray_cpus": args.cpus,
            "cpus_per_actor": cpus_per_actor,
            "batch": batch_figures(settings, args.questions, args.llm_latency, tmp, cpus_per_actor),
            "pool_build": embed_figures(settings, sorted(args.cards), tmp, cpus_per_actor),
        }
        if args.local_model:
            local = settings.model_copy(update={"llm_provider": "local"})
            qs = questions(args.local_model)
            figures["local_model"] = {
                "local": timed_batch(
                    "local model", qs, tmp / "lm.jsonl", toolbox=functools.partial(Toolbox, local)
                ),
                "ray_1_actor": timed_batch(
                    "local model, ray",
                    qs,
                    tmp / "lm-ray.jsonl",
                    engine="ray",
                    actors=1,
                    threads_per_actor=1,
                    asker_factory=functools.partial(Toolbox, local),
                    ray_options={"cpus_per_actor": 1},
                ),
            }
            lm = figures["local_model"]
            lm["ray_1_actor_vs_local_s_per_question"] = round(
                lm["ray_1_actor"]["seconds"] / lm["local"]["seconds"], 2
            )
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    name = result_name("batch_scale", questions=args.questions if args.questions != 200 else 0,
                       cards="-".join(map(str, args.cards)) if args.cards != [400, 1600] else 0,
                       local_model=args.local_model if args.local_model != 4 else 0)  # fmt: skip
    write_result(name, figures)
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
