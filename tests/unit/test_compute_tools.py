"""The compute tools: exact arithmetic over dates and figures, bounded inputs, errors as results."""

from __future__ import annotations

import datetime as dt
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.tools import FunctionTool

from toolrag import Settings, Toolbox
from toolrag.cards.card import apply_overlays, cards_from_tools, load_yaml_cards
from toolrag.tools import ComputeToolSpec
from toolrag.tools.compute import COMPUTE_TOOLS, parse_figure, round2, weekdays
from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.self_timed import is_self_timed

REPO = Path(__file__).resolve().parents[2]
D = dt.date


@pytest.fixture(scope="module")
def tools() -> dict[str, FunctionTool]:
    return {t.metadata.get_name(): t for t in ComputeToolSpec().to_tool_list()}


def call(tools: dict[str, FunctionTool], name: str, **kwargs: Any) -> ToolResult:
    """A call the way the agent makes it: JSON-ish arguments through the validating wrapper."""
    out = tools[name].call(**kwargs).raw_output
    assert isinstance(out, ToolResult)
    return out


def failed(result: ToolResult, code: ErrorCode = ErrorCode.INVALID_ARGUMENT) -> str:
    assert not result.success and result.error_code == code, result
    assert result.suggestion and result.recoverable
    return result.error_message or ""


# --- the tools and their schema -------------------------------------------------------------------
def test_the_spec_lists_the_five_tools_self_timed_with_llm_facing_descriptions(
    tools: dict[str, FunctionTool],
) -> None:
    assert tuple(tools) == COMPUTE_TOOLS
    for tool in tools.values():
        assert is_self_timed(tool)  # pure and bounded: the guard runs it inline
        desc = tool.metadata.description
        assert "Use it" in desc and "Returns" in desc and "does not" in desc
        assert "Args:" not in desc  # the argument docs went into the schema
        for name, prop in tool.metadata.get_parameters_dict()["properties"].items():
            assert prop.get("description"), f"{tool.metadata.name}.{name}"


def test_the_schema_has_dates_as_strings_of_date_format(tools: dict[str, FunctionTool]) -> None:
    days = tools["days_between"].metadata.get_parameters_dict()
    assert days["required"] == ["start", "end"]
    for key in ("start", "end"):
        assert days["properties"][key]["type"] == "string"
        assert days["properties"][key]["format"] == "date"
    assert days["properties"]["working_days"]["type"] == "boolean"
    shift = tools["date_shift"].metadata.get_parameters_dict()["properties"]
    assert shift["start"]["format"] == "date" and shift["days"]["type"] == "integer"
    compare = tools["compare_values"].metadata.get_parameters_dict()["properties"]
    assert compare["a"]["type"] == compare["b"]["type"] == "number"
    values = tools["sum_values"].metadata.get_parameters_dict()["properties"]["values"]
    assert values["type"] == "array" and values["items"]["type"] == "number"


def test_the_cards_are_read_only_and_the_yaml_overlay_names_each_tool(
    tools: dict[str, FunctionTool],
) -> None:
    cards = {c.name: c for c in cards_from_tools(tools.values())}
    assert {c.side_effect for c in cards.values()} == {"read"}
    # every card file of the folder laid over the cards, as the toolbox does
    overlaid = {
        c.name: c
        for c in apply_overlays(list(cards.values()), load_yaml_cards(REPO / "toolspecs" / "cards"))
    }
    for name in COMPUTE_TOOLS:
        assert 5 <= len(overlaid[name].examples) <= 40 and overlaid[name].tags, name
        assert overlaid[name].companion, name


# --- days_between ---------------------------------------------------------------------------------
def test_days_between_counts_calendar_days_and_weeks(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "days_between", start="2025-11-12", end="2026-01-16")
    assert r.success
    assert r.data == {
        "summary": "2025-11-12 to 2026-01-16 is 65 calendar days (9.3 weeks).",
        "start": "2025-11-12",
        "end": "2026-01-16",
        "days": 65,
        "weeks": 9.3,
    }


def test_days_between_is_negative_when_the_end_is_before_the_start(
    tools: dict[str, FunctionTool],
) -> None:
    r = call(tools, "days_between", start="2026-01-16", end="2025-11-12", working_days=True)
    assert r.success and r.data["days"] == -65 and r.data["weeks"] == -9.3
    assert r.data["working_days"] == -47
    assert "-65 calendar days" in r.data["summary"]
    assert "the end is 65 days before the start" in r.data["summary"]
    same = call(tools, "days_between", start="2026-03-02", end="2026-03-02", working_days=True)
    assert same.data["days"] == 0 and same.data["working_days"] == 0


def test_working_days_skip_weekends(tools: dict[str, FunctionTool]) -> None:
    # Friday 2026-01-09 to Monday 2026-01-12: three calendar days, one working day (the Friday)
    r = call(tools, "days_between", start="2026-01-09", end="2026-01-12", working_days=True)
    assert r.data["days"] == 3 and r.data["working_days"] == 1
    assert "1 of them working days" in r.data["summary"]
    # Saturday to the next Saturday: a week holds five working days
    week = call(tools, "days_between", start="2026-01-10", end="2026-01-17", working_days=True)
    assert week.data["working_days"] == 5
    # a weekend alone holds none
    weekend = call(tools, "days_between", start="2026-01-10", end="2026-01-12", working_days=True)
    assert weekend.data["working_days"] == 0
    plain = call(tools, "days_between", start="2026-01-10", end="2026-01-12")
    assert "working_days" not in plain.data


def test_working_days_agree_with_numpy_busday_count() -> None:
    rng = random.Random(7)
    for _ in range(300):
        start = D(2020, 1, 1) + dt.timedelta(days=rng.randrange(3000))
        end = start + dt.timedelta(days=rng.randrange(400))
        assert weekdays(start, end) == np.busday_count(start, end), (start, end)


# --- date_shift -----------------------------------------------------------------------------------
def test_date_shift_moves_forward_and_back(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "date_shift", start="2026-03-02", days=14)
    assert r.success and r.data["date"] == "2026-03-16" and r.data["weekday"] == "Monday"
    assert r.data["summary"] == "2026-03-02 plus 14 calendar days is 2026-03-16 (Monday)."
    back = call(tools, "date_shift", start="2026-03-02", days=-14)
    assert back.data["date"] == "2026-02-16" and "minus 14 calendar days" in back.data["summary"]
    leap = call(tools, "date_shift", start="2028-02-28", days=1)
    assert leap.data["date"] == "2028-02-29"
    assert call(tools, "date_shift", start="2026-03-02", days="30").data["date"] == "2026-04-01"


# --- compare_values -------------------------------------------------------------------------------
def test_compare_values_gives_difference_ratio_percent_and_the_larger(
    tools: dict[str, FunctionTool],
) -> None:
    r = call(tools, "compare_values", a_label="Harbor Point", a=1_250_000, b_label="Pinecrest",
             b=1_000_000)  # fmt: skip
    assert r.success
    d = r.data
    assert (d["difference"], d["ratio"], d["percent_change"]) == (250_000, 1.25, 25)
    assert d["larger"] == "Harbor Point"
    assert d["summary"] == (
        "Harbor Point (1,250,000) is 250,000 more than Pinecrest (1,000,000): 25% more, "
        "1.25 times as much."
    )
    less = call(tools, "compare_values", a_label="x", a=800, b_label="y", b=1000)
    assert less.data["difference"] == -200 and less.data["percent_change"] == -20
    assert less.data["larger"] == "y" and "200 less than y" in less.data["summary"]
    assert "20% less, 0.8 times as much" in less.data["summary"]
    even = call(tools, "compare_values", a_label="x", a=5, b_label="y", b=5)
    assert even.data["larger"] == "equal" and even.data["summary"] == "x and y are equal (5)."


def test_numbers_come_back_raw_and_rounded_to_2_decimals(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "compare_values", a_label="a", a=10, b_label="b", b=3)
    assert r.data["ratio"] == pytest.approx(3.3333333333) and r.data["ratio_rounded"] == 3.33
    assert r.data["percent_change_rounded"] == 233.33
    assert "233.33% more" in r.data["summary"]
    cents = call(tools, "compare_values", a_label="a", a=2.675, b_label="b", b=0.0001)
    assert cents.data["difference_rounded"] == 2.67  # 2.6749 rounds down
    assert round2(2.675) == 2.68 and round2(-2.675) == -2.68  # half away from zero, like money


def test_dividing_by_zero_is_an_error_with_a_suggestion(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "compare_values", a_label="spent", a=800, b_label="budget", b=0)
    assert "budget (b) is 0" in failed(r)
    assert "spent minus budget is 800" in (r.suggestion or "")
    s = call(tools, "calculate_share", part=5, whole=0)
    assert "whole is 0" in failed(s)


# --- calculate_share ------------------------------------------------------------------------------
def test_calculate_share_gives_the_percent_and_what_is_left(
    tools: dict[str, FunctionTool],
) -> None:
    r = call(tools, "calculate_share", part=450_000, whole=1_200_000)
    assert r.success and r.data["percent"] == 37.5 and r.data["remaining"] == 750_000
    assert r.data["summary"] == "450,000 is 37.5% of 1,200,000, leaving 750,000."
    over = call(tools, "calculate_share", part=1300, whole=1200)
    assert over.data["percent_rounded"] == 108.33 and over.data["remaining"] == -100
    assert over.data["summary"] == "1,300 is 108.33% of 1,200, 100 beyond it."


# --- sum_values -----------------------------------------------------------------------------------
def test_sum_values_gives_total_count_mean_min_max(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "sum_values", values=[100, 200.5, 1234.5])
    assert r.success
    d = r.data
    assert (d["count"], d["total"], d["min"], d["max"]) == (3, 1535, 100, 1234.5)
    assert d["mean"] == pytest.approx(511.6667, abs=1e-4) and d["mean_rounded"] == 511.67
    assert d["summary"] == (
        "The 3 values add up to 1,535 (mean 511.67, smallest 100, largest 1,234.50)."
    )
    exact = call(tools, "sum_values", values=[0.1] * 10)
    assert exact.data["total"] == 1  # fsum: no 0.9999999999999999
    one = call(tools, "sum_values", values=[42])
    assert one.data["summary"].startswith("The 1 value adds up to 42")


def test_figures_as_results_show_them_are_read(tools: dict[str, FunctionTool]) -> None:
    r = call(tools, "sum_values", values=["23,147,914", "$1,250.50", 10])
    assert r.success and r.data["total"] == pytest.approx(23_149_174.5)
    share = call(tools, "calculate_share", part="$300,000", whole="1,200,000")
    assert share.data["percent"] == 25
    assert parse_figure("-1,234.5") == -1234.5 and parse_figure(".5") == 0.5
    for text in ("1,23", "1.234,56", "12abc", "", "$"):  # not a figure: refused, not guessed
        assert parse_figure(text) == text
    bad = call(tools, "sum_values", values=["1.234,56"])
    assert "Invalid arguments for sum_values" in failed(bad)


# --- bounds: errors as results, never exceptions --------------------------------------------------
@pytest.mark.parametrize(
    ("name", "kwargs", "code", "says"),
    [
        ("sum_values", {"values": []}, ErrorCode.INVALID_ARGUMENT, "empty"),
        ("sum_values", {"values": [1] * 1001}, ErrorCode.TOO_LARGE, "at most 1,000"),
        ("sum_values", {"values": [1, float("nan")]}, ErrorCode.INVALID_ARGUMENT, "values[1]"),
        ("sum_values", {"values": ["inf"]}, ErrorCode.INVALID_ARGUMENT, "not a finite"),
        ("sum_values", {"values": [2e15]}, ErrorCode.INVALID_ARGUMENT, "limited to 1e+15"),
        ("sum_values", {"values": "12"}, ErrorCode.INVALID_ARGUMENT, "values"),
        ("compare_values", {"a_label": "a", "a": float("-inf"), "b_label": "b", "b": 1},
         ErrorCode.INVALID_ARGUMENT, "a is -inf"),
        ("compare_values", {"a_label": "a", "a": 1e15, "b_label": "b", "b": 1e-300},
         ErrorCode.INVALID_ARGUMENT, "too large"),
        ("compare_values", {"a_label": "x" * 201, "a": 1, "b_label": "b", "b": 1},
         ErrorCode.INVALID_ARGUMENT, "at most 200"),
        ("compare_values", {"a": 1, "b": 2}, ErrorCode.INVALID_ARGUMENT, "a_label"),
        ("calculate_share", {"part": 1, "whole": "a lot"}, ErrorCode.INVALID_ARGUMENT, "whole"),
        ("days_between", {"start": "1899-12-31", "end": "2026-01-01"},
         ErrorCode.INVALID_ARGUMENT, "between 1900-01-01 and 2200-12-31"),
        ("days_between", {"start": "2026-01-01", "end": "2201-01-01"},
         ErrorCode.INVALID_ARGUMENT, "end is 2201-01-01"),
        ("days_between", {"start": "2026-13-01", "end": "2026-01-01"},
         ErrorCode.INVALID_ARGUMENT, "start"),
        ("days_between", {"start": "next Friday", "end": "2026-01-01"},
         ErrorCode.INVALID_ARGUMENT, "start"),
        ("date_shift", {"start": "2026-01-01", "days": 100_001},
         ErrorCode.INVALID_ARGUMENT, "limited to 100,000"),
        ("date_shift", {"start": "2026-01-01", "days": 1.5}, ErrorCode.INVALID_ARGUMENT, "days"),
        ("date_shift", {"start": "3000-01-01", "days": 1}, ErrorCode.INVALID_ARGUMENT, "start"),
    ],
)  # fmt: skip
def test_inputs_out_of_bounds_are_tool_results(
    tools: dict[str, FunctionTool], name: str, kwargs: dict[str, Any], code: ErrorCode, says: str
) -> None:
    assert says in failed(call(tools, name, **kwargs), code)


def test_the_bounds_hold_when_a_spec_method_is_called_directly() -> None:
    spec = ComputeToolSpec()
    assert not spec.sum_values([float("nan")]).success
    assert not spec.days_between(D(1800, 1, 1), D(2000, 1, 1)).success
    r = spec.days_between("2025-11-12", "2026-01-16")  # type: ignore[arg-type]
    assert r.success and r.data["days"] == 65
    assert spec.date_shift(D(2200, 12, 31), 100_000).data["date"] == "2474-10-15"


def test_the_rendered_result_groups_large_figures_and_keeps_the_summary(
    tools: dict[str, FunctionTool],
) -> None:
    text = call(tools, "sum_values", values=[1_000_000, 250_000.25]).render()
    assert '"total":"1,250,000.25"' in text and '"total_rounded":"1,250,000.25"' in text
    assert "add up to 1,250,000.25" in text


# --- the toolbox ----------------------------------------------------------------------------------
def test_the_setting_is_on_by_default_and_documented() -> None:
    field = Settings.model_fields["compute_tools"]
    assert Settings().compute_tools is False and field.description
    assert "`compute_tools`" in (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")


def _toolbox(tmp_path: Path, database: bool = True, **settings: Any) -> Toolbox:
    """A toolbox over a one-table SQLite file (no content indexes, no models), with the
    repository's compute cards."""
    (tmp_path / "cards").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "toolspecs" / "cards" / "compute.yaml", tmp_path / "cards")
    url = None
    if database:
        path = tmp_path / "jobs.sqlite"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS projects (code TEXT, budget REAL)")
        url = f"sqlite:///{path}"
    config = Settings(
        database_url=url,
        toolspecs_dir=tmp_path,
        index_dir=tmp_path / "indexes",
        state_dir=tmp_path / "state",
        llm_provider="scripted",
        **settings,
    )
    return Toolbox(config, embed=MockEmbedding(embed_dim=8))


def test_the_toolbox_adds_the_compute_tools_after_its_other_tools(tmp_path: Path) -> None:
    tb = _toolbox(tmp_path, compute_tools=True)
    names = [t.metadata.get_name() for t in tb.tools()]
    assert names == ["list_tables", "describe_table", "run_sql", *COMPUTE_TOOLS]
    cards = {c.name: c for c in tb.cards()}
    assert cards["days_between"].examples and cards["sum_values"].side_effect == "read"
    # through the guard, with the string dates a model writes
    r = tb.call("days_between", start="2025-11-12", end="2026-01-16", working_days=True)
    assert r.success and r.data["days"] == 65 and r.data["working_days"] == 47
    assert tb.tool("sum_values").call(values=[1, 2]).raw_output.data["total"] == 3


def test_compute_tools_off_or_alone_are_not_offered(tmp_path: Path) -> None:
    off = _toolbox(tmp_path, compute_tools=False)
    assert [t.metadata.get_name() for t in off.tools()] == [
        "list_tables",
        "describe_table",
        "run_sql",
    ]
    # arithmetic alone answers nothing: a toolbox without data tools still has no tools
    assert _toolbox(tmp_path / "bare", database=False, compute_tools=True).tools() == []


def test_a_figure_with_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    """Two unbounded space runs around the currency sign cost about n**3: 8,000 spaces after a
    sign took 4.6 s. The runs are bounded now; the value is returned as it was."""
    import time

    from toolrag.tools.compute import parse_figure

    text = "+" + " " * 19_000 + "x"
    started = time.thread_time()  # CPU time of this thread: other processes do not count
    assert parse_figure(text) == text
    assert time.thread_time() - started < 1.0
    assert parse_figure("- $ 1,250.50") == -1250.5
