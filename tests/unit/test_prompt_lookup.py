"""Prompt lookup drafts (``toolrag.models.prompt_lookup``): what follows the latest earlier
occurrence of the last tokens, longest n-gram first, never past what was read."""

from __future__ import annotations

import numpy as np
import pytest

from toolrag.models.prompt_lookup import PromptLookup


def test_the_draft_continues_the_latest_occurrence_of_the_last_tokens() -> None:
    lookup = PromptLookup(tokens=3)
    # "7 8" occurs twice before the tail; the later occurrence is followed by 30 31 32
    ids = [1, 7, 8, 20, 21, 22, 5, 7, 8, 30, 31, 32, 33, 9, 7, 8]
    assert lookup.draft(ids).tolist() == [30, 31, 32]


def test_a_longer_match_wins_over_a_later_shorter_one() -> None:
    lookup = PromptLookup(tokens=2, max_ngram=3, min_ngram=2)
    # the 3-gram "6 7 8" occurs once, early; the 2-gram "7 8" occurs again later
    ids = [6, 7, 8, 40, 41, 0, 7, 8, 50, 51, 6, 7, 8]
    assert lookup.draft(ids).tolist() == [40, 41]


def test_no_draft_without_an_earlier_occurrence_of_min_ngram_tokens() -> None:
    lookup = PromptLookup(tokens=4, max_ngram=3, min_ngram=2)
    # the last token alone (8) occurs earlier, but one token is below min_ngram
    assert lookup.draft([8, 1, 2, 3, 8]).tolist() == []
    assert lookup.draft([]).tolist() == []
    assert lookup.draft([5]).tolist() == []


def test_a_draft_stops_at_the_tokens_read() -> None:
    lookup = PromptLookup(tokens=8)
    # the tail "1 2" occurs once earlier, followed by 3 and then the tail itself
    assert lookup.draft([1, 2, 3, 1, 2]).tolist() == [3, 1, 2]


def test_calls_are_counted_and_return_llama_token_ints() -> None:
    lookup = PromptLookup(tokens=2)
    out = lookup(np.array([4, 5, 6, 4, 5], dtype=np.intc))
    assert out.dtype == np.intc and out.tolist() == [6, 4]
    lookup(np.array([1, 2, 3], dtype=np.intc))
    assert (lookup.counts.lookups, lookup.counts.drafted) == (2, 2)


@pytest.mark.parametrize(("tokens", "max_ngram", "min_ngram"), [(0, 3, 2), (4, 2, 3), (4, 3, 0)])
def test_bad_shapes_are_refused(tokens: int, max_ngram: int, min_ngram: int) -> None:
    with pytest.raises(ValueError):
        PromptLookup(tokens, max_ngram, min_ngram)
