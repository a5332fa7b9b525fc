"""Untrusted text meets the regular expressions in linear time (:mod:`toolrag.text`).

A question, a client's search query, the arguments a model writes and the results a tool
returns all reach patterns in the step splitter, the intent and grounding finders, the
translation checks, the scorer and the card name finders. Each public function that reads
such text is fed pathological strings of ``MAX_QUERY_CHARS`` characters: long whitespace runs
between words (ASCII and Unicode), ``"a." * N``, ``"1," * N``, dashes, one letter repeated,
open brackets, digits and dots, step words repeated in mixed case, and the like.

How the time is judged, robustly on a loaded 2-core machine: each call is measured in CPU
seconds of its own thread (:func:`time.thread_time`), which other processes sharing the cores
do not inflate, and must stay under ``BOUND_S`` (1 s). The linear code takes a few
milliseconds per call at this size, so the bound leaves a wide margin; the super-linear
patterns this replaced took from 0.3 s (a run of capitals in a tool name) to minutes (a run
of spaces in a question: about cubic). A call still running after ``ABORT_S`` of CPU time is
stopped by a ``SIGVTALRM`` timer (Python's ``re`` checks for signals while it matches), so
the old code fails in seconds rather than hanging the suite. Comparing time(4n) with time(n)
was rejected: at a few milliseconds both are mostly noise.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.embeddings import BaseEmbedding

from toolrag.agent.loop import bounded_question, readable
from toolrag.batch.questions import ids_in, normalize, score_answer
from toolrag.cards.card import ToolCard
from toolrag.cards.names import NameFinder
from toolrag.cards.synthetic import parse_requests
from toolrag.content.aliases import KeywordValues
from toolrag.content.index import headings
from toolrag.guard.grounding.decision import RouteDecision, ToolCallSpec
from toolrag.guard.grounding.filters import (
    FilterValues,
    Vocabulary,
    complete_filters,
    described_values,
)
from toolrag.guard.grounding.names import code_like, given_values, masked
from toolrag.guard.grounding.periods import question_period
from toolrag.guard.grounding.read_values import unread_ids, unread_values
from toolrag.guard.grounding.timewords import iso_dates, mentions_time
from toolrag.guard.grounding.values import (
    embedded_codes,
    ground_codes,
    name_like,
    ungrounded_values,
)
from toolrag.retrieval.index import ToolIndex
from toolrag.retrieval.intent import action_verbs, asks_for_action, asks_for_arithmetic
from toolrag.retrieval.prerequisites import name_words, requirements
from toolrag.retrieval.steps import split_steps, sub_queries
from toolrag.retrieval.translation import foreign_alphabet, parse_translation
from toolrag.text import MAX_QUERY_CHARS, bounded, clean_query, squashed

BOUND_S = 1.0  # CPU seconds one call may take on input of MAX_QUERY_CHARS characters
ABORT_S = 3.0  # CPU seconds after which a call is stopped and counted as too slow
N = MAX_QUERY_CHARS
# Text no door cuts (``UNCUT``: a tool's description, a document, a model's reply, a tool's
# result, an argument) must stay linear past the limit too: those finders are also fed strings
# this long, where a quadratic pattern of 4 ms at the limit takes a second.
LONG = 16 * MAX_QUERY_CHARS


def _fill(unit: str, n: int) -> str:
    """``unit`` repeated to exactly ``n`` characters."""
    return (unit * (n // len(unit) + 1))[:n]


def _between(head: str, run: str, tail: str, n: int) -> str:
    """``head``, then ``run`` repeated, then ``tail``: ``n`` characters in all."""
    return head + _fill(run, n - len(head) - len(tail)) + tail


def pathological(n: int) -> dict[str, str]:
    """The pathological strings, each of ``n`` characters."""
    return {
        "spaces between sentences": _between("Find the invoice.", " ", "then email it", n),
        "spaces, no step word": _between("find it.", " ", "x", n),
        "spaces around a comma": _between("find it", " ", ", " + " " * 40 + "and x", n),
        "spaces before and": _between("find the invoice", " ", "and email it", n),
        "tabs and newlines": _between("Find it.", "\t\n ", "Then x", n),
        "unicode spaces": _between("Find it.", "\u2003\u00a0\u3000\u2029", "Then x", n),
        "a.": _fill("a.", n),
        "A. ": _fill("A. ", n),
        "1,": _fill("1,", n),
        "dashes": _fill("-", n),
        "one letter": _fill("a", n),
        "capitals": _fill("A", n),
        "open brackets": _fill("((((", n),
        "quotes": _fill("'\"`", n),
        "digits and dots": _fill("1.2.", n),
        "digits": _fill("1", n - 1) + "x",
        "and then": _fill("and then ", n),
        "mixed-case step words": _fill("AnD tHeN, ThEn; aFtEr ThAt ", n),
        "and": _fill("and ", n),
        "capitalised words": _fill("Abc ", n),
        "capitalised words apart": _fill("Abc x ", n),
        "name with of": _between("Abc", " of", " x", n),
        "id-shaped": _fill("A1-", n),
        "snake": _fill("a_", n),
        "camel": _fill("aB", n),
        "dates": _fill("since 2025-01-01 ", n),
        "months": _fill("jan 1 ", n),
        "years": _fill("2025 ", n),
        "translation:": _fill("translation :", n),
        "heading with spaces": _between("# a", " ", "b", n),
        "newline and spaces": _between("a\n", " ", "b", n),
        "please": _fill("please ", n),
        "can you": _fill("can you please ", n),
        "full stops and spaces": _fill(". ", n),
        "exclamation then spaces": _between("!", " ", "x", n),
        "retrieved from": _between("retrieved", " ", "x", n),
    }


PATHOLOGICAL = pathological(N)
LONG_TEXT = pathological(LONG)

SUBMIT = ToolCard(
    name="submit_change_order", description="Submit a change order.", side_effect="external"
)
SEARCH = ToolCard(name="search_hotels", description="Search hotels.")
BOOK = ToolCard(
    name="book_hotel",
    description="Book a hotel.",
    side_effect="write",
    parameters={
        "type": "object",
        "properties": {"hotel_id": {"type": "string", "description": ""}},
    },
)
SCHEMA = {
    "type": "object",
    "properties": {
        "project": {"type": "string"},
        "start_date": {"type": "string", "format": "date"},
        "end_date": {"type": "string", "format": "date"},
    },
}
VOCABULARY = Vocabulary(
    by_parameter={"project": FilterValues.of({"GRB-107": ["Summit Ridge Hotel"]})}
)
KEYWORDS = KeywordValues(["GRB-107", "GRB-110"], {"GRB-107": ["Summit Ridge Hotel"]})
NAMES = NameFinder({"get_weather": 1, "translate": 2, "SearchHotels": 3})


def _decision(value: str) -> RouteDecision:
    return RouteDecision(
        action="call_tools",
        calls=[ToolCallSpec(tool="search", arguments={"project": "GRB-109", "q": value})],
    )


def _requirements(text: str) -> object:
    card = BOOK.model_copy(
        update={
            "parameters": {
                "type": "object",
                "properties": {"hotel_id": {"type": "string", "description": text}},
            }
        }
    )
    return requirements([SEARCH, card])


# Every public function that reads untrusted text, as a function of that text alone.
FINDERS: dict[str, Callable[[str], object]] = {
    "text.squashed": squashed,
    "text.clean_query": clean_query,
    "steps.split_steps": split_steps,
    "steps.sub_queries": sub_queries,
    "intent.asks_for_action": lambda t: asks_for_action(t, SUBMIT),
    "intent.asks_for_arithmetic": asks_for_arithmetic,
    "intent.action_verbs": lambda t: action_verbs(ToolCard(name=t, description=t)),
    "prerequisites.name_words": name_words,
    "prerequisites.requirements": _requirements,
    "translation.parse_translation": lambda t: parse_translation(t, "x"),
    "translation.foreign_alphabet": foreign_alphabet,
    "names.code_like": code_like,
    "names.given_values": given_values,
    "names.masked": masked,
    "periods.question_period": question_period,
    "timewords.mentions_time": mentions_time,
    "timewords.iso_dates": lambda t: iso_dates({"a": t, "b": "2025-01-01" + t}),
    "filters.named_in": lambda t: FilterValues.of({"GRB-107": ["Summit Ridge Hotel"]}).named_in(t),
    "filters.mentioned_in": lambda t: FilterValues.of(["complete", "late"]).mentioned_in(t),
    "filters.complete_filters": lambda t: complete_filters(t, "search", SCHEMA, {}, VOCABULARY),
    "read_values.unread_ids": lambda t: unread_ids(t, t, t),
    "filters.described_values": lambda t: described_values(["a", "A1", "x"], t),
    "read_values.unread_values": lambda t: unread_values(
        {"total": 123456.0, "day": "2025-01-31", "amount": "1,234,567"}, t, t
    ),
    "values.embedded_codes": embedded_codes,
    "values.name_like": name_like,
    "values.ground_codes": lambda t: ground_codes(t, _decision(t)),
    "values.ungrounded_values": lambda t: ungrounded_values(t, _decision(t), [], seen=t),
    "cards.NameFinder": NAMES,
    "cards.parse_requests": lambda t: parse_requests(t, 5, "get_weather"),
    "scoring.normalize": normalize,
    "scoring.ids_in": lambda t: ids_in(t, ["GRB-107", "RFI-101-015"]),
    "scoring.score_answer": lambda t: score_answer(t, ["2,500", "June 30, 2026"], ["GRB-107"], t),
    "content.headings": headings,
    "content.resolve_keyword": KEYWORDS.resolve,
    "content.closest_keywords": KEYWORDS.closest,
    "agent.readable": readable,
}


# The finders that read text no door cuts to MAX_QUERY_CHARS: a tool's name, description or
# parameter descriptions, an argument a model wrote, a tool's result, a model's reply or
# answer, a document.
UNCUT = [
    "text.squashed",
    "read_values.unread_ids",
    "filters.described_values",
    "intent.action_verbs",
    "prerequisites.name_words",
    "prerequisites.requirements",
    "translation.parse_translation",
    "names.code_like",
    "values.embedded_codes",
    "values.name_like",
    "values.ground_codes",
    "values.ungrounded_values",
    "timewords.iso_dates",
    "read_values.unread_values",
    "cards.NameFinder",
    "cards.parse_requests",
    "scoring.normalize",
    "scoring.ids_in",
    "scoring.score_answer",
    "content.headings",
    "content.resolve_keyword",
    "content.closest_keywords",
    "agent.readable",
]


class TookTooLong(Exception):
    """A call ran past ``ABORT_S`` of CPU time."""


@contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Stop the code inside after ``seconds`` of CPU time (where timers can interrupt it:
    the main thread of a Unix process)."""
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise TookTooLong

    old = signal.signal(signal.SIGVTALRM, stop)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)


def cpu_seconds(call: Callable[[str], object], text: str) -> float:
    """The CPU seconds of this thread that ``call(text)`` takes (``ABORT_S`` when stopped)."""
    started = time.thread_time()
    try:
        with _cpu_limit(ABORT_S):
            call(text)
    except TookTooLong:
        return ABORT_S
    return time.thread_time() - started


def test_the_pathological_strings_are_at_the_limit() -> None:
    assert all(len(text) == N for text in PATHOLOGICAL.values())
    assert all(len(text) == LONG for text in LONG_TEXT.values())


def _too_slow(finder: Callable[[str], object], texts: dict[str, str]) -> dict[str, float]:
    """The cases of ``texts`` on which ``finder`` takes more than ``BOUND_S`` CPU seconds."""
    took = {case: cpu_seconds(finder, text) for case, text in texts.items()}
    return {case: round(t, 2) for case, t in took.items() if t > BOUND_S}


@pytest.mark.parametrize("name", sorted(FINDERS))
def test_each_finder_is_fast_on_pathological_text_at_the_limit(name: str) -> None:
    slow = _too_slow(FINDERS[name], PATHOLOGICAL)
    assert not slow, f"{name}: CPU seconds over {BOUND_S} at {N} characters: {slow}"


@pytest.mark.parametrize("name", UNCUT)
def test_each_finder_of_uncut_text_stays_linear_far_past_the_limit(name: str) -> None:
    slow = _too_slow(FINDERS[name], LONG_TEXT)
    assert not slow, f"{name}: CPU seconds over {BOUND_S} at {LONG} characters: {slow}"


def test_a_query_far_over_the_limit_is_cut_before_it_is_split() -> None:
    huge = _between("find it.", " ", "x", 1_000_000)
    assert cpu_seconds(split_steps, huge) < BOUND_S
    assert cpu_seconds(clean_query, huge * 5) < BOUND_S


EMBEDDED: list[int] = []  # the length of each text RecordingEmbedding embedded


class RecordingEmbedding(BaseEmbedding):
    """A fake embedding that records the length of every text it embeds (in ``EMBEDDED``)."""

    def _vec(self, text: str) -> list[float]:
        EMBEDDED.append(len(text))
        v = np.zeros(8)
        v[len(text) % 8] = 1.0
        return v.tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)


def test_retrieve_cuts_a_five_megabyte_query(tmp_path: Path) -> None:
    embed = RecordingEmbedding(model_name="recording-8")
    index = ToolIndex(tmp_path, embed, table="tools")
    index.sync([SEARCH, BOOK, SUBMIT])
    EMBEDDED.clear()
    query = _between("Find a hotel in Rome.", " ", "Then book it", 5_000_000)
    started = time.perf_counter()
    index.retrieve(query, k=2)
    assert time.perf_counter() - started < 30 * BOUND_S  # wall time: lancedb's threads too
    assert EMBEDDED and max(EMBEDDED) <= MAX_QUERY_CHARS


def test_the_agent_cuts_a_question_over_the_limit(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolrag.agent.loop"):
        assert len(bounded_question("a" * (N + 10))) == N
    assert "cut to" in caplog.text
    assert bounded_question("Which RFIs are open?") == "Which RFIs are open?"


# --- the same answers on normal input ------------------------------------------------------


def test_the_helpers() -> None:
    assert squashed(" a \u00a0\n\tb  c ") == "a b c"
    assert bounded("abcdef", 3) == "abc" and bounded("ab", 3) == "ab"
    assert clean_query("  x" + " " * 10 + "y") == "x y"
    assert len(clean_query("x" * (N + 5))) == N


def test_steps_split_as_before() -> None:
    request = "convert the report to PDF and then email it to my boss"
    assert sub_queries(request) == ["convert the report to PDF", "email it to my boss"]
    # the run of spaces that took seconds splits the same way, in no time
    spaced = request.replace(" and then", " " * 800 + ", and then" + " " * 800)
    assert sub_queries(spaced) == ["convert the report to PDF", "email it to my boss"]
    assert split_steps(
        "Find the area of a rectangle with length 7 and breadth 3. Also, calculate the area of "
        "a circle with radius 5."
    ) == (
        [
            "Find the area of a rectangle with length 7 and breadth 3",
            "calculate the area of a circle with radius 5",
        ],
        True,
    )
    assert sub_queries("the area of a triangle with base 10 and height 5") == []


def test_finders_find_as_before() -> None:
    assert question_period("Which sheets were revised between January and March 2026?") == (
        date(2026, 1, 1),
        date(2026, 3, 31),
    )
    assert given_values("Which inspections of the Summit Ridge Hotel cite RFI-101-015?") == [
        "RFI-101-015",
        "Summit Ridge Hotel",
    ]
    assert masked("Which cost code is over budget on the Summit Ridge Hotel?") == (
        "Which cost code is over budget on the Name?"
    )
    assert mentions_time("What changed since 2025-11-01?")
    assert not mentions_time("How many working days were lost?")
    assert asks_for_action("Can you   submit   CO-3 to the owner?", SUBMIT)
    assert not asks_for_action("What change orders were submitted?", SUBMIT)
    assert name_words("HTTPServerGetURL") == ["http", "server", "get", "url"]
    assert name_words("getXMLHttpRequest_v2") == ["get", "xml", "http", "request", "v2"]
    assert parse_translation("Here is the translation:\nEnglish: Where is it?", "¿Dónde?") == (
        "Where is it?"
    )
    assert parse_translation('Sure:\n"Where is it?"', "¿Dónde?") == "Where is it?"
    assert headings("# Intro  \ntext\n## 2.1 Scope\t\n##### not one") == ["Intro", "2.1 Scope"]
    assert NAMES("check it with `translate` then get_weather") == [2, 1]
    assert _requirements("The id, retrieved from Search Hotels.") == {BOOK.id: [(SEARCH.id,)]}
