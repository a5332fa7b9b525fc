"""``toolrag route`` and ``toolrag examples``: the router's decision for a question, and the
feedback loop (rate decisions, promote the good ones into few-shot examples)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from toolrag.errors import ToolragError

if TYPE_CHECKING:
    from toolrag.toolbox import Toolbox
    from toolrag.tools.result import ToolResult

examples_app = typer.Typer(no_args_is_help=True, help="Few-shot examples and the feedback loop.")
out = Console()
err = Console(stderr=True)


def _toolbox() -> Toolbox:
    from toolrag.cli.approval import cli_toolbox
    from toolrag.settings import load_settings

    return cli_toolbox(load_settings())


def _fail(exc: ToolragError) -> None:
    err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


def route(
    question: Annotated[str, typer.Argument(help="The question to route.")],
    execute: Annotated[
        bool, typer.Option("--execute/--no-execute", help="Run the calls through the guard.")
    ] = True,
    examples: Annotated[str, typer.Option(help="dynamic, static or none.")] = "dynamic",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """The router's decision for a question: validated tool calls (and their results), a
    direct answer, or a clarifying question. Prints the decision id to rate it."""
    if examples not in ("dynamic", "static", "none"):
        _fail(
            ToolragError(
                f"Unknown examples mode {examples!r}.", hint="Use dynamic, static or none."
            )
        )
    try:
        tb = _toolbox()
        result = tb.route(question, execute=execute, mode=examples)  # type: ignore[arg-type]
    except ToolragError as exc:
        _fail(exc)
        return
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
        return
    decision = result.decision
    # the model's words and the arguments are escaped: rich would take "[x]" for markup
    offered = escape(", ".join(result.tools_offered))
    out.print(f"[bold]decision[/bold] {result.id}  offered: {offered}")
    if result.tools_searched:  # the question was translated for the tool search
        out.print(f"searched as: {escape(result.tools_searched)}", highlight=False)
    if decision is None or not result.valid:
        out.print(f"[red]invalid after repair:[/red] {escape('; '.join(result.errors))}")
        return
    message = f" — {decision.message}" if decision.message else ""
    out.print(escape(f"action: {decision.action}{message}"))
    results: list[ToolResult | None] = [*result.results] or [None] * len(decision.calls)
    for call, res in zip(decision.calls, results, strict=True):
        status = "" if res is None else (" -> ok" if res.success else f" -> {res.error_code}")
        out.print(escape(f"  {call.tool}({json.dumps(call.arguments)}){status}"))
    for note in result.grounded:  # arguments the router changed to keep them in the question
        out.print(f"  [dim]grounded: {escape(note)}[/dim]")
    err.print(f"rate it: toolrag examples rate {result.id} --good|--bad")


@examples_app.command("rate")
def rate(
    decision_id: Annotated[str, typer.Argument(help="A decision id from toolrag route.")],
    good: Annotated[bool, typer.Option("--good/--bad", help="Was the decision right?")] = True,
) -> None:
    """Rate a routing decision; good ones become examples with ``promote``."""
    try:
        tb = _toolbox()
        tb.decisions.rate(decision_id, good)
    except ToolragError as exc:
        _fail(exc)
    out.print(f"{decision_id}: {'good' if good else 'bad'}")


@examples_app.command("promote")
def promote(
    unrated: Annotated[
        bool,
        typer.Option(help="Also promote unrated decisions whose calls all succeeded."),
    ] = False,
) -> None:
    """Turn confirmed routing decisions into few-shot examples (never one within cosine 0.9
    of a test question)."""
    try:
        tb = _toolbox()
        added, refused = tb.decisions.promote(tb.example_store, unrated=unrated)
    except ToolragError as exc:
        _fail(exc)
        return
    out.print(f"{added} examples added, {len(refused)} refused")
    for line in refused:
        err.print(f"  {line}")


@examples_app.command("list")
def list_examples() -> None:
    """How many examples the store holds, by source."""
    try:
        tb = _toolbox()
        store = tb.example_store
    except ToolragError as exc:
        _fail(exc)
        return
    counts = Counter(e.source for e in store._examples)
    out.print(f"{len(store)} examples: " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
