"""Question sets (``data/questions/*.jsonl``) and answer checking."""

from __future__ import annotations

import json
import re
from datetime import date
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
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
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


_MONTHS = {
    name: n
    for n, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sept", "sep"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# "june 30, 2026" / "jun. 30 2026" and "30 june 2026" / "30th of june, 2026"
_MONTH_FIRST = re.compile(rf"\b{_MONTH} {_DAY},? (\d{{4}})\b")
_DAY_FIRST = re.compile(rf"\b{_DAY} (?:of )?{_MONTH},? (\d{{4}})\b")


def _iso(year: str, month: str, day: str, original: str) -> str:
    try:
        return date(int(year), _MONTHS[month], int(day)).isoformat()
    except ValueError:  # "february 30, 2026" is left as written
        return original


def normalize(text: str) -> str:
    """Lowercase; drop currency signs and thousands separators so $186,400 == 186400; write
    dates in words as ISO dates, so "June 30, 2026" == "30 June 2026" == 2026-06-30."""
    text = re.sub(r"\s+", " ", text.lower().replace("$", ""))
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = _MONTH_FIRST.sub(lambda m: _iso(m[3], m[1], m[2], m[0]), text)
    return _DAY_FIRST.sub(lambda m: _iso(m[3], m[2], m[1], m[0]), text)


def answer_matches(answer: str, keywords: list[str]) -> bool:
    """True when every expected keyword appears in the normalized answer."""
    if not keywords:
        return False
    got = normalize(answer)
    return all(normalize(k) in got for k in keywords)
