"""``SelfTimedTool``: a tool that enforces its own deadline, so the guard runs it as it is.

The :class:`~toolrag.guard.executor.ToolGuard` stops a tool that outlives its card's
``timeout_s`` and answers ``TIMEOUT``. A tool with a deadline of its own (an httpx timeout with
retries, SQLite's progress handler, PostgreSQL's ``statement_timeout``, the MCP client's read
timeout) knows better what went wrong: a refused connection is ``NETWORK_ERROR`` after its
retries, a query that ran too long a ``TIMEOUT`` that says how to narrow it. Built as a
``SelfTimedTool``, it runs inline under the guard, which leaves the deadline to it.
"""

from __future__ import annotations

from llama_index.core.tools import BaseTool, FunctionTool


class SelfTimedTool(FunctionTool):
    """A ``FunctionTool`` that stops itself in time: the guard runs it inline, without a
    deadline of its own."""


def is_self_timed(tool: BaseTool) -> bool:
    """Whether ``tool`` enforces its own deadline."""
    return isinstance(tool, SelfTimedTool)
