"""The rows of a listing that name what the question asks about, first.

"How many days late was the roof finished at the east site?" is answered by one row of the
site's twelve tasks. A small model reads the rows it sees first, or the one whose words it
recalls, and answered with another task's delay. :func:`focus_rows` moves
the rows that hold the question's distinctive words (words that name at most a third of the
rows, such as "roof"; not "days", which every row holds) to the front, rarer words counting
more, keeps every row, and says so in the result's note, where the one or two rows naming
them best are repeated: a small model reads the end of a long result best. Nothing moves
when the question asks about an order ("the first", "the latest") or when the result was cut.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from toolrag.text import bounded
from toolrag.tools.result import ToolResult

MIN_ROWS = 4  # a shorter listing is read whole
MIN_WORD = 4  # shorter question words ("GRB", "for") are not compared
MAX_SHARE = 1 / 3  # a word named by more of the rows does not tell them apart
MAX_TEXT = 4_000  # characters of one row compared
MAX_REPEATED = 2  # rows that name the question best, repeated in the note
REPEATED_CHARS = 400  # of each repeated row
_ORDER = "first last earliest latest next previous oldest newest recent top bottom"
ORDER_WORDS = frozenset(_ORDER.split())
_ASKING = """what which when where whom whose many much does were have with from that this there
their they about into than them will would should could been being each some only also more
most give show list tell"""
QUESTION_WORDS = frozenset(_ASKING.split())
_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    """Lower-case words of ``text``, a plural's final s dropped ("roofs" is "roof")."""
    out = set()
    for word in _WORD.findall(text.lower()):
        if len(word) > MIN_WORD and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return out


def _values(row: Any) -> str:
    """The text of a row's values, not its keys: "days" names a row whose status says "6
    days after", not every row with a ``days_after_plan`` field."""
    if isinstance(row, dict):
        return " ".join(_values(v) for v in row.values())
    if isinstance(row, list | tuple):
        return " ".join(_values(v) for v in row)
    return "" if row is None else str(row)


def _listing(data: Any) -> tuple[list[Any], Callable[[list[Any]], Any]] | None:
    """The list of JSON objects ``data`` is, or holds under one key (an HTTP body), with how
    to put a reordered list back; None for anything else (a SQL table's rows keep the order
    its ``ORDER BY`` gave)."""

    def objects(value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)

    if objects(data):
        return data, lambda rows: rows
    if isinstance(data, dict):
        keys = [k for k, v in data.items() if objects(v)]
        if len(keys) == 1:
            key = keys[0]
            return data[key], lambda rows: {**data, key: rows}
    return None


def listing_rows(data: Any) -> list[Any]:
    """The rows of the listing ``data`` is or holds (:func:`_listing`); [] for anything else."""
    found = _listing(data)
    return found[0] if found is not None else []


# a listing's rows, how to put them back, each row's score, the words each names, the terms
Scored = tuple[list[Any], Callable[[list[Any]], Any], list[float], list[set[str]], set[str]]


def _scored(question: str, result: ToolResult) -> Scored | None:
    """The rows of ``result``'s listing with how to put a reordered list back, each row's
    score (the rarity of the question's distinctive words it names), the words each names,
    and the distinctive words; None when nothing can be told apart (a failed or cut result,
    a short listing, an order asked)."""
    if not result.success or result.truncated or not question:
        return None
    found = _listing(result.data)
    if found is None or len(found[0]) < MIN_ROWS:
        return None
    rows, put = found
    asked = {w for w in _words(question[:2_000]) if len(w) >= MIN_WORD} - QUESTION_WORDS
    if not asked or asked & ORDER_WORDS:
        return None
    named = [_words(_values(row)[:MAX_TEXT]) & asked for row in rows]
    counts = {w: sum(w in n for n in named) for w in asked}
    terms = {w for w, c in counts.items() if 0 < c <= len(rows) * MAX_SHARE}
    if not terms:
        return None
    scores = [sum(math.log(len(rows) / counts[w]) for w in n & terms) for n in named]
    return rows, put, scores, named, terms


def best_rows(question: str, result: ToolResult) -> list[Any]:
    """The rows of ``result``'s listing that name the question's distinctive words best
    (:func:`focus_rows` repeats them in its note); [] when no row stands out."""
    scored = _scored(question, result)
    if scored is None:
        return []
    rows, _, scores, _, _ = scored
    top = max(scores)
    return [r for r, s in zip(rows, scores, strict=True) if s == top] if top > 0 else []


def focus_rows(question: str, result: ToolResult) -> ToolResult:
    """``result`` with the rows of its listing that name the question's distinctive words
    first, and a note saying which words moved them; ``result`` itself when nothing moves."""
    scored = _scored(question, result)
    if scored is None:
        return result
    rows, put, scores, named, terms = scored
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], i))
    moved = [i for i in order if scores[i] > 0]
    words = sorted({w for i in moved for w in named[i] & terms})
    note = f"{len(moved)} of {len(rows)} rows name {', '.join(repr(w) for w in words)} from the "
    if order == list(range(len(rows))):
        note += "question: they are first."
    else:
        note += "question: they come first, the rest follow in their order."
    best = [i for i in moved if scores[i] == scores[moved[0]]]
    if len(best) <= MAX_REPEATED:  # again last, where a small model reads best
        shown = "; ".join(bounded(_compact(rows[i]), REPEATED_CHARS) for i in best)
        note += f" The {'row' if len(best) == 1 else 'rows'} naming most of them: {shown}"
    return result.model_copy(update={"data": put([rows[i] for i in order])}).with_note(note)


def _compact(row: Any) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str)
