"""Tools from MCP servers, as registry members like any other tool.

``toolspecs/mcp.yaml`` names the servers, each by a command (stdio) or a URL (streamable HTTP):

    servers:
      - name: time
        command: [python, -m, mcp_server_time, --local-timezone, UTC]
      - name: git
        command: [python, -m, mcp_server_git, --repository, /path/to/repo]
        side_effects: {git_commit: write}      # overrides the server's own annotations

Their tools are loaded through ``llama-index-tools-mcp`` (``BasicMCPClient`` + ``McpToolSpec``),
become cards whose side-effect class comes from the config or else from the tool's MCP
annotations (read-only: ``read``; destructive: ``delete``; open world: ``external``; otherwise
``write``; missing hints take the MCP defaults, so an unannotated tool counts as destructive
and waits for approval), are indexed, and are called through the guard like any other tool.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.tools import FunctionTool
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from pydantic import BaseModel, Field, ValidationError, model_validator

from toolrag.cards.card import ToolCard
from toolrag.errors import ConfigError
from toolrag.tools.result import ErrorCode, Source, ToolResult
from toolrag.tools.self_timed import SelfTimedTool
from toolrag.types import SideEffect


class MCPServerConfig(BaseModel):
    """One MCP server: a command to start over stdio, or a streamable HTTP URL."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,40}$")
    command: list[str] | None = Field(None, description="Executable and arguments (stdio).")
    url: str | None = Field(None, description="Streamable HTTP endpoint, e.g. .../mcp.")
    env: dict[str, str] = Field(default_factory=dict)
    tools: list[str] | None = Field(None, description="Allow-list of tool names (None: all).")
    side_effects: dict[str, SideEffect] = Field(
        default_factory=dict, description="Side-effect class per tool, over its annotations."
    )
    timeout_s: float = Field(30.0, gt=0, le=600)

    @model_validator(mode="after")
    def _one_transport(self) -> MCPServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("give exactly one of command (stdio) or url (HTTP)")
        return self


def load_mcp_configs(path: Path) -> list[MCPServerConfig]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
        return [MCPServerConfig.model_validate(s) for s in raw.get("servers") or []]
    except (OSError, yaml.YAMLError, ValidationError, AttributeError) as exc:
        raise ConfigError(
            f"The MCP server list {path} is invalid: {str(exc).splitlines()[0]}",
            hint="Each entry needs a name and a command (list) or a url.",
        ) from exc


def side_effect_from_annotations(annotations: Any) -> SideEffect:
    """MCP hints to a side-effect class, with the MCP defaults for missing hints
    (read_only false, destructive true, open_world true)."""

    def hint(name: str, default: bool) -> bool:
        value = getattr(annotations, name, None) if annotations is not None else None
        return default if value is None else bool(value)

    if hint("read_only_hint", False):
        return "read"
    if hint("destructive_hint", True):
        return "delete"
    if hint("open_world_hint", True):
        return "external"
    return "write"


class MCPSource:
    """The tools of one MCP server, with their cards."""

    def __init__(self, config: MCPServerConfig) -> None:
        self.config = config
        if config.url:
            self.client = BasicMCPClient(config.url, timeout=int(config.timeout_s))
        else:
            command = list(config.command or [])
            exe = sys.executable if command[0] in ("python", "python3") else command[0]
            if shutil.which(exe) is None and not Path(exe).is_file():
                raise ConfigError(
                    f"The MCP server {config.name!r} command {exe!r} is not installed.",
                    hint="Install it, or fix the command in toolspecs/mcp.yaml.",
                )
            self.client = BasicMCPClient(
                exe, args=command[1:], env=config.env or None, timeout=int(config.timeout_s)
            )

    async def aload(self) -> tuple[list[FunctionTool], list[ToolCard]]:
        listed = {t.name: t for t in (await self.client.list_tools()).tools}
        spec = McpToolSpec(self.client, allowed_tools=self.config.tools)
        tools = [self._enveloped(t) for t in await spec.to_tool_list_async()]
        cards = []
        for tool in tools:
            name = tool.metadata.get_name()
            mcp_tool = listed.get(name)
            effect = self.config.side_effects.get(name) or side_effect_from_annotations(
                getattr(mcp_tool, "annotations", None)
            )
            cards.append(
                ToolCard(
                    name=name,
                    description=(mcp_tool.description if mcp_tool else None) or "",
                    parameters=dict(mcp_tool.input_schema) if mcp_tool else {},
                    side_effect=effect,
                    tags=[f"mcp:{self.config.name}"],
                    timeout_s=self.config.timeout_s,
                )
            )
        return tools, cards

    def _enveloped(self, tool: FunctionTool) -> FunctionTool:
        """The MCP tool returning the ToolResult envelope: text or structured content as data,
        ``is_error`` as a failure, a dead server as ``NETWORK_ERROR``."""
        name, server = tool.metadata.get_name(), self.config.name

        async def call(**kwargs: Any) -> ToolResult:
            try:
                output = await tool.acall(**kwargs)
            except Exception as exc:  # the server died or the transport broke
                return ToolResult.fail(
                    ErrorCode.NETWORK_ERROR,
                    f"The MCP server {server!r} did not answer: {type(exc).__name__}: {exc}"[:400],
                    suggestion="Try again shortly, or use another tool.",
                )
            raw = output.raw_output
            content = getattr(raw, "content", None) or []
            text = "\n".join(str(getattr(c, "text", "")) for c in content if hasattr(c, "text"))
            if getattr(raw, "is_error", False) or output.is_error:
                return ToolResult.fail(
                    ErrorCode.QUERY_ERROR,
                    (text or str(output.content))[:2000],
                    suggestion="Fix the arguments as the message says, then call it again.",
                )
            data = getattr(raw, "structured_content", None) or text or str(output.content)
            return ToolResult.ok(data, sources=[Source(file=f"mcp:{server}", locator=name)])

        # the MCP client's read timeout (``timeout_s``) bounds each call
        return SelfTimedTool(async_fn=call, metadata=tool.metadata)
