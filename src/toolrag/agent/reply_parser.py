"""Reading a small model's ReAct replies: LlamaIndex's parser, plus two shapes a small model
writes that the stock parser reads wrong or not at all.

- **An answer, then an action** ("Answer: $971,350.\\nAction: search_documents\\nAction Input:
  {...}") or a made-up observation: the stock parser returns everything after ``Answer:`` as
  the answer, the action lines included, and the user reads them. Here the answer ends where
  the first ReAct line after it (``Action:``, ``Action Input:``, ``Observation:``,
  ``Thought:``) begins; the run's checks (figures no result shows, a part of the question no
  tool was called for) still apply to it. An answer with no ``Thought:`` before it is read too.
- **The call on the Action line** ("Action: run_sql({\\"sql\\": \\"SELECT ...\\"})", or
  ``Action: run_sql {"sql": ...}``), with no ``Action Input:`` line: the stock parser cannot
  read it, and the model, asked again, writes the same line until the iteration cap. Here the
  name and the JSON object after it are the action and its input.

Everything else goes to the stock parser, unchanged. Replies are bounded by the model's output
tokens; every search here is a single forward scan (no nested quantifiers).
"""

from __future__ import annotations

import json
import re
from typing import Any

from llama_index.core.agent.react.output_parser import ReActOutputParser
from llama_index.core.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ResponseReasoningStep,
)

_ANSWER = re.compile(r"Answer:")
_THOUGHT = re.compile(r"Thought:")
# a ReAct line (at a line's start) that ends an answer written before it; an answer line too:
# "Thought: ... Answer: A-101.\nAnswer: A-101" (an answer in the thought's line, then the
# answer line the step grammar asks for) is one answer, not two
_NEXT_STEP = re.compile(r"^[ \t]*(?:Action|Action Input|Observation|Thought|Answer)[ \t]*:", re.M)
_ACTION_LINE = re.compile(r"^[ \t]*Action[ \t]*:[ \t]*", re.M)
_ACTION_INPUT = re.compile(r"^[ \t]*Action Input[ \t]*:", re.M)
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (json first, then dirtyjson's lenient reading, as the
    stock parser does); None when there is none."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        import dirtyjson  # the stock parser's lenient JSON reader

        end = text.rfind("}")
        try:
            value = dirtyjson.loads(text[start : end + 1]) if end > start else None
        except Exception:
            return None
    return dict(value) if isinstance(value, dict) else None


def _thought(output: str, end: int) -> str:
    """The text after ``Thought:`` and before ``end`` (the answer or the action), stripped."""
    match = _THOUGHT.search(output, 0, end)
    return output[match.end() : end].strip() if match else ""


def _inline_call(output: str, action: re.Match[str]) -> ActionReasoningStep | None:
    """``Action: name({...})`` or ``Action: name {...}``: the action and its JSON input; None
    when the line after ``Action:`` is not a name followed by a JSON object."""
    name = _NAME.match(output, action.end())
    if name is None:
        return None
    rest = output[name.end() :].lstrip()
    if rest.startswith("("):
        rest = rest[1:].lstrip()
    if not rest.startswith("{"):
        return None
    arguments = _json_object(rest)
    if arguments is None:
        return None
    return ActionReasoningStep(
        thought=_thought(output, action.start()) or "(Implicit) I need a tool.",
        action=name.group(0),
        action_input=arguments,
    )


class ReActReplyParser(ReActOutputParser):
    """LlamaIndex's ReAct parser, reading an answer written before an action as the answer
    alone, and a call written on the Action line as the action (see the module docstring)."""

    def parse(self, output: str, is_streaming: bool = False) -> BaseReasoningStep:
        answer = _ANSWER.search(output)
        action = _ACTION_LINE.search(output)
        if answer is not None and (action is None or answer.start() < action.start()):
            end = _NEXT_STEP.search(output, answer.end())
            text = output[answer.end() : end.start() if end else len(output)].strip()
            if text:
                return ResponseReasoningStep(
                    thought=_thought(output, answer.start()),
                    response=text,
                    is_streaming=is_streaming,
                )
        if action is not None and _ACTION_INPUT.search(output, action.end()) is None:
            step = _inline_call(output, action)
            if step is not None:
                return step
        return super().parse(output, is_streaming)


__all__ = ["ReActReplyParser"]
