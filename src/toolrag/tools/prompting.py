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

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.agent.react.types import BaseReasoningStep, ObservationReasoningStep
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.tools import BaseTool
from pydantic import Field


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


# Context fitting (:func:`fit_to_context`): tokens kept free for the reply's template and the
# chat roles beside the model's own ``num_output``; the characters a token is counted as when
# the LLM has no tokenizer to ask (rows of JSON and ids run about 3 to a token); the fewest
# characters a tool output is cut to.
CONTEXT_MARGIN = 64
CHARS_PER_TOKEN = 3
MIN_OUTPUT_CHARS = 300
_FENCED = re.compile(re.escape(FENCE_OPEN) + r"\n(.*?)\n" + re.escape(FENCE_CLOSE), re.S)
TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """A token count for an LLM without a tokenizer to ask: one token per
    :data:`CHARS_PER_TOKEN` characters (over-counts prose, so a prompt cut by it still fits)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def token_counter(llm: LLM | None) -> TokenCounter:
    """The LLM's own token count when it has a local tokenizer (llama.cpp's model), else
    :func:`estimate_tokens`."""
    model = getattr(llm, "_model", None)
    tokenize = getattr(model, "tokenize", None)
    if not callable(tokenize):
        return estimate_tokens

    def count(text: str) -> int:
        try:
            return len(tokenize(text.encode("utf-8"), add_bos=False, special=True))
        except Exception:  # a model that cannot tokenize now: count conservatively
            return estimate_tokens(text)

    return count


def prompt_budget(llm: LLM | None) -> int | None:
    """The prompt tokens the LLM's context leaves after its reply (``num_output``) and
    :data:`CONTEXT_MARGIN`; None when the LLM does not say its context."""
    meta = getattr(llm, "metadata", None)
    window = getattr(meta, "context_window", None)
    if not isinstance(window, int) or window <= 0:
        return None
    output = getattr(meta, "num_output", 0)
    return max(window - (output if isinstance(output, int) else 0) - CONTEXT_MARGIN, 256)


def _cut(body: str, keep: int) -> str:
    if len(body) <= keep:
        return body
    return f"{body[:keep]}\n[... {len(body) - keep} characters cut to fit the model's context]"


def fit_to_context(
    messages: list[ChatMessage], budget: int, count: TokenCounter = estimate_tokens
) -> list[ChatMessage]:
    """``messages`` with their tool outputs (the fenced observations) cut so that the prompt
    fits ``budget`` tokens: every output longer than a common cap is cut to it, the cap as high
    as the budget allows (at least :data:`MIN_OUTPUT_CHARS`), so no output loses more than it
    must and the short ones stay whole. Messages within the budget come back as they are."""

    def total(msgs: list[ChatMessage]) -> int:
        return sum(count(m.content or "") + 4 for m in msgs)

    over = total(messages) - budget
    if over <= 0:
        return messages
    bodies = [len(b) for m in messages for b in _FENCED.findall(m.content or "")]
    if not bodies:
        return messages
    fitted = messages
    for _ in range(3):  # the cut is sized in characters; recount, and cut more if still over
        found = [b for m in fitted for b in _FENCED.findall(m.content or "")]
        body_tokens, chars = sum(count(b) for b in found), sum(len(b) for b in found)
        per_token = chars / max(body_tokens, 1)
        target = max(sum(bodies) - int(over * per_token * 1.1) - 64, 0)
        cap = _water_level(bodies, target)
        fitted = [_cut_outputs(m, cap) for m in messages]
        over = total(fitted) - budget
        if over <= 0 or cap <= MIN_OUTPUT_CHARS:
            break
        bodies = [min(b, cap) for b in bodies]
    return fitted


def _cut_outputs(message: ChatMessage, cap: int) -> ChatMessage:
    """The message with each fenced tool output longer than ``cap`` characters cut to it."""
    text = message.content or ""
    if FENCE_OPEN not in text:
        return message
    cut = _FENCED.sub(lambda f: f"{FENCE_OPEN}\n{_cut(f.group(1), cap)}\n{FENCE_CLOSE}", text)
    return ChatMessage(role=message.role, content=cut, additional_kwargs=message.additional_kwargs)


def _water_level(lengths: list[int], target: int) -> int:
    """The largest cap with ``sum(min(length, cap)) <= target`` (at least MIN_OUTPUT_CHARS)."""
    remaining, rest = target, sorted(lengths)
    for n, length in enumerate(rest):
        share = remaining // (len(rest) - n)
        if length > share:
            return max(share, MIN_OUTPUT_CHARS)
        remaining -= length
    return max(max(lengths, default=0), MIN_OUTPUT_CHARS)


ToolOrder = Literal["cache", "relevance"]


def listed_tools(
    tools: Sequence[BaseTool], block: Callable[[BaseTool], str], order: ToolOrder = "cache"
) -> list[tuple[BaseTool, str]]:
    """Each tool with its prompt block (``block(tool)``, built once), in the order a prompt
    lists them: ``cache``, longest block first, then by name, whatever order the search found
    them in; ``relevance``, as given.

    A model server re-reads a prompt only from the first token that differs from one it holds
    (llama.cpp's KV cache and kept states, an OpenAI-compatible server's prompt cache). Listed
    by relevance, the offered tools open the part of the prompt that changes, so every
    question reads its tools again. In one fixed order, two questions that are offered the same
    long tool (a SQL tool with its schema, a collection's search with its filters) share its
    block, and the longest ones come first because they are the dearest to read again.
    """
    pairs = [(t, block(t)) for t in tools]
    if order == "cache":
        pairs.sort(key=lambda p: (-len(p[1]), p[0].metadata.get_name()))
    return pairs


class CompactReActFormatter(ReActChatFormatter):
    """The stock ReAct formatter, with :func:`tool_description` blocks for the tools (and
    :data:`NO_TOOLS_HEADER` for the whole system prompt when none was offered), listed in
    ``tool_order`` (:func:`listed_tools`). With a ``token_budget``, tool outputs are cut so the
    prompt fits the model's context (:func:`fit_to_context`)."""

    token_budget: int | None = None
    tool_order: ToolOrder = "cache"
    count_tokens: TokenCounter = Field(default=estimate_tokens, exclude=True)

    def fit(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """``messages`` cut to the token budget (unchanged without one)."""
        if self.token_budget is None:
            return messages
        return fit_to_context(messages, self.token_budget, self.count_tokens)

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
        listed = listed_tools(tools, tool_description, self.tool_order)
        format_args = {
            "tool_desc": "\n".join(b for _, b in listed),
            "tool_names": ", ".join(t.metadata.get_name() for t, _ in listed),
        }
        if self.context:
            format_args["context"] = self.context
        history = self.step_messages(current_reasoning or [])
        system = self.system_header.format(**format_args) if tools else NO_TOOLS_HEADER
        return self.fit(
            [
                ChatMessage(role=MessageRole.SYSTEM, content=system),
                *chat_history,
                *history,
            ]
        )
