"""The "no tool fits" gate, chosen when the tool index is built, from the pool's own written
requests: no labelled question is needed.

Each LLM-written request (``toolrag tools synth``, or ``synthetic:`` in a YAML card) is searched
as a question its card fits, with that card's written requests withheld
(:meth:`ToolIndex.requests_withheld`), so the card is found by its document alone as a real
question finds it. The gate is the highest cosine, on a grid of 0.01, that still offers tools to
``keep`` of those requests (0.98 by default): a question whose best k tools all stay below it is
answered without tools. On BFCL and NESTFUL the gate chosen this way keeps 0.93-0.99 of the real
questions (docs/decisions/0019). ``toolrag eval gate --requests`` reports the same sweep in full.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from toolrag.retrieval.index import Strategy, ToolIndex

MAX_REQUESTS = 300  # searched at most, taken evenly over the pool (15-30 ms a search here)
MIN_REQUESTS = 20  # fewer requests than this choose no gate: too few to take a share of


class GateChoice(BaseModel):
    """The gate chosen for a tool index, and what it was chosen from."""

    gate: float | None = Field(description="The cosine gate; None when none could be chosen.")
    keep: float
    requests: int = Field(description="Written requests searched.")
    kept: float | None = Field(None, description="Share of them the gate offers tools to.")
    reason: str = ""


def choose_gate(
    index: ToolIndex,
    keep: float = 0.98,
    k: int = 5,
    strategy: Strategy = "best",
    limit: int = MAX_REQUESTS,
) -> GateChoice:
    """The highest gate on a 0.01 grid that offers tools to at least ``keep`` of the index's
    written requests, each searched ``k`` deep with its card's requests withheld."""
    written = index.written_requests()
    if len(written) < MIN_REQUESTS:
        return GateChoice(
            gate=None,
            keep=keep,
            requests=len(written),
            reason=f"{len(written)} written requests (at least {MIN_REQUESTS} choose a gate); "
            "write them with `toolrag tools synth`.",
        )
    step = max(1, -(-len(written) // limit))
    best: list[float] = []
    for card_id, text in written[::step]:
        with index.requests_withheld(card_id):
            hits = index.retrieve(text, k=k, strategy=strategy, translate=False)
        best.append(max((h.similarity for h in hits if h.similarity is not None), default=-1.0))
    best.sort(reverse=True)
    # the request at the keep-th place sets the cut: all above it keep their tools
    at = best[min(len(best) - 1, max(0, math.ceil(keep * len(best)) - 1))]
    gate = math.floor(at * 100 + 1e-9) / 100
    kept = sum(b >= gate for b in best) / len(best)
    return GateChoice(gate=gate, keep=keep, requests=len(best), kept=round(kept, 4))
