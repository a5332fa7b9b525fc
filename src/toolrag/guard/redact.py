"""Redaction of tool arguments before they are written to the audit log.

Emails, phone numbers, API keys, bearer tokens and JWTs are masked wherever they appear in a
string; the values of keys that look like secrets (``password``, ``token``, ``api_key`` …) and of
any key a tool card marks as sensitive are replaced whole.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

MASK = "[REDACTED]"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer [REDACTED]"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}"), "[REDACTED-JWT]"),
    (
        re.compile(
            r"\b(?:sk|pk|rk|ghp|gho|ghs|github_pat|xox[abpr]|AKIA|AIza|glpat)[-_A-Za-z0-9]{12,}"
        ),
        "[REDACTED-KEY]",
    ),
    (re.compile(r"(?i)\b(api[_-]?key|token|secret|password)=([^\s&]+)"), r"\1=[REDACTED]"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "[REDACTED-EMAIL]"),
    (
        re.compile(r"(?<![\w-])(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{3}\)|\d{3})[\s.-]\d{3}[\s.-]\d{4}\b"),
        "[REDACTED-PHONE]",
    ),
]

SECRET_KEYS = re.compile(
    r"(?i)(pass(word)?|secret|token|api[_-]?key|authorization|auth|cookie|credential|ssn)"
)


def redact_text(text: str) -> str:
    """``text`` with emails, phone numbers, keys and tokens masked."""
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def redact(value: Any, sensitive: Collection[str] = ()) -> Any:
    """A copy of ``value`` (JSON-like) safe to log: secret-looking keys and the ``sensitive``
    keys masked whole, every string scanned by :func:`redact_text`."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            hidden = str(key) in sensitive or SECRET_KEYS.search(str(key))
            out[str(key)] = MASK if hidden and item not in (None, "") else redact(item, sensitive)
        return out
    if isinstance(value, list | tuple):
        return [redact(v, sensitive) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
