"""Router evaluation with the local model: none, static and dynamic few-shot examples side by
side, in one process, over the same retrieval (the ToolIndex offers the top 5 tools per query).

Sets:

- ``sample``: the sample domain's tools (``Toolbox.cards()``) and every question of
  ``data/questions/test.jsonl`` whose expected tools are among them; example pool: the cards'
  example queries and ``data/questions/examples.jsonl``.
- ``bfcl``: 200 BFCL items (``bfcl-eval==2026.3.23``) drawn with a fixed seed, a third each from
  ``multiple``, ``live_multiple`` (single-call items) and ``irrelevance`` (no tool is right),
  in a seeded random order (``--limit N`` takes a mixed sample of the three); the
  pool is every function those items list; the possible answers supply the expected arguments
  (a list of options accepts any). Example pool: the items of the same categories that were not
  drawn (their first possible answer as the call; irrelevance items as "no tool" examples).

In both, the evaluated questions are registered as test questions, so the store refuses any
example within cosine 0.9 of one of them. "none" is the baseline: the same router with no
examples. Decisions are appended to ``runs/route/<set>_records.jsonl`` (``--records F``) as they
are made, so an interrupted run resumes (``--fresh`` starts over); a records file kept in the
repository lets a run of hours go on in another checkout. Writes ``runs/route/<set>.json`` and
one confusion heatmap per mode.

With ``--gate G`` the retrieval offers no tools to a question none of whose top tools has a
cosine of at least G, and the router has the model answer it without tools (no routing
decision to get wrong); every other question is routed as without a gate, so its recorded
decision is reused. The same modes run without the gate first, in the same process (their
records replayed), and the table shows both, with how many answerable + no-tool questions the
gate offered nothing. Writes ``runs/route/<set>_gate<G>.json``.

    .venv/bin/python -m benchmarks.route --set sample
    .venv/bin/python -m benchmarks.route --set bfcl [--n 200] [--limit N] [--gate G]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.datasets import bfcl
from benchmarks.results import result_name, write_result
from toolrag import Settings, Toolbox
from toolrag.cards import ToolCard, card_from_dict
from toolrag.evaluation import (
    RouteQuery,
    RouteReport,
    examples_from_queries,
    load_route_queries,
    run_route_eval,
    save_heatmap,
)
from toolrag.routing import Example, ExampleMode, ToolCallSpec

ROOT = Path(__file__).resolve().parents[1]
MODES: list[ExampleMode] = ["none", "static", "dynamic"]
BFCL_CATEGORIES = ("multiple", "live_multiple", "irrelevance")


def _calls(truth: list[dict[str, Any]]) -> list[ToolCallSpec]:
    """A BFCL ground truth as calls: each argument's first option ("" = left out)."""
    calls = []
    for call in truth:
        ((name, args),) = call.items()
        chosen = {k: v[0] for k, v in args.items() if isinstance(v, list) and v and v[0] != ""}
        calls.append(ToolCallSpec(tool=name, arguments=chosen))
    return calls


def sample_set(tb: Toolbox) -> tuple[list[ToolCard], list[RouteQuery], list[Example]]:
    cards = tb.cards()
    names = {c.name for c in cards}
    queries = [
        q
        for q in load_route_queries(ROOT / "data" / "questions" / "test.jsonl")
        if set(q.expected_tools) <= names
    ]
    examples = examples_from_queries(
        load_route_queries(ROOT / "data" / "questions" / "examples.jsonl")
    )
    return cards, queries, examples


def bfcl_set(n: int, seed: int) -> tuple[list[ToolCard], list[RouteQuery], list[Example]]:
    items: dict[str, list[tuple[dict[str, Any], list[dict[str, Any]]]]] = {}
    with zipfile.ZipFile(bfcl.wheel()) as zf:
        for cat in BFCL_CATEGORIES:
            answers = {
                a["id"]: a.get("ground_truth") or []
                for a in bfcl._jsonl(zf, f"bfcl_eval/data/possible_answer/BFCL_v4_{cat}.json")
            }
            rows = bfcl._jsonl(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json")
            items[cat] = [
                (item, answers.get(item["id"], []))
                for item in rows
                if cat == "irrelevance" or len(answers.get(item["id"], [])) == 1
            ]
    rng = random.Random(seed)
    drawn: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    rest: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for i, cat in enumerate(BFCL_CATEGORIES):
        share = n // len(BFCL_CATEGORIES) + (i < n % len(BFCL_CATEGORIES))
        pool = list(items[cat])
        rng.shuffle(pool)
        drawn += pool[:share]
        rest += pool[share:]
    functions: dict[str, dict[str, Any]] = {}
    queries = []
    for item, truth in drawn:
        for fn in item.get("function") or []:
            functions.setdefault(fn["name"], fn)
        expected = [next(iter(t)) for t in truth]
        queries.append(
            RouteQuery(
                id=item["id"],
                query=bfcl._question(item),
                expected_tools=expected,
                expected_args=truth[0][expected[0]] if expected else {},
            )
        )
    rng.shuffle(queries)  # categories mixed: the first N of a stopped run are a fair sample
    examples = [
        Example(query=bfcl._question(item), calls=_calls(truth), source="bfcl")
        for item, truth in rest
    ]
    return [card_from_dict(f) for f in functions.values()], queries, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=["sample", "bfcl"], default="sample")
    parser.add_argument("--n", type=int, default=200, help="BFCL items drawn.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N queries.")
    parser.add_argument("--k-tools", type=int, default=5)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "route")
    parser.add_argument("--fresh", action="store_true", help="Ignore earlier records.")
    parser.add_argument(
        "--records", type=Path, default=None, help="Decision records (default: in --out)."
    )
    parser.add_argument(
        "--gate",
        type=float,
        default=None,
        help="Retrieval gate (a cosine): a question none of whose tools reaches it is offered "
        "none and answered without tools. Writes <set>_gate<G>.json.",
    )
    args = parser.parse_args()
    modes: list[ExampleMode] = [m for m in MODES if m in args.modes.split(",")]

    settings = Settings()
    tb = Toolbox(settings)
    cards, queries, examples = (
        sample_set(tb) if args.set == "sample" else bfcl_set(args.n, args.seed)
    )
    queries = queries[: args.limit or None]
    args.out.mkdir(parents=True, exist_ok=True)
    records = args.records or args.out / f"{args.set}_records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        records.unlink(missing_ok=True)
    err = Console(stderr=True)
    err.print(
        f"{args.set}: {len(cards)} tools, {len(queries)} queries "
        f"({sum(not q.expected_tools for q in queries)} with no tool), {len(examples)} candidate "
        f"examples; modes {', '.join(modes)}; LLM {type(tb.llm).__name__}"
    )
    t0 = time.perf_counter()
    reports: list[RouteReport] = []
    # with a gate, the same modes without it first (their records replayed), side by side
    for gate in [None] if args.gate is None else [None, args.gate]:
        with (
            tempfile.TemporaryDirectory(prefix="toolrag-route-") as tmp,
            Progress(console=err) as bar,
        ):
            task = bar.add_task("routing", total=len(queries) * len(modes))

            def progress(done: int, total: int, bar: Progress = bar, task: Any = task) -> None:
                bar.update(task, completed=done, total=total)

            reports += run_route_eval(
                cards, queries, modes, tb.llm, tb.embed, Path(tmp), examples=examples,
                k_tools=args.k_tools, records=records, on_progress=progress, gate=gate,
            )  # fmt: skip
    name = args.set if args.gate is None else f"{args.set}_gate{args.gate:g}"
    for report in reports:
        gated = "" if report.gate is None else f"_gate{report.gate:g}"
        save_heatmap(report, args.out / f"{args.set}{gated}_confusion_{report.examples}.png")
    payload = {
        "set": args.set,
        "n_tools": len(cards),
        "n_queries": len(queries),
        "n_example_candidates": len(examples),
        "k_tools": args.k_tools,
        "gate": args.gate,
        "seed": args.seed,
        "llm": type(tb.llm).__name__,
        "model": tb.llm.metadata.model_name,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "wall_s_this_run": round(time.perf_counter() - t0, 1),
        "reports": [r.as_json() for r in reports],
    }
    out = args.out / f"{name}.json"
    out.write_text(json.dumps(payload, indent=2))
    partial = result_name(
        f"route_{name}",
        n=args.n if args.set == "bfcl" and args.n != 200 else 0,
        limit=args.limit,
        modes=args.modes if args.modes != ",".join(MODES) else "",
    )
    write_result(partial, payload)
    table = Table(
        "examples", "gate", "offered none", "precision", "recall", "no-tool acc", "arg acc",
        "valid", "repaired", "p50 s",
        title=f"router, {args.set}: {len(queries)} queries, {len(cards)} tools",
    )  # fmt: skip
    for r in reports:
        none = f"{r.offered_none['answerable']} + {r.offered_none['no_tool']}"
        table.add_row(
            r.examples, "-" if r.gate is None else f"{r.gate:g}", none,
            f"{r.precision:.3f}", f"{r.recall:.3f}",
            "n/a" if r.no_tool_accuracy is None else f"{r.no_tool_accuracy:.3f}",
            "n/a" if r.argument_accuracy is None else f"{r.argument_accuracy:.3f}",
            f"{r.valid_rate:.3f}", str(r.repaired), f"{r.p50_s:.1f}",
        )  # fmt: skip
    Console().print(table)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
