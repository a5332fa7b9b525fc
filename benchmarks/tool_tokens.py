"""Prompt cost of one agent step: every tool in the prompt against the retrieved tools.

Counts, with the local model's own tokenizer (Qwen2.5-Coder GGUF, vocab only), the prompt
tokens of the first ReAct step for the sample questions, with pools of 50 and 500 tools (the
sample domain's tools plus BFCL distractors). Baseline: all tools in the prompt, as a plain
ReActAgent over a fixed tool list does (stock JSON-Schema tool blocks). Ours: the ToolIndex's
top ``k`` tools in the agent's compact argument-list blocks (``toolrag.tools.prompting``); the
retrieved tools in stock blocks are reported too, to separate the two effects.

    .venv/bin/python -m benchmarks.tool_tokens [--k 4] [--out runs/tool_tokens.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool, ToolMetadata
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl
from benchmarks.results import result_name, write_result
from toolrag import Settings, Toolbox, load_questions
from toolrag.agent import SYSTEM_PROMPT
from toolrag.cards import ToolCard, cards_from_tools, load_tool_list
from toolrag.evaluation import schema_model
from toolrag.models import chatml_messages_to_prompt, require_model
from toolrag.retrieval import ToolIndex
from toolrag.tools import CompactReActFormatter

ROOT = Path(__file__).resolve().parents[1]


def as_tool(card: ToolCard) -> FunctionTool:
    return FunctionTool(
        fn=lambda **kw: None,
        metadata=ToolMetadata(
            name=card.name, description=card.description, fn_schema=schema_model(card)
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "tool_tokens.json")
    args = parser.parse_args()
    from llama_cpp import Llama

    # the sample SQLite database (``run_sql``) built in a scratch index folder, so the sample
    # tools are all there whether or not ``toolrag index`` has run in this checkout
    state = tempfile.TemporaryDirectory()
    settings = Settings(data_dir=ROOT / "data", index_dir=Path(state.name))
    vocab = Llama(model_path=str(require_model(settings.model_dir)), vocab_only=True, verbose=False)
    tb = Toolbox(settings)
    tb.build_database()
    sample = tb.tools()
    sample_cards = cards_from_tools(sample)
    bfcl_cards = load_tool_list(bfcl.load(ROOT / "runs" / "bfcl")[0])
    rng = random.Random(7)
    questions = [
        q.query
        for q in load_questions(ROOT / "data" / "questions" / "test.jsonl")
        if set(q.expected_tools) <= {t.metadata.get_name() for t in sample}
    ]
    stock = ReActChatFormatter.from_defaults(context=SYSTEM_PROMPT)
    compact = CompactReActFormatter.from_defaults(context=SYSTEM_PROMPT)

    def tokens(tools: list[FunctionTool], question: str, formatter: ReActChatFormatter) -> int:
        messages = formatter.format(
            tools, chat_history=[ChatMessage(role="user", content=question)]
        )
        return len(vocab.tokenize(chatml_messages_to_prompt(messages).encode(), special=True))

    rows = []
    for size in (50, 500):
        distractors = rng.sample(bfcl_cards, size - len(sample_cards))
        cards = sample_cards + distractors
        tools = [*sample, *(as_tool(c) for c in distractors)]
        by_name = {t.metadata.get_name(): t for t in tools}
        with tempfile.TemporaryDirectory() as tmp:
            index = ToolIndex(Path(tmp), tb.embed)
            index.sync(cards)
            all_tokens, stock_tokens, rag_tokens = [], [], []
            for q in questions:
                picked = [by_name[h.name] for h in index.retrieve(q, k=args.k)]
                all_tokens.append(tokens(tools, q, stock))
                stock_tokens.append(tokens(picked, q, stock))
                rag_tokens.append(tokens(picked, q, compact))
        med_all, med_rag = statistics.median(all_tokens), statistics.median(rag_tokens)
        rows.append(
            {
                "pool": size,
                "questions": len(questions),
                "k": args.k,
                "all_tools_median_tokens": med_all,
                "retrieved_stock_prompt_median_tokens": statistics.median(stock_tokens),
                "retrieved_median_tokens": med_rag,
                "reduction": round(1 - med_rag / med_all, 4),
                "fits_4096_context_all_tools": max(all_tokens) <= 4096,
            }
        )
    result = {
        "benchmark": "tool_tokens",
        "tokenizer": "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    write_result(result_name("tool_tokens", k=args.k if args.k != 4 else 0), result)
    table = Table(
        "pool",
        "all tools (median tokens)",
        f"top-{args.k} retrieved",
        "reduction",
        title="prompt tokens of one agent step",
    )
    for r in rows:
        table.add_row(
            str(r["pool"]),
            f"{r['all_tools_median_tokens']:.0f}",
            f"{r['retrieved_median_tokens']:.0f}",
            f"{r['reduction']:.1%}",
        )
    Console().print(table)
    print(f"JSON written to {args.out}")
    state.cleanup()


if __name__ == "__main__":
    main()
