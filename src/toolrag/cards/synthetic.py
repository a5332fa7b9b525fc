"""LLM-written example requests for tool cards, cached per card version.

A tool pool brought from elsewhere (a JSON tool list, an OpenAPI document) rarely has example
requests, and a user's request seldom uses the words of a tool's description. An LLM reads each
card and writes a few requests it answers; the ToolIndex gives each its own vector beside the
card's document (``ToolCard.synthetic``), and a question close to one of them lifts the card.

Generation is slow on a laptop (one LLM call per card), so every answer is kept in SQLite,
keyed by the card's content hash (its version: a changed description writes new requests) and
the model's name. :meth:`SyntheticQueries.fill` resumes where it stopped, and a larger
``per_card`` than before adds requests to the ones cached instead of writing them again;
:meth:`SyntheticQueries.augment` never calls the LLM, it adds what the cache has.

    store = SyntheticQueries(settings.state_dir / "synthetic.sqlite", llm)
    store.fill(cards)                      # `toolrag tools synth --tools T.json`
    index.sync(store.augment(cards))       # `toolrag eval tools ... --synthetic`
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from llama_index.core.llms import LLM

from toolrag.cards.card import ToolCard
from toolrag.cards.names import NameFinder
from toolrag.errors import ConfigError

PROMPT = """A tool an assistant can call:

{document}

Write {n} different requests a user could make that this tool answers. Vary the wording and
the details, use realistic values, and do not mention the tool's name. Write one request per
line and nothing else.

Requests:
"""
# a card that already has requests, asked for more (`toolrag tools synth --per-card 5`)
MORE = """A tool an assistant can call:

{document}

Requests a user could make that this tool answers:
{written}

Write {n} more requests this tool answers, different from the ones above in wording and
details. Use realistic values and do not mention the tool's name. Write one request per line
and nothing else.

Requests:
"""
MAX_CHARS = 300
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|request\s*\d*:)\s*", re.IGNORECASE)
# A small model can loop on a value until it runs out of tokens ("[3, 5, 7, 3, 9, 5, 7, 3, 9,
# ...", "ATCGTACGATCGTACG..."): in a line too long to keep, a stretch of 2 to 40 characters
# repeated 5 times or more in a row is kept twice.
_LOOP = re.compile(r"(.{2,40}?)\1{4,}")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)")
# A line of code, not a request: a fence, or a statement's clause in capitals ("SELECT
# customer_id, COUNT(*)", "GROUP BY city"), as the local model writes for a SQL tool.
_CODE = re.compile(
    r"^(?:SELECT|WITH|FROM|WHERE|GROUP BY|ORDER BY|HAVING|LIMIT|JOIN|INSERT|UPDATE|"
    r"DELETE|CREATE|DROP|ALTER)\b"
)
# A line about the requests, not one of them ("These requests show ...", "Here are 3 requests")
_ABOUT = re.compile(
    r"^(?:these|the above|the following|here are|here is)\b[^.?!]{0,80}\brequests?\b", re.I
)
_WORD = re.compile(r"[^\W\d_]{2,}")


class _Entry(NamedTuple):
    """A card's cached requests and how many were asked for."""

    requests: list[str]
    asked: int


def _within_limit(request: str) -> str:
    """``request`` as it is when it has at most ``MAX_CHARS``; else with a value it loops on cut
    to two copies and, if still too long, only its whole sentences that fit ("" if the first
    does not)."""
    if len(request) <= MAX_CHARS:
        return request
    request = _LOOP.sub(r"\1\1", request)
    if len(request) <= MAX_CHARS:
        return request
    ends = [m.end() for m in _SENTENCE_END.finditer(request) if m.end() <= MAX_CHARS]
    return request[: ends[-1]] if ends else ""


def parse_requests(text: str, n: int, tool_name: str, written: Sequence[str] = ()) -> list[str]:
    """The requests in an LLM reply: one per line, numbering, bullets, heading marks, emphasis
    and quotes removed, without repeats (of each other or of ``written``), lines naming the
    tool, lines of code (in a fenced block, or a SQL clause in capitals), lines about the
    requests ("These requests show ...") or that end in a colon (they introduce others), lines
    of fewer than two words, or lines too long to be a request. A value the model loops on is cut
    to two copies, and a line longer than ``MAX_CHARS`` keeps the whole sentences that fit:
    the 1.5B local model wrote no usable request for 10 of BFCL's 1,703 cards, each reply a
    loop or lines of 320-400 characters.

    A line names the tool as a question would (:class:`toolrag.cards.names.NameFinder`): by an
    identifier-shaped name anywhere ("call get_weather for Rome"), by a one-word name only when
    quoted. A one-word name is also an ordinary word, and a user asks "what is the sum of 3 and
    4" of a tool called ``sum``: the substring test this replaced dropped such lines, and with
    them most requests of 16 BFCL cards (``sum``, ``add``, ``multiply``, ``translate``, ...)."""
    finder = NameFinder({tool_name: True})
    if finder.knows(tool_name):
        names_tool: Callable[[str], object] = finder
    else:  # a name of another shape ("get weather", "api/v1/items"): its text anywhere
        names_tool = lambda line: tool_name.lower() in line.lower()  # noqa: E731
    out: list[str] = []
    seen = {r.lower() for r in written}
    fenced = False
    for line in text.splitlines():
        if line.strip().startswith("```"):  # a code block's fence: what it holds is code
            fenced = not fenced
            continue
        if fenced:
            continue
        # a heading's marks and emphasis around the line ("**Orders by customer**") go
        request = _BULLET.sub("", line).strip().lstrip("#>").strip().strip("*_").strip()
        request = _within_limit(request.strip("\"'").strip())
        # code, a line about the requests or one that introduces them, a line of symbols
        if (
            len(_WORD.findall(request)) < 2
            or _CODE.match(request)
            or _ABOUT.match(request)
            or request.endswith(":")
            or names_tool(request)
        ):
            continue
        if request.lower() not in seen:
            seen.add(request.lower())
            out.append(request)
        if len(out) == n:
            break
    return out


class SyntheticQueries:
    """Requests written by ``llm`` for tool cards, cached in SQLite per card version and model.
    Without an ``llm`` the store only reads: each card gets the requests any model wrote.

    Each row also keeps how many requests were asked for, so a re-run with the same
    ``per_card`` skips a card whose reply held fewer, and a larger ``per_card`` asks the LLM
    only for the missing ones (shown the requests it already wrote, so it writes new ones)."""

    def __init__(self, path: Path, llm: LLM | None = None, per_card: int = 3) -> None:
        self.path = path
        self.llm = llm
        self.per_card = per_card
        # the model file's name, not its path: a cache moved to another machine still matches
        self.model = Path(llm.metadata.model_name or type(llm).__name__).name if llm else None
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS requests (card_hash TEXT, model TEXT, name TEXT, "
                "requests TEXT, asked INTEGER, PRIMARY KEY (card_hash, model))"
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(requests)")}
            if "asked" not in columns and llm is not None:
                # a cache written before requests could be added to a card's
                db.execute("ALTER TABLE requests ADD COLUMN asked INTEGER")
                columns.add("asked")
        # a reader leaves an older cache as it is (it may be a file in a repository)
        self._asked = "asked" if "asked" in columns else "NULL"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path)
        try:
            with db:  # commits
                yield db
        finally:
            db.close()

    @staticmethod
    def _key(card: ToolCard) -> str:
        """The card's version (any requests written for it do not count)."""
        return card.content_hash()

    # this store's model, or any model when it has none; the latest row wins
    _MODEL = "model = coalesce(?, model) ORDER BY rowid"

    @staticmethod
    def _entry(requests: str, asked: int | None) -> _Entry:
        found = list(json.loads(requests))
        # an older row does not say how many were asked for: as many as it holds
        return _Entry(found, len(found) if asked is None else asked)

    def _cached_entry(self, card: ToolCard) -> _Entry | None:
        with self._db() as db:
            row = db.execute(
                f"SELECT requests, {self._asked} FROM requests "
                f"WHERE card_hash = ? AND {self._MODEL} DESC",
                (self._key(card), self.model),
            ).fetchone()
        return self._entry(*row) if row else None

    def cached(self, card: ToolCard) -> list[str] | None:
        entry = self._cached_entry(card)
        return entry.requests if entry else None

    def _stored(self, key: str = "card_hash") -> dict[str, _Entry]:
        """Every cached card version's requests, read at once (for whole pools), by card
        version; ``key="name"``: by tool name, the latest version's."""
        column = "name" if key == "name" else "card_hash"
        with self._db() as db:
            rows = db.execute(
                f"SELECT {column}, requests, {self._asked} FROM requests WHERE {self._MODEL}",
                (self.model,),
            ).fetchall()
        return {k: self._entry(requests, asked) for k, requests, asked in rows}

    def generate(self, card: ToolCard) -> list[str]:
        """The card's requests: from the cache, else (or, with an LLM, when fewer than
        ``per_card`` were asked for, or the reply held none) written by the LLM and cached."""
        entry = self._cached_entry(card)
        if entry is not None and (self.llm is None or self._complete(entry)):
            return entry.requests
        return self._write(card, entry.requests if entry else [])

    def _complete(self, entry: _Entry) -> bool:
        """Whether a cached row needs no LLM call: ``per_card`` were asked for and the reply held
        at least one request (a reply that held none is asked again, as a fixed parser or
        another model may do better)."""
        return entry.asked >= self.per_card and bool(entry.requests)

    def _write(self, card: ToolCard, written: Sequence[str] = ()) -> list[str]:
        if self.llm is None:
            raise ConfigError(
                f"No requests are cached for {card.name} and no LLM was given to write them.",
                hint="Run `toolrag tools synth --tools FILE` first.",
            )
        n = self.per_card - len(written)
        if written:
            lines = "\n".join(written)
            prompt = MORE.format(document=card.document(), written=lines, n=n)
        else:
            prompt = PROMPT.format(document=card.document(), n=n)
        reply = self.llm.complete(prompt).text
        requests = [*written, *parse_requests(reply, n, card.name, written)]
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?)",
                (self._key(card), self.model, card.name, json.dumps(requests), self.per_card),
            )
        return requests

    def fill(
        self,
        cards: Sequence[ToolCard],
        limit: int | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write requests for the cards that have none cached (no row, or a reply that held
        none), or fewer asked for than ``per_card`` (at most ``limit`` cards); returns how many
        cards were written for. A card whose YAML file gives its requests is skipped: those
        were reviewed, and :meth:`augment` keeps them over any written ones.
        ``on_progress(done, total)`` after each."""
        stored = self._stored()
        todo = [
            (card, entry.requests if entry else [])
            for card in cards
            if not card.synthetic
            and ((entry := stored.get(self._key(card))) is None or not self._complete(entry))
        ][:limit]
        for n, (card, written) in enumerate(todo, start=1):
            self._write(card, written)
            if on_progress is not None:
                on_progress(n, len(todo))
        return len(todo)

    def covered(self, cards: Sequence[ToolCard]) -> int:
        """How many of ``cards`` have requests cached (a card whose reply held no usable request
        has a row, and no requests)."""
        stored = self._stored()
        return sum(bool((entry := stored.get(self._key(c))) and entry.requests) for c in cards)

    def augment(self, cards: Sequence[ToolCard], by_name: bool = False) -> list[ToolCard]:
        """The cards with their cached requests (a card without any is returned unchanged, and
        so is a card whose YAML file gives its requests: those were reviewed). ``by_name``: a
        card whose version has none takes the latest requests cached under its name, for a
        published pool read again from the same source after the card format changed (the
        version hash covers the card's fields, so a new field changes every card's version)."""
        stored = self._stored()
        named = self._stored(key="name") if by_name else {}
        out = []
        for card in cards:
            entry = stored.get(self._key(card)) or named.get(card.name)
            if entry and entry.requests and not card.synthetic:
                card = card.model_copy(update={"synthetic": entry.requests})
            out.append(card)
        return out
