"""Reciprocal rank fusion, computed by hand."""

from __future__ import annotations

import pytest

from toolrag.rank_fusion import RRF_K, reciprocal_rank_fusion


def test_scores_add_one_over_k_plus_rank_across_rankings() -> None:
    scores = reciprocal_rank_fusion([["a", "b"], ["b", "c"]])
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})
    assert RRF_K == 60
    assert max(scores, key=scores.__getitem__) == "b"  # in both lists beats first in one


def test_weights_scale_each_ranking_and_must_match_them() -> None:
    scores = reciprocal_rank_fusion([["a"], ["b"]], [1.0, 0.5])
    assert scores == pytest.approx({"a": 1 / 61, "b": 0.5 / 61})
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"], ["b"]], [1.0])
