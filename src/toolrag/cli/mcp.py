"""``toolrag mcp serve``: the toolbox over MCP, on stdio (default) or streamable HTTP."""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Annotated, Any

import typer

mcp_app = typer.Typer(no_args_is_help=True, help="Serve the toolbox to MCP clients.")


def _server(deferred: bool) -> Any:
    from toolrag.cli.approval import cli_toolbox
    from toolrag.serve.mcp import ToolboxServer
    from toolrag.settings import load_settings

    toolbox = cli_toolbox(load_settings())
    server = ToolboxServer(toolbox, deferred=deferred)
    toolbox.tool_index  # noqa: B018 - embed the cards now, not on the first search
    return server.build()


@mcp_app.command("serve")
def serve(
    http: Annotated[
        int | None, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1:PORT.")
    ] = None,
    deferred: Annotated[
        bool,
        typer.Option("--deferred", help="List only pinned tools and search_tools; clients search."),
    ] = False,
) -> None:
    """Serve every permitted tool through the guard. Over stdio only protocol messages reach
    stdout; logs and progress go to stderr."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    with contextlib.redirect_stdout(sys.stderr):  # model loading must not print on stdout
        server = _server(deferred)
    if http is not None:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=http, log_level="warning")
        return
    import anyio

    anyio.run(server.run_stdio_async)
