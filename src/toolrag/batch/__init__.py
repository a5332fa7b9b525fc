"""Batch answering: question files in, one answer record per question out, resumably."""

from toolrag.batch.questions import (
    Question,
    answer_matches,
    load_questions,
    question_matches,
    score_answer,
)
from toolrag.batch.run import (
    BatchRecord,
    BatchSummary,
    load_batch_questions,
    read_records,
    run_batch,
)

__all__ = [
    "BatchRecord",
    "BatchSummary",
    "Question",
    "answer_matches",
    "load_batch_questions",
    "load_questions",
    "question_matches",
    "read_records",
    "run_batch",
    "score_answer",
]
