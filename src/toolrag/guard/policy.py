"""Who may use which tools (agent profiles), and the human approval of gated calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from toolrag.types import SideEffect

GATED: frozenset[str] = frozenset({"delete", "external"})


class ApprovalRequest(BaseModel):
    """What a person sees before a ``delete`` or ``external`` call runs."""

    tool: str
    side_effect: SideEffect
    arguments: dict[str, Any] = Field(description="Redacted arguments.")
    description: str = ""
    run_id: str = ""

    def prompt(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"Allow {self.side_effect} call {self.tool}({args})?"


Approver = Callable[[ApprovalRequest], bool]


def approve_all(_: ApprovalRequest) -> bool:
    return True


def deny_all(_: ApprovalRequest) -> bool:
    return False
