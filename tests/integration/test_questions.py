"""The sample question sets: enough, well-formed, split without leakage."""

from __future__ import annotations

import numpy as np
import pytest

from toolrag import Settings
from toolrag.batch.questions import answer_matches, load_questions, normalize
from toolrag.models.embeddings import make_embedding

from ..conftest import DATA

KNOWN_TOOLS = {
    "search_documents",
    "search_blueprints",
    "get_project_schedule",
    "run_sql",
    "get_site_status",
    "list_inspections",
    "list_weather_delays",
    "get_rfi_status",
}


def test_question_sets_are_large_enough_and_well_formed() -> None:
    examples = load_questions(DATA / "questions" / "examples.jsonl")
    test = load_questions(DATA / "questions" / "test.jsonl")
    assert len(examples) + len(test) >= 60
    for q in examples + test:
        assert q.expected_tools and set(q.expected_tools) <= KNOWN_TOOLS, q.id
        assert q.answer_keywords and q.expected_answer, q.id
    # the demo needs a blueprint date-range question and a schedule question in the test split
    assert any("start_date" in q.expected_args for q in test)
    assert any(q.expected_tools == ["get_project_schedule"] for q in test)


def test_split_is_disjoint_and_does_not_leak() -> None:
    examples = load_questions(DATA / "questions" / "examples.jsonl")
    test = load_questions(DATA / "questions" / "test.jsonl")
    assert not {q.id for q in examples} & {q.id for q in test}
    assert not {normalize(q.query) for q in examples} & {normalize(q.query) for q in test}
    embed = make_embedding(Settings())
    ex = np.array(embed.get_text_embedding_batch([q.query for q in examples]))
    te = np.array(embed.get_text_embedding_batch([q.query for q in test]))
    sims = te @ ex.T
    worst = np.unravel_index(int(np.argmax(sims)), sims.shape)
    assert sims.max() < 0.9, (test[worst[0]].query, examples[worst[1]].query, sims.max())


def test_answer_matching_normalizes_numbers() -> None:
    assert answer_matches("The rate is $2,500 per calendar day.", ["2500"])
    assert answer_matches("Sheet S-201, revised 2026-02-10", ["s-201", "2026-02-10"])
    assert not answer_matches("The rate is $25,000.", ["2500 per"])
    assert not answer_matches("anything", [])


@pytest.mark.parametrize(
    ("answer", "matches"),
    [
        ("Substantial completion is planned for June 30, 2026.", True),
        ("It finishes on 30 June 2026", True),
        ("the 30th of June, 2026", True),
        ("Jun. 30 2026", True),
        ("planned finish 2026-06-30", True),
        ("June 3, 2026", False),
        ("June 30, 2025", False),
        ("February 30, 2026 or later", False),
    ],
)
def test_answer_matching_reads_dates_in_words(answer: str, matches: bool) -> None:
    assert answer_matches(answer, ["2026-06-30"]) is matches
