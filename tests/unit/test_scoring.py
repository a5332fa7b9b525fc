"""Strict answer scoring: keywords, numbers as numbers, dates as dates, exact id sets."""

from __future__ import annotations

import pytest

from toolrag.batch.questions import Question, id_shape, ids_in, question_matches, score_answer


def test_a_list_with_a_wrong_extra_item_is_wrong() -> None:
    answer = "Revised sheets: S-201 (rev 3, 2026-02-10), A-101 and E-401."
    score = score_answer(answer, ["S-201"], ["S-201"])
    assert not score.matched
    assert score.extra_ids == ["A-101", "E-401"]
    assert score_answer("Only S-201 (rev 3).", ["S-201"], ["S-201"]).matched


def test_a_list_missing_an_item_is_wrong() -> None:
    score = score_answer("GRB-101-CO-001 was approved.", [], ["GRB-101-CO-001", "GRB-101-CO-002"])
    assert score.missing_ids == ["GRB-101-CO-002"]
    assert not score.matched


def test_ids_of_other_shapes_and_ids_named_by_the_question_are_not_extra() -> None:
    q = Question(
        id="q",
        query="Which structural sheets of GRB-107 were revised in Q1 2026?",
        answer_keywords=["S-201"],
        answer_ids=["S-201"],
    )
    # GRB-107 is named by the question, RFI-107-031 has another shape, and neither the
    # "RB-107" inside GRB-107 nor the "FI-107" inside RFI-107-031 reads as a sheet number.
    assert question_matches("GRB-107: S-201 rev 3, answering RFI-107-031.", q)
    assert not question_matches("GRB-107: S-201 and S-101.", q)


def test_id_shapes_are_whole_tokens() -> None:
    assert ids_in("FP-101, S-201, GRB-107, RFI-101-014, s-301", ["S-201"]) == {"S-201", "S-301"}
    assert ids_in("RFI-101-014 and RFI-101-015-A", ["RFI-101-014"]) == {"RFI-101-014"}
    assert "\\d{3}" in id_shape("S-201")
    # a file name's parts are read as a person reads them
    assert ids_in("POOL DECK (GRB-107_S-202.png)", ["S-201"]) == {"S-202"}
    assert ids_in("GRB-107_S-202.png", ["GRB-101"]) == {"GRB-107"}


@pytest.mark.parametrize(
    ("answer", "keyword", "matches"),
    [
        ("The rate is $2,500 per calendar day.", "2500", True),
        ("The rate is 2500.00 per day.", "2500", True),
        ("The rate is $25,000 per day.", "2500", False),  # 2500 is not a part of 25000
        ("It took 12 days.", "2", False),
        ("[[-22400]]", "22400", True),  # an unsigned amount: a credit written with its sign
        ("[[22400]]", "-22400", False),  # a signed keyword needs its sign
        ("It took 12 days.", "12", True),
        ("Sheet S-201 was revised.", "201", False),  # a number inside an id is not a number
        ("Finish planned June 30, 2026.", "2026-06-30", True),
        ("Finish planned 06/30/2026.", "2026-06-30", True),
        ("Finish planned 30th of June 2026.", "2026-06-30", True),
        ("Finish planned 2026-06-03.", "2026-06-30", False),
        ("Cascade Steel Erectors holds it.", "cascade steel erectors", True),
    ],
)
def test_numbers_and_dates_compare_by_value(answer: str, keyword: str, matches: bool) -> None:
    assert score_answer(answer, [keyword]).matched is matches


def test_every_keyword_must_appear() -> None:
    score = score_answer("Vendor V02 was paid 186,400.", ["Summit Mechanical LLC", "186400"])
    assert score.missing_keywords == ["Summit Mechanical LLC"]
    assert not score_answer("anything", []).matched


def test_no_tool_questions_are_the_labelled_ones() -> None:
    assert Question.model_validate({"id": "a", "query": "q", "expected_tools": []}).no_tool
    assert Question(id="b", query="q", kind="no_tool").no_tool
    assert not Question(id="c", query="q").no_tool  # unlabelled, not a no-tool question
    assert not Question(id="d", query="q", expected_tools=["run_sql"]).no_tool


def test_a_huge_answer_is_cut_not_scanned_whole() -> None:
    answer = "S-201 " + "x" * 5_000_000
    assert score_answer(answer, ["S-201"], ["S-201"]).matched
