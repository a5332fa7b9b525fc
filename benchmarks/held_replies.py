"""What holding a ReAct reply to its form costs the local model, and what checking the greedy
token first saves.

Every ReAct reply of the local model is held by a grammar to the two forms the prompt asks for
(decision 0059). llama-cpp-python's grammar sampler tests every token of the vocabulary at every
step; :mod:`toolrag.models.grammar_first` tests the greedy token first. For each of the first
``--questions`` test-split questions, the agent's first ReAct prompt (its header and the tools
the tool index retrieves for the question) is read once, then three replies are written from
the cached prompt, in turn:

- ``free``: no grammar (the baseline: what the model writes unheld);
- ``held_full``: the grammar, every candidate tested at every token (llama-cpp-python's chain);
- ``held_first``: the grammar, the greedy token tested first (toolrag's default).

Reported per setup: tokens written and seconds per token (medians over questions), and for the
two held setups whether they wrote the same text (they must: the check is exact) and the share
of tokens the first check settled. Needs the sample indexed and the local model.

    .venv/bin/python -m benchmarks.held_replies [--questions 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.results import write_result
from toolrag import Settings, Toolbox

ROOT = Path(__file__).resolve().parents[1]
SETUPS = ("free", "held_full", "held_first")


def _questions(n: int) -> list[str]:
    path = ROOT / "data" / "questions" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [row["query"] for row in rows[:n]]


def main(argv: list[str] | None = None) -> None:
    from llama_cpp import LlamaGrammar
    from llama_index.core.base.llms.types import ChatMessage

    from toolrag.agent import build_agent, react_step_gbnf

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=8)
    args = parser.parse_args(argv)

    toolbox = Toolbox(Settings(llm_provider="local"))
    toolbox.require_indexes()
    llm: Any = toolbox.llm
    counts = llm.grammar_counts
    rows = []
    for question in _questions(args.questions):
        tools = toolbox.tool_retriever().retrieve(question)
        names = [t.metadata.name for t in tools if t.metadata.name]
        formatter = build_agent(tools, llm).formatter
        messages = formatter.format(tools, [ChatMessage(role="user", content=question)])
        gbnf = react_step_gbnf(names)

        def reply(setup: str, gbnf: str = gbnf, messages: Any = messages) -> dict[str, Any]:
            held = setup != "free"
            kwargs = {"grammar": LlamaGrammar.from_string(gbnf, verbose=False)} if held else {}
            check = llm.full_grammar_check() if setup == "held_full" else contextlib.nullcontext()
            before = counts.first
            with check:
                started = time.perf_counter()
                response = llm.chat(messages, **kwargs)
                seconds = time.perf_counter() - started
            written = int(response.raw["usage"]["completion_tokens"])
            return {
                "text": response.message.content or "",
                "tokens": written,
                "seconds": round(seconds, 3),
                "seconds_per_token": round(seconds / max(written, 1), 4),
                "settled_first": counts.first - before,
            }

        reply("held_full")  # the prompt read once, so every timed reply starts from the cache
        row: dict[str, Any] = {"question": question, "tools": names}
        for setup in SETUPS:
            row[setup] = reply(setup)
        row["held_same_text"] = row["held_full"]["text"] == row["held_first"]["text"]
        rows.append(row)
        print(
            f"{question[:60]!r}: "
            + ", ".join(f"{s} {row[s]['seconds_per_token']:.3f} s/token" for s in SETUPS)
            + f", same text {row['held_same_text']}"
        )

    def median(setup: str, key: str) -> float:
        return round(statistics.median(r[setup][key] for r in rows), 4)

    held_tokens = sum(r["held_first"]["tokens"] for r in rows)
    figures = {
        "benchmark": "held_replies",
        "questions": len(rows),
        "setups": {
            s: {
                "median_tokens": median(s, "tokens"),
                "median_seconds_per_token": median(s, "seconds_per_token"),
                "median_seconds": median(s, "seconds"),
            }
            for s in SETUPS
        },
        "held_first_over_held_full": round(
            median("held_first", "seconds_per_token") / median("held_full", "seconds_per_token"),
            3,
        ),
        "held_first_over_free": round(
            median("held_first", "seconds_per_token") / median("free", "seconds_per_token"), 3
        ),
        "held_same_text": sum(r["held_same_text"] for r in rows),
        "share_settled_first": round(
            sum(r["held_first"]["settled_first"] for r in rows) / max(held_tokens, 1), 3
        ),
        "rows": rows,
    }
    write_result("held_replies", figures)


if __name__ == "__main__":
    main()
