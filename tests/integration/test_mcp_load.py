"""``toolrag mcp serve`` under hostile load (issue 52), with the official ``mcp`` client.

One client fires the inputs an attacker simulation found slow (``benchmarks.mcp_load.SLOW``:
``search_tools`` with 800 spaces between two sentences, a 3 MB and a 5 MB query, 64 KB of
``"a."`` to ``run_sql`` and to a REST tool, the same just under the argument limit, deeply
nested arguments, SQL memory bombs, a long tool name), one by one and then several at once,
while another client calls ``tools/list`` every 0.1 s over streamable HTTP: every slow input
gets a structured error or result, the lister keeps getting answers, and the server answers
afterwards. In process, calls that block their worker thread leave ``tools/list`` and the
refusals at the door answering, and no more than ``max_concurrent_calls`` run at once. Plus:
keyless writes from separate calls are separate writes (each MCP call has a run id of its
own), a keyed pair replays.

The latencies are figures, not assertions: ``python -m benchmarks.mcp_load`` measures the
lister's p95 with and without the attack (``benchmarks/results/mcp_load.json``). On the 2-core
dev machine it was 51.4 s at 4ec28b5, before the fixes of issue 52, and 0.42 s after.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from benchmarks.mcp_load import SPACES, attack, outcome
from toolrag import Settings, Toolbox
from toolrag.guard.executor import MAX_ARGUMENT_CHARS
from toolrag.serve.mcp import ToolboxServer
from toolrag.text import MAX_QUERY_CHARS
from toolrag.tools import ToolResult

from ..mcpservers import mcp_server, run_client, toolbox_env


@pytest.fixture(scope="module")
def mcp_env(
    tmp_path_factory: pytest.TempPathFactory, construction_sqlite: Path
) -> Iterator[dict[str, Any]]:
    with toolbox_env(tmp_path_factory.mktemp("mcp-load"), construction_sqlite) as env:
        yield env


@pytest.fixture(scope="module")
def http_url(mcp_env: dict[str, Any]) -> Iterator[str]:
    yield from mcp_server("http", mcp_env["env"])


def _payload(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


def _code(result: Any) -> str | None:
    """The ToolResult error code of a call's result (None for a success). Either way the
    result is JSON: an error the ToolResult's, with its code."""
    code = outcome(result)
    assert code is None or code.isupper(), code  # a code, not a description of a bad result
    return code


def test_slow_inputs_get_structured_outcomes_while_another_client_lists(http_url: str) -> None:
    seen = attack(http_url)
    assert not seen.wrong(), seen.wrong()
    assert seen.over_body_limit is not None and seen.over_body_limit.startswith("MCPError")
    assert len(seen.latencies) >= 10  # the lister was answered all along, not once at the end

    async def afterwards(client: Client) -> Any:
        listed = (await client.list_tools()).tools
        return listed, await client.call_tool("run_sql", {"sql": "SELECT 1 AS one"})

    listed, good = run_client(http_url, afterwards)
    assert any(t.name == "search_tools" for t in listed)
    assert not good.is_error and _payload(good)["data"]["rows"] == [[1]]


def test_calls_blocked_in_their_threads_hold_up_neither_listing_nor_the_door(
    mcp_env: dict[str, Any], construction_sqlite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three ``run_sql`` calls whose work blocks until the test lets it go, on a server that
    runs two at once: while they are held, ``tools/list``, an oversized call (refused at the
    door) and the ``tools://cards`` resource all answer, and at no time do more than two run.
    Order, not timing, is checked: on a server that ran calls on its event loop, nothing
    would answer before the release."""
    monkeypatch.setenv("TOOLRAG_FIELD_API_URL", mcp_env["url"])
    toolbox = Toolbox(
        Settings(
            collections_file=mcp_env["tmp"] / "no-collections.yaml",
            database_url=f"sqlite:///{construction_sqlite}",
            index_dir=mcp_env["tmp"] / "indexes-inproc",
            state_dir=mcp_env["tmp"] / "state-inproc",
            llm_provider="scripted",
        )
    )
    release = threading.Event()
    lock = threading.Lock()
    running = {"now": 0, "most": 0, "entered": 0}
    entered = threading.Semaphore(0)

    def held(name: str, arguments: dict[str, Any], **_: Any) -> ToolResult:
        with lock:
            running["now"] += 1
            running["entered"] += 1
            running["most"] = max(running["most"], running["now"])
        entered.release()
        released = release.wait(120)  # a deadline only a server that never lets go would hit
        with lock:
            running["now"] -= 1
        return ToolResult.ok({"released": released})

    monkeypatch.setattr(toolbox.guard, "call", held)
    server = ToolboxServer(toolbox, max_concurrent_calls=2)
    order: list[str] = []

    async def main() -> None:
        async with Client(server.build(), read_timeout_seconds=180) as client:
            results: list[Any] = []

            async def call(i: int) -> None:
                results.append(await client.call_tool("run_sql", {"sql": f"SELECT {i}"}))
                order.append("call answered")

            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(call, i)
                for _ in range(2):  # two calls are in their threads, held
                    assert await anyio.to_thread.run_sync(entered.acquire, True, 120)
                listed = (await client.list_tools()).tools
                order.append("listed")
                refused = await client.call_tool("run_sql", {"sql": "a" * MAX_ARGUMENT_CHARS})
                order.append("refused")
                cards = await client.read_resource("toolrag://cards")
                order.append("resource read")
                with lock:
                    held_now, entered_now = running["now"], running["entered"]
                release.set()
            assert any(t.name == "run_sql" for t in listed)
            assert _code(refused) == "TOO_LARGE"
            assert json.loads(cards.contents[0].text)  # type: ignore[union-attr]
            assert (held_now, entered_now) == (2, 2)  # the third waited for a free thread
            assert [json.loads(r.content[0].text)["data"] for r in results] == [
                {"released": True}
            ] * 3

    anyio.run(main)
    assert order[:3] == ["listed", "refused", "resource read"], order
    assert order[3:] == ["call answered"] * 3
    assert running["most"] == 2


def test_megabytes_over_stdio_are_refused_at_once(mcp_env: dict[str, Any]) -> None:
    """stdio has no body limit: a 5 MB query, a 5 MB argument and a megabyte tool name reach
    the server, which refuses each by its size, at once, and then answers a real search."""

    async def go(client: Client) -> Any:
        out = []
        for tool, arguments in [
            ("search_tools", {"query": "a. " * 1_700_000}),
            ("list_rfis", {"project": "a." * 2_500_000}),
            ("x" * 1_000_000, {}),
        ]:
            out.append(await client.call_tool(tool, arguments))
        return out, await client.call_tool("search_tools", {"query": SPACES, "k": 3})

    for server in mcp_server("stdio", mcp_env["env"]):
        refused, found = run_client(server, go)
    codes = [_code(result) for result in refused]
    assert codes == ["TOO_LARGE", "TOO_LARGE", "UNKNOWN_TOOL"]
    assert f"{MAX_QUERY_CHARS:,}" in _payload(refused[0])["error_message"]  # the limit
    assert not found.is_error and _payload(found)["tools"]


def _drafts(field_db: Path, subject: str) -> int:
    with sqlite3.connect(field_db) as conn:
        sql = "SELECT COUNT(*) FROM rfi_drafts WHERE subject LIKE ?"
        return int(conn.execute(sql, (f"{subject}%",)).fetchone()[0])


def test_keyless_writes_are_separate_and_a_keyed_pair_replays(
    http_url: str, mcp_env: dict[str, Any]
) -> None:
    """Each MCP call has a run id of its own, so two keyless writes with other arguments are
    two writes (not a CONFLICT on a shared derived key), in one session and across sessions;
    the same key with the same arguments replays."""
    tag = f"load-{time.time_ns()}"
    keyless = [
        {"project": "GRB-104", "subject": f"{tag} keyless {i}", "question": f"Which seal {i}?"}
        for i in range(3)
    ]
    keyed = {"project": "GRB-104", "subject": f"{tag} keyed", "question": "Which hinge?",
             "idempotency_key": tag}  # fmt: skip

    async def go(client: Client) -> Any:
        first = [await client.call_tool("create_rfi_draft", a) for a in keyless[:2]]
        pair = [await client.call_tool("create_rfi_draft", keyed) for _ in range(2)]
        return first, pair

    async def other_session(client: Client) -> Any:
        return await client.call_tool("create_rfi_draft", keyless[2])

    first, pair = run_client(http_url, go)
    third = run_client(http_url, other_session)
    for result in [*first, third]:
        assert not result.is_error, _payload(result)
        assert not _payload(result).get("idempotent_replay")
    ids = {_payload(r)["data"]["body"]["draft_id"] for r in [*first, third]}
    assert len(ids) == 3
    assert _drafts(mcp_env["field_db"], f"{tag} keyless") == 3
    one, two = (_payload(r) for r in pair)
    assert one["success"] and two["idempotent_replay"] is True
    assert one["data"]["body"]["draft_id"] == two["data"]["body"]["draft_id"]
    assert _drafts(mcp_env["field_db"], f"{tag} keyed") == 1
