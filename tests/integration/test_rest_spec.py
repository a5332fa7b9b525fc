"""OpenAPIToolSpec against real servers on 127.0.0.1: tools built from httpbin's own Swagger 2
document (served by flasgger at /spec.json), three live calls, and the guard's refusals:
traversal, off-host URLs and redirects, size caps, invalid JSON, hangs, 5xx, secrets."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.cards.openapi import load_document, tool_name
from toolrag.tools.approval import approved
from toolrag.tools.rest.spec import OpenAPIToolSpec, RestAPIConfig
from toolrag.tools.result import ErrorCode, ToolResult

from ..httpservers import broken_server, httpbin_server

SECRET = "tr-test-0123456789abcdef"


@pytest.fixture(scope="module")
def httpbin() -> Iterator[str]:
    with httpbin_server() as url:
        yield url


@pytest.fixture
def hb_tools(httpbin: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, FunctionTool]:
    monkeypatch.setenv("HTTPBIN_TOKEN", SECRET)
    config = RestAPIConfig(
        name="httpbin",
        document=f"{httpbin}/spec.json",
        base_url=httpbin,
        auth={"header": "Authorization", "env": "HTTPBIN_TOKEN", "prefix": "Bearer "},
        timeout_s=1.0,
        retries=1,
        max_response_bytes=4096,
        max_body_bytes=1024,
        operations={
            "create_anything": {"side_effect": "write"},
            "delete_anything": {"side_effect": "delete"},
        },
    )
    spec = OpenAPIToolSpec(config, load_document(config.document))
    return {t.metadata.get_name(): t for t in spec.to_tool_list()}


def call(tools: dict[str, FunctionTool], name: str, **kwargs: Any) -> ToolResult:
    out = tools[name](**kwargs).raw_output
    assert isinstance(out, ToolResult)
    assert SECRET not in out.render()
    return out


def test_tools_are_built_from_the_swagger_document(hb_tools: dict[str, FunctionTool]) -> None:
    assert len(hb_tools) > 30
    assert all("_" in name for name in hb_tools)  # verb_noun
    drip = hb_tools["get_drip"].metadata
    props = drip.get_parameters_dict()["properties"]
    assert set(props) == {"duration", "numbytes", "code", "delay"}
    assert props["numbytes"]["description"] == "The number of bytes to respond with"
    assert "Drips data" in drip.description and "GET /drip" in drip.description
    # non-GET operations exist only where a card gives them a side-effect class
    assert "create_anything" in hb_tools and "delete_anything" in hb_tools
    assert "create_post" not in hb_tools and "update_put" not in hb_tools


def test_live_call_with_a_query_parameter(hb_tools: dict[str, FunctionTool]) -> None:
    result = call(hb_tools, "get_drip", numbytes=7, duration=0, delay=0, code=200)
    assert result.success  # 7 bytes asked in the query string, 7 bytes came back
    assert result.data["body"] == "<7 bytes of application/octet-stream>"


def test_live_call_with_a_path_parameter(hb_tools: dict[str, FunctionTool]) -> None:
    value = base64.urlsafe_b64encode(b"Granite Ridge").decode()
    result = call(hb_tools, "get_base64", value=value)
    assert result.success and result.data["body"] == "Granite Ridge"


def test_live_call_with_a_json_body_is_idempotent(hb_tools: dict[str, FunctionTool]) -> None:
    body = {"project": "GRB-101", "note": "pour scheduled"}
    first = call(hb_tools, "create_anything", body=body)
    again = call(hb_tools, "create_anything", body=body)
    assert first.success and first.data["body"]["json"] == body
    assert first.data["body"]["method"] == "POST"
    key = first.data["body"]["headers"]["Idempotency-Key"]
    assert key and again.data["body"]["headers"]["Idempotency-Key"] == key


def test_auth_header_is_sent_but_never_echoed(hb_tools: dict[str, FunctionTool]) -> None:
    result = call(hb_tools, "get_headers")
    assert result.success
    assert result.data["body"]["headers"]["Authorization"] == "Bearer ****"


def test_delete_actions_wait_for_a_person(hb_tools: dict[str, FunctionTool]) -> None:
    result = call(hb_tools, "delete_anything")  # called around the guard: refused
    assert result.error_code == ErrorCode.APPROVAL_DENIED
    assert "approval" in (result.error_message or "")
    with approved("delete_anything"):  # what the guard does after a person said yes
        assert call(hb_tools, "delete_anything").success
    with approved("other_tool"):
        assert not call(hb_tools, "delete_anything").success


def test_tool_names_are_verb_noun() -> None:
    assert tool_name("get", "/projects/{code}/site-status", "get_site_status") == "get_site_status"
    assert tool_name("get", "/get", None) == "get_get"
    assert tool_name("post", "/inspections/{id}/notes", "addNote") == "add_note"
    assert tool_name("get", "/rfis", "read_rfis_rfis_get") == "read_rfis_rfis"
    assert tool_name("put", "/v1/orders/{id}", "orderUpdate") == "update_order_update"


# --- hostile and malformed input -----------------------------------------------------------------
TRAVERSAL = [
    "../../etc/passwd",
    "..",
    ".",
    "a/b",
    "..\\..\\win.ini",
    "%2e%2e",
    "x?admin=1",
    "",
    "a\r\nX-Evil: 1",
]


@pytest.mark.parametrize("value", TRAVERSAL)
def test_path_traversal_is_refused(hb_tools: dict[str, FunctionTool], value: str) -> None:
    result = call(hb_tools, "get_base64", value=value)
    assert result.error_code == ErrorCode.INVALID_ARGUMENT, result.render()


@pytest.mark.parametrize(
    ("tool", "kwargs", "code"),
    [
        (
            "get_redirect_to",
            {"url": "http://169.254.169.254/latest/meta-data/"},
            ErrorCode.FORBIDDEN,
        ),
        ("get_redirect_to", {"url": "//evil.example/x"}, ErrorCode.FORBIDDEN),
        ("get_redirect_to", {"url": "https://127.0.0.1:1/"}, ErrorCode.FORBIDDEN),
        ("create_anything", {"body": {"blob": "x" * 5000}}, ErrorCode.TOO_LARGE),
        ("create_anything", {"body": '{"unterminated": '}, ErrorCode.INVALID_ARGUMENT),
        ("get_delay", {"delay": 3}, ErrorCode.TIMEOUT),
        ("get_status", {"codes": "500"}, ErrorCode.HTTP_ERROR),
        ("get_status", {"codes": "404"}, ErrorCode.NOT_FOUND),
        ("get_drip", {"numbytes": "many"}, ErrorCode.INVALID_ARGUMENT),
    ],
    ids=[
        "redirect-metadata",
        "redirect-scheme-relative",
        "redirect-other-port",
        "body-too-large",
        "invalid-json",
        "hang",
        "http-500",
        "http-404",
        "wrong-type",
    ],
)
def test_guard_refusals(
    hb_tools: dict[str, FunctionTool], tool: str, kwargs: dict[str, Any], code: ErrorCode
) -> None:
    result = call(hb_tools, tool, **kwargs)
    assert not result.success and result.error_code == code, result.render()
    assert result.suggestion


def test_response_cap_sets_truncated(hb_tools: dict[str, FunctionTool]) -> None:
    result = call(hb_tools, "get_bytes", n=100_000)
    assert (
        result.success
        and result.truncated
        and "bytes of application/octet-stream" in result.data["body"]
    )


def test_off_host_paths_in_a_document_are_refused(httpbin: str) -> None:
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "evil"},
        "paths": {
            "//evil.example/steal": {"get": {"operationId": "get_steal"}},
            "http://evil.example/x": {"get": {"operationId": "get_x"}},
        },
    }
    spec = OpenAPIToolSpec(RestAPIConfig(name="evil", document="-", base_url=httpbin), doc)
    tools = {t.metadata.get_name(): t for t in spec.to_tool_list()}
    for name in ("get_steal", "get_x"):
        assert call(tools, name).error_code == ErrorCode.FORBIDDEN


@pytest.fixture(scope="module")
def broken() -> Iterator[str]:
    with broken_server() as url:
        yield url


def _broken_tools(url: str, retries: int = 2) -> dict[str, FunctionTool]:
    paths = {
        f"/{p}": {"get": {"operationId": f"get_{p}", "summary": p}}
        for p in ("hang", "flaky", "unavailable", "offhost", "badjson", "missing")
    }
    doc = {"openapi": "3.0.0", "info": {"title": "broken"}, "paths": paths}
    config = RestAPIConfig(
        name="broken", document="-", base_url=url, timeout_s=0.5, retries=retries
    )
    return {t.metadata.get_name(): t for t in OpenAPIToolSpec(config, doc).to_tool_list()}


def test_server_failures_become_results(broken: str) -> None:
    tools = _broken_tools(broken)
    assert call(tools, "get_hang").error_code == ErrorCode.TIMEOUT
    assert call(tools, "get_flaky").success  # two 503s, then 200: retried with backoff
    down = call(tools, "get_unavailable")
    assert down.error_code == ErrorCode.HTTP_ERROR and "503" in (down.error_message or "")
    assert call(tools, "get_offhost").error_code == ErrorCode.FORBIDDEN
    bad = call(tools, "get_badjson")
    assert bad.success and bad.data["body"] == '{"truncated": '  # returned as text, not a crash
    assert call(tools, "get_missing").error_code == ErrorCode.NOT_FOUND


def test_connection_refused_is_a_network_error() -> None:
    tools = _broken_tools("http://127.0.0.1:9", retries=0)
    result = call(tools, "get_missing")
    assert result.error_code == ErrorCode.NETWORK_ERROR


def test_config_errors(tmp_path: Path) -> None:
    from toolrag.errors import ConfigError

    not_openapi = tmp_path / "x.json"
    not_openapi.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ConfigError, match="not an OpenAPI"):
        load_document(not_openapi)
    with pytest.raises(ConfigError, match="Cannot read"):
        load_document(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="not an http"):
        OpenAPIToolSpec(RestAPIConfig(name="x", document="-", base_url="ftp://host"), {})


def test_widely_shared_schemas_inline_within_a_budget() -> None:
    """Each schema refers six times to the next: fully inlined, 8 hops would be 6**8 objects.
    The budget keeps it linear (each inlined object's references become stubs once it is
    spent), and a shallow reference still inlines whole."""
    from toolrag.cards.openapi import MAX_INLINED_OBJECTS, operations

    schemas: dict[str, Any] = {
        f"S{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/components/schemas/S{i + 1}"} for j in range(6)},
        }
        for i in range(12)
    }
    schemas["S12"] = {"type": "string"}
    schemas["Pet"] = {"type": "object", "properties": {"name": {"type": "string"}}}
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/deep": {"post": {"requestBody": {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/S0"}}}}}},
            "/pets": {"post": {"requestBody": {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Pet"}}}}}},
        },
        "components": {"schemas": schemas},
    }  # fmt: skip

    def objects(node: Any) -> int:
        if isinstance(node, dict):
            return 1 + sum(objects(v) for v in node.values())
        return sum(objects(v) for v in node) if isinstance(node, list) else 0

    deep, pets = operations(doc)
    assert objects(deep.body_schema) <= 7 * MAX_INLINED_OBJECTS
    assert pets.body_schema == schemas["Pet"]
