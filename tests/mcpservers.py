"""``toolrag mcp serve`` for the MCP tests: the environment of a server over the sample SQL
database and field API, a stdio server description for the client, or a streamable-HTTP server
process on a free 127.0.0.1 port, and a helper that runs one client session."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from benchmarks.mcp_load import http_server, serve_env
from toolrag.sample.field_api import running_server

from .conftest import DATA, REPO


@contextlib.contextmanager
def toolbox_env(tmp: Path, construction_sqlite: Path) -> Iterator[dict[str, Any]]:
    """A running sample field API (its database in ``tmp``) and the environment of a
    ``toolrag mcp serve`` over it and the SQL database: ``{"env", "field_db", "url", "tmp"}``.
    The toolbox is SQL + the field API (no content indexes)."""
    field_db = tmp / "field.sqlite"
    with running_server(DATA, state_path=field_db) as url:
        env = serve_env(construction_sqlite, url, tmp)
        yield {"env": env, "field_db": field_db, "url": url, "tmp": tmp}


def mcp_server(transport: str, env: dict[str, str], *extra: str) -> Iterator[Any]:
    """Yield what ``mcp.Client`` connects to: stdio parameters, or the URL of a running HTTP
    server (started here, waited for up to 180 s, stopped at the end)."""
    if transport == "stdio":
        cmd = [sys.executable, "-m", "toolrag.cli", "mcp", "serve", *extra]
        yield StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=REPO)
        return
    with http_server(env, *extra) as url:
        yield url


def run_client(server: Any, fn: Any) -> Any:
    """Open one client session on ``server`` and return ``await fn(client)``."""

    async def main() -> Any:
        async with Client(server, read_timeout_seconds=180) as client:
            return await fn(client)

    return anyio.run(main)
