"""Choosing a relevance cut ("no tool fits") for a tool pool from labelled questions.

A gate or a floor is a cosine between a question and a tool's card (see
:meth:`toolrag.retrieval.index.ToolIndex.retrieve`). Which cosine separates questions that a tool
fits
from questions that none does depends on the pool's cards and on how its users ask, so it is
chosen on questions of that pool: some that name their ``expected_tools`` and some whose
``expected_tools`` is ``[]``. Each question is searched once, without a cut; every cut is then
scored from the cosines of what that search returned.

- gate: a question is offered its top k when any of them reaches the cut, else nothing;
- floor: each tool below the cut is dropped, and the next ones take their places (from the
  first ``FLOOR_DEPTH`` of the ranking; ``retrieve(floor=...)`` reads its whole candidate pool,
  so a floor that cuts deeper than that can differ).

The cut chosen is the one of highest balanced accuracy: the mean of ``answered`` (answerable
questions still offered tools) and ``no_tool`` (the others offered none); with ``keep``, the one
that leaves most of the others without tools while offering tools to at least that share of the
answerable questions. With ``keep`` the questions no tool fits may be left out: the cut is then
the highest that still offers tools to that share (a higher cut can only leave more questions
without tools), which is how a pool's LLM-written requests choose it
(:mod:`toolrag.evaluation.held_requests`).

``held_out`` chooses it on the even-numbered questions of each kind and scores it on the
odd-numbered ones, so it says what the cut does on questions it was not chosen on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from toolrag.errors import InputError
from toolrag.evaluation.retrieval import RetrievalQuery

Cut = Literal["gate", "floor"]
# how deep a floor refills: ``retrieve(floor=...)`` takes the next tools that clear it from its
# whole candidate pool (50 cards and more); this reads the first 50 of the ranking
FLOOR_DEPTH = 50


def search_depth(cut: Cut, k: int) -> int:
    """How many tools to search per question: a gate looks at the k offered, no more; a floor
    refills from below them."""
    return k if cut == "gate" else max(k, FLOOR_DEPTH)


class RankedQuery(BaseModel):
    """One labelled question and what the uncut search returned for it, best first."""

    id: str
    expected: list[str] = Field(description="Expected tool names; empty: no tool fits.")
    hits: list[tuple[str, float | None]] = Field(
        description="(tool name, cosine with the question), best first; None: no cosine."
    )


class CutPoint(BaseModel):
    """How one cut does on a set of labelled questions."""

    at: float = Field(description="The cut: a cosine.")
    answered: float = Field(description="Share of answerable questions still offered tools.")
    recall: float = Field(
        description="Answerable questions: mean share of their expected tools among those "
        "offered (Recall@k after the cut)."
    )
    no_tool: float | None = Field(
        description="Share of the questions no tool fits that got none (None: no such question)."
    )
    balanced: float | None = Field(
        description="(answered + no_tool) / 2: what the cut is chosen by (None: no question no "
        "tool fits)."
    )


class CutSweep(BaseModel):
    """Every cut tried for one strategy, and the one to use."""

    strategy: str
    cut: Cut
    k: int
    n_answerable: int
    n_no_tool: int
    recall_uncut: float = Field(description="Recall@k of the answerable questions, no cut.")
    points: list[CutPoint]
    keep: float | None = Field(
        None, description="The least share of answerable questions the chosen cut offers tools."
    )
    chosen: CutPoint = Field(
        description="The cut of highest balanced accuracy on all questions (with ``keep``: "
        "of most no-tool questions left without, among the cuts that keep that share)."
    )
    held_out: CutPoint | None = Field(
        None,
        description="The cut chosen on the even-numbered questions of each kind, scored on the "
        "odd-numbered ones (None when a half lacks a kind the whole set has).",
    )


def offered(hits: Sequence[tuple[str, float | None]], cut: Cut, at: float, k: int) -> list[str]:
    """The tool names a search cut at ``at`` offers: for a gate the top ``k`` when any of them
    reaches it (else none); for a floor the first ``k`` that reach it."""
    if cut == "gate":
        top = hits[:k]
        return [n for n, _ in top] if any(c is not None and c >= at for _, c in top) else []
    return [n for n, c in hits if c is not None and c >= at][:k]


def _kinds(queries: Sequence[RankedQuery]) -> tuple[list[RankedQuery], list[RankedQuery]]:
    """The answerable questions and those no tool fits, each in their order."""
    return [q for q in queries if q.expected], [q for q in queries if not q.expected]


def _recall(q: RankedQuery, got: Sequence[str]) -> float:
    """The share of ``q``'s expected tools among ``got``."""
    expected = set(q.expected)
    return len(expected & set(got)) / len(expected)


def score_cut(queries: Sequence[RankedQuery], cut: Cut, at: float, k: int) -> CutPoint:
    """One cut on labelled questions (no answerable question: answered and recall 0; no question
    no tool fits: ``no_tool`` and ``balanced`` None)."""
    answerable, none_fits = _kinds(queries)
    answered = recall = 0.0
    for q in answerable:
        got = offered(q.hits, cut, at, k)
        answered += bool(got)
        recall += _recall(q, got)
    emptied = sum(not offered(q.hits, cut, at, k) for q in none_fits)
    a = answered / len(answerable) if answerable else 0.0
    n = emptied / len(none_fits) if none_fits else None
    return CutPoint(
        at=round(at, 4),
        answered=round(a, 4),
        recall=round(recall / len(answerable), 4) if answerable else 0.0,
        no_tool=None if n is None else round(n, 4),
        balanced=None if n is None else round((a + n) / 2, 4),
    )


def choose(points: Sequence[CutPoint], keep: float | None = None) -> CutPoint:
    """The cut of highest balanced accuracy; among equals, the one that keeps more recall, then
    the lower cut. With ``keep`` (a share), the cut that leaves most questions no tool fits
    without tools among those that still offer tools to at least ``keep`` of the answerable
    ones (the lowest cut when none does): for an agent that can ignore a tool it was offered
    but cannot use one it was not. Without questions no tool fits (``no_tool`` None), the
    highest of those cuts."""
    if keep is None:
        return max(points, key=lambda p: (p.balanced or 0.0, p.recall, -p.at))
    kept = [p for p in points if p.answered >= keep]
    if not kept:
        return min(points, key=lambda p: p.at)
    if all(p.no_tool is None for p in kept):
        return max(kept, key=lambda p: p.at)
    return max(kept, key=lambda p: (p.no_tool or 0.0, p.recall, -p.at))


def cut_grid(start: float, stop: float, step: float) -> list[float]:
    """The cuts from ``start`` to ``stop`` (included) every ``step``, rounded to 4 places."""
    if step <= 0 or stop < start or not (-1.0 <= start <= 1.0 and -1.0 <= stop <= 1.0):
        raise InputError(
            f"Cannot sweep cuts from {start} to {stop} every {step}.",
            hint="Cosines lie in -1..1: give --start <= --stop and a positive --step, "
            "say --start 0.05 --stop 0.7 --step 0.05.",
        )
    count = math.floor((stop - start) / step + 1e-9) + 1
    return [round(start + i * step, 4) for i in range(count)]


def _half(queries: Sequence[RankedQuery], parity: int) -> list[RankedQuery]:
    """Every other question of each kind, starting at ``parity`` (0 or 1)."""
    answerable, none_fits = _kinds(queries)
    return answerable[parity::2] + none_fits[parity::2]


def sweep(
    strategy: str,
    queries: Sequence[RankedQuery],
    cut: Cut,
    cuts: Sequence[float],
    k: int,
    keep: float | None = None,
) -> CutSweep:
    """Score every cut in ``cuts`` on ``queries`` and choose one (see the module docstring)."""
    answerable, none_fits = _kinds(queries)
    if not answerable:
        raise InputError(
            "Choosing a cut needs questions a tool fits, and none of these name expected_tools.",
            hint="Give questions a tool should answer (expected_tools: [names]) beside those "
            "none should (expected_tools: []), or the pool's written requests (--requests).",
        )
    if not none_fits and keep is None:
        raise InputError(
            "Without questions no tool fits (expected_tools: []) a cut can only be chosen by "
            "the share of answerable questions it must keep.",
            hint="Add --keep 0.98 (say), or give questions none of your tools should answer.",
        )
    points = [score_cut(queries, cut, at, k) for at in cuts]
    uncut = sum(_recall(q, [n for n, _ in q.hits[:k]]) for q in answerable) / len(answerable)
    held_out = None
    even, odd = _half(queries, 0), _half(queries, 1)
    both = bool(none_fits)
    if all(
        any(q.expected for q in h) and any(not q.expected for q in h) == both for h in (even, odd)
    ):
        at = choose([score_cut(even, cut, c, k) for c in cuts], keep).at
        held_out = score_cut(odd, cut, at, k)
    return CutSweep(
        strategy=strategy,
        cut=cut,
        k=k,
        n_answerable=len(answerable),
        n_no_tool=len(none_fits),
        recall_uncut=round(uncut, 4),
        points=points,
        chosen=choose(points, keep),
        keep=keep,
        held_out=held_out,
    )


def rank_queries(
    queries: Sequence[RetrievalQuery],
    search: Callable[[str, int], list[tuple[str, float | None]]],
    depth: int,
) -> list[RankedQuery]:
    """Search each question once, uncut, ``depth`` deep (:func:`search_depth`): the input of
    :func:`sweep`."""
    return [RankedQuery(id=q.id, expected=q.expected, hits=search(q.query, depth)) for q in queries]
