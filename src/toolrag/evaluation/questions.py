"""Question sets (``data/questions/*.jsonl``) and answer checking."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolrag.errors import InputError


class Question(BaseModel):
    """One evaluation question: what to ask, which tools should answer, and how to check."""

    id: str
    query: str
    expected_tools: list[str] = Field(default_factory=list)
    expected_args: dict[str, Any] = Field(default_factory=dict)
    expected_answer: str = ""
    answer_keywords: list[str] = Field(default_factory=list)
    expected_sql: str = Field("", description="A reference query, for questions run_sql answers.")


def load_questions(path: Path) -> list[Question]:
    if not path.is_file():
        raise InputError(
            f"Question file {path} does not exist.",
            hint="Pass a JSONL file with {id, query, expected_tools} per line.",
        )
    questions = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(Question.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValueError) as exc:
            raise InputError(
                f"{path}:{n}: not a valid question ({exc.__class__.__name__}).",
                hint="Each line must be a JSON object with id and query.",
            ) from exc
    return questions


def normalize(text: str) -> str:
    """Lowercase; drop currency signs and thousands separators so $186,400 == 186400."""
    text = text.lower().replace("$", "")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return re.sub(r"\s+", " ", text)


def answer_matches(answer: str, keywords: list[str]) -> bool:
    """True when every expected keyword appears in the normalized answer."""
    if not keywords:
        return False
    got = normalize(answer)
    return all(normalize(k) in got for k in keywords)
