"""The router's reply held to the offered tools' own schemas (toolrag.routing.call_schema):
what a call may name and give, checked with a JSON Schema validator, and the grammar llama.cpp
builds from it. (No `from __future__ import annotations`: the tools' schemas read the
functions' annotations.)"""

import json
from typing import Any, Literal

import jsonschema
import pytest
from llama_cpp import LlamaGrammar
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field

from toolrag import ScriptedLLM
from toolrag.routing import Example, Router, ToolCallSpec
from toolrag.routing.call_schema import (
    MAX_SCHEMA_CHARS,
    arguments_schema,
    call_schema,
    decision_schema,
    ordered_arguments,
)


def search_documents(
    query: str = "",
    project: str | None = None,
    document_type: Literal["bid", "contract", "rfi"] | None = None,
    since: str | None = None,
) -> str:
    """Search documents."""
    return ""


def run_sql(sql: str, limit: int = 50) -> str:
    """Run one SELECT."""
    return ""


DOCS = FunctionTool.from_defaults(fn=search_documents)
SQL = FunctionTool.from_defaults(fn=run_sql)


def _ok(schema: dict[str, Any], reply: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(reply, schema)
    except jsonschema.ValidationError:
        return False
    return True


def _decision(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"action": "call_tools", "calls": [{"tool": t, "arguments": a} for t, a in calls]}


def test_a_call_names_an_offered_tool_with_its_own_arguments_and_listed_values() -> None:
    schema = decision_schema(0, [DOCS, SQL])
    assert _ok(schema, _decision(("search_documents", {"query": "x", "document_type": "bid"})))
    assert _ok(schema, _decision(("run_sql", {"sql": "SELECT 1"}), ("search_documents", {})))
    assert _ok(schema, {"action": "answer_directly", "calls": [], "message": "Hello."})
    # a value the tool does not list, an argument it does not take, a tool not offered,
    # a required argument left out, an argument of another type
    assert not _ok(schema, _decision(("search_documents", {"document_type": "subcontracts"})))
    assert not _ok(schema, _decision(("search_documents", {"vendor": "Acme"})))
    assert not _ok(schema, _decision(("list_projects", {})))
    assert not _ok(schema, _decision(("run_sql", {"limit": 5})))
    assert not _ok(schema, _decision(("run_sql", {"sql": "SELECT 1", "limit": "five"})))


def test_the_generic_schema_admits_any_call() -> None:
    schema = decision_schema(0)
    assert _ok(schema, _decision(("list_projects", {"vendor": 1})))


def test_a_question_of_parts_still_needs_a_call_for_each() -> None:
    schema = decision_schema(2, [SQL])
    assert schema["properties"]["calls"]["items"]["properties"]["tool"] == {"const": "run_sql"}
    assert not _ok(schema, _decision(("run_sql", {"sql": "SELECT 1"})))
    two = _decision(("run_sql", {"sql": "SELECT 1"}), ("run_sql", {"sql": "SELECT 2"}))
    assert _ok(schema, two)
    assert not _ok(schema, {"action": "answer_directly", "message": "no"})


def test_arguments_schema_keeps_what_a_grammar_is_built_from() -> None:
    class Period(BaseModel):
        start: str
        end: str | None = None

    schema = {
        "type": "object",
        "title": "Args",
        "$defs": {"Period": Period.model_json_schema()},
        "properties": {
            "code": {"type": "string", "pattern": "^(a+)+$", "maxLength": 100000, "title": "C"},
            "on": {"type": "string", "format": "date", "description": "A day."},
            "mail": {"type": "string", "format": "email"},
            "period": {"$ref": "#/$defs/Period"},
            "elsewhere": {"$ref": "https://example.com/schema.json"},
            "kwargs": {"type": "object"},
        },
        "required": ["code", "missing"],
    }
    out = arguments_schema(schema)
    assert out["properties"]["code"] == {"type": "string"}  # no pattern, no length, no title
    assert out["properties"]["on"] == {"type": "string", "format": "date"}
    assert out["properties"]["mail"] == {"type": "string"}  # a format the grammar lacks
    assert out["properties"]["period"]["properties"]["start"] == {"type": "string"}
    assert out["properties"]["period"]["required"] == ["start"]
    assert out["properties"]["elsewhere"] == {}
    assert out["properties"]["kwargs"] == {"type": "object"}
    assert out["required"] == ["code"]
    assert out["additionalProperties"] is False
    LlamaGrammar.from_json_schema(json.dumps(decision_schema(0, [DOCS, SQL])), verbose=False)


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"type": "object"},  # any keyword arguments
        {  # a reference that loops
            "type": "object",
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "properties": {"head": {"$ref": "#/$defs/Node"}},
        },
        {  # longer than a grammar should grow
            "type": "object",
            "properties": {
                f"p{n}": {"enum": [f"value-{n}-{m}" for m in range(40)]} for n in range(40)
            },
        },
    ],
)
def test_a_schema_the_grammar_cannot_hold_whole_takes_any_object(
    schema: dict[str, Any] | None,
) -> None:
    if schema and "p0" in schema.get("properties", {}):
        assert len(json.dumps(schema)) > MAX_SCHEMA_CHARS
    assert arguments_schema(schema) == {"type": "object"}


def test_call_schema_names_the_tool() -> None:
    schema = call_schema(DOCS)
    assert schema["properties"]["tool"] == {"const": "search_documents"}
    assert set(schema["properties"]["arguments"]["properties"]) == {
        "query",
        "project",
        "document_type",
        "since",
    }


def test_example_arguments_are_written_in_the_order_the_grammar_admits() -> None:
    given = {"document_type": "rfi", "other": 1, "query": "roof", "project": "GRB-101"}
    assert list(ordered_arguments(given, DOCS)) == ["query", "project", "document_type", "other"]
    assert list(ordered_arguments({"limit": 5, "sql": "S"}, SQL)) == ["sql", "limit"]
    assert ordered_arguments(given, None) == given


class _SchemaLLM(ScriptedLLM):
    """A scripted LLM that takes a JSON schema, as an OpenAI-compatible server does."""

    schemas: list[dict[str, Any]] = Field(default_factory=list)

    def complete_json(self, prompt: str, schema: dict[str, Any], name: str) -> Any:
        self.schemas.append(schema)
        return self.complete(prompt)


@pytest.mark.parametrize("tool_grammar", [True, False])
def test_the_router_sends_the_offered_tools_schema(tool_grammar: bool) -> None:
    reply = json.dumps(_decision(("run_sql", {"sql": "SELECT 1"})))
    llm = _SchemaLLM(turns=[reply], schemas=[])
    result = Router(llm, tool_grammar=tool_grammar).route("How many projects?", [SQL, DOCS])
    assert result.valid
    items = llm.schemas[0]["properties"]["calls"]["items"]
    if tool_grammar:
        names = [o["properties"]["tool"]["const"] for o in items["anyOf"]]
        assert names == ["run_sql", "search_documents"]
    else:
        assert "anyOf" not in items


def test_the_router_shows_example_arguments_in_the_grammar_s_order() -> None:
    example = Example(
        query="Which RFIs did GRB-101 get?",
        calls=[
            ToolCallSpec(
                tool="search_documents",
                arguments={"document_type": "rfi", "project": "GRB-101", "query": "RFIs"},
            )
        ],
    )
    prompt = Router(ScriptedLLM()).prompt("Which bids did GRB-102 get?", [DOCS, SQL], [example])
    shown = '"arguments":{"query":"RFIs","project":"GRB-101","document_type":"rfi"}'
    assert shown in prompt
