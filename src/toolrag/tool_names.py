"""Tool names written in text: the tools a question names ("search it with search_web_tool").

A name counts only when it is shaped like an identifier, that is, with a separator
(``get_weather``, ``weather.get``, ``list-files``, ``Weather_1_GetWeather``) or in camelCase
(``getWeather``). A one-word name such as ``translate`` or ``add`` is also an ordinary word,
so a question that uses the word does not name the tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Generic, TypeVar

TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")

Tool = TypeVar("Tool")


class NameFinder(Generic[Tool]):
    """Finds which of a pool's tools (``tools``: name -> tool, or its id) a text names. Case is
    ignored (``Get_Weather`` names ``get_weather``) unless two tools differ only in case: then
    only the exact spelling names one."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self._exact = {name: tool for name, tool in tools.items() if TOOL_NAME.fullmatch(name)}
        folded: dict[str, list[Tool]] = {}
        for name, tool in self._exact.items():
            folded.setdefault(name.lower(), []).append(tool)
        self._folded = {low: found[0] for low, found in folded.items() if len(found) == 1}

    def __call__(self, text: str) -> list[Tool]:
        """The tools ``text`` names, each once, in the order they are first named."""
        named: list[Tool] = []
        for token in TOOL_NAME.findall(text):
            if token in self._exact:
                tool = self._exact[token]
            elif token.lower() in self._folded:
                tool = self._folded[token.lower()]
            else:
                continue
            if tool not in named:
                named.append(tool)
        return named
