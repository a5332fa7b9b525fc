"""The period a request names, read without a model: "between January and March 2026",
"in the first quarter of 2026", "Q3 2025", "since 2025-10-01", "from Oct 1, 2025 to Jan 31,
2026", "in November 2025".

:func:`question_period` returns the first and last day of that period (either may be None for
"since ..." or "before ..."), or None when the request names no period or names it in a way
this reader does not know. It never guesses: a year alone is a period only after "in",
"during" or "of" ("in 2025"), and a lone date only after a word that says which end it is
("since", "after", "from", "before", "until", "by", "on").

Every pattern is linear (no nested repetition) and the text is cut to
:data:`MAX_CHARS` first.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

MAX_CHARS = 2_000

MONTHS = {  # month names and abbreviations, lowercase -> 1..12
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
_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?:19|20)\d{2}"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_ISO = rf"{_YEAR}-\d{{1,2}}-\d{{1,2}}"
_WORDS_DATE = rf"{_MONTH} {_DAY},? {_YEAR}|{_DAY} (?:of )?{_MONTH},? {_YEAR}"
_DATE = re.compile(rf"(?<![\w-])(?:{_ISO}|{_WORDS_DATE})(?![\w-])")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})(?:,? ({_YEAR}))?\b")
_RANGE_MONTHS = re.compile(
    rf"\b(?:between|from)? ?({_MONTH})(?:,? ({_YEAR}))? (?:and|to|through|until|till|-|–) "
    rf"({_MONTH}),? ({_YEAR})\b"
)
# "between January 1 and March 31, 2026": the year given once, at the end
_RANGE_DAYS = re.compile(
    rf"\b({_MONTH}) (\d{{1,2}}) (?:and|to|through|until|till|-|–) ({_MONTH}) (\d{{1,2}}),? "
    rf"({_YEAR})\b"
)
_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
            "4th": 4, "last": 4}  # fmt: skip
_QUARTER = re.compile(
    rf"\b(?:q([1-4]),? (?:of )?({_YEAR})|(first|1st|second|2nd|third|3rd|fourth|4th|last) "
    rf"quarter(?: of)?,? ({_YEAR}))\b"
)
_HALF = re.compile(
    rf"\b(?:h([12]),? (?:of )?({_YEAR})|(first|1st|second|2nd|last) half(?: of)?,? ({_YEAR}))\b"
)
_IN_YEAR = re.compile(rf"\b(?:in|during|of|for) ({_YEAR})\b(?![-/])")
_START_WORDS = re.compile(r"\b(?:since|after|from|starting|beginning)\s*$")
_END_WORDS = re.compile(r"\b(?:before|until|till|by|through|up to)\s*$")
_ON_WORDS = re.compile(r"\bon\s*$")

Period = tuple[date | None, date | None]


def _month_number(word: str) -> int:
    return MONTHS[word.rstrip(".")]


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _parse_date(text: str) -> date | None:
    text = text.strip().rstrip(",")
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    try:
        if m:
            return date(int(m[1]), int(m[2]), int(m[3]))
        words = re.findall(r"[a-z]+\.?|\d+", text)
        year = int(next(w for w in words if len(w) == 4 and w.isdigit()))
        month = next(_month_number(w) for w in words if w.rstrip(".") in MONTHS)
        day = int(next(w for w in words if w.isdigit() and len(w) <= 2))
        return date(year, month, day)
    except (ValueError, StopIteration):
        return None


def question_period(question: str) -> Period | None:
    """The period ``question`` names, as (first day, last day); see the module docstring."""
    text = re.sub(r"\s+", " ", question[:MAX_CHARS].lower())
    text = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", text)
    if m := _RANGE_DAYS.search(text):
        try:
            year = int(m[5])
            first = date(year, _month_number(m[1]), int(m[2]))
            last = date(year, _month_number(m[3]), int(m[4]))
            if first > last:
                first = first.replace(year=year - 1)
            return first, last
        except ValueError:
            return None
    dates = [(m, _parse_date(m[0])) for m in _DATE.finditer(text)]
    dates = [(m, d) for m, d in dates if d is not None]
    if len(dates) >= 2:
        first, second = sorted(d for _, d in dates[:2] if d is not None)
        return first, second
    if len(dates) == 1:
        m, day = dates[0]
        before = text[: m.start()]
        if _START_WORDS.search(before):
            return day, None
        if _END_WORDS.search(before):
            return None, day
        if _ON_WORDS.search(before):
            return day, day
        return None
    if m := _RANGE_MONTHS.search(text):
        end_year = int(m[4])
        start_year = int(m[2]) if m[2] else end_year
        start_month, end_month = _month_number(m[1]), _month_number(m[3])
        if not m[2] and start_month > end_month:  # "between November and February 2026"
            start_year -= 1
        return date(start_year, start_month, 1), _month_end(end_year, end_month)
    if m := _QUARTER.search(text):
        quarter = int(m[1]) if m[1] else _ORDINAL[m[3]]
        year = int(m[2] or m[4])
        return date(year, 3 * quarter - 2, 1), _month_end(year, 3 * quarter)
    if m := _HALF.search(text):
        half = int(m[1]) if m[1] else (1 if m[3] in ("first", "1st") else 2)
        year = int(m[2] or m[4])
        return date(year, 6 * half - 5, 1), _month_end(year, 6 * half)
    for m in _MONTH_YEAR.finditer(text):
        if m[2] and not (m[1] == "may" and not re.search(r"\bin may\b", text)):
            year, month = int(m[2]), _month_number(m[1])
            return date(year, month, 1), _month_end(year, month)
    if m := _IN_YEAR.search(text):
        year = int(m[1])
        return date(year, 1, 1), date(year, 12, 31)
    return None
