"""Agent profiles: least privilege for one agent, declared in settings and checked by the guard."""

from __future__ import annotations

import fnmatch
from typing import Protocol

from pydantic import BaseModel, Field

from toolrag.types import SideEffect

ALL_EFFECTS: tuple[SideEffect, ...] = ("read", "write", "delete", "external")


class _Card(Protocol):
    """What a profile reads of a tool card (:class:`toolrag.cards.card.ToolCard`)."""

    @property
    def name(self) -> str: ...
    @property
    def side_effect(self) -> SideEffect: ...
    @property
    def tags(self) -> list[str]: ...


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

    def permits(self, card: _Card) -> bool:
        if card.side_effect not in self.side_effects:
            return False
        named = any(fnmatch.fnmatchcase(card.name, pattern) for pattern in self.tools)
        return named or bool(set(card.tags) & set(self.tags))
