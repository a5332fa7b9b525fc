"""A read call run with the filters the question names (:mod:`toolrag.guard.grounding.filters`).

The call as completed runs through the guard as its own audited step. When filters were added,
its result says which filters were applied and which of them were added; when the added
filters find nothing, the call runs once more as the model wrote it, so a filter read wrongly
from the question costs a step, never the answer. Calls of write, delete and external tools are
never completed: the model's arguments for an action are the model's (and a person's, for a
gated one). A read call's listing comes back with the rows that name the question's
distinctive words first (:mod:`toolrag.guard.focus`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolrag.guard.executor import ToolGuard
from toolrag.guard.focus import focus_rows
from toolrag.guard.grounding.filters import complete_filters
from toolrag.tools.result import ToolResult


@dataclass
class Narrowed:
    """A call's result, the arguments it ran with, and the guarded steps it took."""

    result: ToolResult
    arguments: dict[str, Any]
    steps: int = 1
    added: dict[str, Any] = field(default_factory=dict)


async def call_with_named_filters(
    guard: ToolGuard,
    name: str,
    arguments: dict[str, Any],
    *,
    question: str,
    run_id: str,
    step: int,
    approved: bool | None = None,
) -> Narrowed:
    """Run ``name`` through ``guard`` as step ``step``, with the filters ``question`` names
    added to a read call that left them out (the guard's ``vocabulary``)."""
    card = guard.card(name)
    if card is None or card.side_effect != "read" or not question:
        result = await guard.acall(name, arguments, run_id=run_id, step=step, approved=approved)
        return Narrowed(result, arguments)
    done = complete_filters(question, name, card.parameters, arguments, guard.vocabulary)
    result = await guard.acall(name, done.arguments, run_id=run_id, step=step, approved=approved)
    if done.added and result.empty:
        plain = await guard.acall(name, arguments, run_id=run_id, step=step + 1)
        if plain.success and not plain.empty:
            added = ", ".join(f"{k}={v!r}" for k, v in done.added.items())
            return Narrowed(
                focus_rows(question, plain).with_note(
                    f"With {added} (filters the question seems to name) nothing was found: "
                    f"these are the results of {name} as called."
                ),
                arguments,
                steps=2,
            )
    return Narrowed(
        focus_rows(question, result).with_note(done.note()), done.arguments, added=done.added
    )
