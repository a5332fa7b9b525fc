"""The terminal's approval prompt for delete/external calls (``approval = "prompt"``)."""

from __future__ import annotations

import sys

from rich.console import Console

from toolrag.guard.policy import ApprovalRequest
from toolrag.settings import Settings
from toolrag.toolbox import Toolbox

_err = Console(stderr=True)


def prompt_approval(request: ApprovalRequest) -> bool:
    """Ask on the terminal; without one (a script, CI) the answer is no."""
    if not sys.stdin or not sys.stdin.isatty():
        _err.print(f"[yellow]denied (no terminal to ask):[/] {request.prompt()}")
        return False
    _err.print(f"[bold yellow]approval needed[/] {request.prompt()}")
    if request.description:
        _err.print(f"  {request.description}")
    try:
        reply = input("  approve? [y/N] ")
    except EOFError:
        return False
    return reply.strip().lower() in ("y", "yes")


def cli_toolbox(settings: Settings) -> Toolbox:
    """The toolbox a command runs: with ``approval = "prompt"`` the terminal asks."""
    return Toolbox(settings, approve=prompt_approval if settings.approval == "prompt" else None)
