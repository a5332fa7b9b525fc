"""Batch records and what every engine shares: the record of one answered question, the
summary over a run, answering one question with its deadline, and which questions are left."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from toolrag.agent.loop import Answer
from toolrag.batch.questions import Question, load_questions, question_matches
from toolrag.errors import ToolragError
from toolrag.guard.timeouts import run_with_timeout
from toolrag.settings import Settings
from toolrag.stats import percentile

Progress = Callable[["BatchRecord"], None]


class Asker(Protocol):
    """What a batch needs of whoever answers (a :class:`~toolrag.toolbox.Toolbox`, or one per
    worker of another engine): its settings, a warm-up, and one question at a time."""

    settings: Settings

    def warm_up(self) -> None:
        """Load the models and open the indexes, before any question's deadline starts."""

    def ask(self, question: str) -> Answer:
        """Answer one question."""


class BatchRecord(BaseModel):
    """One question's outcome, as written to the answers file."""

    id: str
    query: str
    answer: str = ""
    ok: bool = Field(description="True when the agent produced an answer.")
    error_code: str | None = None
    error: str | None = None
    matched: bool | None = Field(
        None, description="Strictly scored: every expected keyword and exactly the expected ids."
    )
    tool_ok: bool | None = Field(None, description="Every expected tool was called.")
    no_tool_ok: bool | None = Field(
        None, description="For a question no tool serves: True when no tool was called."
    )
    expected_tools: list[str] = Field(default_factory=list)
    tools_called: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    run_id: str = ""


class BatchSummary(BaseModel):
    total: int
    answered: int = Field(description="Answered in this run.")
    failed: int
    skipped: int = Field(description="Already answered in the output file (resumed).")
    accuracy: float | None = Field(None, description="Matched / questions with keywords.")
    n_scored: int = 0
    tool_accuracy: float | None = None
    n_tool_scored: int = 0
    no_tool_accuracy: float | None = Field(
        None, description="Questions no tool serves that were left without a tool call."
    )
    n_no_tool: int = 0
    multi_tool_coverage: float | None = Field(
        None, description="Questions expecting two or more tools that called all of them."
    )
    n_multi_tool: int = 0
    p50_s: float = 0.0
    p95_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    output: str = ""


def answer_one(toolbox: Asker, question: Question, timeout_s: float) -> BatchRecord:
    """Ask one question under a deadline; every failure comes back as a record."""
    base = {"id": question.id, "query": question.query, "expected_tools": question.expected_tools}
    # A question blocked inside the model (a C call, or a wait on the agent's event loop) is
    # stopped when control comes back to Python; the batch does not wait for it.
    outcome = run_with_timeout(
        lambda: toolbox.ask(question.query), timeout_s, name="toolrag-question"
    )
    if outcome.timed_out:
        return BatchRecord(
            **base,
            ok=False,
            error_code="TIMEOUT",
            error=f"No answer within {timeout_s:g} s.",
            seconds=timeout_s,
        )
    if outcome.error is not None:
        exc = outcome.error
        return BatchRecord(**base, ok=False, error_code=type(exc).__name__, error=str(exc)[:500])
    answer = outcome.value
    called = answer.tools_called
    return BatchRecord(
        **base,
        answer=answer.answer,
        ok=True,
        matched=question_matches(answer.answer, question)
        if question.answer_keywords or question.answer_ids
        else None,
        tool_ok=set(question.expected_tools) <= set(called) if question.expected_tools else None,
        no_tool_ok=not called if question.no_tool else None,
        tools_called=called,
        sources=sorted({s.file for s in answer.sources}),
        seconds=round(answer.seconds, 2),
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        run_id=answer.run_id,
    )


def _share(flags: Iterable[bool | None]) -> float | None:
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else None


def summarize(
    records: Sequence[BatchRecord], total: int, skipped: int, answered: int, output: Path
) -> BatchSummary:
    """Scores over every record of the file (resumed ones included)."""
    done = [r for r in records if r.ok]
    scored = [r for r in done if r.matched is not None]
    tool_scored = [r for r in done if r.tool_ok is not None]
    no_tool = [r for r in done if r.no_tool_ok is not None]
    multi = [r for r in tool_scored if len(set(r.expected_tools)) >= 2]
    seconds = [r.seconds for r in done]
    return BatchSummary(
        total=total,
        answered=answered,
        failed=sum(1 for r in records if not r.ok),
        skipped=skipped,
        accuracy=sum(bool(r.matched) for r in scored) / len(scored) if scored else None,
        n_scored=len(scored),
        tool_accuracy=(
            sum(bool(r.tool_ok) for r in tool_scored) / len(tool_scored) if tool_scored else None
        ),
        n_tool_scored=len(tool_scored),
        no_tool_accuracy=_share(r.no_tool_ok for r in no_tool),
        n_no_tool=len(no_tool),
        multi_tool_coverage=_share(r.tool_ok for r in multi),
        n_multi_tool=len(multi),
        p50_s=round(statistics.median(seconds), 2) if seconds else 0.0,
        p95_s=round(percentile(seconds, 0.95), 2),
        prompt_tokens=sum(r.prompt_tokens for r in done),
        completion_tokens=sum(r.completion_tokens for r in done),
        output=str(output),
    )


class Written(Protocol):
    """What :func:`finish` reads of a record sink: this run's records and the output path."""

    fresh: dict[str, BatchRecord]
    path: Path


def pending(questions: Sequence[Question], previous: dict[str, BatchRecord]) -> list[Question]:
    """The questions without an answer yet (a failed record is tried again)."""
    return [q for q in questions if not (q.id in previous and previous[q.id].ok)]


def finish(
    questions: Sequence[Question] | Sequence[str],
    previous: dict[str, BatchRecord],
    sink: Written,
    skipped: int,
) -> BatchSummary:
    """The summary over the questions' latest records, earlier runs' included."""
    ids = {q if isinstance(q, str) else q.id for q in questions}
    records = [r for i, r in {**previous, **sink.fresh}.items() if i in ids]
    answered = sum(1 for r in sink.fresh.values() if r.ok)
    return summarize(records, len(ids), skipped, answered, sink.path)


def load_batch_questions(path: Path) -> list[Question]:
    """Questions JSONL: ``{id, query}`` and optionally expected tools / answer keywords."""
    questions = load_questions(path)
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise ToolragError(
                f"{path}: the id {q.id!r} appears twice.",
                hint="Give every question its own id: resuming a batch relies on them.",
            )
        seen.add(q.id)
    return questions
