"""A user's first hour: a folder of their own files and a database, through the README's path.

Nothing here is the sample company's. The benchmark builds a folder from
``benchmarks/datasets/first_hour/``: five Markdown pages of a staff handbook and a SQLite shop
database (customers, products, orders, order items) built from ``shop.sql``. Then it does what
the README's "Use your own data" section says, as a user would:

1. ``toolrag init .`` in the folder, and ``database_url`` added to the ``toolrag.toml`` it wrote;
2. ``toolrag index --requests index`` (the LLM writes the tools' example requests first);
3. each question of ``questions.jsonl`` asked of the toolbox as configured (``Toolbox()`` in the
   folder, the defaults), and of the stock LlamaIndex ``ReActAgent`` with every tool of the same
   toolbox in its prompt (the baseline: 4 tools, so "all tools" is what toolrag's search offers).

The questions (written with their answers checked against the files and the database by hand,
once, before any run): handbook facts, SQL aggregates and joins, two-part questions that need
the handbook and the database, and two that no tool serves. Answers are scored strictly
(``question_matches``: every keyword, numbers as numbers). Local model, two cores:

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.first_hour
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.agent import plain_agent, record, summarize
from benchmarks.results import write_result
from toolrag import Settings, Toolbox
from toolrag.agent import Answer, run_agent
from toolrag.batch import Question, load_questions
from toolrag.guard import RunState, guarded_tools

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "datasets" / "first_hour"
SETUPS = ("plain", "toolrag")


def cli(folder: Path, *args: str) -> str:
    """``toolrag ARGS`` in ``folder``, as a user types it; its output (it must succeed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")}
    env.setdefault("HF_HUB_OFFLINE", "1")
    proc = subprocess.run(
        [sys.executable, "-m", "toolrag.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"toolrag {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def build_folder(folder: Path) -> Path:
    """A fresh copy of the handbook and the shop database in ``folder``; the database's path."""
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(DATA / "handbook", folder / "handbook")
    database = folder / "shop.db"
    with sqlite3.connect(database) as db:
        db.executescript((DATA / "shop.sql").read_text())
    return database


def score(setup: str, q: Question, answer: Answer) -> dict[str, Any]:
    """One question's record, scored as the agent benchmark scores one (no distractors, no
    action tools in this pool), with the question's kind."""
    return record(setup, q, answer, set(), set(), "first_hour") | {"kind": q.kind}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent benchmark's summary of ``rows``, and how many answers matched."""
    return summarize(rows) | {"answered": sum(1 for r in rows if r.get("matched"))}


async def ask(setup: str, tb: Toolbox, question: str) -> Answer:
    if setup == "toolrag":
        return await tb.aask(question)
    run = RunState()
    agent = plain_agent(tb, tools=guarded_tools(tb.guard, tb.tools(), run))
    return await run_agent(
        agent, question, tb.settings.max_iterations, max_repairs=0, run_id=run.run_id
    )


async def run_all(
    setups: list[str], tb: Toolbox, questions: list[Question]
) -> list[dict[str, Any]]:
    """Every setup on every question, one at a time, in one event loop."""
    rows: list[dict[str, Any]] = []
    for setup in setups:
        for q in questions:
            row = score(setup, q, await ask(setup, tb, q.query))
            rows.append(row)
            print(
                f"{setup:8} {q.id}: answer {row['matched']}, tools {row['tools_called']}, "
                f"{row['seconds']:.1f}s",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--folder", type=Path, default=ROOT / "runs" / "first_hour")
    parser.add_argument("--name", default="first_hour", help="The result file's name.")
    args = parser.parse_args()
    setups = args.setups.split(",")
    started = time.perf_counter()
    folder = args.folder.resolve()
    database = build_folder(folder)
    init = cli(folder, "init", ".")
    with (folder / "toolrag.toml").open("a") as toml:
        toml.write(f'database_url = "sqlite:///{database}"\n')
    indexed = cli(folder, "index", "--requests", "index")
    questions = load_questions(DATA / "questions.jsonl")
    os.chdir(folder)  # the toolbox reads the folder's toolrag.toml, as `toolrag ask` does
    for var in [v for v in os.environ if v.startswith("TOOLRAG_")]:
        del os.environ[var]
    tb = Toolbox(Settings())
    tb.warm_up()
    tools = sorted(t.metadata.get_name() for t in tb.tools())
    rows = asyncio.run(run_all(setups, tb, questions))
    results = {s: summary([r for r in rows if r["setup"] == s]) for s in setups}
    figures: dict[str, Any] = {
        "benchmark": "first_hour",
        "llm": type(tb.llm).__name__,
        "agent_mode": tb.settings.agent_mode,
        "tools": tools,
        "init": init.strip().splitlines()[-3:],
        "index": [line for line in indexed.splitlines() if "request" in line or "gate" in line],
        "results": results,
        "rows": rows,
    }
    if "plain" in results and "toolrag" in results:
        plain, ours = results["plain"], results["toolrag"]
        figures["toolrag_vs_plain"] = {
            "answered": f"{ours['answered']} vs {plain['answered']}",
            "median_seconds_ratio": round(ours["seconds_median"] / plain["seconds_median"], 3),
        }
    os.chdir(ROOT)
    write_result(args.name, figures, module="first_hour", seconds=time.perf_counter() - started)
    for setup, result in results.items():
        print(setup, result)


if __name__ == "__main__":
    main()
