"""Which gated tool call a person approved, for the tool itself to check (defence in depth).

The guard (:mod:`toolrag.guard`) decides approval; it runs an approved ``delete`` or ``external``
tool inside :func:`approved`. A gated tool refuses to act unless :func:`is_approved` says its
own name was approved for this very call, so calling it around the guard does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_APPROVED: ContextVar[frozenset[str]] = ContextVar("toolrag_approved", default=frozenset())


@contextmanager
def approved(name: str) -> Iterator[None]:
    """Mark ``name`` approved for the calls made inside this block (this thread/task only)."""
    token = _APPROVED.set(_APPROVED.get() | {name})
    try:
        yield
    finally:
        _APPROVED.reset(token)


def is_approved(name: str) -> bool:
    return name in _APPROVED.get()
