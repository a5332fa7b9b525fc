"""Filters a call copied from a shown example's question, left out before the call runs.

The router shows a small model a few example questions for the offered tools. Asked "Which
inspections are on the calendar but have not taken place yet?", the local model wrote
``list_inspections(result="failed", since="2025-09-01", until="2025-11-30")``: the filters of
the example "Which projects had failed inspections between September and November 2025?". It
got that autumn's failed inspections and answered that none was on the calendar. Ids and
proper names copied so are argument grounding's (:mod:`toolrag.guard.grounding.values`); a
listed value and a period are neither. :func:`drop_copied_filters` leaves out, at once and with
a note, each optional argument of a call that is:

- a value the parameter lists (its ``enum``, or a collection field's known values) that a
  shown example question mentions and this question does not, in any form ("fail" and
  "failed" are one word here);
- a bound of the tool's start and end date parameters
  (:func:`~toolrag.guard.grounding.filters.date_parameters`) equal to the bound of a period a
  shown example question names (:func:`~toolrag.guard.grounding.periods.question_period`),
  while this question names no period.

The call then runs wider, and the model reads the rows it needs from it, rather than the rows
of another question. A value this question gives too is the question's, and a required argument
is never left out. It works from the tools' schemas and the shown texts alone, so it fits any
tool pool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from llama_index.core.tools import BaseTool

from toolrag.guard.grounding.decision import RouteDecision
from toolrag.guard.grounding.filters import Vocabulary, date_parameters
from toolrag.guard.grounding.periods import MAX_CHARS, question_period
from toolrag.tools.prompting import tool_schema

_SUFFIXES = ("ing", "ies", "ed", "es", "s", "e", "d")


def stem(word: str) -> str:
    """A word without one inflection ending: ``failed``, ``fails`` and ``fail`` are ``fail``;
    ``scheduled`` and ``schedule`` are ``schedul``."""
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def stems(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text[:MAX_CHARS].lower())}


def mentions(text_stems: set[str], aliases: Sequence[str]) -> bool:
    """Whether a text (its :func:`stems`) says one of ``aliases``, every word in some form."""
    for alias in aliases:
        words = stems(alias)
        if words and words <= text_stems:
            return True
    return False


def _as_date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def drop_copied_filters(
    question: str,
    decision: RouteDecision,
    examples: Sequence[str],
    tools: Mapping[str, BaseTool],
    vocabulary: Vocabulary | None = None,
) -> list[str]:
    """Leave out of ``decision``'s calls the optional filters copied from a shown example
    question (``examples``: their questions; see the module docstring); returns a note per
    argument left out."""
    shown = [q for q in examples if q.strip() and q.strip() != question.strip()]
    if not shown:
        return []
    asked = stems(question)
    shown_stems = [stems(q) for q in shown]
    periods = [p for p in (question_period(q) for q in shown) if p is not None]
    own_period = question_period(question)
    notes: list[str] = []
    for call in decision.calls:
        tool = tools.get(call.tool)
        schema = tool_schema(tool) if tool is not None else None
        if not schema:
            continue
        required = set(schema.get("required") or [])
        listed = (vocabulary or Vocabulary()).for_tool(call.tool, schema)
        for key in [k for k in call.arguments if k not in required]:
            value = call.arguments[key]
            values = listed.get(key)
            if values is None or not isinstance(value, str):
                continue
            aliases = values.values.get(value) or next(
                (a for v, a in values.values.items() if v.lower() == value.lower()), None
            )
            if not aliases or mentions(asked, aliases):
                continue
            if any(mentions(s, aliases) for s in shown_stems):
                del call.arguments[key]
                notes.append(
                    f"{call.tool}.{key}: {value!r} left out (from an example question, not "
                    "this one)"
                )
        if own_period is not None or not periods:
            continue
        start, end = date_parameters(schema)
        bounds = [(k, i) for k, i in ((start, 0), (end, 1)) if k and k not in required]
        given = {k: _as_date(call.arguments.get(k)) for k, _ in bounds}
        if not any(given.values()):
            continue
        if any(all(given[k] in (None, p[i]) for k, i in bounds) for p in periods):
            for k, _ in bounds:
                if given[k] is not None:
                    notes.append(
                        f"{call.tool}.{k}: {call.arguments.pop(k)!r} left out (an example "
                        "question's period; this question names none)"
                    )
    return notes
