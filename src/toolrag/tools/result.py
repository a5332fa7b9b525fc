"""The one envelope every tool returns, for success and for every error."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


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
    locator: str = Field("", description="Sheet number, milestone id or chunk within the file.")
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

    def render(self, max_chars: int = 6000) -> str:
        """Compact JSON for the model's observation, without empty fields."""
        payload = self.model_dump(mode="json", exclude_none=True)
        for flag in ("truncated", "idempotent_replay"):
            if not payload.get(flag):
                payload.pop(flag, None)
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if len(text) > max_chars:
            text = text[:max_chars] + '..."} [truncated]'
        return text

    def __str__(self) -> str:
        return self.render()


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
