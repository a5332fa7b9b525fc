"""Whether a request speaks of a time at all, found without a model.

A small model adds date filters a question never asked for ("since 2023-01-01" for "How many
days has the Oslo store lost to weather?"), and the call then finds nothing. :func:`mentions_time`
says whether the question gives the model any ground for a date: a date, a year, a month or a
weekday, a relative period ("last week", "3 days ago", "since", "between") or a season of the
year. :func:`iso_dates` picks the date values out of a call's arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

# Months and weekdays, and words that set a period or a point in time. "day(s)" alone is a
# quantity ("working days"), not a period: it needs one of these beside it ("the past 30 days").
# Words of frequency (annual, monthly, weekly) name no period: "annual leave", "the monthly
# report" give no dates a call could use.
_TIME_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """january february march april june july august september october november december
        jan feb mar apr jun jul aug sep sept oct nov dec
        monday tuesday wednesday thursday friday saturday sunday
        today yesterday tomorrow tonight weekend week weeks month months year
        years quarter decade ago since until till before after
        between during within recent recently past upcoming next last previous current ytd mtd
        morning afternoon evening overnight hour hours""",
    )
)
_WORDS = re.compile(r"[a-z]+")
# not inside an id: TKT-109-02 and ACME-2024 hold no date
_YEAR = re.compile(r"(?<![\w-])(?:19|20)\d{2}(?![\w-])")
_NUMERIC_DATE = re.compile(
    r"(?<![\w.-])(?:\d{1,4}[-/]\d{1,2}(?:[-/]\d{1,4})?|\d{1,2}\.\d{1,2}\.\d{2,4})(?![\w-])"
)
_QUARTER = re.compile(r"\b[qh][1-4]\b", re.IGNORECASE)
# "May" is a month only capitalised and not opening the sentence ("May I ..." is not)
_MAY = re.compile(r"(?<=[a-z0-9,] )May\b")


def mentions_time(question: str) -> bool:
    """Whether ``question`` names a date, a period or a point in time: a year (2025), a date
    (2025-12-11, 12/11), a month or a weekday, a quarter (Q3), or a word such as today, last,
    since, between, ago, week, month or year. "How many working days were lost?" does not."""
    if _YEAR.search(question) or _NUMERIC_DATE.search(question) or _QUARTER.search(question):
        return True
    if _MAY.search(question):
        return True
    words = set(_WORDS.findall(question.lower()))
    return bool(words & _TIME_WORDS)


def _is_date(value: Any) -> bool:
    if isinstance(value, (date, datetime)):
        return True
    if not isinstance(value, str) or not re.match(r"\d{4}-\d{2}-\d{2}", value.strip()):
        return False
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        return False
    return True


def iso_dates(arguments: Mapping[str, Any], required: Sequence[str] = ()) -> list[str]:
    """The names of the optional arguments whose value is a date or a date-time
    (``"2023-01-01"``, ``"2023-01-01T08:00"``), in order; a required one is never listed."""
    return [k for k, v in arguments.items() if k not in required and _is_date(v)]
