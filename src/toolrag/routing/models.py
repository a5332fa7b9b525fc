"""The router's typed output: what the model must return, and what the router hands back."""

from __future__ import annotations

from pydantic import BaseModel, Field

from toolrag.guard.grounding.decision import Action, RouteDecision, ToolCallSpec
from toolrag.tools.result import ToolResult

__all__ = ["Action", "RouteDecision", "RouteResult", "ToolCallSpec"]


class RouteResult(BaseModel):
    """A decision after validation (and at most one repair round), and the calls' results."""

    question: str
    id: str = Field("", description="The decision's id in the decision log (for ratings).")
    decision: RouteDecision | None = None
    valid: bool = False
    errors: list[str] = Field(default_factory=list, description="Left after the repair round.")
    repaired: bool = False
    grounded: list[str] = Field(
        default_factory=list,
        description="Arguments changed to keep them grounded in the question: an id put back "
        "from the question in place of a same-shaped one the model copied from elsewhere "
        "(tool.argument: old -> new), or an optional argument left out after the repair round.",
    )
    examples: list[str] = Field(default_factory=list, description="Ids of the few-shot examples.")
    example_questions: list[str] = Field(
        default_factory=list, description="The few-shot examples' questions, as shown."
    )
    tools_offered: list[str] = Field(default_factory=list)
    tools_searched: str | None = Field(
        None,
        description="The English the tools were searched with, when the question was "
        "translated for the tool search (written mostly outside the English alphabet).",
    )
    results: list[ToolResult] = Field(default_factory=list)
    raw: list[str] = Field(default_factory=list, description="The model's replies.")
    prompt: str = Field(
        "", exclude=True, description="The last prompt the model answered (its reply: raw[-1])."
    )
    prompt_tokens: int = Field(0, description="Prompt tokens the model read (when reported).")
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = Field(
        None,
        description="Prompt tokens the model took from its prompt cache (when reported: the "
        "local model, OpenAI, vLLM, llama.cpp's server).",
    )
    seconds: float = Field(
        0.0,
        description="Seconds the decision took: choosing the examples, the model's replies and "
        "their checks (not the calls).",
    )

    @property
    def tools_called(self) -> list[str]:
        return [c.tool for c in self.decision.calls] if self.decision else []
