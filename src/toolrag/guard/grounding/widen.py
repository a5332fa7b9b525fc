"""One more try for a read call that found nothing with dates the question never gave.

A small model adds date filters a question never asked for (``since: 2023-01-01`` for "How many
working days has the Oslo store lost to weather?"), the call finds nothing, and the model
answers "none". When a read call with optional date arguments finds nothing and the question
names no time at all (:func:`toolrag.guard.grounding.timewords.mentions_time`), the guard runs it
once more
without those dates, as its own audited step.
"""

from __future__ import annotations

from typing import Any

from toolrag.guard.executor import ToolGuard
from toolrag.guard.grounding.timewords import iso_dates, mentions_time
from toolrag.tools.result import ToolResult


async def without_invented_dates(
    guard: ToolGuard,
    name: str,
    arguments: dict[str, Any],
    result: ToolResult,
    *,
    question: str,
    run_id: str,
    step: int,
) -> ToolResult | None:
    """The result to give the model instead of ``result``, or None when no second call ran.

    Only an empty ``result`` of a ``read`` tool qualifies, when ``question`` names no time and
    some optional arguments are dates. The call then runs again without them as ``step``: its
    results, if it found any, come back with a note naming the dates left out; if it found
    nothing either, ``result`` stands (returned as is). Required arguments are never dropped.
    """
    card = guard.card(name)
    if not result.empty or card is None or card.side_effect != "read" or not question:
        return None
    dates = iso_dates(arguments, card.parameters.get("required") or [])
    if not dates or mentions_time(question):
        return None
    wider = await guard.acall(
        name, {k: v for k, v in arguments.items() if k not in dates}, run_id=run_id, step=step
    )
    if not wider.success or wider.empty:
        return result
    left_out = ", ".join(f"{k}={arguments[k]!r}" for k in dates)
    wider.suggestion = (
        f"Nothing matched {left_out}, dates the question does not give: these are the results "
        f"of {name} without them."
    )
    return wider
