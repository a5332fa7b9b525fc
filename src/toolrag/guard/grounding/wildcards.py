"""Filter values that mean "no filter", left out before a read call runs.

Asked "Across all projects, how many working days were lost to weather in November 2025?", a
small model calls ``list_weather_delays(project="all", ...)``: the tool looks for a project
named "all", finds none, and the model calls it again or answers "none". The same slip shows
as ``"any"``, ``"*"``, ``"N/A"``, ``"none"`` or ``"all projects"``, for any tool with a
free-text filter.
:func:`wildcard_filters` names the optional arguments whose whole value is such a word (alone,
or with the parameter's own noun: ``"all projects"`` for ``project``), so the call runs without
them, as the model meant.

A value is kept when it is one the parameter takes: one of its known values (its ``enum``, or
the values and aliases :mod:`toolrag.guard.grounding.filters` knows for it), its ``default``,
or quoted in its description (``"'all' for every state"``). Required arguments are never left
out, and neither is a value that names anything else ("All Saints Church" is a name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: a value longer than this is never a wildcard (bounds the work per value)
MAX_CHARS = 40
_WORDS = frozenset(
    ["all", "any", "every", "each", "everything", "anything", "everyone", "anyone", "both"]
)
_EMPTY = frozenset(
    {"*", "%", ".*", "-", "none", "null", "nil", "n/a", "na", "unknown", "undefined"}
    | {"unspecified", "not specified", "not applicable"}
)
_NOUN = re.compile(r"[a-z]+")


def _nouns(param: str) -> set[str]:
    """The words of a parameter's name, with their plurals: ``project_code`` gives
    ``project``, ``projects``, ``code`` and ``codes``."""
    words = _NOUN.findall(param.lower())
    return {w + end for w in words for end in ("", "s", "es")}


def _normal(value: Any) -> str | None:
    """A string value (or a list of one) lower-cased, one space between words; None for any
    other value, or one too long to be a wildcard."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str) or len(value) > MAX_CHARS:
        return None
    return " ".join(value.lower().split())


def is_wildcard(param: str, value: Any) -> bool:
    """Whether ``value``, given for parameter ``param``, says "every value" or "no value"
    rather than naming one: ``"all"``, ``"any"``, ``"*"``, ``"N/A"``, ``"none"``, or a word
    of the first kind followed by the parameter's own noun (``"all projects"`` for
    ``project``). A list of one such value counts too."""
    text = _normal(value)
    if text is None:
        return False
    words = text.split()
    if text in _EMPTY:
        return True
    if not words or words[0] not in _WORDS or len(words) > 2:
        return False
    return len(words) == 1 or words[1] in _nouns(param)


def _quoted(value: str | None, description: object) -> bool:
    """Whether a parameter's description quotes ``value`` (normalised) as one it takes
    (``'all'``, ``"all"`` or `` `all` ``)."""
    text = str(description or "")[:2_000].lower()
    return any(f"{q}{value}{q}" in text for q in ("'", '"', "`"))


def wildcard_filters(
    schema: Mapping[str, Any] | None,
    arguments: Mapping[str, Any],
    known: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """The optional arguments of ``arguments`` whose value is a wildcard (:func:`is_wildcard`)
    that the parameter does not take as a value of its own (module doc); ``known``: each
    parameter's known values and their aliases. The caller runs the call without them and says
    so."""
    properties = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    found: dict[str, Any] = {}
    for key, value in arguments.items():
        prop = properties.get(key)
        if key in required or not isinstance(prop, Mapping) or not is_wildcard(key, value):
            continue
        text = _normal(value)
        taken = {_normal(str(v)) for v in (known or {}).get(key) or []}
        if isinstance(prop.get("default"), str):
            taken.add(_normal(prop["default"]))
        if text in taken or _quoted(text, prop.get("description")):
            continue
        found[key] = value
    return found


__all__ = ["is_wildcard", "wildcard_filters"]
