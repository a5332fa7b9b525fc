"""benchmarks/agent.py's scores: a question a setup gave no answer to (its prompt never fitted
the model's context, or the run raised) is wrong on the scores that question has, and counted
on no other; its seconds are not a time to answer."""

from __future__ import annotations

from typing import Any

from benchmarks.agent import failed_record, summarize
from toolrag import Question


def _answered(q: Question, **scores: Any) -> dict[str, Any]:
    return {"setup": "s", "set": "x", "id": q.id, "ok": True, "distractor_calls": 0,
            "seconds": 30.0, **scores}  # fmt: skip


def test_a_question_without_an_answer_is_wrong_only_on_its_own_scores() -> None:
    sql = Question(id="q1", query="How many?", expected_tools=["run_sql"], answer_keywords=["3"])
    two = Question(id="q2", query="A and B?", expected_tools=["run_sql", "search_documents"],
                   answer_keywords=["x"])  # fmt: skip
    none = Question(id="q3", query="Who painted the Mona Lisa?", kind="no_tool")
    assert none.no_tool
    rows = [
        _answered(sql, matched=True, tool_ok=True, no_tool_ok=None, multi_tool=False),
        failed_record("s", two, "x", "context overflow: I could not finish"),
        failed_record("s", none, "x", "context overflow: I could not finish"),
    ]
    assert rows[1]["no_tool_ok"] is None and rows[2]["matched"] is None
    scores = summarize(rows)
    assert scores["failed"] == 2
    assert scores["answer_accuracy"] == 0.5 and scores["n_answer_scored"] == 2
    assert scores["tool_accuracy"] == 0.5  # the no-tool question expects no tool
    assert scores["no_tool_accuracy"] == 0.0 and scores["n_no_tool"] == 1
    assert scores["multi_tool_coverage"] == 0.0 and scores["n_multi_tool"] == 1
    assert scores["seconds_median"] == 30.0  # the answered question's alone


def test_no_answered_question_gives_no_time() -> None:
    q = Question(id="q1", query="How many?", expected_tools=["run_sql"], answer_keywords=["3"])
    scores = summarize([failed_record("s", q, "x", "context overflow")])
    assert scores["answer_accuracy"] == 0.0 and scores["seconds_median"] == 0.0
