"""The compact tool blocks the ReAct prompt shows: every argument, its type and whether it is
required, and no raw JSON Schema for a small model to copy."""

from __future__ import annotations

from collections.abc import Callable

from llama_index.core.llms import ChatMessage

from toolrag import ScriptedLLM
from toolrag.agent.loop import SYSTEM_PROMPT, build_agent
from toolrag.toolbox import Toolbox
from toolrag.tools.prompting import CompactReActFormatter, describe_args, tool_description


def test_describe_args_lists_types_and_requiredness() -> None:
    schema = {
        "properties": {
            "description": {"type": "string", "description": "What the drawing shows."},
            "start_date": {
                "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
                "default": None,
            },
            "kind": {"anyOf": [{"enum": ["rfi", "bid"], "type": "string"}, {"type": "null"}]},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["description"],
        "type": "object",
    }
    text = describe_args(schema)
    assert "- description (string, required): What the drawing shows." in text
    assert "- start_date (date YYYY-MM-DD, optional)" in text
    assert "- kind (one of rfi, bid, optional)" in text
    assert "- ids (list of integer, optional)" in text
    assert describe_args({"properties": {}}).strip() == "(no arguments: use {})"


def test_agent_prompt_uses_compact_blocks(toolbox_factory: Callable[[list[str]], Toolbox]) -> None:
    tools = toolbox_factory([]).tools()
    agent = build_agent(tools, ScriptedLLM(turns=[]))
    assert isinstance(agent.formatter, CompactReActFormatter)
    system = agent.formatter.format(tools, [ChatMessage(role="user", content="hi")])[0].content
    assert SYSTEM_PROMPT.splitlines()[0] in system
    for tool in tools:
        assert tool_description(tool) in system
    assert '"properties"' not in system and '"type": "object"' not in system
    assert "project (string, required)" in system  # get_project_schedule's argument
