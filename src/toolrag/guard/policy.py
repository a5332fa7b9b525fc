"""Who may use which tools (agent profiles), and the human approval of gated calls."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from toolrag.cards import SideEffect, ToolCard

GATED: frozenset[str] = frozenset({"delete", "external"})
ALL_EFFECTS: tuple[SideEffect, ...] = ("read", "write", "delete", "external")


class AgentProfile(BaseModel):
    """Least privilege for one agent: the tools (names or globs) and tags it may use, and the
    side-effect classes it may cause. Retrieval returns only permitted tools, and execution
    checks again."""

    name: str = "default"
    tools: list[str] = Field(default_factory=lambda: ["*"], description="Names or globs.")
    tags: list[str] = Field(
        default_factory=list, description="Tags whose tools are also permitted."
    )
    side_effects: list[SideEffect] = Field(
        default_factory=lambda: list(ALL_EFFECTS),
        description="The side-effect classes this profile may cause.",
    )

    def permits(self, card: ToolCard) -> bool:
        if card.side_effect not in self.side_effects:
            return False
        named = any(fnmatch.fnmatchcase(card.name, pattern) for pattern in self.tools)
        return named or bool(set(card.tags) & set(self.tags))


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
