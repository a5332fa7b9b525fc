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
- Resources: ``toolrag://cards`` (the cards as JSON) and ``toolrag://sql/schema`` (the SQL
  database's tables and columns).

Over stdio nothing but protocol messages reaches stdout: logs go to stderr.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server import MCPServer

from toolrag.cards.card import ToolCard
from toolrag.toolbox import Toolbox

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


class ToolboxServer:
    """Builds the MCP ``Server`` over one toolbox."""

    def __init__(self, toolbox: Toolbox, deferred: bool = False) -> None:
        self.toolbox = toolbox
        self.deferred = deferred
        guard = toolbox.guard
        self.cards = {
            c.name: c for c in toolbox.cards() if guard.permitted(c.name) and not c.deprecated_by
        }
        self.session = 0

    def listed(self) -> list[types.Tool]:
        cards = list(self.cards.values())
        if self.deferred:
            cards = [c for c in cards if c.pinned]
        search = types.Tool(
            name=SEARCH_TOOL,
            description=SEARCH_DESCRIPTION,
            input_schema=SEARCH_SCHEMA,
            annotations=tool_annotations(ToolCard(name=SEARCH_TOOL)),
        )
        return [*(mcp_tool(c) for c in cards), search]

    def search(self, arguments: dict[str, Any]) -> types.CallToolResult:
        query = arguments.get("query")
        k = arguments.get("k", 5)
        if not isinstance(query, str) or not query.strip():
            return _text_result('{"error": "query must be a non-empty string"}', True)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 20:
            return _text_result('{"error": "k must be an integer from 1 to 20"}', True)
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
        if name == SEARCH_TOOL:
            return self.search(arguments or {})
        if arguments is not None and not isinstance(arguments, dict):
            return _text_result('{"error": "arguments must be a JSON object"}', True)
        result = await self.toolbox.guard.acall(name, arguments or {}, run_id="mcp")
        return _text_result(result.render(max_chars=60_000, grouped=False), not result.success)

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
            instructions="Construction project tools: documents, schedules, SQL and the field "
            "API. Delete and external actions need a person's approval.",
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
