"""Reciprocal rank fusion (Cormack, Clarke and Büttcher 2009): rankings of the same items from
different searches (dense and BM25) merged by rank alone, so their scores need no common scale.
The tool index and the content indexes fuse with it."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

RRF_K = 60

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Iterable[Sequence[Item]], weights: Sequence[float] | None = None
) -> dict[Item, float]:
    """Each item's fused score: the sum over ``rankings`` (best first) of
    ``weight / (RRF_K + rank)``, rank counted from 1, weight 1 unless ``weights`` gives one per
    ranking. An item missing from a ranking gets nothing from it."""
    rankings = list(rankings)
    scores: dict[Item, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + weight / (RRF_K + rank + 1)
    return scores
