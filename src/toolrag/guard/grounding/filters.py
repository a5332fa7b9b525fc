"""Filters the question names, added to a call that left them out.

A small model searches by a question's dates but drops the customer it names ("Which contracts
with Bluebird Coffee Roasters were signed between January and March 2026?" becomes
``search_documents(doc_type="contract", start_date=..., end_date=...)``), gets every
customer's contracts of the period, and lists them all. For every call, :func:`complete_filters`
adds what the model left out and the question names without doubt:

- a filter parameter with known values (a :class:`Vocabulary`: the values of a collection's
  metadata field such as customer or department, with their aliases, or the ``enum`` of the
  tool's JSON schema such as a document type), when the question names exactly one of its
  values and mentions no other (:meth:`FilterValues.mentioned_in`: "How many days late was
  roofing completed?" names ``late`` and mentions ``complete``, so no status is added);
- a start and an end date parameter, when the question names one period
  (:func:`toolrag.guard.grounding.periods.question_period`).

A value the model gave is never changed (that is argument grounding's job,
:mod:`toolrag.guard.grounding.calls`). The vocabulary comes from the data, not from rules about
one domain, so the same step serves any collection. The caller runs the completed call as its
own audited step, says in the result which filters were applied, and runs the call as the
model wrote it when the added filters find nothing (:func:`toolrag.guard.named.run_completed`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from toolrag.guard.grounding.names import code_like
from toolrag.guard.grounding.periods import MAX_CHARS, question_period
from toolrag.guard.grounding.wildcards import wildcard_filters

_START = re.compile(r"(?:^|_)(?:start|from|since|after|begin|min)(?:_|$)")
_END = re.compile(r"(?:^|_)(?:end|to|until|before|max)(?:_|$)")
_DATE_WORDS = re.compile(r"\bdate\b|YYYY-MM-DD", re.IGNORECASE)


# The endings a value's one-word alias is counted under: plurals name a value; the inflections
# only mention one (a question that mentions two values of a field names neither for sure).
_PLURALS = ("", "s", "es")
_INFLECTIONS = ("", "s", "es", "e", "ed", "d", "ing")


def _words(text: str) -> str:
    """Lowercase words and digits separated by single spaces, padded: `` grb 107 summit ``."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


class FilterValues(BaseModel):
    """The known values of one filter parameter: each value with the words that name it."""

    values: dict[str, list[str]] = Field(
        default_factory=dict, description="Canonical value -> aliases (the value included)."
    )

    @classmethod
    def of(cls, values: Mapping[str, list[str]] | list[str]) -> FilterValues:
        if isinstance(values, Mapping):
            return cls(values={str(k): [str(k), *map(str, v)] for k, v in values.items()})
        return cls(values={str(v): [str(v), str(v).replace("_", " ")] for v in values})

    def named_in(self, question: str) -> list[str]:
        """The values ``question`` names, by a whole-word alias (plural -s/-es allowed); a value
        named only inside a longer alias of another value ("protection" in "fire protection")
        does not count, and neither does one named only as an alternative ("Did framing finish
        early or late?" asks which, it does not filter by ``late``)."""
        return self._found(question, inflected=False)

    def mentioned_in(self, question: str) -> list[str]:
        """The values ``question`` names or mentions in an inflected form of a one-word alias
        ("completed", "closing" for ``complete``, ``closed``): a question that mentions a
        second value of the same field ("How many days late was roofing completed?") does not
        name a filter without doubt."""
        return self._found(question, inflected=True)

    def _found(self, question: str, inflected: bool) -> list[str]:
        text = _words(question[:MAX_CHARS])
        spans: list[tuple[int, int, str]] = []
        for value, aliases in self.values.items():
            for alias in {_words(a).strip() for a in aliases if _words(a).strip()}:
                forms = {alias + x for x in _PLURALS}
                if inflected and " " not in alias:
                    stem = alias.removesuffix("ed").removesuffix("e") if len(alias) > 4 else alias
                    forms |= {stem + x for x in _INFLECTIONS}
                for form in forms:
                    start = text.find(f" {form} ")
                    end = start + len(form) + 1
                    # named as one side of "X or Y": the question asks which, not for X
                    alternative = text[end : end + 4] == " or " or text[start - 3 : start] == " or"
                    if start >= 0 and not (alternative and not inflected):
                        spans.append((start, end, value))
        kept = {
            value
            for s, e, value in spans
            if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) and v2 != value
                       for s2, e2, v2 in spans)
        }  # fmt: skip
        return sorted(kept)


class Vocabulary(BaseModel):
    """Known filter values: by parameter name for every tool that has the parameter, and by
    tool for one tool's parameters. A parameter with an ``enum`` in its schema needs none."""

    by_parameter: dict[str, FilterValues] = Field(default_factory=dict)
    by_tool: dict[str, dict[str, FilterValues]] = Field(default_factory=dict)

    def named_ids(self, question: str) -> list[str]:
        """The code-like known values (``CUST-101``) the question gives by one of their names
        ("the Bluebird Coffee Roasters account"): given by the question, as if it wrote them."""
        found: set[str] = set()
        for values in [
            *self.by_parameter.values(),
            *(v for tool in self.by_tool.values() for v in tool.values()),
        ]:
            found.update(v for v in values.named_in(question) if code_like(v))
        return sorted(found)

    def for_tool(self, tool: str, schema: Mapping[str, Any] | None) -> dict[str, FilterValues]:
        properties = (schema or {}).get("properties") or {}
        found: dict[str, FilterValues] = {}
        for param, prop in properties.items():
            values = self.by_tool.get(tool, {}).get(param) or self.by_parameter.get(param)
            enum = enum_values(prop)
            if values is None and enum:
                values = FilterValues.of(described_values(enum, prop.get("description")))
            if values is not None:
                found[param] = values
        return found


def enum_values(prop: Mapping[str, Any]) -> list[str]:
    """The values a parameter lists (an ``enum``, or an ``anyOf`` holding one); [] if none."""
    if isinstance(prop.get("enum"), list):
        return [str(v) for v in prop["enum"] if v is not None]
    for option in prop.get("anyOf") or []:
        if isinstance(option, Mapping) and isinstance(option.get("enum"), list):
            return [str(v) for v in option["enum"] if v is not None]
    return []


MAX_DESCRIPTION_CHARS = 2_000  # of a parameter's description, the part read for glosses
_GLOSS_WORDS = (2, 8)  # a gloss names a value in this many words: "(held)" glosses a list


def described_values(values: list[str], description: object) -> dict[str, list[str]]:
    """Each listed value with the words that name it: the value itself with spaces for
    underscores, and the glosses the parameter's description puts in brackets right after it,
    each part of two to eight words ("scheduled (on the calendar, not held yet)" names
    ``scheduled`` by "on the calendar" and by "not held yet"). A one-word gloss is left out:
    in "passed, failed or partial (held)" it belongs to the whole list, not to ``partial``."""
    text = str(description or "")[:MAX_DESCRIPTION_CHARS]
    found: dict[str, list[str]] = {}
    for value in values:
        aliases = [value.replace("_", " ")]
        if value.strip():
            # the value as a whole word, then its bracket: [^()] cannot run past the bracket
            pattern = rf"(?<![\w-]){re.escape(value)}\s?\(([^()]{{1,200}})\)"
            for gloss in re.findall(pattern, text):
                for part in re.split(r"[,;]", gloss):
                    words = part.split()
                    if _GLOSS_WORDS[0] <= len(words) <= _GLOSS_WORDS[1]:
                        aliases.append(" ".join(words))
        found[value] = aliases
    return found


def date_parameters(schema: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """The tool's start-date and end-date parameters (``start_date``/``end_date``,
    ``since``/``until``, ``date_from``/``date_to``...), each only when exactly one fits. A
    parameter is a date by its format, its name, or its description ("Earliest inspection
    date, YYYY-MM-DD.")."""
    properties = (schema or {}).get("properties") or {}

    def is_date(prop: Mapping[str, Any]) -> bool:
        formats = [prop.get("format")] + [o.get("format") for o in prop.get("anyOf") or []]
        # a schema built from a Python signature loses the format: its description keeps it
        described = _DATE_WORDS.search(str(prop.get("description") or "")[:500])
        return "date" in formats or described is not None

    dated = [p for p, prop in properties.items() if is_date(prop) or "date" in p.lower()]
    starts = [p for p in dated if _START.search(p.lower())]
    ends = [p for p in dated if _END.search(p.lower())]
    return (starts[0] if len(starts) == 1 else None), (ends[0] if len(ends) == 1 else None)


class Completion(BaseModel):
    """A call's arguments with the filters the question names added, and what was added."""

    arguments: dict[str, Any]
    added: dict[str, Any] = Field(default_factory=dict)
    applied: dict[str, Any] = Field(
        default_factory=dict, description="Every filter the call runs with, added or given."
    )
    glossed: list[str] = Field(
        default_factory=list,
        description="The added filters the question names only by a gloss of their value "
        '("on the calendar" for scheduled), never by the value\'s own word.',
    )
    dropped: dict[str, Any] = Field(
        default_factory=dict,
        description='The model\'s filters left out as words for "no filter" ("all", "any").',
    )

    def note(self) -> str | None:
        """What the result says about its filters when some were added or left out (every
        filter it ran with, the added ones marked), else None: a call that ran as written needs
        no note."""
        dropped = self.dropped_note()
        notes = [dropped] if dropped else []
        if self.added:
            parts = [
                f"{k}={v!r}" + (" (added: the question names it)" if k in self.added else "")
                for k, v in self.applied.items()
            ]
            notes.append("Filters applied: " + ", ".join(parts) + ".")
        return " ".join(notes) or None

    def dropped_note(self) -> str | None:
        """What the result says about the filters left out as wildcards, else None."""
        if not self.dropped:
            return None
        left_out = ", ".join(f"{k}={v!r}" for k, v in self.dropped.items())
        return (
            f"Left out {left_out}: a word for every value, not a value to filter by, so "
            "these results are not filtered by it."
        )


def _missing(arguments: Mapping[str, Any], key: str) -> bool:
    value = arguments.get(key)
    return value is None or (isinstance(value, str) and not value.strip())


def complete_filters(
    question: str,
    tool: str,
    schema: Mapping[str, Any] | None,
    arguments: Mapping[str, Any],
    vocabulary: Vocabulary | None,
) -> Completion:
    """``arguments`` with every filter the question names and the model left out (see the
    module docstring)."""
    known = (vocabulary or Vocabulary()).for_tool(tool, schema)
    properties = (schema or {}).get("properties") or {}
    taken = {
        p: [a for aliases in v.values.values() for a in aliases]
        + enum_values(properties.get(p) or {})
        for p, v in known.items()
    }
    dropped = wildcard_filters(schema, arguments, taken)
    args = {k: v for k, v in arguments.items() if k not in dropped}
    added: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    glossed: list[str] = []
    if not question.strip():
        return Completion(arguments=args, dropped=dropped)
    for param, values in known.items():
        if _missing(args, param):
            named = values.named_in(question)
            if len(named) == 1 and set(values.mentioned_in(question)) <= set(named):
                args[param] = added[param] = named[0]
                if not FilterValues.of([named[0]]).mentioned_in(question):
                    glossed.append(param)
        if not _missing(args, param):
            applied[param] = args[param]
    start, end = date_parameters(schema)
    if start or end:
        period = question_period(question)
        for key, day in ((start, period[0] if period else None),
                         (end, period[1] if period else None)):  # fmt: skip
            if key and _missing(args, key) and isinstance(day, date):
                args[key] = added[key] = day.isoformat()
            if key and not _missing(args, key):
                applied[key] = args[key] if isinstance(args[key], str) else str(args[key])
    return Completion(
        arguments=args, added=added, applied=applied, glossed=glossed, dropped=dropped
    )
