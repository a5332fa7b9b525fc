"""Compute tools: exact arithmetic over values the model has read (pure functions, no I/O).

A small model (Qwen2.5-Coder-1.5B) reads the right figures and dates from a tool's result and
then gets the arithmetic wrong: the days between two deadlines, a planned finish plus the days
approved delays added, how much more one vendor billed than another, what share of a budget is
spent, the total of several invoices. These tools do that arithmetic. Each result carries the
raw numbers, the numbers rounded to 2 decimals and a one-sentence ``summary`` that states the
answer in words, so the model can copy it.

Inputs are bounded at the door: at most 1,000 values, finite numbers of at most 1e15 in size,
dates from 1900 to 2200, shifts of at most 100,000 days. A number may also come as a figure
the way a result shows it (``"23,147,914"``, ``"$1,250.50"``). Division by zero, like every
other bad input, comes back as a ``ToolResult`` error with a suggestion.

The argument annotations stay undeferred (no ``from __future__ import annotations``):
LlamaIndex reads ``datetime.date`` from the signature to mark date parameters
``format: date``.
"""

import datetime as dt
import math
import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from toolrag.tools.base import GuardedToolSpec
from toolrag.tools.result import ErrorCode, ToolResult

MAX_VALUES = 1_000
MAX_ABS = 1e15
MAX_DAYS = 100_000
MAX_LABEL_CHARS = 200
FIRST_DATE, LAST_DATE = dt.date(1900, 1, 1), dt.date(2200, 12, 31)

COMPUTE_TOOLS = ("days_between", "date_shift", "compare_values", "calculate_share", "sum_values")
"""The names of the compute tools, in the order the toolbox lists them."""

# A figure as results and documents write it: an optional sign and currency sign, digits with
# or without thousands separators (only where they belong: "1,234,567", never "1,23"), and
# decimals after a point. Anything else is left for the schema to refuse.
_FIGURE = re.compile(
    r"(?P<sign>[+-]?)\s{0,3}[$€£]?\s{0,3}(?P<whole>\d{1,3}(?:,\d{3})+|\d*)(?P<fraction>\.\d+)?"
)


def parse_figure(value: Any) -> Any:
    """``"23,147,914"`` -> ``23147914.0``, ``"$1,250.50"`` -> ``1250.5``; any other value as
    it is (a number stays a number; a string that is no figure fails validation as before)."""
    if not isinstance(value, str):
        return value
    m = _FIGURE.fullmatch(value.strip())
    if m is None or not (m["whole"] or m["fraction"]):
        return value
    return float(f"{m['sign']}{m['whole'].replace(',', '') or '0'}{m['fraction'] or ''}")


if TYPE_CHECKING:
    Number = float
else:

    class Number(float):
        """A float parameter that also takes a figure written with thousands separators or a
        currency sign; its JSON schema is ``{"type": "number"}``. (A top-level ``Annotated``
        validator would not survive LlamaIndex's schema building, which keeps only the
        annotation's first argument.)"""

        @classmethod
        def __get_pydantic_core_schema__(
            cls, source: Any, handler: GetCoreSchemaHandler
        ) -> core_schema.CoreSchema:
            return core_schema.no_info_before_validator_function(
                parse_figure, core_schema.float_schema()
            )


def _invalid(message: str, suggestion: str) -> ToolResult:
    return ToolResult.fail(ErrorCode.INVALID_ARGUMENT, message, suggestion=suggestion)


def _check_number(name: str, value: Any) -> ToolResult | None:
    """An error for a value that is not a finite number of at most ``MAX_ABS``."""
    value = parse_figure(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _invalid(
            f"{name} is {value!r}, not a number.",
            f"Pass {name} as a number: digits with an optional decimal point.",
        )
    if not math.isfinite(value):
        return _invalid(
            f"{name} is {value}, not a finite number.",
            f"Pass the figure itself as {name}, as read from the result.",
        )
    if abs(value) > MAX_ABS:
        return _invalid(
            f"{name} is {value:g}; values are limited to {MAX_ABS:g} in size.",
            f"Check {name}: pass the figure as read from the result, in its unit.",
        )
    return None


def _as_date(name: str, value: Any) -> dt.date | ToolResult:
    """``value`` as a date from ``FIRST_DATE`` to ``LAST_DATE``, or the error saying why not."""
    if isinstance(value, dt.datetime):
        value = value.date()
    elif isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value.strip())
        except ValueError:
            return _invalid(f"{name} is {value!r}, not a date.", f"Write {name} as YYYY-MM-DD.")
    if not isinstance(value, dt.date):
        return _invalid(f"{name} is {value!r}, not a date.", f"Write {name} as YYYY-MM-DD.")
    if not FIRST_DATE <= value <= LAST_DATE:
        return _invalid(
            f"{name} is {value.isoformat()}; dates must lie between "
            f"{FIRST_DATE.isoformat()} and {LAST_DATE.isoformat()}.",
            f"Check the year of {name}.",
        )
    return value


def round2(value: float, places: int = 2) -> float:
    """``value`` rounded half away from zero to ``places`` decimals, as people round money
    (2.675 -> 2.68, where ``round`` gives 2.67)."""
    if not math.isfinite(value) or abs(value) >= MAX_ABS:  # no cents left to round there
        return round(value, places)
    exponent = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(exponent, rounding=ROUND_HALF_UP)) + 0.0


def plain(value: float) -> float | int:
    """A whole float as an int (``7.0`` -> ``7``), so results read ``7``, not ``7.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def fmt(value: float, trim: bool = False) -> str:
    """A number for a summary sentence: thousands separators, 2 decimals unless whole
    (``1,250,000``, ``1,234.50``; ``trim`` drops trailing zeros, ``0.8``), three significant
    digits when it rounds to 0."""
    rounded = round2(value)
    if rounded == 0 and value != 0:
        return f"{value:.3g}"
    if rounded.is_integer():
        return f"{int(rounded):,}"
    text = f"{rounded:,.2f}"
    return text.rstrip("0") if trim else text


def fmt_percent(value: float) -> str:
    """``25.0`` -> ``25%``, ``37.5`` -> ``37.5%``, ``12.345`` -> ``12.35%``."""
    return fmt(value, trim=True) + "%"


def weekdays(start: dt.date, end: dt.date) -> int:
    """The Mondays to Fridays from ``start`` up to, not including, ``end`` (``start <= end``;
    as ``numpy.busday_count`` counts them)."""
    full_weeks, rest = divmod((end - start).days, 7)
    first = start.weekday()
    return full_weeks * 5 + sum(1 for i in range(rest) if (first + i) % 7 < 5)


def _label(text: str, default: str) -> str | ToolResult:
    label = " ".join((text or "").split())
    if len(label) > MAX_LABEL_CHARS:
        return _invalid(
            f"A label is {len(label)} characters long; at most {MAX_LABEL_CHARS} are allowed.",
            "Name each value in a few words.",
        )
    return label or default


class ComputeToolSpec(GuardedToolSpec):
    """Arithmetic over dates and figures the model has read: day spans, date shifts,
    comparisons, shares and sums. Pure functions over bounded inputs: they finish in
    microseconds, so the guard runs them inline (``self_timed``)."""

    spec_functions = [  # noqa: RUF012 - BaseToolSpec declares it as an instance attribute
        "days_between",
        "date_shift",
        "compare_values",
        "calculate_share",
        "sum_values",
    ]
    self_timed = True

    def days_between(self, start: dt.date, end: dt.date, working_days: bool = False) -> ToolResult:
        """Count the calendar days from one date to another, and optionally the working days
        (Monday to Friday) between them.

        Use it for how long something takes or how late it is: from a task's planned start
        to its planned finish, from a planned finish to the actual finish, from a contract date
        to a date the question gives. Returns start, end, days (end minus start, negative when
        end is before start), weeks (1 decimal), working_days when asked, and a summary
        sentence to copy into the answer. It does not look dates up (read them from a schedule
        or document first) and does not know holidays.

        Args:
            start: The first date, YYYY-MM-DD.
            end: The second date, YYYY-MM-DD; days is end minus start.
            working_days: Also count the weekdays (Monday to Friday) from start up to, not
                including, end. Holidays are not known.
        """
        first = _as_date("start", start)
        if isinstance(first, ToolResult):
            return first
        last = _as_date("end", end)
        if isinstance(last, ToolResult):
            return last
        days = (last - first).days
        weeks = round2(days / 7, 1)
        summary = (
            f"{first.isoformat()} to {last.isoformat()} is {days:,} calendar days "
            f"({weeks:,.1f} weeks)"
        )
        data: dict[str, Any] = {
            "summary": "",
            "start": first.isoformat(),
            "end": last.isoformat(),
            "days": days,
            "weeks": weeks,
        }
        if working_days:
            count = weekdays(first, last) if days >= 0 else -weekdays(last, first)
            data["working_days"] = count
            of_them = " of them" if days >= 0 else ""
            summary += (
                f", {count:,}{of_them} working days (Monday to Friday, start counted, end not, "
                "no holidays)"
            )
        if days < 0:
            summary += f": the end is {-days:,} days before the start"
        data["summary"] = summary + "."
        return ToolResult.ok(data)

    def date_shift(self, start: dt.date, days: int) -> ToolResult:
        """Give the date a number of calendar days after a date (before it, for a negative
        number).

        Use it for a date moved by a number of days: a planned finish plus the days approved
        extensions added, a start date plus a duration in days, the date some days before a
        deadline. Returns start, days, date (YYYY-MM-DD), its weekday, and a summary sentence
        to copy into the answer. It counts calendar days, not working days, and does not look
        up the date or the number of days: read them from a result first.

        Args:
            start: The date to count from, YYYY-MM-DD.
            days: How many calendar days to add; negative to go back.
        """
        first = _as_date("start", start)
        if isinstance(first, ToolResult):
            return first
        if isinstance(days, bool) or not isinstance(days, int):
            return _invalid(f"days is {days!r}, not a whole number.", "Pass days as digits.")
        if abs(days) > MAX_DAYS:
            return _invalid(
                f"days is {days:,}; shifts are limited to {MAX_DAYS:,} days.",
                "Check days: pass the number of calendar days, as read from the result.",
            )
        moved = first + dt.timedelta(days=days)
        weekday = moved.strftime("%A")
        word = "plus" if days >= 0 else "minus"
        return ToolResult.ok(
            {
                "summary": f"{first.isoformat()} {word} {abs(days):,} calendar days is "
                f"{moved.isoformat()} ({weekday}).",
                "start": first.isoformat(),
                "days": days,
                "date": moved.isoformat(),
                "weekday": weekday,
            }
        )

    def compare_values(self, a_label: str, a: Number, b_label: str, b: Number) -> ToolResult:
        """Compare two numbers: the difference a minus b, the ratio a / b, the percent change
        from b to a, and which is larger.

        Use it for "how much more", "how much over budget", "by what percentage" and "which of
        two teams or vendors has more" questions, once both values have been read from
        results. Returns the difference, ratio and percent change, each raw and rounded to 2
        decimals, the larger label, and a summary sentence to copy into the answer. It does
        not look values up and does not add lists of numbers (sum_values does).

        Args:
            a_label: What a is, in a few words (the first team's budget).
            a: The first value, as a plain number.
            b_label: What b is, in a few words (the second team's budget).
            b: The second value, the one a is compared with; not 0.
        """
        for name, value in (("a", a), ("b", b)):
            if error := _check_number(name, value):
                return error
        a, b = parse_figure(a), parse_figure(b)
        name_a, name_b = _label(a_label, "a"), _label(b_label, "b")
        if isinstance(name_a, ToolResult):
            return name_a
        if isinstance(name_b, ToolResult):
            return name_b
        difference = a - b
        if b == 0:
            other_way = f" To compare the other way round, pass {name_a} as b." if a != 0 else ""
            return _invalid(
                f"{name_b} (b) is 0, so the ratio a / b and the percent change from b do not "
                "exist.",
                f"{name_a} minus {name_b} is {fmt(difference)}.{other_way}",
            )
        ratio = a / b
        percent = difference / abs(b) * 100
        if not (math.isfinite(ratio) and math.isfinite(percent)):
            return _invalid(
                f"{name_a} / {name_b} is too large to compute.",
                "Check that both values are in the same unit.",
            )
        larger = name_a if a > b else name_b if b > a else "equal"
        if a == b:
            summary = f"{name_a} and {name_b} are equal ({fmt(a)})."
        else:
            more = "more" if difference > 0 else "less"
            summary = (
                f"{name_a} ({fmt(a)}) is {fmt(abs(difference))} {more} than {name_b} "
                f"({fmt(b)}): {fmt_percent(abs(percent))} {more}, "
                f"{fmt(ratio, trim=True)} times as much."
            )
        return ToolResult.ok(
            {
                "summary": summary,
                "a_label": name_a,
                "a": plain(a),
                "b_label": name_b,
                "b": plain(b),
                "difference": plain(difference),
                "difference_rounded": plain(round2(difference)),
                "ratio": plain(ratio),
                "ratio_rounded": plain(round2(ratio)),
                "percent_change": plain(percent),
                "percent_change_rounded": plain(round2(percent)),
                "larger": larger,
            }
        )

    def calculate_share(self, part: Number, whole: Number) -> ToolResult:
        """Work out what percentage one number is of another: part as a share of whole.

        Use it for "what share of the budget is spent", "what percent of the contract has been
        billed" or "how much of the total is left", once both values have been read from
        results. Returns the percent and the remainder (whole minus part), each raw and rounded
        to 2 decimals, and a summary sentence to copy into the answer. It does not compare two
        separate values (compare_values does) and does not look values up.

        Args:
            part: The portion, as a plain number (the amount spent).
            whole: The total the portion belongs to (the budget); not 0.
        """
        for name, value in (("part", part), ("whole", whole)):
            if error := _check_number(name, value):
                return error
        part, whole = parse_figure(part), parse_figure(whole)
        if whole == 0:
            return _invalid(
                "whole is 0, so part cannot be a percentage of it.",
                "Pass the total (the budget, the contract value) as whole and the portion as "
                "part; a total of 0 has no percentages.",
            )
        percent = part / whole * 100
        if not math.isfinite(percent):
            return _invalid(
                "part / whole is too large to compute.",
                "Check that part and whole are in the same unit.",
            )
        remaining = whole - part
        tail = (
            f"leaving {fmt(remaining)}"
            if remaining * whole >= 0
            else f"{fmt(abs(remaining))} beyond it"
        )
        return ToolResult.ok(
            {
                "summary": f"{fmt(part)} is {fmt_percent(percent)} of {fmt(whole)}, {tail}.",
                "part": plain(part),
                "whole": plain(whole),
                "percent": plain(percent),
                "percent_rounded": plain(round2(percent)),
                "remaining": plain(remaining),
                "remaining_rounded": plain(round2(remaining)),
            }
        )

    def sum_values(self, values: list[Number]) -> ToolResult:
        """Add up a list of numbers and give their total, count, mean, smallest and largest.

        Use it to total the amounts read from several results or rows (invoices, refunds,
        costs, days lost) instead of adding them in your head. Returns count, total
        and mean, each raw and rounded to 2 decimals, min, max, and a summary sentence to copy
        into the answer. It does not look up or filter values: pass only the numbers the
        question asks to add, at most 1,000.

        Args:
            values: The numbers to add, as a list of plain numbers.
        """
        if not isinstance(values, Sequence) or isinstance(values, str):
            return _invalid("values is not a list of numbers.", "Pass values as a list.")
        if not values:
            return _invalid(
                "values is empty: there is nothing to add.",
                "Pass the numbers read from the results as a list.",
            )
        if len(values) > MAX_VALUES:
            return ToolResult.fail(
                ErrorCode.TOO_LARGE,
                f"values holds {len(values):,} numbers; at most {MAX_VALUES:,} are allowed.",
                suggestion=f"Add them in parts of at most {MAX_VALUES:,}, then add the parts' "
                "totals.",
            )
        for i, value in enumerate(values):
            if error := _check_number(f"values[{i}]", value):
                return error
        numbers = [float(parse_figure(v)) for v in values]
        count = len(numbers)
        total = math.fsum(numbers)
        mean = total / count
        low, high = min(numbers), max(numbers)
        counted = "1 value adds" if count == 1 else f"{count:,} values add"
        return ToolResult.ok(
            {
                "summary": f"The {counted} up to {fmt(total)} (mean {fmt(mean)}, smallest "
                f"{fmt(low)}, largest {fmt(high)}).",
                "count": count,
                "total": plain(total),
                "total_rounded": plain(round2(total)),
                "mean": plain(mean),
                "mean_rounded": plain(round2(mean)),
                "min": plain(low),
                "max": plain(high),
            }
        )
