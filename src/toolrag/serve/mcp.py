"""``toolrag mcp serve``: the toolbox as an MCP server (official ``mcp`` SDK, ``MCPServer``).

The tools are not Python functions registered one by one: they are the toolbox's cards, so
:class:`ToolboxMCPServer` overrides ``MCPServer.list_tools`` and ``MCPServer.call_tool`` and
keeps the SDK's transports, sessions, error handling and resources.

- ``tools/list``: the permitted tool cards with their JSON schemas and annotations derived from
  the side-effect class (``read_only_hint`` … ``open_world_hint``). With ``deferred`` only the
  pinned tools and ``search_tools`` are listed; clients find the rest by searching.
- ``tools/call``: every call goes through the toolbox's :class:`~toolrag.guard.ToolGuard`
  (profile, argument checks, approval gate, idempotency, timeout, audit). Tool failures come
  back as results with ``is_error`` and the ``ToolResult`` JSON, so a client model can act on
  them; a gated tool without an approval policy returns ``APPROVAL_DENIED``.
- ``search_tools(query, k)``: the ToolIndex over every card, for clients with many tools.
- Limits at the door, checked on the event loop before anything else looks at a request: a
  ``search_tools`` query over ``toolrag.text.MAX_QUERY_CHARS`` characters, tool-call arguments
  over the guard's ``MAX_ARGUMENT_CHARS`` characters of JSON or nested deeper than its
  ``MAX_ARGUMENT_DEPTH`` levels, and a tool name over :data:`MAX_NAME_CHARS` characters get a
  structured error (the ToolResult JSON: ``TOO_LARGE``, ``INVALID_ARGUMENT``,
  ``UNKNOWN_TOOL``); a tool call refused there is audited without its arguments. A query's
  whitespace runs are made single spaces before the index reads it.
- Searches and tool calls run in worker threads, at most ``max_concurrent_calls`` at a time
  (the rest wait without blocking the loop), so one slow call does not delay another client's
  ``tools/list``. Each tool call gets a run id of its own (``mcp:<hex>``): a keyless write's
  derived idempotency key never collides with another call's.
- Resources: ``toolrag://cards`` (the cards as JSON) and ``toolrag://sql/schema`` (the SQL
  database's tables and columns).

Over stdio nothing but protocol messages reaches stdout: logs go to stderr.
"""

from __future__ import annotations

import functools
import json
import sys
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import MCPServer

from toolrag.cards.card import ToolCard
from toolrag.guard.executor import oversized
from toolrag.text import MAX_QUERY_CHARS, squashed
from toolrag.toolbox import Toolbox
from toolrag.tools.result import ErrorCode, ToolResult

T = TypeVar("T")

#: The longest tool name the server looks up (longer ones are unknown without a search).
MAX_NAME_CHARS = 128
#: The longest result JSON a client gets (characters): longer ones have their data cut.
MAX_RESULT_CHARS = 60_000
#: Tool calls and searches running at once (each in a worker thread); the rest wait.
MAX_CONCURRENT_CALLS = 4

SEARCH_TOOL = "search_tools"
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the tool should do, in plain words."},
        "k": {"type": "integer", "description": "How many tools to return (1-20).", "default": 5},
    },
    "required": ["query"],
}
SEARCH_DESCRIPTION = (
    "Search this server's tools by what they do and return the best matches with their names, "
    "descriptions and argument schemas. Use it when no listed tool fits the task. It does not "
    "call any tool: call the one it finds by name."
)


def tool_annotations(card: ToolCard) -> types.ToolAnnotations:
    """MCP hints from the side-effect class: read tools are read-only, writes are idempotent
    (keys), deletes are destructive, external actions reach an open world."""
    effect = card.side_effect
    return types.ToolAnnotations(
        title=card.name.replace("_", " "),
        read_only_hint=effect == "read",
        destructive_hint=effect == "delete",
        idempotent_hint=effect in ("read", "write", "delete"),
        open_world_hint=effect == "external",
    )


def mcp_tool(card: ToolCard) -> types.Tool:
    schema = dict(card.parameters or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return types.Tool(
        name=card.name,
        description=card.description,
        input_schema=schema,
        annotations=tool_annotations(card),
    )


def _text_result(payload: str, error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=payload)], is_error=error
    )


def render(result: ToolResult, max_chars: int = MAX_RESULT_CHARS) -> str:
    """``result`` as its JSON, at most about ``max_chars`` characters and always valid JSON: a
    longer one has its data cut (as a string) and is flagged ``truncated``, with a suggestion."""
    text = result.render(max_chars=sys.maxsize, grouped=False)
    if len(text) <= max_chars:
        return text
    data = json.dumps(result.data, default=str, ensure_ascii=False)
    budget = max_chars - (len(text) - len(data)) - 300
    while True:  # escaping can make the cut data longer than its budget: cut again
        capped = result.model_copy(
            update={
                "data": data[: max(budget, 0)],
                "truncated": True,
                "suggestion": f"The result was {len(text):,} characters and was cut at about "
                f"{max_chars:,}: ask for less (filter, aggregate or lower the limit).",
            }
        )
        out = capped.render(max_chars=sys.maxsize, grouped=False)
        if len(out) <= max_chars or budget <= 0:
            return out
        budget -= len(out) - max_chars


def _result(result: ToolResult) -> types.CallToolResult:
    return _text_result(render(result), not result.success)


def _error_result(result: ToolResult) -> types.CallToolResult:
    return _text_result(render(result), True)


class ToolboxServer:
    """Builds the MCP ``Server`` over one toolbox.

    ``max_concurrent_calls``: how many tool calls and searches run at once, each in a worker
    thread; more wait their turn without holding up the event loop (``tools/list``, resources
    and the refusals at the door answer meanwhile)."""

    def __init__(
        self,
        toolbox: Toolbox,
        deferred: bool = False,
        max_concurrent_calls: int = MAX_CONCURRENT_CALLS,
    ) -> None:
        if max_concurrent_calls < 1:
            raise ValueError("max_concurrent_calls must be at least 1")
        self.toolbox = toolbox
        self.deferred = deferred
        self.max_concurrent_calls = max_concurrent_calls
        guard = toolbox.guard
        self.cards = {
            c.name: c for c in toolbox.cards() if guard.permitted(c.name) and not c.deprecated_by
        }
        self._listed: list[types.Tool] | None = None
        self._limiter: anyio.CapacityLimiter | None = None  # made in the server's event loop

    def listed(self) -> list[types.Tool]:
        if self._listed is None:  # the cards do not change while the server runs
            cards = list(self.cards.values())
            if self.deferred:
                cards = [c for c in cards if c.pinned]
            search = types.Tool(
                name=SEARCH_TOOL,
                description=SEARCH_DESCRIPTION,
                input_schema=SEARCH_SCHEMA,
                annotations=tool_annotations(ToolCard(name=SEARCH_TOOL)),
            )
            self._listed = [*(mcp_tool(c) for c in cards), search]
        return list(self._listed)

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread, at most ``max_concurrent_calls`` at once."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.max_concurrent_calls)
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter)

    def check_search(self, arguments: dict[str, Any]) -> ToolResult | tuple[str, int]:
        """The query (whitespace runs made single spaces) and ``k`` of a ``search_tools`` call,
        or the refusal: an empty or non-string query, one over :data:`MAX_QUERY_CHARS`, a ``k``
        outside 1-20."""
        query = arguments.get("query")
        k = arguments.get("k", 5)
        if not isinstance(query, str) or not query.strip():
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                "query must be a non-empty string.",
                suggestion="Say in plain words what the tool should do.",
            )
        if len(query) > MAX_QUERY_CHARS:
            return ToolResult.fail(
                ErrorCode.TOO_LARGE,
                f"The query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}.",
                suggestion="Describe what the tool should do in a sentence or two.",
            )
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 20:
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                "k must be an integer from 1 to 20.",
                suggestion="Call search_tools with k between 1 and 20, or without k (5).",
            )
        return squashed(query), k

    def search(self, arguments: dict[str, Any]) -> types.CallToolResult:
        """``search_tools`` (blocking: the server runs it in a worker thread)."""
        checked = self.check_search(arguments)
        if isinstance(checked, ToolResult):
            return _error_result(checked)
        return self._search(*checked)

    def _search(self, query: str, k: int) -> types.CallToolResult:
        hits = [h for h in self.toolbox.tool_index.retrieve(query, k=k * 2) if h.name in self.cards]
        found = [
            {
                "name": h.name,
                "score": round(h.score, 4),
                "description": self.cards[h.name].description,
                "input_schema": self.cards[h.name].parameters,
                "side_effect": self.cards[h.name].side_effect,
            }
            for h in hits[:k]
        ]
        return _text_result(json.dumps({"tools": found}, ensure_ascii=False), False)

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """One ``tools/call``: the checks at the door here, the work in a worker thread."""
        if arguments is not None and not isinstance(arguments, dict):
            return _error_result(
                ToolResult.fail(ErrorCode.INVALID_ARGUMENT, "arguments must be a JSON object.")
            )
        arguments = arguments or {}
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
            unknown = ToolResult.fail(
                ErrorCode.UNKNOWN_TOOL,
                f"There is no tool by that name (names are at most {MAX_NAME_CHARS} characters).",
                suggestion="Call tools/list or search_tools for the tools' names.",
            )
            return await self._refuse(str(name)[:MAX_NAME_CHARS], unknown)
        if name == SEARCH_TOOL:
            checked = self.check_search(arguments)
            if isinstance(checked, ToolResult):
                return _error_result(checked)
            return await self._in_thread(functools.partial(self._search, *checked))
        refusal = oversized(name, arguments)
        if refusal is not None:
            return await self._refuse(name, refusal)
        guard = self.toolbox.guard
        run_id = f"mcp:{uuid.uuid4().hex}"  # a call's own: derived write keys never collide
        result = await self._in_thread(
            functools.partial(guard.call, name, arguments, run_id=run_id)
        )
        return _result(result)

    async def _refuse(self, name: str, refusal: ToolResult) -> types.CallToolResult:
        """A tool call stopped at the door: audited as refused, without its arguments (they
        are what was wrong), and the refusal as an ``is_error`` result."""
        guard = self.toolbox.guard
        record = functools.partial(
            guard.refuse, name, {}, refusal, run_id=f"mcp:{uuid.uuid4().hex}"
        )
        await anyio.to_thread.run_sync(record)  # the audit writes to SQLite: not on the loop
        return _error_result(refusal)

    def read(self, uri: str) -> str:
        if uri == "toolrag://cards":
            return json.dumps([c.model_dump(mode="json") for c in self.cards.values()], indent=1)
        if uri == "toolrag://sql/schema" and self.toolbox.sql_spec is not None:
            return self.toolbox.sql_spec.schema_summary()
        raise ValueError(f"Unknown resource {uri!r}; read toolrag://cards or toolrag://sql/schema")

    def build(self) -> ToolboxMCPServer:
        server = ToolboxMCPServer(self)
        server.resource(
            "toolrag://cards",
            name="tool cards",
            description="Every tool card: name, description, parameters, side effect.",
            mime_type="application/json",
        )(lambda: self.read("toolrag://cards"))
        if self.toolbox.sql_spec is not None:
            server.resource(
                "toolrag://sql/schema",
                name="SQL schema",
                description="The SQL database's tables, columns and category values.",
                mime_type="text/plain",
            )(lambda: self.read("toolrag://sql/schema"))
        return server


class ToolboxMCPServer(MCPServer[Any]):
    """``MCPServer`` whose tools are a toolbox's cards, each call through the guard."""

    def __init__(self, tools: ToolboxServer) -> None:
        super().__init__(
            "toolrag",
            version="0.1",
            instructions="Tools of the configured collections: document and record searches, "
            "SQL and REST APIs. Delete and external actions need a person's approval.",
            log_level="WARNING",
            warn_on_duplicate_resources=False,
        )
        self.tools = tools

    async def list_tools(self) -> list[types.Tool]:
        return self.tools.listed()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> types.CallToolResult:
        return await self.tools.call(name, arguments)

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """The schema the SDK checks ``Mcp-Param-*`` headers against (none: unvalidated)."""
        card = self.tools.cards.get(name)
        return dict(card.parameters) if card is not None and card.parameters else None
