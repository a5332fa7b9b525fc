"""``toolrag mcp serve`` under hostile load: does one client's slow input hold up another's
``tools/list``?

A server over streamable HTTP (SQL + field API toolbox, no content indexes), reached with the
official ``mcp`` client. One client fires the inputs an attacker simulation found slow
(:data:`SLOW`: ``search_tools`` with 800 spaces between two sentences, a 3 MB query, 64 KB of
``"a."`` to ``run_sql`` and to a REST tool, the same just under the argument limit, deeply
nested arguments, SQL memory bombs, an 8 KB tool name), one by one and then all at once (the
slow ones twice), then a 5 MB query over the transport's body limit. Meanwhile another client
calls ``tools/list`` every 0.1 s, each call timed from when it was due.

Reported: the lister's p50/p95/max latency with no attacker (the baseline, same server, same
run) and under the attack, their ratio, the slowest inputs, and whether each input got the
structured outcome it should (``outcomes_wrong`` must be empty).

    .venv/bin/python -m benchmarks.mcp_load [--idle-s 10]

``tests/integration/test_mcp_load.py`` runs the same attack and checks the outcomes (not the
timings); the figures live here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, MCPError

from benchmarks.results import result_name, write_result
from toolrag.guard import MAX_ARGUMENT_CHARS
from toolrag.sample import running_server
from toolrag.tools.sql import build_sqlite

ROOT = Path(__file__).resolve().parents[1]
SPACES = "Find the open RFIs on GRB-101." + " " * 800 + "Then list the weather delays there."
A_DOTS = "a." * 32_768  # 64 KB
A_DOTS_UNDER = "a." * ((MAX_ARGUMENT_CHARS - 100) // 2)  # just under the argument limit
LIST_EVERY_S = 0.1


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


#: (label, tool, arguments, the error codes it may get: None for a success)
SLOW: list[tuple[str, str, dict[str, Any], set[str | None]]] = [
    ("search-800-spaces", "search_tools", {"query": SPACES, "k": 3}, {None}),
    ("search-3mb", "search_tools", {"query": "a. " * 1_000_000}, {"TOO_LARGE"}),
    ("sql-64kb-a-dots", "run_sql", {"sql": A_DOTS}, {"TOO_LARGE"}),
    ("rest-64kb-a-dots", "list_rfis", {"project": A_DOTS}, {"TOO_LARGE"}),
    ("sql-a-dots-under-limit", "run_sql", {"sql": A_DOTS_UNDER}, {"QUERY_ERROR", "TOO_LARGE"}),
    ("rest-a-dots-under-limit", "list_rfis", {"project": A_DOTS_UNDER}, {"NOT_FOUND"}),
    ("rest-800-spaces", "list_rfis", {"project": SPACES}, {"NOT_FOUND"}),
    ("nested-64", "run_sql", {"sql": nested(64)}, {"TOO_LARGE"}),
    ("nested-wide", "list_rfis", {"project": [[i] for i in range(30_000)]}, {"TOO_LARGE"}),
    ("unknown-extra-args", "run_sql", {"sql": "SELECT 1 AS one", "zzz": "a." * 4_000},
     {"INVALID_ARGUMENT"}),
    ("sql-printf-bomb", "run_sql", {"sql": "SELECT printf('%.*c', 200000000, 'x') AS s"},
     {"TOO_LARGE", "FORBIDDEN"}),
    # the string stops at the database's length limit (or the query at its deadline)
    ("sql-cte-doubling", "run_sql", {"sql": "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL "
     "SELECT s || s, n + 1 FROM t WHERE n < 40) SELECT length(s) FROM t"},
     {"TOO_LARGE", "TIMEOUT"}),
    ("sql-scope-bypass", "run_sql", {"sql": "SELECT * FROM sqlite_master WHERE EXISTS (WITH "
     "sqlite_master AS (SELECT 1) SELECT 1 FROM sqlite_master)"}, {"FORBIDDEN"}),
    # over HTTP the name also travels as the Mcp-Name header: 8 KB (the megabyte one: stdio)
    ("long-name", "x" * 8_000, {}, {"UNKNOWN_TOOL"}),
]  # fmt: skip


def outcome(result: Any) -> str | None:
    """The ToolResult error code of a call's result (None for a success), or a description of
    what was wrong with it: an error result must be a ToolResult's JSON, with its code."""
    import json

    try:
        payload = json.loads(result.content[0].text)
    except (ValueError, IndexError, AttributeError) as exc:
        return f"not a ToolResult: {exc}"
    if not result.is_error:
        return None if payload.get("success", True) is not False else "success=false, no error"
    if payload.get("success") is not False or not payload.get("error_code"):
        return f"error without a code: {str(payload)[:200]}"
    return str(payload["error_code"])


@dataclass
class Attack:
    """What one run of :func:`attack` saw."""

    latencies: list[float] = field(default_factory=list)  # the lister's, from when each was due
    outcomes: dict[str, list[str | None]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # the slowest call of each input
    over_body_limit: str | None = None  # the 5 MB query: a JSON-RPC error is expected

    def wrong(self) -> dict[str, list[str | None] | None]:
        """The inputs that did not get one of their expected outcomes, with what they got."""
        return {
            label: self.outcomes.get(label)
            for label, _, _, codes in SLOW
            if not self.outcomes.get(label) or not set(self.outcomes[label]) <= codes
        }


async def _lister(url: str, done: anyio.Event, latencies: list[float]) -> None:
    """``tools/list`` due every 0.1 s, each timed from when it was due. One at a time; one that
    answers late stands for every request due while it waited, each with its own wait (so a
    5 s stall counts 50 times, as 50 clients' requests would, not once)."""
    async with Client(url, read_timeout_seconds=180) as client:
        await client.list_tools()
        due = time.perf_counter()
        while not done.is_set():
            tools = (await client.list_tools()).tools
            if not any(t.name == "search_tools" for t in tools):
                raise AssertionError(f"tools/list lost search_tools: {[t.name for t in tools]}")
            answered = time.perf_counter()
            latencies.append(answered - due)
            due += LIST_EVERY_S
            while due < answered:
                latencies.append(answered - due)
                due += LIST_EVERY_S
            await anyio.sleep(due - time.perf_counter())


def attack(url: str) -> Attack:
    """Fire :data:`SLOW` at the server at ``url`` while another client lists its tools."""
    seen = Attack()

    async def fire(client: Client, label: str, tool: str, arguments: dict[str, Any]) -> None:
        started = time.perf_counter()
        code: str | None
        try:
            code = outcome(await client.call_tool(tool, arguments))
        except (ValueError, MCPError) as exc:
            code = f"{type(exc).__name__}: {str(exc)[:200]}"
        seen.seconds[label] = max(seen.seconds.get(label, 0.0), time.perf_counter() - started)
        seen.outcomes.setdefault(label, []).append(code)

    async def attacker(done: anyio.Event) -> None:
        async with Client(url, read_timeout_seconds=180) as client:
            for label, tool, arguments, _ in SLOW:  # one by one
                await fire(client, label, tool, arguments)
            async with anyio.create_task_group() as tg:  # then all at once, the slow ones twice
                for label, tool, arguments, _ in [*SLOW, *SLOW[:8]]:
                    tg.start_soon(fire, client, label, tool, arguments)
        async with Client(url, read_timeout_seconds=180) as client:
            # 5 MB is over the HTTP transport's 4 MiB body limit: a JSON-RPC error, not a hang
            started = time.perf_counter()
            try:
                result = await client.call_tool("search_tools", {"query": "a. " * 1_700_000})
                seen.over_body_limit = f"answered: {outcome(result)}"
            except MCPError as exc:
                seen.over_body_limit = f"MCPError: {str(exc)[:200]}"
            seen.seconds["search-5mb-http"] = time.perf_counter() - started
            await anyio.sleep(1.0)  # the lister keeps measuring a moment after the last input
        done.set()

    async def main() -> None:
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_lister, url, done, seen.latencies)
            tg.start_soon(attacker, done)

    anyio.run(main)
    return seen


def idle(url: str, seconds: float) -> list[float]:
    """The lister's latencies over ``seconds`` with nobody else calling: the baseline."""
    latencies: list[float] = []

    async def main() -> None:
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_lister, url, done, latencies)
            await anyio.sleep(seconds)
            done.set()

    anyio.run(main)
    return latencies


def summary(latencies: list[float]) -> dict[str, float | int]:
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) >= 20 else max(latencies)
    return {
        "calls": len(latencies),
        "p50_s": round(statistics.median(latencies), 4),
        "p95_s": round(p95, 4),
        "max_s": round(max(latencies), 4),
    }


def serve_env(database: Path, field_api_url: str, tmp: Path) -> dict[str, str]:
    """The environment of a ``toolrag mcp serve`` over ``database`` (SQLite) and the field API
    at ``field_api_url``, its indexes and state in ``tmp``, no content indexes."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")} | {
        "TOOLRAG_COLLECTIONS_FILE": str(tmp / "no-collections.yaml"),
        "TOOLRAG_DATABASE_URL": f"sqlite:///{database}",
        "TOOLRAG_FIELD_API_URL": field_api_url,
        "TOOLRAG_INDEX_DIR": str(tmp / "indexes"),
        "TOOLRAG_STATE_DIR": str(tmp / "state"),
        "TOOLRAG_TOOLSPECS_DIR": str(ROOT / "toolspecs"),
        "TOOLRAG_DATA_DIR": str(ROOT / "data"),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_server(env: dict[str, str], *extra: str) -> Iterator[str]:
    """A ``toolrag mcp serve --http`` process on a free 127.0.0.1 port: its URL (waited for up
    to 180 s; stopped at the end)."""
    port = _free_port()
    cmd = [sys.executable, "-m", "toolrag.cli", "mcp", "serve", *extra, "--http", str(port)]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    error = proc.stderr.read().decode() if proc.stderr else ""
                    raise RuntimeError(f"toolrag mcp serve did not start: {error}") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idle-s", type=float, default=10.0, help="baseline listing time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "construction.sqlite"
        build_sqlite(ROOT / "data" / "db" / "seed.sql", db)
        with (
            running_server(ROOT / "data", state_path=tmp / "field.sqlite") as field_url,
            http_server(serve_env(db, field_url, tmp)) as url,
        ):
            baseline = idle(url, args.idle_s)
            seen = attack(url)
    base, loaded = summary(baseline), summary(seen.latencies)
    slowest = sorted(seen.seconds.items(), key=lambda kv: -kv[1])[:5]
    figures = {
        "transport": "streamable-http",
        "inputs": len(SLOW),
        "tools_list_idle": base,
        "tools_list_under_attack": loaded,
        "p95_ratio": round(float(loaded["p95_s"]) / float(base["p95_s"]), 2),
        "slowest_inputs_s": {k: round(v, 3) for k, v in slowest},
        "outcomes_wrong": seen.wrong(),
        "over_body_limit": seen.over_body_limit,
    }
    write_result(result_name("mcp_load", idle_s=args.idle_s if args.idle_s != 10.0 else 0), figures)
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
