"""A companion (arithmetic) call computes only with values the question gave or a tool returned."""

from __future__ import annotations

from datetime import date

from toolrag.guard.grounding.read_values import (
    unread_facts,
    unread_figures,
    unread_ids,
    unread_refusal,
    unread_values,
)


def test_made_up_numbers_are_named() -> None:
    assert unread_values({"values": [15000, 23000]}, "What is the total concrete budget?", "") == [
        "values=15000",
        "values=23000",
    ]


def test_numbers_read_in_any_format_are_accepted() -> None:
    seen = '{"rows": [[23147914], ["1,200.50"], [-22400]]}'
    assert unread_values({"values": ["23,147,914", 1200.5, 22400]}, "q", seen) == []


def test_small_counts_need_no_source() -> None:
    assert (
        unread_values({"start": "2026-01-01", "days": 14}, "14 days after January 1, 2026?", "")
        == []
    )
    assert unread_values({"days": 30}, "q", "") == []


def test_dates_read_or_named_by_the_question() -> None:
    seen = '{"planned_finish": "2026-01-16", "actual_finish": "November 12, 2025"}'
    assert unread_values({"start": "2025-11-12", "end": date(2026, 1, 16)}, "q", seen) == []
    in_q = unread_values(
        {"start": "2026-01-01", "end": "2026-03-31"}, "between January and March 2026", ""
    )
    assert in_q == []
    assert unread_values({"start": "2024-05-05"}, "q", "") == ["start='2024-05-05'"]


def test_the_refusal_says_to_read_first() -> None:
    result = unread_refusal("sum_values", ["values=15000"])
    assert not result.success and result.error_code is not None
    assert "First call the tool" in (result.suggestion or "")


def test_unread_figures_are_the_answers_figures_no_result_holds() -> None:
    read = '{"rows": [["33,711,750", 11]], "dates": ["2024-12-11", "2025-06-05"]}'
    assert unread_figures("The total is $33,711,750 on 11 projects.", "total?", read) == []
    assert unread_figures("The average is $1,200,000.", "average?", read) == ["$1,200,000"]
    # ids, dates, years and small counts are not figures to check
    assert (
        unread_figures("GRB-101 and S-201, dated 2025-06-05, in 2026: 14 sheets.", "", read) == []
    )
    # days between two dates read count as read: 2024-12-11 -> 2025-06-05 is 176 days
    assert unread_figures("Steel topped out 176 days after notice to proceed.", "", read) == []
    assert unread_figures("It was 177 days.", "", read) == ["177"]
    # a figure the question gives is read
    assert unread_figures("Yes, 240,000 is right.", "Is it 240000?", "") == []


def test_only_dates_read_close_together_or_given_by_the_question_make_a_span() -> None:
    """A row's plan and actual dates make its delay; two rows far apart in a long listing do
    not, or any count of days would pass as read."""
    rows = [
        f'{{"task": "T{n}", "planned": "2024-0{n}-01", "actual": "2025-0{n}-01"}}'
        for n in range(1, 10)
    ]
    listing = ("x" * 500).join(rows)
    assert unread_figures("T5 was 365 days late.", "How late was T5?", listing) == []
    # 2024-01-01 to 2025-09-01 is 609 days: those dates are 4,000 characters apart
    assert unread_figures("It took 609 days.", "How long from T1 to T9?", listing) == ["609"]
    # a date the question gives spans to any date read
    assert unread_figures("It took 609 days.", "How long from 2024-01-01 to T9?", listing) == []


def test_unread_ids_are_the_answers_ids_no_result_holds() -> None:
    """A list of one sheet read, answered as three: the two made up in its pattern are named."""
    read = '{"data": [{"sheet": "FP-101", "project": "GRB-104", "file": "GRB-104_FP-101.png"}]}'
    answer = "The sheets are FP-101, FP-102 and FP-103 (GRB-104)."
    assert unread_ids(answer, "Which fire protection sheets?", read) == ["FP-102", "FP-103"]
    # ids compare by their letters and digits; the question's ids are read; a file name holds
    # the ids between its separators
    assert unread_ids("Sheet fp 101 and fp-101 of grb104 for CO-7", "CO-7?", read) == []
    assert unread_ids("GRB-104_FP-101.png, FP-101/GRB-104", "", read) == []
    # an id read with a space in it is the same id written with a hyphen
    assert unread_ids("RFI-101-014 and RFI-101-015", "", "answered RFI 101-014") == ["RFI-101-015"]
    # dates, amounts, plain words and numbers are not ids
    assert unread_ids("On 2025-10-17, $12,500, 10mg, 14 sheets, rev 3.", "", read) == []
    # an id is not read because a longer id that starts with it was
    assert unread_ids("FP-10 and FP-1010", "", read) == ["FP-10", "FP-1010"]
    # the answer's figures first, then its ids; each once
    assert unread_facts("FP-102 for $99,000 and FP-102 again", "", read) == ["$99,000", "FP-102"]


def test_numbers_side_by_side_in_a_json_row_are_each_read() -> None:
    """A SQL result's row has no space after its commas: "[3,300.0]" was read as 3,300 and
    "[12,450000.0]" as 12,450 and nothing, so a right answer's $300 and $450,000 were refused."""
    row = '{"columns":["customer_id","largest"],"rows":[[3,300.0,"Grace Hopper"]]}'
    assert unread_facts("Grace Hopper placed the largest order, $300.", "Who?", row) == []
    totals = '{"rows":[[12,450000.0]]}'
    assert unread_facts("12 invoices total $450,000.", "How much?", totals) == []
    assert unread_facts("12 invoices total $460,000.", "How much?", totals) == ["$460,000"]
    # a figure grouped by thousands in prose is still read as one number
    assert unread_facts("It cost 23147914.", "?", "a cost of 23,147,914 in all") == []
