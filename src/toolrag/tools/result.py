"""The one envelope every tool returns, for success and for every error."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from toolrag.cards.card import split_name


class ErrorCode(StrEnum):
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    UNKNOWN_PROJECT = "UNKNOWN_PROJECT"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INDEX_MISSING = "INDEX_MISSING"
    NOT_FOUND = "NOT_FOUND"
    TIMEOUT = "TIMEOUT"
    FORBIDDEN = "FORBIDDEN"  # refused by policy: a write, an off-host URL, a table not allowed
    QUERY_ERROR = "QUERY_ERROR"  # the database rejected a (read-only) query: bad column, syntax
    HTTP_ERROR = "HTTP_ERROR"  # the server answered with a 4xx/5xx status
    NETWORK_ERROR = "NETWORK_ERROR"  # no answer: refused connection, DNS, reset
    TOO_LARGE = "TOO_LARGE"  # an argument or body over the configured size
    APPROVAL_DENIED = "APPROVAL_DENIED"  # a delete/external call a person did not approve
    CONFLICT = "CONFLICT"  # an idempotency key reused with other arguments
    INTERNAL_ERROR = "INTERNAL_ERROR"


class Source(BaseModel):
    """Where a piece of evidence came from."""

    file: str
    doc_id: str = ""
    title: str = ""
    locator: str = Field("", description="Page, record id or chunk within the file.")
    score: float | None = None


class ToolResult(BaseModel):
    """``{success, data, error_code, error_message, recoverable, suggestion}`` plus sources.

    A tool never raises into the agent: bad arguments, unknown projects, missing indexes and
    internal failures all come back as a ``ToolResult`` the model can read and act on.
    """

    success: bool
    data: Any = None
    error_code: ErrorCode | None = None
    error_message: str | None = None
    recoverable: bool = True
    suggestion: str | None = None
    sources: list[Source] = Field(default_factory=list, exclude=True)
    truncated: bool = False
    idempotent_replay: bool = False
    # the arguments the call ran with, when a check before it changed the model's
    # (toolrag.guard.grounding.calls); the suggestion tells the model, the trace shows them
    ran_with: dict[str, Any] | None = Field(None, exclude=True)
    # the tool that ran, when the model's call named none that exists and its arguments said
    # which offered tool it meant (toolrag.guard.function_tools.unknown_tool); the trace
    # records this tool and the arguments it ran with
    ran_as: str | None = Field(None, exclude=True)
    ran_as_arguments: dict[str, Any] | None = Field(None, exclude=True)

    def with_note(self, note: str | None) -> ToolResult:
        """This result with ``note`` before its suggestion: what was changed or ignored on the
        way to it (unknown arguments, a value the question never gave)."""
        if note:
            self.suggestion = f"{note} {self.suggestion}" if self.suggestion else note
        return self

    @classmethod
    def ok(
        cls, data: Any, sources: list[Source] | None = None, suggestion: str | None = None
    ) -> ToolResult:
        return cls(success=True, data=data, sources=sources or [], suggestion=suggestion)

    @classmethod
    def fail(
        cls,
        code: ErrorCode,
        message: str,
        *,
        suggestion: str | None = None,
        recoverable: bool = True,
    ) -> ToolResult:
        return cls(
            success=False,
            error_code=code,
            error_message=message,
            suggestion=suggestion,
            recoverable=recoverable,
        )

    @property
    def empty(self) -> bool:
        """True for a successful call that found nothing: no data, a result table without
        rows, an HTTP body that is empty or whose lists are all empty. The call worked, but
        another tool or broader arguments may find the answer."""
        return self.success and found_nothing(self.data)

    def render(self, max_chars: int = 6000, grouped: bool = True) -> str:
        """Compact JSON for the model's observation, without empty fields. With ``grouped``,
        numbers of five or more digits in ``data`` are written with thousands separators
        (``"23,147,914"``, see :func:`readable_numbers`); ``grouped=False`` keeps every number
        as JSON has it, for programs that parse the result."""
        payload = self.model_dump(mode="json", exclude_none=True)
        if grouped and "data" in payload:
            payload["data"] = readable_numbers(payload["data"])
        for flag in ("truncated", "idempotent_replay"):
            if not payload.get(flag):
                payload.pop(flag, None)
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if len(text) <= max_chars:
            return text

        # too long: the data is cut, the fields after it (the error, the suggestion, the note
        # of what was changed or left out) are kept whole, after the cut
        def dumps(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        fields = {k: dumps(v) for k, v in payload.items()}
        data = fields.pop("data", "")
        room = max(0, max_chars - sum(len(k) + len(v) + 4 for k, v in fields.items()) - 30)
        fields = {k: fields.get(k, f'{data[:room]}..." [truncated]') for k in payload}
        text = "{" + ",".join(f"{dumps(k)}:{v}" for k, v in fields.items()) + "}"
        if len(text) > max_chars:  # the other fields alone are too long: still bounded
            text = text[:max_chars] + '..."} [truncated]'
        return text

    def __str__(self) -> str:
        return self.render()


#: A field whose name ends in one of these words holds an identifier, not a quantity: its
#: number is shown as it is ("vendor_id", "zipCode", "phone", "fiscal_year").
IDENTIFIER_WORDS = frozenset(
    {"id", "ids", "uuid", "key", "code", "zip", "zipcode", "postcode", "postal", "phone"}
    | {"fax", "number", "no", "num", "year", "port", "version", "sku", "isbn", "ean", "account"}
)
GROUP_FROM = 10_000


def _names_identifier(name: str) -> bool:
    words = split_name(name).split()  # "SUM(amount)" -> sum amount, "zipCode" -> zip code
    return bool(words) and words[-1].rstrip("0123456789") in IDENTIFIER_WORDS


def _row(row: list[Any], names: Sequence[str]) -> list[Any]:
    """A SQL row, each value under its column's name (values past the named columns as they
    are)."""
    return [readable_numbers(v, names[i]) if i < len(names) else v for i, v in enumerate(row)]


def readable_numbers(data: Any, name: str = "") -> Any:
    """``data`` with each number of five or more digits as a string with thousands separators
    (``23147914`` -> ``"23,147,914"``, ``1234567.5`` -> ``"1,234,567.5"``). A small model reading
    a long run of digits drops or shifts one when it writes the figure back (``$2,314,791.40``
    for ``23147914``); grouped, it copies the figure. Numbers under a field (a dict key, or a
    SQL column named in ``columns``) whose name ends in an identifier word (``vendor_id``,
    ``zip``, ``phone``, ``year``) stay as they are, and so do strings, booleans and smaller
    numbers."""
    if isinstance(data, dict):
        columns = data.get("columns")
        if isinstance(data.get("rows"), list) and isinstance(columns, list):
            names = [str(c) for c in columns]
            rows = [
                _row(row, names) if isinstance(row, list) else readable_numbers(row, name)
                for row in data["rows"]
            ]
            return {k: rows if k == "rows" else readable_numbers(v, k) for k, v in data.items()}
        return {k: readable_numbers(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [readable_numbers(v, name) for v in data]
    if (
        isinstance(data, int | float)
        and not isinstance(data, bool)
        and math.isfinite(data)
        and abs(data) >= GROUP_FROM
        and not (name and _names_identifier(name))
    ):
        return f"{data:,}"
    return data


def found_nothing(data: Any) -> bool:
    """``None``, ``""``, ``[]``, ``{}``; ``{"rows": []}`` (SQL); ``{"body": …}`` (HTTP) with an
    empty body; a dict whose list values are all empty (``{"records": [], "total": 0}``)."""
    if data is None or (isinstance(data, (list, dict, str)) and not data):
        return True
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("rows"), list):
        return not data["rows"]
    if "body" in data and "status" in data:
        return found_nothing(data["body"])
    lists = [v for v in data.values() if isinstance(v, list)]
    return bool(lists) and all(not v for v in lists)
