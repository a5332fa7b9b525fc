"""How fast the local model reads a prompt and writes a reply, on this machine.

The seconds of an agent question on the local path are almost all model time: the prompt
tokens the model has not cached (it re-reads a prompt from the first token that differs from
the last one) and the tokens it writes. This measures both rates with the local GGUF as toolrag
loads it (``llm_threads`` threads, batch 256), uncached prompts of several lengths cut from the
repository's docs, each read ``--repeats`` times (the median kept), and one reply of
``--reply`` tokens. Baseline in the same run: the same prompts read with half the threads, so
that the rate is shown to follow the cores.

From the two rates it works out the seconds of a question of two model calls (router, then the
answer) for a number of new prompt tokens, and the new prompt tokens a question may take to
answer in 20 s (issue 49's median target) with ``--reply-tokens`` written in all.

Also measured in the same run: the model loaded with its weights not repacked for this CPU's
matrix kernels (``local_repacked_weights=False``), and the ratio of its rates to the default's.

    .venv/bin/python -m benchmarks.model_speed [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.results import write_result
from toolrag import Settings
from toolrag.models import make_llm, require_model

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (250, 500, 1000, 2000)


def _text() -> str:
    """Plain English prose for prompts: the docs, concatenated."""
    return "\n\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))


def _read_rate(llm: Any, tokens: list[int], repeats: int) -> float:
    """Median seconds to read ``tokens`` from an empty cache."""
    times = []
    for _ in range(repeats):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(threads: int, repeats: int, reply: int, repacked: bool = True) -> dict[str, Any]:
    """Prompt-reading seconds per length and the writing rate with ``threads`` threads, the
    model loaded as toolrag loads it (``make_llm``), its weights repacked for this CPU's
    kernels or not (``local_repacked_weights``)."""
    settings = Settings(
        llm_provider="local",
        llm_threads=threads,
        context_window=4096,
        local_prompt_states_mb=0,  # each read starts from an empty cache
        local_draft_tokens=0,
        local_repacked_weights=repacked,
    )
    llm: Any = make_llm(settings)._model  # type: ignore[attr-defined]  # the llama_cpp.Llama
    tokens = llm.tokenize(_text().encode())
    read = {n: _read_rate(llm, tokens[:n], repeats) for n in LENGTHS}
    llm.reset()
    prompt = llm.detokenize(tokens[:200]).decode(errors="ignore")
    started = time.perf_counter()
    out = llm.create_completion(prompt, max_tokens=reply, temperature=0.0, stream=False)
    total = time.perf_counter() - started
    assert isinstance(out, dict)  # not streamed
    written = int(out["usage"]["completion_tokens"])
    read_200 = _read_rate(llm, tokens[:200], 1)
    write_seconds = max(total - read_200, 1e-6) / max(written, 1)
    longest = LENGTHS[-1]
    return {
        "threads": threads,
        "repacked_weights": repacked,
        "read_seconds": {str(n): round(s, 3) for n, s in read.items()},
        "read_tokens_per_second": round(longest / read[longest], 1),
        "written_tokens": written,
        "write_tokens_per_second": round(1 / write_seconds, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reply", type=int, default=64, help="Tokens to write once.")
    parser.add_argument(
        "--reply-tokens", type=int, default=100, help="Tokens a question's two calls write."
    )
    parser.add_argument("--name", default="model_speed", help="Result file name.")
    args = parser.parse_args(argv)
    threads = Settings().llm_threads
    ours = measure(threads, args.repeats, args.reply)
    half = measure(max(1, threads // 2), args.repeats, args.reply) if threads > 1 else None
    unpacked = measure(threads, args.repeats, args.reply, repacked=False)
    read, write = ours["read_tokens_per_second"], ours["write_tokens_per_second"]
    budget = (20.0 - args.reply_tokens / write) * read
    question = {
        str(n): round(n / read + args.reply_tokens / write, 1) for n in (1000, 1500, 2000, 3000)
    }
    figures = {
        "benchmark": "model_speed",
        "model": Path(require_model(Settings().model_dir)).name,
        "toolrag": ours,
        "baseline_half_threads": half,
        "weights_not_repacked": unpacked,
        "not_repacked_vs_repacked": {
            "read": round(unpacked["read_tokens_per_second"] / read, 3),
            "write": round(unpacked["write_tokens_per_second"] / write, 3),
        },
        "reply_tokens_per_question": args.reply_tokens,
        "seconds_per_question_by_new_prompt_tokens": question,
        "new_prompt_tokens_for_20s": int(budget),
    }
    print(f"read {read} tokens/s, write {write} tokens/s with {threads} threads")
    if half:
        print(f"baseline, {half['threads']} thread(s): read {half['read_tokens_per_second']}/s")
    print(f"a question answered in 20 s reads at most {int(budget)} new prompt tokens")
    print(
        f"weights not repacked: read {unpacked['read_tokens_per_second']}/s, "
        f"write {unpacked['write_tokens_per_second']}/s"
    )
    write_result(args.name, figures, module="model_speed")


if __name__ == "__main__":
    main()
