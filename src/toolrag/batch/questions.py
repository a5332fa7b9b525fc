"""Question sets (``data/questions/*.jsonl``) and strict answer checking.

An answer is scored as a person would score it (docs/batch.md, "Scoring"): every expected
keyword must appear, numbers compare as numbers and dates as dates whatever their format, and
where the expected answer is a set of identifiers the answer's identifiers of those shapes must
be exactly that set: a list with wrong extra items is wrong."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolrag.errors import InputError
from toolrag.guard.grounding.periods import MONTHS


class Question(BaseModel):
    """One evaluation question: what to ask, which tools should answer, and how to check."""

    id: str
    query: str
    expected_tools: list[str] = Field(default_factory=list)
    expected_args: dict[str, Any] = Field(default_factory=dict)
    expected_answer: str = ""
    answer_keywords: list[str] = Field(default_factory=list)
    expected_sql: str = Field("", description="A reference query, for questions run_sql answers.")
    answer_ids: list[str] = Field(
        default_factory=list,
        description="When the answer is a set of identifiers (order numbers, ticket ids, "
        "invoices...): exactly that set. The answer's identifiers of the same shapes, less "
        "those the question itself names, must equal it.",
    )
    kind: str = Field("", description="What sort of question: sql_join, documents, no_tool...")

    @property
    def no_tool(self) -> bool:
        """A question no tool serves: written with ``"expected_tools": []`` or of kind no_tool.
        A question that simply leaves expected_tools out is unlabelled, not a no-tool one."""
        return self.kind == "no_tool" or (
            "expected_tools" in self.model_fields_set and not self.expected_tools
        )


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


_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# "june 30, 2026" / "jun. 30 2026" and "30 june 2026" / "30th of june, 2026"
_MONTH_FIRST = re.compile(rf"\b{_MONTH} {_DAY},? (\d{{4}})\b")
_DAY_FIRST = re.compile(rf"\b{_DAY} (?:of )?{_MONTH},? (\d{{4}})\b")


def _iso(year: str, month: str, day: str, original: str) -> str:
    try:
        return date(int(year), MONTHS[month], int(day)).isoformat()
    except ValueError:  # "february 30, 2026" is left as written
        return original


def normalize(text: str) -> str:
    """Lowercase; drop currency signs and thousands separators so $186,400 == 186400; write
    dates in words as ISO dates, so "June 30, 2026" == "30 June 2026" == 2026-06-30."""
    text = re.sub(r"\s+", " ", text.lower().replace("$", ""))
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = _MONTH_FIRST.sub(lambda m: _iso(m[3], m[1], m[2], m[0]), text)
    return _DAY_FIRST.sub(lambda m: _iso(m[3], m[2], m[1], m[0]), text)


_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-]|\.\d)")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")  # US 02/10/2026
_MAX_ANSWER = 20_000  # characters scored; a longer answer is cut, never scanned whole


def _us_date(m: re.Match[str]) -> str:
    try:
        return date(int(m[3]), int(m[1]), int(m[2])).isoformat()
    except ValueError:
        return m[0]


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(text)]


def _as_number(keyword: str) -> float | None:
    text = normalize(keyword).strip()
    return float(text) if re.fullmatch(r"-?\d+(?:\.\d+)?", text) else None


def _keyword_found(keyword: str, got: str, numbers: list[float]) -> bool:
    value = _as_number(keyword)
    if value is not None:  # 2500 == 2,500 == 2500.00 == $2,500; 250 is not in 2500
        if keyword.strip().startswith("-"):
            return any(abs(n - value) < 1e-9 for n in numbers)
        # an unsigned amount matches a signed one: "a credit of 22,400" is written -22400
        return any(abs(abs(n) - value) < 1e-9 for n in numbers)
    return normalize(keyword) in got


def id_shape(identifier: str) -> str:
    """A regex for identifiers shaped like this one: letters for letters, digits for digits,
    the same separators, and no letter, digit or joined part on either side, so the shape of
    "S-201" finds "A-101" but not the "E-107" inside "ACME-107" or "TKT-101" inside
    "TKT-101-014". An underscore separates, as a person reads a file name: "ACME-107_S-202.png"
    names S-202."""
    parts = []
    for run in re.findall(r"[A-Za-z]+|\d+|[^A-Za-z\d]", identifier.strip()):
        if run.isalpha():
            parts.append(f"[A-Za-z]{{{len(run)}}}")
        elif run.isdigit():
            parts.append(f"\\d{{{len(run)}}}")
        else:
            parts.append(re.escape(run))
    return r"(?<![A-Za-z\d-])" + "".join(parts) + r"(?![A-Za-z\d]|-[A-Za-z\d])"


def ids_in(text: str, like: list[str]) -> set[str]:
    """The identifiers in ``text`` shaped like any of ``like``, upper-cased."""
    shapes = {id_shape(i) for i in like if i.strip()}
    return {m.upper() for shape in shapes for m in re.findall(shape, text)}


class AnswerScore(BaseModel):
    """Why an answer counts as right or wrong."""

    matched: bool
    missing_keywords: list[str] = Field(default_factory=list)
    missing_ids: list[str] = Field(default_factory=list)
    extra_ids: list[str] = Field(default_factory=list)


def score_answer(
    answer: str, keywords: list[str], ids: list[str] | None = None, question: str = ""
) -> AnswerScore:
    """Score strictly: every keyword, and exactly the expected ids (ids the question names
    itself may be repeated freely). No keywords and no ids: nothing to match, not matched."""
    ids = ids or []
    if not keywords and not ids:
        return AnswerScore(matched=False)
    text = _SLASH_DATE.sub(_us_date, answer[:_MAX_ANSWER])
    got = normalize(text)
    numbers = _numbers(got)
    missing = [k for k in keywords if not _keyword_found(k, got, numbers)]
    found = ids_in(text, ids) - ids_in(question, ids)
    want = {i.strip().upper() for i in ids}
    score = AnswerScore(
        matched=False,
        missing_keywords=missing,
        missing_ids=sorted(want - found),
        extra_ids=sorted(found - want),
    )
    score.matched = not (score.missing_keywords or score.missing_ids or score.extra_ids)
    return score


def answer_matches(answer: str, keywords: list[str], ids: list[str] | None = None,
                   question: str = "") -> bool:  # fmt: skip
    """True when the answer has every keyword and exactly the expected ids (score_answer)."""
    return score_answer(answer, keywords, ids, question).matched


def question_matches(answer: str, question: Question) -> bool:
    """Strictly score ``answer`` against everything ``question`` expects."""
    return score_answer(
        answer, question.answer_keywords, question.answer_ids, question.query
    ).matched
