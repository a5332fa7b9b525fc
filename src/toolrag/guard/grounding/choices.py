"""Arguments outside a parameter's listed values, fitted before a call runs.

A small model writes the word of the question for a parameter that takes one of a few listed
values: ``document_type="agreements"`` where the values are ``contract, proposal, ...``, or an
empty string for a filter it means to leave out. The schema refuses the call, and the model,
told the values, mostly gives up ("there are no agreements") rather than calling again. Here:

- a value that is one of the listed values but for case, separators or a plural
  (``"Purchase Orders"`` for ``purchase_order``) is written as the listed value;
- an empty value of a parameter the tool does not require is left out;
- any other value of a parameter the tool does not require is left out, and the result says
  so with the values the parameter takes, so the model (and the person reading the trace)
  knows the search ran wider than asked;
- a required parameter keeps its value: the schema's error names the values.

It works from the tool's JSON schema alone (an ``enum``, or an ``anyOf`` holding one), so it
fits every tool with listed values, whoever wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from toolrag.guard.grounding.filters import enum_values

_SEPARATORS = re.compile(r"[\s_\-/.]+")
#: at most this many listed values are quoted in a note
SHOWN_VALUES = 8


class Fitted(NamedTuple):
    """The arguments to run with, and what the result should say was changed (or None)."""

    arguments: dict[str, Any]
    note: str | None = None


def _key(value: str) -> str:
    """A value as compared with the listed ones: lower case, one space between words, a
    plural's final ``s`` (or ``es``) dropped from each word."""
    words = _SEPARATORS.sub(" ", value.strip().lower()).split()
    return " ".join(re.sub(r"(?<=[a-z]{3})(es|s)$", "", w) for w in words)


def listed_value(value: str, values: list[str]) -> str | None:
    """The one listed value ``value`` stands for, but for case, separators and plurals."""
    wanted = _key(value)
    matches = [v for v in values if _key(v) == wanted]
    return matches[0] if len(matches) == 1 else None


def fit_choices(schema: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> Fitted:
    """``arguments`` with each value outside its parameter's listed values written as the
    listed value it stands for, or left out when the parameter is optional (module doc)."""
    args = dict(arguments)
    properties = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    written: list[str] = []
    left_out: list[str] = []
    for key, value in arguments.items():
        prop = properties.get(key)
        if not isinstance(prop, Mapping) or not isinstance(value, str):
            continue
        values = enum_values(prop)
        if not values or value in values:
            continue
        if (listed := listed_value(value, values)) is not None:
            args[key] = listed
            written.append(f"{key}={listed!r} for {value!r}")
        elif key not in required:
            del args[key]
            if value.strip():
                more = ", ..." if len(values) > SHOWN_VALUES else ""
                shown = ", ".join(values[:SHOWN_VALUES]) + more
                left_out.append(f"{key}={value!r} (not one of its values: {shown})")
    notes = []
    if written:
        notes.append(f"Wrote {'; '.join(written)}: the listed value.")
    if left_out:
        notes.append(f"Left out {'; '.join(left_out)}: these results are without that filter.")
    return Fitted(args, " ".join(notes) or None)
