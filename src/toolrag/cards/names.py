"""Tool names written in text: the tools a question names ("search it with search_web_tool").

A name counts when it is shaped like an identifier, that is, with a separator (``get_weather``,
``weather.get``, ``list-files``, ``Weather_1_GetWeather``) or in camelCase (``getWeather``).
A one-word name such as ``translate`` or ``add`` is also an ordinary word, so a question that
uses the word does not name the tool; quoted as a name is (```add```, ``'add'``, ``"add"``:
"use the `translate` tool", "Functions to use: ['multiply', 'add']"), it does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Generic, TypeVar

TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")
ONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# In a text: a one-word name between a pair of the same quote or backtick, not inside a word
# (the apostrophe of "don't" opens nothing), else an identifier-shaped name that starts a word.
_MENTION = re.compile(
    r"(?<![A-Za-z0-9])([`'\"])(?P<quoted>" + ONE_WORD.pattern + r")\1(?![A-Za-z0-9])"
    r"|(?<![A-Za-z0-9])(?P<name>" + TOOL_NAME.pattern + ")"
)

Tool = TypeVar("Tool")


class NameFinder(Generic[Tool]):
    """Finds which of a pool's tools (``tools``: name -> tool, or its id) a text names: by an
    identifier-shaped name anywhere, by a one-word name only when quoted. Case is ignored
    (``Get_Weather`` names ``get_weather``) unless two tools differ only in case: then only
    the exact spelling names one."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self._exact = {
            name: tool
            for name, tool in tools.items()
            if TOOL_NAME.fullmatch(name) or ONE_WORD.fullmatch(name)
        }
        folded: dict[str, list[Tool]] = {}
        for name, tool in self._exact.items():
            folded.setdefault(name.lower(), []).append(tool)
        self._folded = {low: found[0] for low, found in folded.items() if len(found) == 1}

    def knows(self, name: str) -> bool:
        """Whether ``name`` is one of the pool's names a text can name (identifier-shaped or one
        word; a name of another shape, such as "get weather", is never found in a text)."""
        return name in self._exact

    def __call__(self, text: str) -> list[Tool]:
        """The tools ``text`` names, each once, in the order they are first named."""
        named: list[Tool] = []
        for mention in _MENTION.finditer(text):
            token = mention.group("quoted") or mention.group("name")
            if token in self._exact:
                tool = self._exact[token]
            elif token.lower() in self._folded:
                tool = self._folded[token.lower()]
            else:
                continue
            if tool not in named:
                named.append(tool)
        return named
