"""A pool's LLM-written requests (``toolrag tools synth``) as labelled questions for choosing a
relevance gate, when no real questions are labelled.

Each request is searched as a question whose right tool is the card it was written for, with
that card's written requests withheld (:meth:`ToolIndex.requests_withheld`): the card is found
by its document alone, at (document) / (1 + REQUEST_WEIGHT), as a real question meets a card
none of whose requests was written from it. Searched with its own requests in place, a request
finds a near-copy of itself and reaches a far higher cosine than any real question would; with
only its own vector left out, its sibling requests (the same model paraphrasing the same
description) still do. Withholding all of them is the conservative choice: on BFCL and NESTFUL
the gate that keeps a share of the withheld requests keeps about that share of the real
questions (README, "Choosing the gate without labelled questions").

There are no questions no tool fits among them, so the cut is the highest that still offers
tools to a chosen share (``eval gate --requests --keep``; :func:`toolrag.evaluation.cuts.choose`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from toolrag.errors import InputError
from toolrag.evaluation.cuts import RankedQuery
from toolrag.retrieval.index import Strategy, ToolIndex

# requests searched at most, taken evenly over the pool (a search costs about 15-30 ms here)
MAX_REQUESTS = 1500

# how a request is searched: (index, its card's id, its text) -> the block it is searched in
Withhold = Callable[[ToolIndex, str, str], contextlib.AbstractContextManager[None]]


def withhold_card(
    index: ToolIndex, card_id: str, text: str
) -> contextlib.AbstractContextManager[None]:
    """The card's written requests withheld (:meth:`ToolIndex.requests_withheld`)."""
    return index.requests_withheld(card_id)


def rank_written_requests(
    index: ToolIndex,
    strategy: Strategy,
    depth: int,
    limit: int = MAX_REQUESTS,
    withhold: Withhold = withhold_card,
) -> list[RankedQuery]:
    """Search up to ``limit`` of the index's written requests (taken evenly), each with its
    card's requests withheld (``withhold``: another way, for comparing), ``depth`` deep and
    uncut: :func:`toolrag.evaluation.cuts.sweep`'s input, every question expecting the card it
    was written for."""
    written = index.written_requests()
    if not written:
        raise InputError(
            "This tool index holds no LLM-written requests to choose a cut from.",
            hint="Write them first with `toolrag tools synth` (with --tools T.json for a pool "
            "file, then pass --synthetic here), or give labelled --queries.",
        )
    if limit < 1:
        raise InputError(f"Cannot search {limit} requests.", hint="Give a positive limit.")
    step = max(1, -(-len(written) // limit))
    ranked = []
    for n, (tid, text) in enumerate(written[::step]):
        with withhold(index, tid, text):
            hits = index.retrieve(text, k=depth, strategy=strategy, translate=False)
        ranked.append(
            RankedQuery(
                id=f"request-{n}",
                expected=[index.cards[tid].name],
                hits=[(h.name, h.similarity) for h in hits],
            )
        )
    return ranked
