"""Tool names written in text: the tools a question names ("search it with search_web_tool").

A name counts only when it is shaped like an identifier, that is, with a separator
(``get_weather``, ``weather.get``, ``list-files``, ``Weather_1_GetWeather``) or in camelCase
(``getWeather``). A one-word name such as ``translate`` or ``add`` is also an ordinary word,
so a question that uses the word does not name the tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")


class NameFinder:
    """Finds which of a pool's tools a text names. Case is ignored (``Get_Weather`` names
    ``get_weather``) unless two tools differ only in case: then only the exact spelling
    names one."""

    def __init__(self, names: Iterable[str]) -> None:
        self._exact = {n for n in names if TOOL_NAME.fullmatch(n)}
        folded: dict[str, list[str]] = {}
        for name in self._exact:
            folded.setdefault(name.lower(), []).append(name)
        self._folded = {low: found[0] for low, found in folded.items() if len(found) == 1}

    def __call__(self, text: str) -> list[str]:
        """The tool names ``text`` contains, each once, in the order they first appear."""
        named: list[str] = []
        for token in TOOL_NAME.findall(text):
            name = token if token in self._exact else self._folded.get(token.lower())
            if name is not None and name not in named:
                named.append(name)
        return named
