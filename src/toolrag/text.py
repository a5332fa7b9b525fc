"""Untrusted text at the door: size limits and linear-time clean-up, before any pattern reads it.

A user's question, a client's ``search_tools`` query, the arguments a model writes and the
results a tool returns all meet regular expressions. Python's :mod:`re` backtracks, and it holds
the GIL while it does, so one slow match in a worker thread stalls the MCP server's event loop
too. Every caller that takes such text therefore bounds it (:func:`bounded`) and squashes its
whitespace runs (:func:`squashed`) first; the patterns behind it are written so that no two
adjacent or nested unbounded repetitions can match the same characters. Both helpers here are
linear in the length of the text (``str.split`` and slicing, no regular expression).
"""

from __future__ import annotations

# A question or a search query. The longest question of the sample domain has 210 characters
# and the longest request of NESTFUL's and BFCL's multi-tool sets well under 2,000; the embedding
# model reads 256 word pieces (about 1,000 characters) of it anyway. 4,000 characters keeps every
# real question whole with room to spare, and keeps a pathological one small enough that even a
# quadratic pass over it (16 million steps) would stay far below a second.
MAX_QUERY_CHARS = 4_000


def bounded(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """``text`` cut to its first ``limit`` characters (as it is when shorter)."""
    return text if len(text) <= limit else text[:limit]


def squashed(text: str) -> str:
    """``text`` with every run of whitespace (Unicode spaces, tabs and newlines included) made
    one space, and none at either end: ``"a \\u00a0\\n b "`` -> ``"a b"``. Linear time."""
    return " ".join(text.split())


def clean_query(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """A question or query as the text patterns read it: cut to ``limit`` characters
    (:func:`bounded`, before anything else touches it) and :func:`squashed`."""
    return squashed(bounded(text, limit))


__all__ = ["MAX_QUERY_CHARS", "bounded", "clean_query", "squashed"]
