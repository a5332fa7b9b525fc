"""The identifiers and proper names a request gives, found without a model.

- :func:`code_like`: an id a model cannot know unless it is given (``CUST-107``, ``TKT-101-015``).
- :func:`given_values`: the ids and the runs of capitalised words of a question, in order.
- :func:`masked`: the question with those replaced by placeholders, which leaves the shape of the
  request ("Which invoices of Name are unpaid?"): what the few-shot example store compares
  when it looks for examples of the same kind of request rather than of the same customer.
"""

from __future__ import annotations

import re
from datetime import datetime

from toolrag.text import MAX_QUERY_CHARS, bounded

_AMOUNT = re.compile(r"[-+]?\d[\d,.]*[A-Za-z%]{0,4}")
# a token that may be an id: letters and digits joined by _ . / -
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*[A-Za-z0-9]")


def folded(text: str) -> str:
    """Letters and digits only, casefolded: ``CUST-107`` and ``cust 107`` compare equal."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def code_like(text: str) -> bool:
    """An identifier a model cannot know unless it is given: one token of 4+ characters with an
    ASCII letter and digit in it (``CUST-107``, ``TKT-101-015``, ``ORD-1042``). Dates and
    times (written by the model from "March 2026"), numbers (``1e-09``), amounts with a unit
    (``10mg``) and values composed of parts such as URLs, paths and e-mail addresses are not
    codes."""
    if len(text) < 4 or any(ch.isspace() or ch in "/@\\" for ch in text):
        return False
    if _AMOUNT.fullmatch(text) or not re.search(r"[0-9]", text) or not re.search("[A-Za-z]", text):
        return False
    for parse in (float, datetime.fromisoformat):
        try:
            parse(text)
        except ValueError:
            continue
        return False
    return True


# a run of capitalised words, "of", "the" and the like allowed between them (each word starts
# after a space, so no two repetitions can match the same characters: linear)
NAME_SPAN = re.compile(
    r"[A-Z][A-Za-z0-9'&.-]*+(?:\s++(?:(?:of|the|and|de|la|du|von)\s++)?[A-Z0-9][A-Za-z0-9'&.-]*+)*"
)
_POSSESSIVE = re.compile(r"'s?$")


def given_values(question: str) -> list[str]:
    """What the question names: its ids and codes, and its runs of capitalised words (its
    first word left out when it stands alone), in order (``Bluebird Coffee
    Roasters``, ``TKT-101-015``). The repair round shows them, so the model has the value to
    write instead of inventing one. Read up to ``MAX_QUERY_CHARS`` characters."""
    question = bounded(question, MAX_QUERY_CHARS)
    found: dict[str, None] = {}  # in order; a dict, so a question of many values stays linear
    for t in TOKEN.findall(question):
        if code_like(t):
            found.setdefault(t)
    for m in NAME_SPAN.finditer(question):
        span = _POSSESSIVE.sub("", m[0].rstrip("."))
        if m.start() == 0:
            span = span.partition(" ")[2]
        if len(span) >= 3 and span not in found and not code_like(span):
            found[span] = None
    return list(found)


CODE_MASK = "ID"
NAME_MASK = "Name"


def masked(text: str) -> str:
    """``text`` with each value :func:`given_values` finds replaced by a placeholder (``ID`` for
    an id or code, ``Name`` for a proper name), longest first: "Which invoices of Copperfield
    Books are unpaid?" -> "Which invoices of Name are unpaid?". Read up to
    ``MAX_QUERY_CHARS`` characters (one pass per value found)."""
    out = text = bounded(text, MAX_QUERY_CHARS)
    for value in sorted(given_values(text), key=len, reverse=True):
        mask = CODE_MASK if code_like(value) else NAME_MASK
        out = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", mask, out)
    return out


__all__ = ["NAME_SPAN", "TOKEN", "code_like", "folded", "given_values", "masked"]
