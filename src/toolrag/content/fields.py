"""A collection's metadata fields: each value read from its declared source and checked
against its type (``keyword``, ``enum``, ``date``, ``number``)."""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Any

from toolrag.content.collection_spec import FieldSpec
from toolrag.content.readers import Unit

MAX_VALUE_CHARS = 200
MAX_LINE_CHARS = 1_000  # a text: pattern reads each line up to this many characters
_DATE_FORMATS = (
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%d.%m.%Y",
    "%m/%d/%Y",
    "%d %B %Y",
    "%B %d, %Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%Y%m%d",
)


class FieldValueError(ValueError):
    """A value that does not fit its field's type."""


@lru_cache(maxsize=256)
def path_pattern(pattern: str) -> re.Pattern[str]:
    """``{project}/{doc_type}/*.pdf`` as a regex over a relative path: ``{name}`` is one
    segment (a named group), ``**`` any number of segments, ``*`` any part of a segment. It
    may match the path's last segments (a pattern relative to the collection's folder)."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "{" and (end := pattern.find("}", i)) != -1:
            out.append(f"(?P<{pattern[i + 1 : end]}>[^/]+)")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("(?:^|.*/)" + "".join(out) + "$")


def raw_value(spec: FieldSpec, unit: Unit, source: str) -> Any:
    """The field's value before its type is checked; None when the source has none (and for
    a ``days_between`` field, which :func:`days_between` computes from the other values)."""
    kind, arg = spec.kind, spec.argument
    if kind == "days_between":
        return None
    if kind == "front_matter":
        return unit.front_matter.get(arg)
    if kind == "property":
        return unit.properties.get(arg)
    if kind == "column":
        return (unit.properties.get("columns") or {}).get(arg)
    if kind == "path":
        match = path_pattern(arg).match(source)
        return match.group(spec.name) if match else None
    pattern = re.compile(arg, re.IGNORECASE)
    for line in unit.text.splitlines():
        match = pattern.search(line[:MAX_LINE_CHARS])
        if match:
            return (match.group(1) if match.groups() else match.group(0)).strip()
    return None


def days_between(spec: FieldSpec, values: dict[str, Any]) -> int | None:
    """A ``days_between:START,END`` field's value from a unit's other ``values`` (ISO dates):
    the days from START to END; None when either date is missing."""
    start, end = spec.between
    if not values.get(start) or not values.get(end):
        return None
    return (parse_date(values[end]) - parse_date(values[start])).days


def days_text(spec: FieldSpec, days: float) -> str:
    """A ``days_between`` value as a result shows it, in words a small model reads without
    counting: ``6 (actual_finish is 6 days after planned_finish)``."""
    start, end = spec.between
    n = int(days)
    if n == 0:
        return f"0 ({end} is on the same day as {start})"
    side = "after" if n > 0 else "before"
    return f"{n} ({end} is {abs(n)} day{'s' * (abs(n) != 1)} {side} {start})"


def coerce(spec: FieldSpec, value: Any) -> str | float | None:
    """``value`` as the field's type: a string for keyword and enum, an ISO date string for
    date, a float for number; None for a missing value; FieldValueError when it does not fit."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if spec.type == "number":
        if isinstance(value, bool):
            raise FieldValueError(f"{value!r} is not a number")
        if isinstance(value, int | float):
            return float(value)
        text = re.sub(r"[\s,$€£]", "", str(value)[:MAX_VALUE_CHARS])
        try:
            return float(text)
        except ValueError:
            raise FieldValueError(f"{str(value)[:60]!r} is not a number") from None
    if spec.type == "date":
        return parse_date(value).isoformat()
    if isinstance(value, list):
        value = ", ".join(map(str, value))
    return " ".join(str(value).split())[:MAX_VALUE_CHARS]


def parse_date(value: Any) -> dt.date:
    """A date from a date, a datetime or a string in a common format (ISO, 2024/01/15,
    15.01.2024, 01/15/2024, 15 January 2024, January 15, 2024)."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = " ".join(str(value).split())[:40]
    text = re.sub(r"(\d)\s*([-/.])\s*(?=\d)", r"\1\2", text)  # OCR's "2026 - 02 - 10"
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        pass
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise FieldValueError(f"{text!r} is not a date (use YYYY-MM-DD)")
