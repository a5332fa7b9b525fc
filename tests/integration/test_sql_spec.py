"""SQLToolSpec on the sample database, on SQLite and on a real PostgreSQL server: tools built
from the schema, correct rows, truncation, allow-list, and errors the agent can act on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.errors import ConfigError
from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.sql.db import ReadOnlyDatabase
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

from ..conftest import REPO

GRB_105 = "Northgate Distribution Center"
CONFIG = SQLSpecConfig.load(REPO / "toolspecs" / "sql.yaml")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, construction_sqlite: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{construction_sqlite}"
    return str(request.getfixturevalue("construction_pg"))


@pytest.fixture(scope="module")
def tools(db_url: str) -> dict[str, FunctionTool]:
    spec = SQLToolSpec.from_url(db_url, CONFIG)
    return {t.metadata.get_name(): t for t in spec.to_tool_list()}


def call(tools: dict[str, FunctionTool], name: str, **kwargs: Any) -> ToolResult:
    out = tools[name](**kwargs).raw_output
    assert isinstance(out, ToolResult)
    return out


def test_tools_are_built_from_the_schema(tools: dict[str, FunctionTool]) -> None:
    assert set(tools) == {"list_tables", "describe_table", "run_sql"}
    desc = tools["run_sql"].metadata.description
    assert "read-only" in desc and "change_orders" in desc and "_toolrag_seed" not in desc
    schema = tools["run_sql"].metadata.get_parameters_dict()
    assert schema["required"] == ["sql"]
    assert schema["properties"]["limit"]["description"]
    listed = call(tools, "list_tables")
    assert listed.success
    assert {t["table"] for t in listed.data} == set(CONFIG.allow_tables or [])


def test_describe_table_has_types_keys_and_samples(tools: dict[str, FunctionTool]) -> None:
    info = call(tools, "describe_table", table="actual_costs").data
    cols = {c["name"]: c for c in info["columns"]}
    assert cols["cost_id"]["primary_key"] and "INT" in cols["cost_id"]["type"].upper()
    assert any(fk["references"].startswith("projects(") for fk in info["foreign_keys"])
    assert len(info["sample_rows"]) == 3 and "amount" in info["sample_rows"][0]
    missing = call(tools, "describe_table", table="payroll")
    assert missing.error_code == ErrorCode.NOT_FOUND and "projects" in (missing.suggestion or "")


def test_run_sql_returns_correct_rows(tools: dict[str, FunctionTool]) -> None:
    result = call(
        tools,
        "run_sql",
        sql="SELECT p.name, SUM(c.amount) AS approved FROM change_orders c "
        "JOIN projects p ON p.code = c.project_code WHERE c.status = 'approved' "
        "GROUP BY p.name ORDER BY approved DESC, p.name LIMIT 2",
    )
    assert result.success, result
    assert result.data["columns"] == ["name", "approved"]
    # CO-105-01 (214,000), then GRB-103's two change orders (132,600 + 78,900): domain.yaml
    rows = [[name, float(total)] for name, total in result.data["rows"]]
    assert rows == [[GRB_105, 214000.0], ["Harbor Point Apartments", 211500.0]]


def test_row_cap_sets_truncated(tools: dict[str, FunctionTool]) -> None:
    result = call(
        tools, "run_sql", sql="SELECT cost_id FROM actual_costs ORDER BY cost_id", limit=5
    )
    assert result.success and result.truncated
    assert result.data["row_count"] == 5 and result.data["rows"][0] == [1]
    assert '"truncated":true' in result.render()
    full = call(tools, "run_sql", sql="SELECT COUNT(*) FROM actual_costs")
    assert full.data["rows"] == [[165]] and not full.truncated


def test_run_sql_puts_names_next_to_ids(tools: dict[str, FunctionTool]) -> None:
    """A vendor_id or project code in the result comes with the row's name (one lookup per
    column, from the schema's foreign and primary keys); values already there stay as they are."""
    result = call(
        tools,
        "run_sql",
        sql="SELECT vendor_id, COUNT(*) AS n FROM invoices WHERE status = 'disputed' "
        "GROUP BY vendor_id ORDER BY vendor_id",
    )
    assert result.success, result
    assert result.data["columns"] == ["vendor_id", "n", "vendor_id_name"]
    assert result.data["labels_added"] == ["vendor_id_name"]
    joined = call(
        tools,
        "run_sql",
        sql="SELECT i.vendor_id, COUNT(*) AS n, v.name FROM invoices i JOIN vendors v "
        "ON v.vendor_id = i.vendor_id WHERE i.status = 'disputed' GROUP BY i.vendor_id, v.name "
        "ORDER BY i.vendor_id",
    )
    assert result.data["rows"] == joined.data["rows"] and "labels_added" not in joined.data
    code = call(tools, "run_sql", sql="SELECT code FROM projects WHERE code = 'GRB-105'")
    assert code.data["rows"] == [["GRB-105", GRB_105]]


def test_unknown_column_lists_the_real_columns(tools: dict[str, FunctionTool]) -> None:
    result = call(tools, "run_sql", sql="SELECT liquidated_damages FROM projects")
    assert result.error_code == ErrorCode.QUERY_ERROR
    assert "projects(code, name," in (result.suggestion or "")


def test_a_column_the_table_lacks_runs_as_the_one_it_means(
    tools: dict[str, FunctionTool],
) -> None:
    """``p.project_name`` and ``p.project_code`` (projects has ``name`` and ``code``) run as
    the columns they surely mean, and the result says so. ``s.contract_value`` (subcontracts
    has ``contract_amount``) is likely but not sure: the error suggests it. A name that shares
    only a common word with a column (``executed_date`` and ``co_date``) gets no guess, nor
    one several columns could be (``cost`` in actual_costs)."""
    sure = call(
        tools,
        "run_sql",
        sql="SELECT p.project_name, s.contract_amount FROM subcontracts s JOIN projects p "
        "ON p.project_code = s.project_code WHERE p.project_code = 'GRB-106' "
        "AND s.vendor_id = 'V02'",
    )
    assert sure.success and sure.data["rows"] == [["Lakeshore Public Library Renovation", 971350]]
    assert sure.suggestion and sure.suggestion.startswith(
        "The query named columns its tables lack. "
    )
    for swap in (
        "p.project_name is not a column: ran with projects.name",
        "p.project_code is not a column: ran with projects.code",
    ):
        assert sure.suggestion.count(swap) == 1, sure.suggestion
    assert "Ran: SELECT p.name, s.contract_amount FROM subcontracts" in sure.suggestion
    likely = call(
        tools,
        "run_sql",
        sql="SELECT s.contract_value FROM subcontracts s WHERE s.project_code = 'GRB-106'",
    )
    assert likely.error_code == ErrorCode.QUERY_ERROR
    assert (likely.suggestion or "").startswith(
        "Did you mean subcontracts.contract_amount for s.contract_value? Call run_sql again"
    )
    for sql in (
        "SELECT COUNT(*) FROM change_orders WHERE executed_date IS NULL",
        "SELECT SUM(cost) FROM actual_costs WHERE cost_code = '03-3000'",
    ):
        failed = call(tools, "run_sql", sql=sql)
        assert failed.error_code == ErrorCode.QUERY_ERROR, sql
        assert (failed.suggestion or "").startswith("Call run_sql again using only these columns")


def test_allow_list_hides_other_tables(db_url: str) -> None:
    spec = SQLToolSpec.from_url(
        db_url, SQLSpecConfig(name="finance", allow_tables=["invoices", "vendors"])
    )
    tools = {t.metadata.get_name(): t for t in spec.to_tool_list()}
    refused = call(tools, "run_sql", sql="SELECT name FROM projects")
    assert refused.error_code == ErrorCode.FORBIDDEN
    assert "invoices, vendors" in (refused.suggestion or "")
    joined = call(
        tools,
        "run_sql",
        sql="SELECT v.name, COUNT(*) FROM invoices i JOIN vendors v ON v.vendor_id = i.vendor_id "
        "WHERE i.status = 'disputed' GROUP BY v.name ORDER BY v.name",
    )
    assert joined.success and joined.data["rows"]
    assert call(tools, "describe_table", table="projects").error_code == ErrorCode.FORBIDDEN


def test_config_errors_are_clear(construction_sqlite: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not have: payroll"):
        SQLToolSpec.from_url(
            f"sqlite:///{construction_sqlite}", SQLSpecConfig(allow_tables=["payroll"])
        )
    with pytest.raises(ConfigError, match="does not exist"):
        ReadOnlyDatabase(f"sqlite:///{tmp_path / 'none.sqlite'}")
    with pytest.raises(ConfigError, match="not a SQLAlchemy database URL"):
        ReadOnlyDatabase("no url at all")
    bad = tmp_path / "sql.yaml"
    bad.write_text("name: Has Spaces\nmax_rows: -1\n")
    with pytest.raises(ConfigError, match="invalid"):
        SQLSpecConfig.load(bad)


def test_select_guard_caches_verdicts_by_text() -> None:
    from toolrag.tools.sql.guard import SelectGuard, SQLRejected

    guard = SelectGuard("sqlite", ["projects"], ["projects", "vendors"], cache_size=8)
    first = guard.check("SELECT code FROM projects")
    assert guard.check("SELECT code FROM projects") is first
    assert "hits=1" in guard.cache_info()
    refusals = []
    for _ in range(2):
        with pytest.raises(SQLRejected) as caught:
            guard.check("SELECT * FROM vendors")
        refusals.append(caught.value)
    assert refusals[0] is not refusals[1]  # a fresh exception per call
    assert refusals[0].message == refusals[1].message
    assert "not allowed" in refusals[0].message
    assert "hits=2" in guard.cache_info()
    uncached = SelectGuard("sqlite", None, None, cache_size=0)
    assert uncached.check("SELECT 1").tables == []
    assert uncached.cache_info() == "no cache"


def test_an_empty_result_says_where_its_text_values_are(tools: dict[str, FunctionTool]) -> None:
    wrong_column = call(
        tools,
        "run_sql",
        sql="SELECT AVG(contract_value) FROM projects WHERE project_type = 'lump sum'",
    )
    assert wrong_column.success and wrong_column.suggestion
    assert "'lump sum' is not a value of project_type" in wrong_column.suggestion
    assert "projects.contract_type" in wrong_column.suggestion
    capitals = call(tools, "run_sql", sql="SELECT COUNT(*) FROM invoices WHERE status = 'Disputed'")
    assert capitals.success and capitals.data["rows"][0][0] > 0  # ran as stored: 'disputed'
    assert capitals.suggestion and "ran with 'disputed' for 'Disputed'" in capitals.suggestion
    # stored with other capitals in a column the query did not compare: a hint, no rewrite
    elsewhere = call(tools, "run_sql", sql="SELECT * FROM projects WHERE name = 'disputed'")
    assert elsewhere.data["rows"] == [] and "found in invoices.status" in (
        elsewhere.suggestion or ""
    )
    # a real zero and a value found nowhere keep the plain hints
    right = call(tools, "run_sql", sql="SELECT COUNT(*) FROM invoices WHERE status = 'disputed'")
    assert right.suggestion is None
    nowhere = call(tools, "run_sql", sql="SELECT * FROM vendors WHERE name = 'Nobody Inc'")
    assert nowhere.suggestion and "found in" not in nowhere.suggestion


def test_a_short_name_runs_as_the_full_value_it_stands_for(
    tools: dict[str, FunctionTool],
) -> None:
    """A name without its legal suffix ("Summit Mechanical" for "Summit Mechanical LLC") is
    a whole-word part of one stored value: the query runs again with it, and says so. A part
    of several values ("Center") or a part of a word ("Mechan") names none."""
    sql = (
        "SELECT s.contract_amount FROM subcontracts s JOIN vendors v ON v.vendor_id = s.vendor_id"
        " WHERE s.project_code = 'GRB-106' AND v.name = '{}'"
    )
    short = call(tools, "run_sql", sql=sql.format("Summit Mechanical"))
    assert short.success and short.data["rows"] == [[971350]]  # ran with the full value
    assert short.suggestion and short.suggestion.startswith(
        "No row matched as written; ran with 'Summit Mechanical LLC' for 'Summit Mechanical' "
        "(the stored values): SELECT"
    )
    # when the full value finds nothing either, the empty result says where the value is
    other = call(tools, "run_sql", sql=sql.format("Summit Mechanical").replace("106", "105"))
    assert other.data["rows"] == [] and (
        "'Summit Mechanical' is stored as 'Summit Mechanical LLC' in vendors.name (its full value)"
        in (other.suggestion or "")
    )
    for vague in ("Mechan", "100%_ LLC"):
        result = call(tools, "run_sql", sql=sql.format(vague))
        assert result.suggestion and "stored as" not in result.suggestion, vague
    two = call(tools, "run_sql", sql="SELECT * FROM projects WHERE name = 'Center'")
    assert two.suggestion and "stored as" not in two.suggestion  # two centers: no guess


CONCURRENT_CALLS = """
import sys, threading
from pathlib import Path
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec
spec = SQLToolSpec.from_url(sys.argv[1], SQLSpecConfig.load(Path(sys.argv[2])))
tools = {t.metadata.get_name(): t for t in spec.to_tool_list()}
sqls = ["SELECT COUNT(*) FROM invoices WHERE status = 'Disputed'",
        "SELECT AVG(contract_value) FROM projects WHERE project_type = 'lump sum'"]
results = []
def work(n):
    for i in range(12):
        if (n + i) % 3 == 2:
            results.append(tools["describe_table"](table="invoices").raw_output)
        else:
            results.append(tools["run_sql"](sql=sqls[(n + i) % 2]).raw_output)
threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
for t in threads: t.start()
for t in threads: t.join()
hinted = [r for r in results if r.data and "rows" in r.data]
print(len(results), all(r.success for r in results), all(r.suggestion for r in hinted))
"""


def test_concurrent_calls_share_the_sqlite_connection_without_a_deadlock(db_url: str) -> None:
    """The router runs a question's calls in parallel threads. On SQLite every call shares one
    connection: schema reads (describe_table, the hints of an empty result) and queries must
    take turns on it. Two empty results' hints at once used to hang the process for good,
    with the GIL held, so the calls run in a child process that a deadlock cannot stop."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CONCURRENT_CALLS, db_url, str(REPO / "toolspecs/sql.yaml")],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("calls sharing the database connection deadlocked")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["48", "True", "True"], done.stdout
