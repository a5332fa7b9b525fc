"""``toolrag eval …``: retrieval evaluation on any tool pool or document set a user brings."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from toolrag.errors import ToolragError
from toolrag.evaluation.retrieval import RetrievalQuery, RetrievalReport, unknown_expected

eval_app = typer.Typer(no_args_is_help=True, help="Evaluate tool and document retrieval.")
err = Console(stderr=True)


def _table(title: str, reports: list[RetrievalReport], items: str) -> Table:
    no_tool = any(r.no_tool_accuracy is not None for r in reports)
    columns = ["strategy", "R@k", "MRR", "nDCG@10", "p50 ms", "p95 ms", items, "queries"]
    table = Table(*columns, *(["no-tool acc", "no-tool q"] if no_tool else []), title=title)
    for r in reports:
        recall = " ".join(f"@{k}={v:.3f}" for k, v in r.recall.items())
        row = [
            r.strategy,
            recall,
            f"{r.mrr:.3f}",
            f"{r.ndcg10:.3f}",
            f"{r.p50_ms:.1f}",
            f"{r.p95_ms:.1f}",
            str(r.n_items),
            str(r.n_queries),
        ]
        if no_tool:
            acc = r.no_tool_accuracy
            row += ["n/a" if acc is None else f"{acc:.3f}", str(r.n_no_tool)]
        table.add_row(*row)
    return table


def _warn(text: str, names: Sequence[str]) -> None:
    """A warning on stderr: ``text`` and the first ten ``names`` (with how many more)."""
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    err.print(
        f"[yellow]warning:[/yellow] {text}: {', '.join(names[:10])}{more}",
        highlight=False,
        soft_wrap=True,
    )


def _warn_unknown(queries: Sequence[RetrievalQuery], known: Iterable[str], what: str) -> None:
    """Say which expected items the pool lacks: they can never be retrieved."""
    missing = unknown_expected(queries, known)
    if missing:
        _warn(f"{len(missing)} expected {what} not in the pool, counted as misses", missing)


def _write_misses(path: Path, reports: list[RetrievalReport]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for r in reports:
            for miss in r.misses:
                fh.write(json.dumps({"strategy": r.strategy, **miss}) + "\n")
    err.print(f"missed queries written to {path}")


def _run(
    strategy: str,
    known: Sequence[str],
    k: str,
    evaluate: Callable[[list[str], list[int]], list[RetrievalReport]],
    as_json: bool,
    misses: Path,
    title: str,
    items_key: str,
) -> list[RetrievalReport]:
    """Check the options, run ``evaluate(strategies, ks)``, write misses, print table or JSON;
    return the reports."""
    try:
        chosen = list(known) if strategy == "all" else [strategy]
        unknown = [s for s in chosen if s not in known]
        if unknown:
            raise ToolragError(
                f"Unknown strategy {unknown[0]!r}.",
                hint=f"Use one of {', '.join(known)} or all.",
            )
        reports = evaluate(chosen, [int(x) for x in k.split(",") if x.strip()])
    except ValueError as exc:
        err.print(f"[red]error:[/red] --k must be integers like 1,5,10 ({exc}).")
        raise typer.Exit(2) from exc
    except ToolragError as exc:
        err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from exc
    _write_misses(misses, reports)
    left_out = next((r.n_no_tool for r in reports if r.no_tool_accuracy is None), 0)
    if left_out:
        tools = items_key == "n_tools"
        expect = "query expects" if left_out == 1 else "queries expect"
        err.print(
            f"note: {left_out} {expect} no {'tool' if tools else 'document'}; left out of the "
            f"metrics{' (give --floor F or --gate G to score them)' if tools else ''}.",
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        payload = [r.as_json(items_key) for r in reports]
        sys.stdout.write(json.dumps(payload[0] if len(payload) == 1 else payload) + "\n")
    else:
        Console().print(_table(title, reports, items_key))
    return reports


@eval_app.command("tools")
def eval_tools(
    tools: Annotated[
        Path,
        typer.Option(help="JSON tool list (name/description/parameters, OpenAI or MCP shapes)."),
    ],
    queries: Annotated[Path, typer.Option(help="JSONL {id, query, expected_tools}.")],
    strategy: Annotated[
        str, typer.Option(help="objectindex-default, dense, bm25, hybrid, best or 'all'.")
    ] = "best",
    k: Annotated[str, typer.Option(help="Cut-offs for Recall@k, comma-separated.")] = "1,5,10",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    misses: Annotated[Path, typer.Option(help="Where to write missed queries.")] = Path(
        "runs/eval_tools_misses.jsonl"
    ),
    synthetic: Annotated[
        bool,
        typer.Option(
            help="Index the LLM-written requests cached by `toolrag tools synth` with the cards "
            "(toolrag's strategies; the plain ObjectIndex baseline stays as LlamaIndex builds it)."
        ),
    ] = False,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            help="Keep toolrag's ToolIndex in this folder: a later run over the same pool embeds "
            "only the cards that changed (default: a temporary folder, embedded every run)."
        ),
    ] = None,
    translate: Annotated[
        bool,
        typer.Option(
            help="Search a question not in English (another alphabet or language) with the "
            "configured LLM's English translation (toolrag's strategies; cached in the state "
            "folder's translations.sqlite, so only a first run pays the LLM's time)."
        ),
    ] = False,
    floor: Annotated[
        float | None,
        typer.Option(
            help="Relevance floor (a cosine): tools below it are dropped, so queries that "
            "expect no tool are scored too (no_tool_accuracy: the share that got none). Applies "
            "to objectindex-default (LlamaIndex's SimilarityPostprocessor), dense, hybrid and "
            "best; bm25 has no cosine and is left out."
        ),
    ] = None,
    gate: Annotated[
        float | None,
        typer.Option(
            help="Relevance gate (a cosine): a query gets no tools when none of its top k "
            "reaches it, else all k whatever their own cosines (what TOOLRAG_TOOL_GATE does for "
            "the agent). Each Recall@k is searched at its own k, so the gate sees the k tools "
            "an agent would be offered; the queries that expect no tool are scored like "
            "--floor, at the largest k, for the same strategies."
        ),
    ] = None,
) -> None:
    """Recall@k, MRR, nDCG@10 and latency of tool retrieval, beside plain ObjectIndex."""
    from toolrag.cards.card import load_tool_list
    from toolrag.cards.synthetic import SyntheticQueries
    from toolrag.evaluation.retrieval import load_queries
    from toolrag.evaluation.tools_eval import FLOORED, STRATEGIES, run_tool_eval
    from toolrag.models.embeddings import make_embedding
    from toolrag.settings import Settings

    def run(chosen: list[str], ks: list[int]) -> list[RetrievalReport]:
        cut = " and ".join(n for n, v in (("--floor", floor), ("--gate", gate)) if v is not None)
        if cut:
            if not any(s in FLOORED for s in chosen):
                raise ToolragError(
                    f"{cut} needs cosine scores, and bm25 has none.",
                    hint=f"Use {cut} with {', '.join(FLOORED)} or all.",
                )
            if "bm25" in chosen:
                err.print(f"note: bm25 left out: it has no cosine for {cut} to cut.")
            chosen = [s for s in chosen if s in FLOORED]
        settings = Settings()
        conflicts: list[str] = []
        cards = load_tool_list(tools, conflicts)
        if conflicts:
            _warn(
                f"{len(conflicts)} tool name(s) listed more than once with different content; "
                "the first of each is kept",
                conflicts,
            )
        if synthetic:
            cards = SyntheticQueries(settings.synthetic_db).augment(cards)
        qs = load_queries(queries, "expected_tools")
        _warn_unknown(qs, (c.name for c in cards), "tool(s)")
        translator = None
        if translate:
            from toolrag.models.llms import make_llm
            from toolrag.retrieval.translation import QueryTranslator

            translator = QueryTranslator(settings.translations_db, lambda: make_llm(settings))
        embed = make_embedding(settings)
        return run_tool_eval(cards, qs, chosen, embed, ks, index_dir, translator, floor, gate)

    _run(strategy, STRATEGIES, k, run, as_json, misses, "tool retrieval", "n_tools")


@eval_app.command("docs")
def eval_docs(
    docs: Annotated[Path, typer.Option(help="JSONL {id, title?, text, metadata?}.")],
    queries: Annotated[Path, typer.Option(help="JSONL {id, query, expected_docs}.")],
    strategy: Annotated[
        str,
        typer.Option(
            help="vectorstoreindex-default, dense, bm25, hybrid, dense-whole, hybrid-whole "
            "(chunks embedded whole: chunking.vectors) or 'all'."
        ),
    ] = "all",
    k: Annotated[str, typer.Option(help="Cut-offs for Recall@k, comma-separated.")] = "1,5,10",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    misses: Annotated[Path, typer.Option(help="Where to write missed queries.")] = Path(
        "runs/eval_docs_misses.jsonl"
    ),
) -> None:
    """Recall@k, MRR, nDCG@10 and latency of document retrieval through the content index
    (chunking, hybrid search), beside plain LlamaIndex VectorStoreIndex."""
    from toolrag.evaluation.docs_eval import DOC_STRATEGIES, run_docs_eval, vectors_hint
    from toolrag.evaluation.retrieval import load_queries
    from toolrag.models.embeddings import make_embedding
    from toolrag.settings import Settings

    def run(chosen: list[str], ks: list[int]) -> list[RetrievalReport]:
        qs = load_queries(queries, "expected_docs")
        return run_docs_eval(
            docs, qs, chosen, make_embedding(Settings()), ks,
            on_loaded=lambda ids: _warn_unknown(qs, ids, "document(s)"),
        )  # fmt: skip

    title = "document retrieval"
    reports = _run(strategy, DOC_STRATEGIES, k, run, as_json, misses, title, "n_docs")
    hint = vectors_hint(reports)
    if hint and not as_json:
        err.print(f"note: {hint}", highlight=False, soft_wrap=True)


@eval_app.command("route")
def eval_route(
    tools: Annotated[Path, typer.Option(help="JSON tool list (any of the three shapes).")],
    queries: Annotated[
        Path, typer.Option(help="JSONL {id, query, expected_tools, expected_args?}.")
    ],
    examples: Annotated[str, typer.Option(help="none, static, dynamic or 'all'.")] = "all",
    example_file: Annotated[
        Path | None,
        typer.Option(help="JSONL questions with expected tools/args to use as examples."),
    ] = None,
    limit: Annotated[int, typer.Option(help="Only the first N queries (0: all).")] = 0,
    k_tools: Annotated[int, typer.Option(help="Tools retrieved and offered per query.")] = 5,
    png: Annotated[Path, typer.Option(help="Confusion-matrix heatmap (one per mode).")] = Path(
        "runs/route_confusion.png"
    ),
    records: Annotated[
        Path | None,
        typer.Option(
            help="JSONL file that keeps every decision; a re-run with the same setup resumes."
        ),
    ] = None,
    gate: Annotated[
        float | None,
        typer.Option(
            help="Retrieval gate (a cosine, TOOLRAG_TOOL_GATE): a query none of whose tools "
            "reaches it is offered none, and the model answers it without tools."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Router precision/recall (overall and per tool), confusion matrix, "no tool" accuracy and
    argument accuracy, for none, static and dynamic few-shot examples side by side."""
    import tempfile

    from rich.progress import Progress

    from toolrag.cards.card import load_tool_list
    from toolrag.evaluation.route_eval import (
        examples_from_queries,
        load_route_queries,
        run_route_eval,
        save_heatmap,
    )
    from toolrag.models.embeddings import make_embedding
    from toolrag.models.llms import make_llm
    from toolrag.settings import load_settings

    modes = ["none", "static", "dynamic"] if examples == "all" else [examples]
    try:
        if any(m not in ("none", "static", "dynamic") for m in modes):
            raise ToolragError(
                f"Unknown examples mode {examples!r}.", hint="Use none, static, dynamic or all."
            )
        settings = load_settings()
        cards = load_tool_list(tools)
        qs = load_route_queries(queries)[: limit or None]
        extra = examples_from_queries(load_route_queries(example_file)) if example_file else []
        with (
            tempfile.TemporaryDirectory(prefix="toolrag-route-") as tmp,
            Progress(console=err, transient=True) as bar,
        ):
            task = bar.add_task("routing", total=len(qs) * len(modes))
            reports = run_route_eval(
                cards, qs, modes, make_llm(settings), make_embedding(settings), Path(tmp),  # type: ignore[arg-type]
                examples=extra, k_tools=k_tools, records=records,
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
                gate=gate,
            )  # fmt: skip
    except ToolragError as exc:
        err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from exc
    for report in reports:
        path = png.with_name(f"{png.stem}_{report.examples}{png.suffix}")
        save_heatmap(report, path)
        err.print(f"confusion heatmap written to {path}")
    if as_json:
        payload = [r.as_json() for r in reports]
        sys.stdout.write(json.dumps(payload[0] if len(payload) == 1 else payload) + "\n")
        return
    table = Table("examples", "precision", "recall", "no-tool acc", "arg acc", "valid", "p50 s",
                  title=f"router: {len(qs)} queries, {len(cards)} tools")  # fmt: skip
    for r in reports:
        table.add_row(
            r.examples,
            f"{r.precision:.3f}",
            f"{r.recall:.3f}",
            "n/a" if r.no_tool_accuracy is None else f"{r.no_tool_accuracy:.3f}",
            "n/a" if r.argument_accuracy is None else f"{r.argument_accuracy:.3f}",
            f"{r.valid_rate:.3f}",
            f"{r.p50_s:.1f}",
        )
    Console().print(table)
    per_tool = Table("tool", "precision", "recall", "support", title="per tool (last mode)")
    for tool, m in sorted(reports[-1].per_tool.items()):
        per_tool.add_row(
            tool, f"{m['precision']:.2f}", f"{m['recall']:.2f}", str(int(m["support"]))
        )
    Console().print(per_tool)
