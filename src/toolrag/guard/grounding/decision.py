"""A planned set of tool calls: what the router's model returns, and what grounding checks.

It lives below the router (in the guard's grounding) because the agent's own calls are checked
as one-call decisions too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Action = Literal["call_tools", "answer_directly", "ask_clarification"]


class ToolCallSpec(BaseModel):
    """One tool call: the tool's exact name and its arguments as a JSON object."""

    tool: str = Field(description="Exact name of one of the offered tools.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")


class RouteDecision(BaseModel):
    """The model's routing decision for one question."""

    action: Action = Field(
        description="call_tools when tools can answer; answer_directly when no tool is needed; "
        "ask_clarification when the question is too vague to act on."
    )
    calls: list[ToolCallSpec] = Field(
        default_factory=list, description="With call_tools: every call the question needs."
    )
    message: str = Field(
        "", description="With answer_directly: the answer. With ask_clarification: the question."
    )
