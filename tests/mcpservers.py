"""``toolrag mcp serve`` for the MCP tests: a stdio server description for the client, or a
streamable-HTTP server process on a free 127.0.0.1 port, and a helper that runs one client
session."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

from .conftest import REPO


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
