"""Batch question answering with the scripted LLM: records per question, a failure and a
timeout become records, a re-run resumes (answered ids skipped, failed ones retried), and the
CLI prints the summary table."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolrag import Settings, Toolbox
from toolrag.batch.questions import Question
from toolrag.batch.run import read_records

from ..conftest import final, react
from .test_cli import run_cli, scripted_env

SCHEDULE = Question(
    id="q1",
    query="When did Fire Station 7 reach substantial completion?",
    expected_tools=["get_project_schedule"],
    answer_keywords=["2025-12-12"],
)
SLOW = Question(id="q2", query="When is the Foundry Street topping out?")
EMPTY = Question(id="q3", query="   ")


def _slow(messages: Any) -> str:
    for _ in range(200):  # 10 s in slices, so the deadline can stop the thread
        time.sleep(0.05)
    return final("too late")


def test_a_batch_records_answers_failures_and_resumes(
    toolbox_factory: Callable[..., Toolbox], tmp_path: Path
) -> None:
    out = tmp_path / "answers.jsonl"
    tb = toolbox_factory(
        [
            react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
            final("Substantial completion was reached on 2025-12-12."),
            _slow,
        ]
    )
    # 5 s: room for q1's first, cold ask on a loaded machine; _slow needs 10 s, so q2 times out
    first = tb.batch([SCHEDULE, SLOW, EMPTY], out, timeout_s=5.0)
    records = read_records(out)
    assert records["q1"].ok and records["q1"].matched and records["q1"].tool_ok
    assert records["q1"].tools_called == ["get_project_schedule"]
    assert records["q1"].sources == ["schedules/GRB-104.csv"]
    assert records["q2"].error_code == "TIMEOUT" and not records["q2"].ok
    assert records["q3"].error_code == "InputError" and "empty" in (records["q3"].error or "")
    assert (first.answered, first.failed, first.skipped) == (1, 2, 0)
    assert first.accuracy == 1.0 and first.tool_accuracy == 1.0

    tb.llm.extend([final("Topping out is planned for 2026-03-14.")])  # type: ignore[attr-defined]
    second = tb.batch([SCHEDULE, SLOW, EMPTY], out, timeout_s=5.0)
    assert (second.answered, second.failed, second.skipped) == (1, 1, 1)  # q1 not asked again
    records = read_records(out)
    assert records["q2"].ok and "2026-03-14" in records["q2"].answer
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3", "q2", "q3"]  # appended, nothing lost


def test_batch_cli_prints_the_summary_and_skips_answered_ids(
    sample_settings: Settings, tmp_path: Path
) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(SCHEDULE.model_dump()) + "\n")
    turns = [
        react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
        final("Substantial completion was reached on 2025-12-12."),
    ]
    out = tmp_path / "answers.jsonl"
    env = scripted_env(sample_settings.index_dir, tmp_path, turns)
    proc = run_cli("batch", str(questions), "-o", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "tool accuracy" in proc.stdout and "100% of 1" in proc.stdout
    assert read_records(out)["q1"].matched
    again = run_cli("batch", str(questions), "-o", str(out), env=env)  # no turns needed: resumed
    assert again.returncode == 0, again.stderr
    assert len(out.read_text().splitlines()) == 1
