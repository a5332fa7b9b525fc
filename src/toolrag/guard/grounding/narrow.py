"""A read call run with the filters the question names (:mod:`toolrag.guard.grounding.filters`).

The call as completed runs through the guard as its own audited step; a filter the model wrote
as a word for every value (``project="all"``) is left out of it
(:mod:`toolrag.guard.grounding.wildcards`). When filters were added,
its result says which filters were applied and which of them were added; when the added
filters find nothing, the call runs once more as the model wrote it, so a filter read wrongly
from the question costs a step, never the answer. The same holds when a filter added from a
plain word of the question (a status such as ``complete`` in "when is the roof planned to be
complete?") leaves out the rows that name the question's words best: the call runs without
that filter, and its result is kept when it holds rows that name them better (not for a
value the question names only by a gloss of several words, "on the calendar"). Calls of
write, delete and external tools are never completed: the model's arguments for an action are
the model's (and a person's, for a gated one). A read call's listing comes back with the rows
that name the question's distinctive words first (:mod:`toolrag.guard.focus`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from toolrag.guard.executor import ToolGuard
from toolrag.guard.focus import best_rows, focus_rows, listing_rows
from toolrag.guard.grounding.filters import Completion, complete_filters
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
    # a filter the model wrote as "all" or "any" is left out, also when the call runs as written
    written = {k: v for k, v in arguments.items() if k not in done.dropped}
    result = await guard.acall(name, done.arguments, run_id=run_id, step=step, approved=approved)
    if done.added and result.empty:
        plain = await guard.acall(name, written, run_id=run_id, step=step + 1)
        if plain.success and not plain.empty:
            added = ", ".join(f"{k}={v!r}" for k, v in done.added.items())
            return Narrowed(
                focus_rows(question, plain)
                .with_note(
                    f"With {added} (filters the question seems to name) nothing was found: "
                    f"these are the results of {name} as called."
                )
                .with_note(done.dropped_note()),
                written,
                steps=2,
            )
    worded = [
        k
        for k, v in done.added.items()
        if isinstance(v, str) and _WORD_VALUE.fullmatch(v) and k not in done.glossed
    ]
    if worded and result.success and not result.empty:
        kept = {k: v for k, v in done.added.items() if k not in worded}
        plain_args = {k: v for k, v in done.arguments.items() if k not in worded}
        plain = await guard.acall(name, plain_args, run_id=run_id, step=step + 1)
        if _left_out(question, result, plain):
            dropped = ", ".join(f"{k}={done.added[k]!r}" for k in worded)
            note = (
                f"With {dropped} (a filter the question seems to name) the rows that name the "
                f"question's words best were left out: these are the results without it."
            )
            # the filters it ran with, the dropped ones left out (not worked out again: the
            # question would name them again)
            applied = {k: v for k, v in done.applied.items() if k not in worded}
            kept_note = Completion(
                arguments=plain_args, added=kept, applied=applied, dropped=done.dropped
            ).note()
            return Narrowed(
                focus_rows(question, plain).with_note(note).with_note(kept_note),
                plain_args,
                steps=2,
                added=kept,
            )
    return Narrowed(
        focus_rows(question, result).with_note(done.note()), done.arguments, added=done.added
    )


# an added filter value that is a plain word ("complete", "in_progress"), not a code or a name:
# the kind a question uses in passing ("planned to be complete"). A value the question names
# only by a gloss of several words ("on the calendar" for scheduled) is not used in passing.
_WORD_VALUE = re.compile(r"[a-z]+(?:_[a-z]+)*")


def _left_out(question: str, narrowed: ToolResult, plain: ToolResult) -> bool:
    """Whether ``plain`` (the call without a filter added from a plain word) has a row that
    names the question's words best (one of the best, when several tie) that ``narrowed``
    (with it) lacks: the question's rare word is named best by the row it asks about and by
    another row, and an added ``status='complete'`` keeps the finished other row only."""
    if not plain.success or plain.empty:
        return False
    best = best_rows(question, plain)
    if not best:
        return False
    have = {_key(r) for r in listing_rows(narrowed.data)}
    return not all(_key(r) in have for r in best)


def _key(row: Any) -> str:
    return json.dumps(row, sort_keys=True, default=str)
