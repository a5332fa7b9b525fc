"""Multi-step requests: where one question asks for several things ("convert the report to PDF
and then email it"), the steps it splits into, so that tool retrieval can cover each of them
(:meth:`toolrag.retrieval.index.ToolIndex.retrieve`, NLWeb's ensemble idea). Pure text rules, no
model:
explicit step words ("then", "after that", ";"), sentences opened by sequence words ("First,
...", "Also, ..."), and a bare "and" only between two clauses of their own.

The request is cut to :data:`toolrag.text.MAX_QUERY_CHARS` and its whitespace runs squashed
first (:func:`toolrag.text.clean_query`), and no pattern here has two adjacent or nested
repetitions that can match the same characters (possessive ``*+``/``++`` where a run of spaces
meets an optional comma), so splitting takes linear time: the old patterns took seconds on a
run of a few hundred spaces.
"""

from __future__ import annotations

import re

from toolrag.text import clean_query

# Explicit step markers split a request into steps; a bare "and" only when both sides are
# clauses of their own (4+ words), so "base 10 and height 5" stays one request.
_STEP_RE = re.compile(
    r"\s*+(?:;|,?+\s*+\b(?:and then|then|and also|after that)\b)\s*+", re.IGNORECASE
)
_AND_RE = re.compile(r"\s*+,?+\s*+\band\b\s*+", re.IGNORECASE)
# A question asked after a comma ("how long does curing take, when is the pour planned") is a
# step of its own when what comes before asks something too; "In the bid, what ..." does not.
_WH = r"(?:what|when|where|which|who|whom|whose|why|how)\b"
_CLAUSE_RE = re.compile(rf"\s*+,\s*+(?={_WH})", re.IGNORECASE)
_ASKS_RE = re.compile(rf"\b{_WH}", re.IGNORECASE)
# "..., and by how many days?" asks for a detail of the question before it, not a new step
_DETAIL_RE = re.compile(
    rf"^(?:by|for|in|on|at|to|from|of|with|since|until|after|before)\s++{_WH}", re.IGNORECASE
)
# A request written as sentences: a sentence ends at . ? or ! before a capital (or a quote or
# bracket and a capital), and a sentence that opens with a sequence word starts a new step;
# the sentences after it without one (its figures, its context) belong to that step. "Next"
# and "Last" count only with a comma ("Next, ..."), not as in "Next week ...".
_SENTENCE_RE = re.compile(r"(?<=[.?!])[\"']?+\s++(?=[\"'(]?[A-Z])")
_MARKER_RE = re.compile(
    r"^[\"'(]*+(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth(?:ly)?|then"
    r"|after(?:wards| that| this)|finally|lastly|also|additionally|moreover|furthermore"
    r"|in addition|besides|plus|and|meanwhile|now|on top of that|(?:next|last)(?=\s*,))\b[\s,:]*",
    re.IGNORECASE,
)


def _marked_steps(query: str) -> list[str]:
    """The sentence groups of a request, each opened by a sequence word ("First, ...",
    "Also, ...", "Finally, ..."), sequence words removed; one group when there are none."""
    groups: list[list[str]] = []  # joined at the end: adding to a string is quadratic
    for sentence in _SENTENCE_RE.split(query.strip()):
        if groups and not _MARKER_RE.match(sentence):
            groups[-1].append(sentence)
        else:
            groups.append([_MARKER_RE.sub("", sentence, count=1)])
    return [" ".join(group) for group in groups]


def sub_queries(query: str, min_words: int = 3) -> list[str]:
    """Split a multi-step request into its steps ("convert X to PDF and then email it").

    A request written as sentences with sequence words ("Find the area of the rectangle. Also,
    calculate ...") has a step per marked sentence group, split further only on explicit step
    words ("then", ";"): inside such a group a bare "and" joins a step's own details. Otherwise
    a bare "and" splits too, when both sides are clauses of their own (4+ words)."""
    return split_steps(query, min_words)[0]


def split_steps(query: str, min_words: int = 3) -> tuple[list[str], bool]:
    """:func:`sub_queries`, and whether the request marks its steps with sequence words
    (sentences opened by "First", "Also", "Then" ...), which says it asks for several things."""
    query = clean_query(query)
    parts: list[str] = []
    groups = _marked_steps(query)
    marked = len(groups) > 1
    if marked:
        parts = [step for group in groups for step in _STEP_RE.split(group)]
    else:
        for step in _STEP_RE.split(query):
            pieces = _joined_details(_AND_RE.split(step))
            if len(pieces) > 1 and all(len(p.split()) >= 4 for p in pieces):
                parts.extend(p for piece in pieces for p in _asked_clauses(piece))
            else:
                parts.extend(_asked_clauses(step))
    parts = [t for t in map(_trim, parts) if len(t.split()) >= min_words]
    return (parts, marked) if len(parts) > 1 else ([], False)


def _joined_details(pieces: list[str]) -> list[str]:
    """``pieces`` with each one that asks for a detail of the one before it ("by how many
    days?", "in which month?") joined back to it."""
    out: list[str] = []
    for piece in pieces:
        if out and _DETAIL_RE.match(piece):
            out[-1] = f"{out[-1]} and {piece}"
        else:
            out.append(piece)
    return out


def _asked_clauses(text: str) -> list[str]:
    """``text`` split before each question that follows a comma ("..., when is ...") when
    the text before that comma asks something too and every clause has 4+ words."""
    pieces = _CLAUSE_RE.split(text)
    if len(pieces) < 2 or not all(len(p.split()) >= 4 for p in pieces):
        return [text]
    out = [pieces[0]]
    for piece in pieces[1:]:
        if _ASKS_RE.search(out[-1]):
            out.append(piece)
        else:  # "In the bid, what ...": one question with its context before it
            out[-1] = f"{out[-1]}, {piece}"
    return out


def _trim(part: str) -> str:
    """A step without the spaces, commas and full stops around it, nor the opening or closing
    quote of a request written in quotes (a quote it opens and closes itself stays)."""
    part = part.strip(" ,.")
    for quote in "\"'":
        if part.count(quote) % 2:
            if part.startswith(quote):
                part = part[1:]
            elif part.endswith(quote):
                part = part[:-1]
    return part.strip(" ,.")
