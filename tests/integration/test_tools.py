"""Content tools on the indexed sample domain: arguments, sources, and every error path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrag import IndexMissingError, ScriptedLLM, Settings, Toolbox
from toolrag.tools.compute import COMPUTE_TOOLS
from toolrag.tools.result import ErrorCode, ToolResult, readable_numbers


@pytest.fixture
def tools(sample_settings: Settings) -> dict[str, Any]:
    return {t.metadata.get_name(): t for t in Toolbox(sample_settings).tools()}


FIELD_API_TOOLS = {
    "list_projects",
    "get_site_status",
    "list_inspections",
    "get_inspection",
    "list_weather_delays",
    "list_rfis",
    "get_rfi_status",
    "create_inspection_note",
    "create_rfi_draft",
    "update_rfi_status",
    "cancel_inspection",
    "submit_change_order",
}


def call(tools: dict[str, Any], name: str, **kwargs: Any) -> ToolResult:
    out = tools[name].call(**kwargs).raw_output
    assert isinstance(out, ToolResult)
    return out


def test_tool_cards_follow_the_contract(tools: dict[str, Any]) -> None:
    assert (
        set(tools)
        == {
            "search_documents",
            "search_blueprints",
            "get_project_schedule",
            "run_sql",  # toolspecs/sql.yaml exposes run_sql alone to the agent
        }
        | FIELD_API_TOOLS  # compute_tools is off by default
    )
    assert not set(COMPUTE_TOOLS) & set(tools)
    for tool in tools.values():
        desc = tool.metadata.description
        assert desc.count(". ") + 1 >= 3 and "Use it" in desc and "does not" in desc
        for name, prop in tool.metadata.get_parameters_dict()["properties"].items():
            assert prop.get("description"), f"{tool.metadata.name}.{name} has no description"


def test_search_documents_with_filters_returns_sources(tools: dict[str, Any]) -> None:
    r = call(
        tools,
        "search_documents",
        query="liquidated damages per calendar day",
        document_type="contract",
        project="Riverside Medical Office Building",
    )
    assert r.success and r.data
    assert {d["project"] for d in r.data} == {"GRB-101"}  # the name resolved to its code
    assert {d["document_type"] for d in r.data} == {"contract"}
    assert any("2,500" in d["text"] for d in r.data)
    assert r.sources and r.sources[0].file.startswith("documents/GRB-101/")
    assert r.sources[0].score is not None


def test_search_blueprints_date_range(tools: dict[str, Any]) -> None:
    r = call(
        tools, "search_blueprints", query="plan", start_date="2026-01-01", end_date="2026-03-31"
    )
    assert r.success and r.data
    assert all("2026-01-01" <= d["date"] <= "2026-03-31" for d in r.data)
    assert all({"sheet", "title", "discipline", "project", "revision"} <= set(d) for d in r.data)
    assert all(s.file.startswith("blueprints/") for s in r.sources)
    # id_field: a sheet's number leads its row and locates it in its file
    assert all(next(iter(d)) == "sheet" for d in r.data)
    assert [s.locator for s in r.sources] == [d["sheet"] for d in r.data]


def test_a_schedule_listed_by_a_project_name_fragment(tools: dict[str, Any]) -> None:
    r = call(tools, "get_project_schedule", project="summit ridge hotel")
    assert r.success and {m["project"] for m in r.data} == {"GRB-107"}
    subst = next(m for m in r.data if m["title"].lower() == "substantial completion")
    assert subst["planned_finish"] == "2027-01-29"  # domain.yaml
    assert {s.file for s in r.sources} == {"schedules/GRB-107.csv"}
    assert len(r.data) == len({m["doc_id"] for m in r.data}) > 8  # every milestone, once


def test_a_schedule_searched_for_the_milestone_asked_for(tools: dict[str, Any]) -> None:
    r = call(
        tools,
        "get_project_schedule",
        project="Riverside Medical Office Building",
        query="substantial completion date",
    )
    assert r.success and r.data[0]["title"] == "Substantial completion"
    assert r.data[0]["planned_finish"] == "2026-06-30" and r.data[0]["doc_id"] == "M-101-10"
    assert {m["project"] for m in r.data} == {"GRB-101"}


@pytest.mark.parametrize(
    ("name", "kwargs", "needle"),
    [
        ("get_project_schedule", {"project": "Atlantis Tower"}, "closest project"),
        ("get_project_schedule", {}, "empty"),
        ("search_documents", {"query": "   "}, "empty"),
        ("search_documents", {"query": "x", "document_type": "memo"}, "document_type"),
        ("search_blueprints", {"query": "plan", "start_date": "2026-13-01"}, "start_date"),
        (
            "search_blueprints",
            {"query": "plan", "start_date": "2026-05-01", "end_date": "2026-01-01"},
            "after",
        ),
    ],
)
def test_bad_arguments_become_structured_errors(
    tools: dict[str, Any], name: str, kwargs: dict[str, Any], needle: str
) -> None:
    r = call(tools, name, **kwargs)
    assert not r.success and r.error_code == ErrorCode.INVALID_ARGUMENT and r.recoverable
    assert needle in (r.error_message or "") + (r.suggestion or "")
    assert r.suggestion


def test_an_unknown_keyword_value_is_searched_without_it_and_named(
    tools: dict[str, Any],
) -> None:
    r = call(tools, "search_documents", query="retainage", project="'; DROP TABLE documents; --")
    assert r.success and r.data  # the search ran without the filter, quotes and all
    assert "No project" in (r.suggestion or "") and "closest project" in (r.suggestion or "")
    again = call(tools, "search_documents", query="retainage", project="GRB-101")
    assert again.success and {d["project"] for d in again.data} == {"GRB-101"}


def test_unknown_argument_is_refused_with_the_real_ones(tools: dict[str, Any]) -> None:
    r = call(tools, "get_project_schedule", project="GRB-101", color="blue")
    assert not r.success and r.error_code == ErrorCode.INVALID_ARGUMENT and r.recoverable
    assert "'color'" in (r.error_message or "") and "project" in (r.error_message or "")


def test_result_renders_compact_json(tools: dict[str, Any]) -> None:
    r = call(tools, "get_project_schedule", project="GRB-104")
    text = r.render()
    assert text.startswith('{"success":true') and "sources" not in text and ": " not in text[:40]


def test_large_figures_are_grouped_for_the_model_and_ids_are_not() -> None:
    data = {
        "columns": ["vendor_id", "SUM(amount)", "COUNT(*)", "fiscal_year", "ratio"],
        "rows": [[10234, 23147914, 12, 2026, 0.5], [99999, 1234567.5, 15000, 2025, 12345.25]],
        "row_count": 2,
    }
    r = ToolResult.ok(data)
    shown = json.loads(r.render())["data"]
    assert shown["rows"] == [
        [10234, "23,147,914", 12, 2026, 0.5],
        [99999, "1,234,567.5", "15,000", 2025, "12,345.25"],
    ]
    assert shown["row_count"] == 2 and r.data["rows"][0][1] == 23147914  # the data is unchanged
    assert json.loads(r.render(grouped=False))["data"] == data  # for programs (MCP)
    nested = {"zipCode": 98101, "phone": 5035550188, "budget": -2413500, "ok": True, "n": 9999}
    assert readable_numbers({"items": [nested], "total": 10000}) == {
        "items": [{**nested, "budget": "-2,413,500"}],
        "total": "10,000",
    }


def test_the_agent_reads_a_sum_grouped(tools: dict[str, Any]) -> None:
    out = tools["run_sql"].call(
        sql="SELECT SUM(amount) AS total FROM actual_costs WHERE project_code = 'GRB-103'"
    )
    assert '"rows":[["23,147,914"]]' in str(out.content)  # what the model reads
    assert out.raw_output.data["rows"] == [[23147914]]


def test_missing_indexes_stop_a_question_with_the_command_to_run(tmp_path: Any) -> None:
    tb = Toolbox(Settings(index_dir=tmp_path / "none", llm_provider="scripted"))
    assert tb.missing_collections() == ["documents", "blueprints", "schedules"]
    assert not tb.collection_searches  # an unindexed collection offers no tool
    with pytest.raises(IndexMissingError, match="No documents, blueprints, schedules index"):
        tb.ask("What is the retainage?")


def test_query_engine_tools(sample_settings: Settings) -> None:
    tb = Toolbox(sample_settings, llm=ScriptedLLM(["The retainage is 5 percent."]))
    qa = {t.metadata.get_name(): t for t in tb.tools(include_qa=True)}
    assert {"ask_documents", "ask_blueprints", "ask_schedules"} <= set(qa)
    out = qa["ask_documents"].call(input="What is the retainage on the Pinecrest contract?")
    assert "5 percent" in str(out.content)
    assert out.raw_output.source_nodes  # the passages the answer was synthesized from


@pytest.mark.parametrize(
    ("result", "empty"),
    [
        (ToolResult.ok([]), True),
        (ToolResult.ok(None), True),
        (ToolResult.ok({"columns": ["n"], "rows": [], "row_count": 0}), True),
        (ToolResult.ok({"columns": ["n"], "rows": [[0]], "row_count": 1}), False),
        (ToolResult.ok([{"file": "a.md"}]), False),
        (ToolResult.ok(0), False),
        (ToolResult.ok({"status": 200, "body": []}), True),
        (ToolResult.ok({"status": 200, "body": {"records": [], "total_days_lost": 0}}), True),
        (ToolResult.ok({"status": 200, "body": {"records": [{"d": 1}], "total": 1}}), False),
        (ToolResult.ok({"status": 200, "body": {"phase": "framing", "crew": 0}}), False),
        (ToolResult.fail(ErrorCode.NOT_FOUND, "No such project."), False),
    ],
)
def test_an_empty_result_is_a_success_that_found_nothing(result: ToolResult, empty: bool) -> None:
    assert result.empty is empty
