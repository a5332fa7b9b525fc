"""``toolrag audit …``: the audit log of tool calls (``state_dir/audit.sqlite``)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolrag.errors import ToolragError
from toolrag.guard import AuditLog
from toolrag.settings import load_settings

audit_app = typer.Typer(no_args_is_help=True, help="Show the audit log of tool calls.")
out = Console()
err = Console(stderr=True)

AsJson = Annotated[bool, typer.Option("--json", help="JSON lines on stdout.")]


def _log() -> AuditLog:
    try:
        path = load_settings().state_dir / "audit.sqlite"
    except ToolragError as exc:
        err.print(f"[red]{escape(exc.message)}[/red]")
        raise typer.Exit(2) from exc
    if not path.is_file():
        err.print(f"No audit log at {path} yet: it is written by the first tool call.")
        raise typer.Exit(1)
    return AuditLog(path)


@audit_app.command("tail")
def tail(
    n: Annotated[int, typer.Option("-n", help="How many records.")] = 20,
    as_json: AsJson = False,
) -> None:
    """The latest tool calls: time, agent/profile, tool@version, status, latency, arguments
    (redacted)."""
    records = _log().tail(n)
    if as_json:
        for r in records:
            sys.stdout.write(r.model_dump_json() + "\n")
        return
    table = Table("time", "agent", "tool", "effect", "status", "ms", "arguments")
    for r in records:
        when = dt.datetime.fromtimestamp(r.ts).strftime("%Y-%m-%d %H:%M:%S")
        status = r.status + (f" {r.error_code}" if r.error_code else "")
        args = json.dumps(r.arguments, ensure_ascii=False)
        table.add_row(
            when,
            escape(r.agent),
            escape(f"{r.tool}@{r.version}"),
            r.side_effect,
            escape(status),
            f"{r.latency_ms:.1f}",
            escape(args[:120]),
        )
    out.print(table)


@audit_app.command("summary")
def summary(as_json: AsJson = False) -> None:
    """Per tool: calls, errors (timeouts included), refusals, and p50/p95 latency in ms."""
    stats = _log().summary()
    if as_json:
        for s in stats:
            sys.stdout.write(s.model_dump_json() + "\n")
        return
    table = Table("tool", "calls", "errors", "refused", "p50 ms", "p95 ms")
    for s in stats:
        table.add_row(
            escape(s.tool),
            str(s.calls),
            str(s.errors),
            str(s.refused),
            f"{s.p50_ms:.1f}",
            f"{s.p95_ms:.1f}",
        )
    out.print(table)
