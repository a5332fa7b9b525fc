"""Batch answering: question files in, one answer record per question out, resumably, on this
machine or on a Ray cluster (``run_batch(..., engine="ray")``)."""

from toolrag.batch.questions import (
    Question,
    answer_matches,
    load_questions,
    question_matches,
    score_answer,
)
from toolrag.batch.ray_engine import run_batch_ray
from toolrag.batch.run import (
    BatchRecord,
    BatchSummary,
    Engine,
    load_batch_questions,
    read_records,
    run_batch,
)

__all__ = [
    "BatchRecord",
    "BatchSummary",
    "Engine",
    "Question",
    "answer_matches",
    "load_batch_questions",
    "load_questions",
    "question_matches",
    "read_records",
    "run_batch",
    "run_batch_ray",
    "score_answer",
]
