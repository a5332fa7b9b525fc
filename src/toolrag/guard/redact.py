"""Redaction of tool arguments before they are written to the audit log.

Emails, phone numbers, API keys, bearer tokens and JWTs are masked wherever they appear in a
string; the values of keys that look like secrets (``password``, ``token``, ``api_key`` …) and of
any key a tool card marks as sensitive are replaced whole.

Every call is audited, refused ones included, so this code sees whatever a caller sends. Its cost
is bounded by design: a string is cut at ``MAX_STRING_CHARS`` before any pattern runs (the
rest is not logged at all, so nothing past the cut can leak), containers keep their first
``MAX_ITEMS`` items, nesting stops at ``MAX_DEPTH`` and the whole at ``MAX_NODES`` values, and
every pattern runs in linear time (no two unbounded quantifiers over the same characters;
bounded or possessive runs).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

MASK = "[REDACTED]"
MAX_STRING_CHARS = 2_000
MAX_ITEMS = 100
MAX_DEPTH = 16
MAX_NODES = 2_000

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)\bbearer\s{1,8}[A-Za-z0-9._~+/=-]{8,}+"), "Bearer [REDACTED]"),
    (
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{4,}+"),
        "[REDACTED-JWT]",
    ),
    (
        re.compile(
            r"\b(?:sk|pk|rk|ghp|gho|ghs|github_pat|xox[abpr]|AKIA|AIza|glpat)[-_A-Za-z0-9]{12,}+"
        ),
        "[REDACTED-KEY]",
    ),
    (re.compile(r"(?i)\b(api[_-]?key|token|secret|password)=([^\s&]++)"), r"\1=[REDACTED]"),
    # a local part starts where a run of its characters starts (the lookbehind), so a long run
    # without "@" is scanned once, not once per position
    (
        re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b"),
        "[REDACTED-EMAIL]",
    ),
    (
        re.compile(r"(?<![\w-])(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{3}\)|\d{3})[\s.-]\d{3}[\s.-]\d{4}\b"),
        "[REDACTED-PHONE]",
    ),
]

SECRET_KEYS = re.compile(
    r"(?i)(pass(word)?|secret|token|api[_-]?key|authorization|auth|cookie|credential|ssn)"
)


def redact_text(text: str) -> str:
    """``text`` with emails, phone numbers, keys and tokens masked; a text over
    ``MAX_STRING_CHARS`` is cut there first and says how much was left out."""
    cut = ""
    if len(text) > MAX_STRING_CHARS:
        cut = f"…[{len(text) - MAX_STRING_CHARS:,} more characters not logged]"
        text = text[:MAX_STRING_CHARS]
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text + cut


def redact(value: Any, sensitive: Collection[str] = ()) -> Any:
    """A copy of ``value`` (JSON-like) safe to log: secret-looking keys and the ``sensitive``
    keys masked whole, every string scanned by :func:`redact_text`, and the whole bounded in
    size (``MAX_ITEMS`` per container, ``MAX_DEPTH`` levels, ``MAX_NODES`` values in all)."""
    return _Redactor(sensitive).copy(value, 0)


class _Redactor:
    def __init__(self, sensitive: Collection[str]) -> None:
        self.sensitive = sensitive
        self.budget = MAX_NODES

    def copy(self, value: Any, depth: int) -> Any:
        self.budget -= 1
        if isinstance(value, str):
            return redact_text(value)
        if isinstance(value, int) and value.bit_length() > 256:  # str() refuses 4,300+ digits
            return f"[an integer of {value.bit_length():,} bits, not logged]"
        if not isinstance(value, dict | list | tuple):
            return value
        if depth >= MAX_DEPTH or self.budget <= 0:
            return "[NESTED: not logged]"
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for i, (key, item) in enumerate(value.items()):
                if i >= MAX_ITEMS or self.budget <= 0:
                    out["…"] = f"{len(value) - i:,} more keys not logged"
                    break
                name = redact_text(str(key)[:200])
                hidden = str(key) in self.sensitive or SECRET_KEYS.search(name)
                out[name] = (
                    MASK if hidden and item not in (None, "") else self.copy(item, depth + 1)
                )
            return out
        items = []
        for i, item in enumerate(value):
            if i >= MAX_ITEMS or self.budget <= 0:
                items.append(f"…{len(value) - i:,} more items not logged")
                break
            items.append(self.copy(item, depth + 1))
        return items
