"""Which tools a tool needs first, read from its own parameter descriptions.

API specifications often say where a parameter's value comes from: "`vehicle_id` can be
retrieved from `api/v1/cars/searchCarRentals` **(Search Car Rentals)**", "the order id returned
by get_orders". A question names what the user wants ("the details of the cheapest rental car"),
not the lookup that has to run first, so a retriever that ranks tools by the question alone
offers ``Vehicle_Details`` without ``Search_Car_Rentals`` and the agent cannot fill in the id.

A sentence of a parameter's description that says where a value comes from (a provenance cue:
"retrieved from", "returned by", "obtained from", "output of", "call ...") and names another
tool of the pool makes that tool a prerequisite. A tool is named by its whole name, in any
spelling (``search_car_rentals``, ``SearchCarRentals``, "Search Car Rentals"), or by the end of
a longer name that no other name shares, followed by a word such as "API" or "endpoint", when
both names start with the same word (the same API's tools: "the Search Airport API" in a
parameter of ``SkyScrapperFlightSearch`` names ``SkyScrapperSearchAirport``). The tools one
parameter names are alternatives ("from Search Hotels or Search Hotels By Coordinates"); each
parameter that names some is a requirement of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolrag.cards.card import ToolCard

# Words that say where a value comes from; a sentence without one only mentions a tool.
_CUE = re.compile(
    r"\b(?:(?:retriev|obtain|extract|return|fetch|got|gotten|given|provid|found|avail|come"
    r"|came|produc|generat|get)\w*+\s++(?:from|by|via|in|with|using|through)"
    r"|(?:output|result|response)s?+\s++(?:of|from)|use\s++the|call(?:ing|ed)?)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.;!?])\s++|\n++")
# camelCase and an acronym's end ("HTTPServer" -> "HTTP Server"): one letter and a lookahead per
# position, where ``([A-Z]+)([A-Z][a-z])`` was quadratic in a run of capitals (0.34 s at 4,000)
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM_END = re.compile(r"([A-Z])(?=[A-Z][a-z])")
_NAME_WORD = re.compile(r"[a-z0-9]+")
# The word after the end of a longer name that marks it as a tool's (an end of a name alone,
# "present value", is too often just words).
_TOOL_WORDS = frozenset(
    ("api", "endpoint", "tool", "function", "operation", "method", "call", "service", "command")
)
# The version of these rules: a saved result of other rules is found again.
FORMAT = "prerequisites-1"
# the longest name looked for, in words
MAX_WORDS = 10
Requirements = dict[str, list[tuple[str, ...]]]


def name_words(text: str) -> list[str]:
    """A name or text as lower-case words: camelCase, snake_case, dots and dashes split."""
    text = _LOWER_UPPER.sub(r"\1 \2", text)
    text = _ACRONYM_END.sub(r"\1 ", text)
    return _NAME_WORD.findall(text.lower())


class _Forms:
    """The word sequences that name cards (by id): a whole name of two or more words (the
    cards whose names read the same in words, ``SearchHotels`` and ``search_hotels``), and an
    end of a longer name that no other name in words has, with that name's first word."""

    def __init__(self, cards: Sequence[ToolCard]) -> None:
        self.whole: dict[tuple[str, ...], list[str]] = {}
        ends: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        for card in cards:
            words = tuple(name_words(card.name))
            if 2 <= len(words) <= MAX_WORDS:
                self.whole.setdefault(words, []).append(card.id)
                for start in range(1, len(words) - 1):
                    ends.setdefault(words[start:], set()).add(words)
        self.end: dict[tuple[str, ...], tuple[str, list[str]]] = {}
        for end, names in ends.items():
            if len(names) == 1:
                (words,) = names
                self.end[end] = (words[0], self.whole[words])
        # each word a name can start with, and the longest such name in words
        self.longest: dict[str, int] = {}
        for form in [*self.whole, *self.end]:
            self.longest[form[0]] = max(self.longest.get(form[0], 0), len(form))

    def named(self, sentence: str, family: str) -> list[str]:
        """The cards a sentence names, the longest name first at each word (so "Search Hotel
        Destination" is not read as "Search Hotel"). An end of a name ("Search Airport" of
        ``SkyScrapperSearchAirport``) counts when a word such as "API" or "endpoint" follows
        it and the name starts with the word ``family`` (the first word of the name of the
        card whose description this is: the same API's or server's tools); when it is also
        another card's whole name, both are named."""
        words = name_words(sentence)
        found: list[str] = []
        i = 0
        while i < len(words):
            for size in range(min(self.longest.get(words[i], 0), len(words) - i), 1, -1):
                span = tuple(words[i : i + size])
                hits = list(self.whole.get(span, []))
                first, ids = self.end.get(span, ("", []))
                if first == family and i + size < len(words) and words[i + size] in _TOOL_WORDS:
                    hits += ids
                if hits:
                    found += hits
                    i += size
                    break
            else:
                i += 1
        return found


def requirements(cards: Sequence[ToolCard]) -> Requirements:
    """For each card id that has any, its requirements: per parameter whose description says
    which tools of ``cards`` its value comes from, those tools' ids (alternatives, in the order
    named)."""
    forms = _Forms(cards)
    out: Requirements = {}
    for card in cards:
        props = card.parameters.get("properties")
        if not isinstance(props, dict):
            continue
        groups: list[tuple[str, ...]] = []
        family = next(iter(name_words(card.name)), "")
        for spec in props.values():
            text = str(spec.get("description") or "") if isinstance(spec, dict) else ""
            if not _CUE.search(text):
                continue
            named = [
                tid
                for sentence in _SENTENCE.split(text)
                if _CUE.search(sentence)
                for tid in forms.named(sentence, family)
                if tid != card.id
            ]
            group = tuple(dict.fromkeys(named))
            if group and group not in groups:
                groups.append(group)
        if groups:
            out[card.id] = groups
    return out
