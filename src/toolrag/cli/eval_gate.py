"""``toolrag eval gate``: choose the relevance gate (or floor) for a tool pool from labelled
questions, the value ``TOOLRAG_TOOL_GATE`` (``TOOLRAG_TOOL_FLOOR``) takes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from toolrag.cli.eval import _warn_unknown, err
from toolrag.cli.tools import WithRequests, pool_index
from toolrag.errors import InputError, ToolragError
from toolrag.evaluation.cuts import Cut, CutSweep, search_depth


def _table(result: CutSweep) -> Table:
    title = (
        f"{result.cut}s for {result.strategy}: {result.n_answerable} answerable questions "
        f"(Recall@{result.k} {result.recall_uncut:.3f} uncut), {result.n_no_tool} that no tool fits"
    )
    table = Table(result.cut, "answered", f"R@{result.k}", "no tool", "balanced", "", title=title)
    for p in result.points:
        mark = "<- chosen" if p.at == result.chosen.at else ""
        table.add_row(
            f"{p.at:.2f}",
            f"{p.answered:.3f}",
            f"{p.recall:.3f}",
            "-" if p.no_tool is None else f"{p.no_tool:.3f}",
            "-" if p.balanced is None else f"{p.balanced:.3f}",
            mark,
        )
    return table


def _summary(result: CutSweep, setting: str) -> str:
    c = result.chosen
    why = "" if result.keep is None else f"keeps at least {result.keep:g}; "
    if c.balanced is None or c.no_tool is None:  # no question no tool fits
        line = (
            f"{result.strategy}: {setting}={c.at:g} ({why}the highest such cut: {c.answered:.3f} "
            f"of answerable questions keep tools; Recall@{result.k} {result.recall_uncut:.3f} "
            f"-> {c.recall:.3f})"
        )
    else:
        line = (
            f"{result.strategy}: {setting}={c.at:g} ({why}balanced accuracy {c.balanced:.3f}: "
            f"{c.answered:.3f} of answerable questions keep tools, {c.no_tool:.3f} of the others "
            f"get none; Recall@{result.k} {result.recall_uncut:.3f} -> {c.recall:.3f})"
        )
    h = result.held_out
    if h is None:
        line += "; too few questions of one kind to choose on half and score on the other"
    elif h.balanced is None or h.no_tool is None:
        line += (
            f"; chosen on half the questions, {h.at:g} keeps tools for {h.answered:.3f} of the "
            "other half"
        )
    else:
        line += (
            f"; chosen on half the questions, {h.at:g} scores {h.balanced:.3f} on the other half "
            f"({h.answered:.3f} / {h.no_tool:.3f})"
        )
    return line


def eval_gate(
    queries: Annotated[
        list[Path] | None,
        typer.Option(
            help="JSONL {id, query, expected_tools}: questions a tool fits and questions none "
            "does (expected_tools: []). Repeat for several files."
        ),
    ] = None,
    requests: Annotated[
        bool,
        typer.Option(
            "--requests",
            help="Also search the pool's LLM-written requests (`toolrag tools synth`) as "
            "questions their card fits, each with its card's requests withheld; with no "
            "question no tool fits, --keep chooses the highest cut that keeps that share.",
        ),
    ] = False,
    tools: Annotated[
        Path | None,
        typer.Option(
            help="A JSON tool list (any shape `eval tools` takes); default: the toolbox's own "
            "ToolIndex, with its written requests."
        ),
    ] = None,
    strategy: Annotated[
        str, typer.Option(help="best, dense, hybrid, objectindex-default or 'all'.")
    ] = "best",
    k: Annotated[int, typer.Option(min=1, max=100, help="Tools offered per question.")] = 5,
    floor: Annotated[
        bool, typer.Option("--floor", help="Sweep floors (each tool cut alone) instead of gates.")
    ] = False,
    keep: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Choose the cut that leaves most no-tool questions without tools among those "
            "that still offer tools to at least this share of answerable ones (say 0.98), "
            "instead of the one of best balanced accuracy; without no-tool questions (say "
            "with --requests alone), the highest of those cuts.",
        ),
    ] = None,
    start: Annotated[float, typer.Option(help="The lowest cut tried.")] = 0.05,
    stop: Annotated[float, typer.Option(help="The highest cut tried.")] = 0.7,
    step: Annotated[float, typer.Option(help="Between two cuts tried.")] = 0.05,
    synthetic: WithRequests = False,
    index_dir: Annotated[
        Path | None,
        typer.Option(help="With --tools: keep toolrag's index in this folder between runs."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The sweeps as JSON on stdout.")] = False,
) -> None:
    """Choose a relevance gate (or floor) for a pool: search each labelled question once, score
    every cut from the cosines, and print the cut of best balanced accuracy between questions
    kept with tools and questions left without, also as chosen on half the questions and
    scored on the other half. Without labelled questions, --requests --keep 0.98 chooses it
    from the pool's LLM-written requests: the highest cut that still offers tools to that
    share of them."""
    from toolrag.evaluation.cuts import cut_grid, rank_queries, sweep
    from toolrag.evaluation.held_requests import rank_written_requests
    from toolrag.evaluation.retrieval import RetrievalQuery, load_queries
    from toolrag.evaluation.tools_eval import FLOORED, scored_searcher
    from toolrag.settings import load_settings

    cut: Cut = "floor" if floor else "gate"
    try:
        if not queries and not requests:
            raise InputError(
                "Nothing to choose a cut from.",
                hint="Give labelled questions (--queries Q.jsonl, repeatable), or the pool's "
                "written requests with --requests --keep 0.98.",
            )
        chosen = list(FLOORED) if strategy == "all" else [strategy]
        if any(s not in FLOORED for s in chosen):
            raise InputError(
                f"Unknown or uncut strategy {strategy!r}.",
                hint=f"A cut needs cosines: use one of {', '.join(FLOORED)} or all.",
            )
        if requests:
            if strategy == "objectindex-default":
                raise InputError(
                    "Plain ObjectIndex indexes no written requests to withhold, so --requests "
                    "cannot choose its cut.",
                    hint="Give labelled --queries for it, or use --strategy best, dense or hybrid.",
                )
            if "objectindex-default" in chosen:
                err.print("note: plain ObjectIndex left out: it indexes no written requests")
            chosen = [s for s in chosen if s != "objectindex-default"]
        cuts = cut_grid(start, stop, step)
        settings = load_settings()
        qs: list[RetrievalQuery] = []
        for path in queries or []:
            qs += load_queries(path, "expected_tools")
        results: list[CutSweep] = []
        with pool_index(settings, tools, synthetic or requests, index_dir) as index:
            cards = list(index.cards.values())
            _warn_unknown(qs, (c.name for c in cards), "tool(s)")
            depth = search_depth(cut, k)
            for name in chosen:
                search = scored_searcher(name, cards, index.embed, index)
                ranked = rank_queries(qs, search, depth)
                if requests:
                    ranked += rank_written_requests(index, name, depth)  # type: ignore[arg-type]
                results.append(sweep(name, ranked, cut, cuts, k, keep))
    except ToolragError as exc:
        err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from exc
    if as_json:
        payload = [r.model_dump(mode="json") for r in results]
        sys.stdout.write(json.dumps(payload[0] if len(payload) == 1 else payload) + "\n")
        return
    out = Console()
    setting = f"TOOLRAG_TOOL_{cut.upper()}"
    for r in results:
        out.print(_table(r))
    for r in results:
        out.print(_summary(r, setting), highlight=False, soft_wrap=True)
