"""``toolrag mcp serve`` with the official ``mcp`` client, over stdio and over streamable HTTP on
127.0.0.1: tools/list with annotations, a read call, a write twice with one key (one effect),
the approval refusal, search_tools, resources, and malformed requests that get tool errors
while the server keeps serving. The toolbox is SQL + the field API (no content indexes)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..mcpservers import mcp_server, run_client, toolbox_env


@pytest.fixture(scope="module")
def mcp_env(
    tmp_path_factory: pytest.TempPathFactory, construction_sqlite: Path
) -> Iterator[dict[str, Any]]:
    with toolbox_env(tmp_path_factory.mktemp("mcp"), construction_sqlite) as env:
        yield env


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(request: pytest.FixtureRequest, mcp_env: dict[str, Any]) -> Iterator[Any]:
    yield from mcp_server(request.param, mcp_env["env"])


def _payload(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


def test_list_tools_with_annotations(server: Any) -> None:
    async def go(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run_client(server, go)}
    assert {"run_sql", "list_rfis", "create_rfi_draft", "cancel_inspection"} <= set(tools)
    assert "search_tools" in tools
    read, write = tools["list_rfis"].annotations, tools["create_rfi_draft"].annotations
    delete, external = (
        tools["cancel_inspection"].annotations,
        tools["submit_change_order"].annotations,
    )
    assert read.read_only_hint and not read.destructive_hint and not read.open_world_hint
    assert not write.read_only_hint and write.idempotent_hint and not write.destructive_hint
    assert delete.destructive_hint and not delete.read_only_hint
    assert external.open_world_hint and not external.idempotent_hint
    assert tools["run_sql"].input_schema["properties"]["sql"]["description"]


def test_call_a_read_tool(server: Any) -> None:
    async def go(client: Any) -> Any:
        return await client.call_tool("run_sql", {"sql": "SELECT COUNT(*) AS n FROM projects"})

    result = run_client(server, go)
    assert not result.is_error
    assert _payload(result)["data"]["rows"] == [[12]]


def test_a_write_twice_with_one_key_has_one_effect(server: Any, mcp_env: dict[str, Any]) -> None:
    key = f"mcp-{time.time_ns()}"
    subject = f"Bay door seals {key}"
    args = {"project": "GRB-104", "subject": subject, "question": "Which seal?",
            "idempotency_key": key}  # fmt: skip

    async def go(client: Any) -> Any:
        return [await client.call_tool("create_rfi_draft", args) for _ in range(2)]

    first, second = run_client(server, go)
    one, two = _payload(first), _payload(second)
    assert one["success"] and two["idempotent_replay"] is True
    assert one["data"]["body"]["draft_id"] == two["data"]["body"]["draft_id"]
    with sqlite3.connect(mcp_env["field_db"]) as conn:
        sql = "SELECT COUNT(*) FROM rfi_drafts WHERE subject = ?"
        assert conn.execute(sql, (subject,)).fetchone()[0] == 1  # one effect


def test_a_gated_call_is_refused_without_approval(server: Any, mcp_env: dict[str, Any]) -> None:
    async def go(client: Any) -> Any:
        return await client.call_tool("cancel_inspection", {"inspection_id": "INSP-101-06"})

    result = run_client(server, go)
    assert result.is_error
    payload = _payload(result)
    assert payload["error_code"] == "APPROVAL_DENIED" and payload["recoverable"] is False
    status = httpx.get(f"{mcp_env['url']}/inspections/INSP-101-06", timeout=5).json()["result"]
    assert status == "scheduled"


def test_search_tools_and_resources(server: Any) -> None:
    async def go(client: Any) -> Any:
        found = await client.call_tool(
            "search_tools", {"query": "how many days lost to rain", "k": 3}
        )
        resources = (await client.list_resources()).resources
        cards = await client.read_resource("toolrag://cards")
        schema = await client.read_resource("toolrag://sql/schema")
        return found, resources, cards, schema

    found, resources, cards, schema = run_client(server, go)
    names = [t["name"] for t in _payload(found)["tools"]]
    assert names[0] == "list_weather_delays", names
    assert {str(r.uri) for r in resources} == {"toolrag://cards", "toolrag://sql/schema"}
    assert any(c["name"] == "run_sql" for c in json.loads(cards.contents[0].text))
    assert "projects(" in schema.contents[0].text


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("get_wether", {}, "UNKNOWN_TOOL"),
        ("run_sql", {"sql": 42, "limit": "many"}, "INVALID_ARGUMENT"),
        ("list_rfis", {"project": "x" * 50_000}, "TOO_LARGE"),
        ("search_tools", {"query": ""}, None),
    ],
    ids=["unknown-tool", "wrong-types", "oversized", "empty-search"],
)
def test_malformed_calls_get_errors_and_the_server_keeps_serving(
    server: Any, name: str, arguments: dict[str, Any], code: str | None
) -> None:
    async def go(client: Any) -> Any:
        bad = await client.call_tool(name, arguments)
        good = await client.call_tool("run_sql", {"sql": "SELECT 1 AS one"})
        return bad, good

    bad, good = run_client(server, go)
    assert bad.is_error
    if code:
        assert _payload(bad)["error_code"] == code
    assert not good.is_error and _payload(good)["data"]["rows"] == [[1]]
