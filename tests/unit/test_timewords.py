"""Whether a question speaks of time, and which call arguments are dates."""

from __future__ import annotations

import datetime as dt

import pytest

from toolrag.guard.grounding.timewords import iso_dates, mentions_time


@pytest.mark.parametrize(
    "question",
    [
        "Which inspection failed on the Pinecrest Senior Living project in December 2025?",
        "What changed since 2025-11-01?",
        "Anything logged on 12/11?",
        "Deliveries due 11.12.2025",
        "RFIs opened in May",
        "What happened last week?",
        "Q3 totals per project",
        "Inspections between the pour and the framing check",
        "How many days ago was the last pour?",
        "Is anything scheduled for Friday?",
    ],
)
def test_a_question_that_names_a_time(question: str) -> None:
    assert mentions_time(question)


@pytest.mark.parametrize(
    "question",
    [
        "How many working days has the Summit Ridge Hotel lost to weather?",
        "How many workers are on site at Harbor Point Apartments right now?",
        "What is the status of INSP-109-02?",  # an id's digits are not a date
        "Summarise RFI-101-015",
        "May I see the open RFIs?",  # "May" opening a request is not the month
        "Which beams carry 3.5 tons?",
        "Who is the superintendent on GRB-2024?",
        "How many days of annual leave does a full-time employee get?",  # a frequency
        "Who writes the monthly safety report?",
    ],
)
def test_a_question_that_names_no_time(question: str) -> None:
    assert not mentions_time(question)


def test_iso_dates_lists_the_optional_date_arguments() -> None:
    args = {
        "project": "GRB-107",
        "since": "2023-01-01",
        "until": "2023-01-31T17:00",
        "on": dt.date(2023, 1, 2),
        "code": "2023-13-45",  # not a real date
        "due": "2024-02-01",
        "limit": 20,
    }
    assert iso_dates(args) == ["since", "until", "on", "due"]
    assert iso_dates(args, required=["due"]) == ["since", "until", "on"]
