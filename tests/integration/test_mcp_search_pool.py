"""``search_tools`` on a pool of 1,000+ tools, through ``toolrag mcp serve --deferred`` with the
official ``mcp`` client over stdio and streamable HTTP.

The pool is the toolbox's own tools (SQL and the field API) plus 1,000 BFCL functions
(``tests/fixtures/bfcl_pool.json``, Apache-2.0) served as a second REST source: one GET
operation each on a real httpbin server on 127.0.0.1, so a tool found by searching can also be
called. The tool index is built once in the test process; both servers reopen it without
re-embedding a card.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolrag.cards.openapi import tool_name
from toolrag.sample.field_api import running_server
from toolrag.settings import Settings
from toolrag.toolbox import Toolbox

from ..conftest import DATA, REPO, TEST_ENV
from ..httpservers import httpbin_server
from ..mcpservers import mcp_server, run_client

POOL = json.loads((REPO / "tests" / "fixtures" / "bfcl_pool.json").read_text())
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


def _schema(prop: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter as an OpenAPI query-parameter schema (objects travel as JSON text)."""
    kind = _TYPES.get(str(prop.get("type", "string")), str(prop.get("type", "string")))
    if kind == "object":
        return {"type": "string", "description": "JSON object"}
    schema: dict[str, Any] = {"type": kind}
    if kind == "array":
        items = _schema(prop.get("items") or {})
        schema["items"] = {"type": items["type"]}
    if isinstance(prop.get("enum"), list):
        schema["enum"] = prop["enum"]
    return schema


def pool_openapi(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The pool as an OpenAPI 3 document: ``GET /anything/<name>`` per function (httpbin echoes)."""
    paths: dict[str, Any] = {}
    for fn in tools:
        params = fn.get("parameters") or {}
        required = set(params.get("required") or [])
        paths[f"/anything/{fn['name']}"] = {
            "get": {
                "operationId": fn["name"],
                "summary": fn.get("description", ""),
                "parameters": [
                    {
                        "name": pname,
                        "in": "query",
                        "required": pname in required,
                        "description": str(prop.get("description", "")),
                        "schema": _schema(prop),
                    }
                    for pname, prop in (params.get("properties") or {}).items()
                ],
            }
        }
    return {"openapi": "3.0.3", "info": {"title": "BFCL pool", "version": "1"}, "paths": paths}


def expected_name(bfcl_name: str) -> str:
    return tool_name("get", f"/anything/{bfcl_name}", bfcl_name)


@pytest.fixture(scope="module")
def pool_env(
    tmp_path_factory: pytest.TempPathFactory, construction_sqlite: Path
) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("mcp_pool")
    specs = tmp / "toolspecs"
    shutil.copytree(REPO / "toolspecs", specs)
    (specs / "collections.yaml").unlink()  # the pool's tools: no content index to build
    (specs / "bfcl.openapi.json").write_text(json.dumps(pool_openapi(POOL["tools"])))
    with httpbin_server() as bin_url, running_server(DATA, state_path=tmp / "field.sqlite") as url:
        rest = yaml.safe_load((specs / "rest.yaml").read_text())
        rest["apis"].append({"name": "bfcl", "document": "bfcl.openapi.json", "base_url": bin_url})
        (specs / "rest.yaml").write_text(yaml.safe_dump(rest))
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")} | {
            **TEST_ENV,
            "TOOLRAG_DATABASE_URL": f"sqlite:///{construction_sqlite}",
            "TOOLRAG_FIELD_API_URL": url,
            "TOOLRAG_INDEX_DIR": str(tmp / "indexes"),
            "TOOLRAG_STATE_DIR": str(tmp / "state"),
            "TOOLRAG_TOOLSPECS_DIR": str(specs),
            "TOOLRAG_DATA_DIR": str(DATA),
        }
        settings = Settings(
            database_url=env["TOOLRAG_DATABASE_URL"],
            field_api_url=url,
            index_dir=tmp / "indexes",
            state_dir=tmp / "state",
            toolspecs_dir=specs,
            data_dir=DATA,
        )
        toolbox = Toolbox(settings)
        n_tools = len(toolbox.tool_index.cards)  # embeds every card once, here
        yield {"env": env, "n_tools": n_tools}


@pytest.fixture(scope="module", params=["stdio", "http"])
def pool_server(request: pytest.FixtureRequest, pool_env: dict[str, Any]) -> Iterator[Any]:
    yield from mcp_server(request.param, pool_env["env"], "--deferred")


def _names(result: Any) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [t["name"] for t in json.loads(result.content[0].text)["tools"]]


def test_the_pool_holds_over_a_thousand_tools(pool_env: dict[str, Any]) -> None:
    assert pool_env["n_tools"] >= 1000


def test_search_tools_finds_the_right_tool_among_a_thousand(pool_server: Any) -> None:
    """Deferred mode lists only search_tools (and pinned tools); every query's tool must come
    back in the top 5 of ``search_tools`` for at least 36 of the 40 BFCL queries, and the
    sample domain's tools must still be found among the distractors."""
    own = [
        ("cancel the scheduled inspection INSP-101-06", "cancel_inspection"),
        ("how many days did rain stop work on the project", "list_weather_delays"),
        ("draft a request for information about the bay door seals", "create_rfi_draft"),
    ]

    async def go(client: Any) -> Any:
        listed = [t.name for t in (await client.list_tools()).tools]
        cards = json.loads((await client.read_resource("toolrag://cards")).contents[0].text)
        pinned = {c["name"] for c in cards if c.get("pinned")}
        found = [
            _names(await client.call_tool("search_tools", {"query": q["query"], "k": 5}))
            for q in POOL["queries"]
        ]
        mine = [
            _names(await client.call_tool("search_tools", {"query": q, "k": 5})) for q, _ in own
        ]
        return listed, pinned, len(cards), found, mine

    listed, pinned, n_cards, found, mine = run_client(pool_server, go)
    assert set(listed) == {"search_tools", *pinned} and n_cards >= 1000
    hits = [
        expected_name(q["expected_tools"][0]) in names
        for q, names in zip(POOL["queries"], found, strict=True)
    ]
    assert sum(hits) >= 36, [
        q["query"] for q, hit in zip(POOL["queries"], hits, strict=True) if not hit
    ]
    for (query, tool), names in zip(own, mine, strict=True):
        assert tool in names, (query, names)


def test_a_tool_found_by_searching_can_be_called(pool_server: Any) -> None:
    query = next(q for q in POOL["queries"] if q["id"] == "simple_python_154")

    async def go(client: Any) -> Any:
        names = _names(await client.call_tool("search_tools", {"query": query["query"], "k": 1}))
        result = await client.call_tool(
            names[0], {"present_value": 5000, "annual_interest_rate": 0.05, "years": 10}
        )
        return names, result

    names, result = run_client(pool_server, go)
    assert names == [expected_name("calculate_future_value")]
    payload = json.loads(result.content[0].text)
    assert not result.is_error, payload
    echoed = payload["data"]["body"]
    assert "/anything/calculate_future_value?" in echoed["url"]
    assert echoed["args"]["present_value"] == "5000"
