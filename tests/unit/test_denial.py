"""Answers that say nothing was found."""

from __future__ import annotations

import pytest

from toolrag.agent.denial import says_nothing_found


@pytest.mark.parametrize(
    "answer",
    [
        "There are no Pinecrest Senior Living drawings that carry a revision date in 2025.",
        "No overdue loans were found for that branch.",
        "No matching orders could be found.",
        "The search did not return any results for the period.",
        "The tool couldn't find any shipments in March.",
        "Nothing was found for that customer.",
        "I found no invoices of that vendor.",
        "There were no records matching the request.",
    ],
)
def test_denials(answer: str) -> None:
    assert says_nothing_found(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "A-201, C-101 and E-301 carry a revision date in 2025.",
        "Three orders were returned: ORD-1, ORD-2 and ORD-3.",
        "The branch has 4 overdue loans, none of them older than a month.",
        "Planned for 2027-01-29.",
        "",
    ],
)
def test_answers_that_give_something(answer: str) -> None:
    assert not says_nothing_found(answer)


def test_a_long_answer_is_read_in_its_bounded_prefix() -> None:
    assert not says_nothing_found("x " * 1_000 + "There are no results.")
