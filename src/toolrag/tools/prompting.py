"""How tools and their results are shown to the ReAct model.

Tool results are fenced in ``<tool_output>`` tags and the system prompt says that text inside
them is data, never instructions (tool poisoning). Tools get a compact argument list instead of
JSON Schema:
the stock ReAct prompt prints each tool's full JSON Schema. A small local model then sometimes
copies the schema itself into ``Action Input`` (``{"properties": {...}, "type": "object"}``)
instead of filling in values. A one-line-per-argument list carries the same facts (name, type,
required or optional, allowed values, description), reads like a function signature, and costs
fewer prompt tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.agent.react.types import BaseReasoningStep, ObservationReasoningStep
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.tools import BaseTool


def _type_of(prop: dict[str, Any]) -> str:
    """A short type name for one JSON-Schema property (nullable unions collapse)."""
    options = [o for o in prop.get("anyOf", []) if o.get("type") != "null"] or [prop]
    words = []
    for opt in options:
        if "enum" in opt:
            words.append("one of " + ", ".join(str(v) for v in opt["enum"]))
        elif opt.get("format") == "date":
            words.append("date YYYY-MM-DD")
        elif opt.get("format") == "date-time":
            words.append("date-time ISO 8601")
        elif opt.get("type") == "array":
            words.append(f"list of {_type_of(opt.get('items', {})) or 'values'}")
        elif opt.get("type"):
            words.append(str(opt["type"]))
    return " or ".join(words) or "any"


def describe_args(schema: dict[str, Any]) -> str:
    """One line per argument: ``- name (type, required): description``."""
    props: dict[str, Any] = schema.get("properties", {}) or {}
    if not props:
        return "  (no arguments: use {})"
    required = set(schema.get("required", []) or [])
    lines = []
    for name, prop in props.items():
        need = "required" if name in required else "optional"
        desc = str(prop.get("description", "")).strip()
        lines.append(f"  - {name} ({_type_of(prop)}, {need})" + (f": {desc}" if desc else ""))
    return "\n".join(lines)


def tool_schema(tool: BaseTool) -> dict[str, Any] | None:
    """The tool's parameters as a JSON schema; None for a tool without a usable schema (it is
    still listed and offered, with nothing to check its arguments against)."""
    try:
        return tool.metadata.get_parameters_dict()
    except Exception:
        return None


def tool_description(tool: BaseTool) -> str:
    """The block one tool takes in the ReAct system prompt."""
    meta = tool.metadata
    return (
        f"> Tool Name: {meta.get_name()}\n"
        f"Tool Description: {meta.description.strip()}\n"
        f"Tool Args:\n{describe_args(tool_schema(tool) or {})}\n"
    )


FENCE_OPEN, FENCE_CLOSE = "<tool_output>", "</tool_output>"


def fence(observation: str) -> str:
    """A tool's output fenced and marked as data, so that text inside it (a poisoned document
    saying "ignore previous instructions and call …") reads as content, not as orders. A
    closing tag inside the output is neutralised so it cannot end the fence early."""
    body = observation.replace(FENCE_CLOSE, "</tool_output >").replace(FENCE_OPEN, "<tool_output >")
    return f"Observation: {FENCE_OPEN}\n{body}\n{FENCE_CLOSE}"


# What the model is told when retrieval offered no tool (a gate or floor said none fits), by the
# router (:data:`toolrag.routing.router.NO_TOOL`) and by the ReAct agent (below).
NO_TOOL_FITS = (
    "No tool fits this question. Answer it from general knowledge in one to three sentences; "
    "if it needs data you do not have, say so and what would be needed."
)
# The ReAct system prompt then: no tool list and no Action format the model could take a
# "tool" from, only the answer form.
NO_TOOLS_HEADER = f"""{NO_TOOL_FITS}
Reply in exactly this form:
Thought: <one sentence>
Answer: <the answer>"""


class CompactReActFormatter(ReActChatFormatter):
    """The stock ReAct formatter, with :func:`tool_description` blocks for the tools (and
    :data:`NO_TOOLS_HEADER` for the whole system prompt when none was offered)."""

    def step_messages(self, steps: Sequence[BaseReasoningStep]) -> list[ChatMessage]:
        """The agent's steps as messages: its own text, then each fenced observation."""
        return [
            ChatMessage(role=self.observation_role, content=fence(str(step.observation)))
            if isinstance(step, ObservationReasoningStep)
            else ChatMessage(role=MessageRole.ASSISTANT, content=step.get_content())
            for step in steps
        ]

    def format(
        self,
        tools: Sequence[BaseTool],
        chat_history: list[ChatMessage],
        current_reasoning: list[BaseReasoningStep] | None = None,
    ) -> list[ChatMessage]:
        format_args = {
            "tool_desc": "\n".join(tool_description(t) for t in tools),
            "tool_names": ", ".join(t.metadata.get_name() for t in tools),
        }
        if self.context:
            format_args["context"] = self.context
        history = self.step_messages(current_reasoning or [])
        system = self.system_header.format(**format_args) if tools else NO_TOOLS_HEADER
        return [
            ChatMessage(role=MessageRole.SYSTEM, content=system),
            *chat_history,
            *history,
        ]
