"""The ReAct prompt is laid out for prompt caches: what every question shares (the rules and
the reply format) comes first and byte-identical; the retrieved tools and the question last."""

from __future__ import annotations

from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.tools import FunctionTool

from toolrag import ScriptedLLM
from toolrag.agent.loop import SYSTEM_PROMPT, build_agent, cached_tokens


def search_documents(query: str) -> str:
    """Search the project documents. Args: query: what to look for."""
    return query


def get_project_schedule(project: str) -> str:
    """A project's schedule. Args: project: the project code."""
    return project


def list_inspections(project: str) -> str:
    """A project's inspections. Args: project: the project code."""
    return project


def common_prefix(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a[:n]


def prompt(tools: list, question: str) -> str:
    agent = build_agent(tools, ScriptedLLM(turns=[]))
    messages = agent.formatter.format(tools, [ChatMessage(role=MessageRole.USER, content=question)])
    return "".join(f"<{m.role.value}>{m.content}" for m in messages)


def test_two_questions_share_a_prefix_holding_the_instructions() -> None:
    a = prompt([FunctionTool.from_defaults(search_documents)], "What is the LD rate?")
    b = prompt(
        [
            FunctionTool.from_defaults(get_project_schedule),
            FunctionTool.from_defaults(list_inspections),
        ],
        "When does GRB-107 finish?",
    )
    shared = common_prefix(a, b)
    assert SYSTEM_PROMPT in shared  # the rules
    assert "## Output Format" in shared and "Answer: [your answer here" in shared
    assert "## Tools\n\nYou have access to the following tools:" in shared
    for name in ("search_documents", "get_project_schedule", "list_inspections"):
        assert name not in shared  # the retrieved tools come after the shared part
    assert a.index("search_documents") < a.index("What is the LD rate?")  # the question last


def test_cached_prompt_tokens_are_read_where_the_server_reports_them() -> None:
    openai = {"usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 768}}}
    llama_cpp = {"usage": {"prompt_tokens": 900}, "timings": {"cache_n": 640}}
    assert cached_tokens(openai) == 768 and cached_tokens(llama_cpp) == 640
    assert cached_tokens({"usage": {"prompt_tokens": 900}}) is None  # llama-cpp-python's server
