"""``toolrag mcp serve`` for the MCP tests: the environment of a server over the sample SQL
database and field API, a stdio server description for the client, or a streamable-HTTP server
process on a free 127.0.0.1 port, and a helper that runs one client session."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

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


def serve_env(database: Path, field_api_url: str, tmp: Path) -> dict[str, str]:
    """The environment of a ``toolrag mcp serve`` over ``database`` (SQLite) and the field API
    at ``field_api_url``, its indexes and state in ``tmp``, no content indexes."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")} | {
        "TOOLRAG_CONTENT_TYPES": "[]",
        "TOOLRAG_DATABASE_URL": f"sqlite:///{database}",
        "TOOLRAG_FIELD_API_URL": field_api_url,
        "TOOLRAG_INDEX_DIR": str(tmp / "indexes"),
        "TOOLRAG_STATE_DIR": str(tmp / "state"),
        "TOOLRAG_TOOLSPECS_DIR": str(REPO / "toolspecs"),
        "TOOLRAG_DATA_DIR": str(DATA),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mcp_server(transport: str, env: dict[str, str], *extra: str) -> Iterator[Any]:
    """Yield what ``mcp.Client`` connects to: stdio parameters, or the URL of a running HTTP
    server (started here, waited for up to 180 s, stopped at the end)."""
    cmd = [sys.executable, "-m", "toolrag.cli", "mcp", "serve", *extra]
    if transport == "stdio":
        yield StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=REPO)
        return
    port = free_port()
    proc = subprocess.Popen([*cmd, "--http", str(port)], env=env, cwd=REPO, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.HTTPError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.5)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def run_client(server: Any, fn: Any) -> Any:
    """Open one client session on ``server`` and return ``await fn(client)``."""

    async def main() -> Any:
        async with Client(server, read_timeout_seconds=180) as client:
            return await fn(client)

    return anyio.run(main)
