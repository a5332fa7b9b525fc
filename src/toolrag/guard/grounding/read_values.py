"""Values a companion call computes with must have been read.

A small model offered ``sum_values`` beside ``run_sql`` for "What is the total marketing budget
across every team?" called ``sum_values`` first, with numbers it made up, and answered with
their total. A companion tool (``ToolCard.companion``: arithmetic over what other tools return)
may only compute with numbers and dates the question gives or the run has read since (earlier
tool results, a chat's earlier turns). :func:`unread_values` names the others; the guard refuses
such a call with a message that says to read the values with a data tool first.

Numbers compare by value whatever their format ("23,147,914" read, 23147914 passed; a sign may
differ; a JSON row's "[3,300.0]" holds 3 and 300.0) and a number that counts days, weeks or
items up to 31 is always accepted (a shift of "7 days" is seldom written as a figure). Dates
compare as dates: ISO, or written in words in the text read ("June 30, 2026"), or the bounds
of the period the question names.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from toolrag.guard.grounding.names import code_like, folded
from toolrag.guard.grounding.periods import MAX_CHARS, question_period
from toolrag.tools.result import ErrorCode, ToolResult

# A number read: grouped by thousands ("23,147,914"), and each plain run of digits too, since a
# JSON row has no space after its commas: "[3,300.0]" is 3 and 300.0 as well as 3,300.0, and
# "[12,450000.0]" is no grouped number at all.
_GROUPED = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)")
_PLAIN = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_NAMES = re.findall(r"[a-z]+", "jan feb mar apr may jun jul aug sep oct nov dec")
_MONTHS = {m: n for n, m in enumerate(_MONTH_NAMES, 1)}
_WORDS_DATE = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? "
    r"(\d{4})\b"
)
SMALL = 31  # a count of days or items this small needs no source
MAX_SEEN_CHARS = 200_000  # of what the run has read, the latest part is scanned
MAX_DATES = 120  # distinct dates read, compared with each date the question gives
NEAR_CHARS = 400  # two dates read this close (one row's plan and actual) may make a span
MAX_READ_DATES = 5_000  # dates read that start a span
MAX_NEAR_DATES = 8  # the dates after one that it may span


def _numbers(text: str) -> set[float]:
    grouped = {abs(float(n.replace(",", ""))) for n in _GROUPED.findall(text)}
    return grouped | {abs(float(n)) for n in _PLAIN.findall(text)}


def _dated(text: str) -> list[tuple[int, date]]:
    """Each date ``text`` holds (ISO or "March 3, 2026"), with where it starts, in order."""
    found: list[tuple[int, date]] = []
    for m in _ISO.finditer(text):
        with contextlib.suppress(ValueError):
            found.append((m.start(), date(int(m[1]), int(m[2]), int(m[3]))))
    for m in _WORDS_DATE.finditer(text.lower()):
        with contextlib.suppress(ValueError):
            found.append((m.start(), date(int(m[3]), _MONTHS[m[1]], int(m[2]))))
    return sorted(found)


def _dates(text: str) -> set[date]:
    return {d for _, d in _dated(text)}


def _day_spans(asked: list[date], read: str) -> set[float]:
    """The days between two dates that may make one figure: two dates read within
    ``NEAR_CHARS`` of each other (a row's plan and actual dates), or a date the question gives
    and one read. Any two dates of a long listing would make almost any count of days."""
    dated = _dated(read)
    spans: set[float] = set()
    for n, (at, day) in enumerate(dated[:MAX_READ_DATES]):
        for later, other in dated[n + 1 : n + 1 + MAX_NEAR_DATES]:
            if later - at > NEAR_CHARS:
                break
            spans.add(float(abs((day - other).days)))
    days = sorted({d for _, d in dated})[:MAX_DATES]
    spans |= {float(abs((a - b).days)) for a in asked for b in [*asked, *days]}
    return spans


def _values(value: Any) -> Iterable[Any]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _values(item)
    elif not isinstance(value, bool):
        yield value


def unread_values(arguments: Mapping[str, Any], question: str, seen: str) -> list[str]:
    """The number and date arguments that neither ``question`` nor ``seen`` gives, as
    ``key=value`` strings (see the module docstring)."""
    text = question[:MAX_CHARS] + "\n" + seen[-MAX_SEEN_CHARS:]
    numbers, dates = _numbers(text), _dates(text)
    period = question_period(question)
    if period:
        dates |= {d for d in period if d is not None}
    unread = []
    for key, value in arguments.items():
        for item in _values(value):
            if isinstance(item, int | float):
                if abs(item) <= SMALL or any(abs(abs(item) - n) < 0.005 for n in numbers):
                    continue
                unread.append(f"{key}={item!r}")
            elif isinstance(item, date) or (isinstance(item, str) and _ISO.fullmatch(item.strip())):
                day = item if isinstance(item, date) else date.fromisoformat(item.strip())
                if day not in dates:
                    unread.append(f"{key}={day.isoformat()!r}")
            elif isinstance(item, str) and re.fullmatch(r"[-+$\d,. ]+", item.strip()):
                digits = item.replace("$", "").replace(",", "").strip()
                try:
                    amount = abs(float(digits))
                except ValueError:
                    continue
                if amount > SMALL and not any(abs(amount - n) < 0.005 for n in numbers):
                    unread.append(f"{key}={item!r}")
    return unread


_FIGURE = re.compile(
    r"(?<![\w.\-])\$?-?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w\-])"
)  # a figure standing alone: not a part of an id (CUST-101, A-12) or a date


def unread_figures(answer: str, question: str, seen: str) -> list[str]:
    """The figures in ``answer`` (amounts, counts, rates) above ``SMALL`` that neither the
    question nor what the run read (``seen``: the tool results) holds, compared by value, as
    the answer writes them. Parts of ids and dates are not figures; years (1900-2100) are left
    out too, since a date the results hold may be written in words. The days between two dates
    read close together (a delay worked out from a row's plan and actual dates), or between a
    date the question gives and one read, count as read (:func:`_day_spans`)."""
    read = seen[-MAX_SEEN_CHARS:]
    numbers = _numbers(question[:MAX_CHARS] + "\n" + read)
    numbers |= _day_spans(sorted(_dates(question[:MAX_CHARS]))[:MAX_DATES], read)
    unread = []
    for match in _FIGURE.finditer(answer[:MAX_CHARS]):
        value = abs(float(match.group(1).replace(",", "")))
        if value <= SMALL or (1900 <= value <= 2100 and value.is_integer()):
            continue
        if not any(abs(value - n) < 0.005 for n in numbers) and match.group(0) not in unread:
            unread.append(match.group(0))
    return unread


# a run of letters and digits joined by hyphens (TKT-101-015, A-101): each character starts at
# most one run and a hyphen must be followed by a letter or digit, so matching is linear
_ID = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
MAX_IDS = 12  # the unread ids named back to the model, the first ones


def unread_ids(answer: str, question: str, seen: str) -> list[str]:
    """The ids and codes in ``answer`` (``code_like``: A-102, TKT-101-015, INV-2291) that
    neither the question nor what the run read (``seen``) holds: a small model that read a
    list of one drawing answers with three, the two it made up in the pattern of the first.
    Ids compare by their letters and digits (``a-102`` and ``A-102`` are one id, and so is
    ``A 102`` read: two runs one space apart are read as one id too); a file name or path read
    (``CUST-104_A-101.png``) holds the ids between its separators."""
    text = question[:MAX_CHARS] + "\n" + seen[-MAX_SEEN_CHARS:]
    known: set[str] = set()
    last: re.Match[str] | None = None
    for match in _ID.finditer(text):
        known.add(folded(match.group()))
        if last is not None and match.start() == last.end() + 1 and text[last.end()] == " ":
            known.add(folded(last.group() + match.group()))  # "TKT 101-015" read as one id
        last = match
    unread: list[str] = []
    for token in _ID.findall(answer[:MAX_CHARS]):
        if code_like(token) and folded(token) not in known and token not in unread:
            unread.append(token)
            if len(unread) >= MAX_IDS:
                break
    return unread


def unread_facts(answer: str, question: str, seen: str) -> list[str]:
    """What ``answer`` gives that neither the question nor the results read hold: its unread
    figures (:func:`unread_figures`), then its unread ids (:func:`unread_ids`)."""
    return unread_figures(answer, question, seen) + unread_ids(answer, question, seen)


def unread_refusal(name: str, unread: list[str]) -> ToolResult:
    """The error a companion call with unread values gets instead of running."""
    return ToolResult.fail(
        ErrorCode.INVALID_ARGUMENT,
        f"{', '.join(unread[:6])}: {name} computes only with values the question gives or a "
        "tool returned, and these are in neither.",
        suggestion="First call the tool that holds these figures or dates (the database, a "
        f"search, a schedule), then call {name} with the values it returned.",
    )
