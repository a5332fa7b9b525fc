"""Hostile and malformed SQL, on SQLite and on PostgreSQL: every case comes back as a structured
ToolResult error (or, for a huge result, a capped and flagged one), and afterwards the SQLite
file's sha256 and the PostgreSQL row counts are unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.sql.db import QueryFailed
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

from ..conftest import REPO

F, Q, V, N, T, L = (
    ErrorCode.FORBIDDEN,
    ErrorCode.QUERY_ERROR,
    ErrorCode.INVALID_ARGUMENT,
    ErrorCode.NOT_FOUND,
    ErrorCode.TIMEOUT,
    ErrorCode.TOO_LARGE,
)
TABLES = ["projects", "vendors", "subcontracts", "budgets", "actual_costs", "invoices",
          "change_orders", "rfis"]  # fmt: skip

CASES: list[tuple[str, Any, set[ErrorCode]]] = [
    # writes and several statements in one string
    ("delete", "DELETE FROM projects", {F}),
    ("update", "UPDATE projects SET status = 'complete'", {F}),
    ("insert", "INSERT INTO vendors VALUES ('V99','x','x','x','x','x','x')", {F}),
    ("drop", "DROP TABLE projects", {F}),
    ("create", "CREATE TABLE evil (a INT)", {F}),
    ("alter", "ALTER TABLE projects ADD COLUMN evil INT", {F}),
    ("stacked-drop", "SELECT 1; DROP TABLE projects", {F}),
    ("stacked-delete", "SELECT * FROM projects; DELETE FROM projects", {F}),
    ("transaction", "BEGIN; DELETE FROM projects; COMMIT", {F}),
    # writes hidden behind comments or CTEs
    ("comment-prefix", "/* harmless report */ DELETE FROM projects", {F}),
    ("line-comment", "-- monthly report\nDROP TABLE projects", {F}),
    ("semicolon-in-comment", "SELECT 1 /* ; */ ; DELETE FROM projects", {F}),
    ("cte-delete", "WITH d AS (DELETE FROM projects RETURNING *) SELECT * FROM d", {F}),
    ("cte-update", "WITH x AS (SELECT 1) UPDATE projects SET name = 'x'", {F}),
    ("select-into", "SELECT * INTO backup FROM projects", {F}),
    ("for-update", "SELECT * FROM projects FOR UPDATE", {F}),
    # ATTACH, PRAGMA, files, sessions
    ("attach", "ATTACH DATABASE '/tmp/evil.db' AS evil", {F, Q}),
    ("detach", "DETACH DATABASE main", {F, Q}),
    ("pragma-write", "PRAGMA writable_schema = ON", {F, Q}),
    ("pragma-read", "PRAGMA table_info(projects)", {F, Q}),
    ("pragma-function", "SELECT * FROM pragma_table_info('projects')", {F}),
    ("load-extension", "SELECT load_extension('/tmp/evil.so')", {F}),
    ("copy-out", "COPY projects TO '/tmp/out.csv'", {F}),
    ("vacuum-into", "VACUUM INTO '/tmp/copy.db'", {F}),
    ("pg-sleep", "SELECT pg_sleep(30)", {F}),
    ("pg-read-file", "SELECT pg_read_file('/etc/passwd')", {F}),
    ("set-config", "SELECT set_config('default_transaction_read_only', 'off', false)", {F}),
    ("memory-bomb", "SELECT randomblob(1000000000)", {F}),
    ("system-table", "SELECT * FROM sqlite_master", {N, F}),
    ("catalog-table", "SELECT * FROM pg_catalog.pg_authid", {F}),
    ("information-schema", "SELECT table_name FROM information_schema.tables", {F}),
    ("union-system", "SELECT name FROM projects UNION SELECT sql FROM sqlite_master", {N, F}),
    ("unknown-table", "SELECT * FROM payroll", {N}),
    # runaway work
    (
        "runaway-recursive-cte",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c",
        {T},
    ),
    # Unicode tricks
    ("zero-width", "DEL\u200bETE FROM projects", {V}),
    ("fullwidth", "\uff24\uff32\uff2f\uff30 TABLE projects", {V}),
    ("rtl-override", "SELECT name FROM projects WHERE code = '\u202eGRB-101'", {V}),
    ("cyrillic-e", "S\u0415LECT * FROM projects", {Q}),
    ("nul-byte", "SELECT 1\x00; DROP TABLE projects", {V}),
    # malformed
    ("empty", "   ", {V}),
    ("too-long", "SELECT " + " + ".join(["1"] * 8000), {L}),
    ("deep-nesting", "SELECT " + "(" * 4900 + "1" + ")" * 4900, {V}),
    ("not-sql", "show me the money", {Q, F}),
    ("bad-column", "SELECT liquidated_damages FROM projects", {Q}),
    (
        "many-bad-columns",
        "SELECT " + ", ".join(f"c{i}x" for i in range(3000)) + " FROM projects",
        {Q, L},
    ),
    ("sql-not-string", 12345, {V}),
]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, construction_sqlite: Path) -> dict[str, Any]:
    config = SQLSpecConfig.load(REPO / "toolspecs" / "sql.yaml").model_copy(
        update={"timeout_s": 1.0}
    )
    if request.param == "sqlite":
        url = f"sqlite:///{construction_sqlite}"
    else:
        url = str(request.getfixturevalue("construction_pg"))
    spec = SQLToolSpec.from_url(url, config)
    state = {
        "name": request.param,
        "spec": spec,
        "tools": {t.metadata.get_name(): t for t in spec.to_tool_list()},
        "before": _fingerprint(request.param, spec, construction_sqlite),
        "sqlite": construction_sqlite,
    }
    return state


def _fingerprint(name: str, spec: SQLToolSpec, sqlite_path: Path) -> Any:
    if name == "sqlite":
        return hashlib.sha256(sqlite_path.read_bytes()).hexdigest()
    return {t: spec.db.raw_query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in TABLES}


def _run(tools: dict[str, FunctionTool], **kwargs: Any) -> ToolResult:
    out = tools["run_sql"](**kwargs).raw_output
    assert isinstance(out, ToolResult)
    return out


@pytest.mark.parametrize(("case", "sql", "codes"), CASES, ids=[c[0] for c in CASES])
def test_hostile_sql_is_refused(
    backend: dict[str, Any], case: str, sql: Any, codes: set[ErrorCode]
) -> None:
    result = _run(backend["tools"], sql=sql)
    assert not result.success, f"{case} was allowed: {result.render()}"
    assert result.error_code in codes, result.render()
    assert result.error_message and result.suggestion
    again = _run(backend["tools"], sql=sql)  # the guard's verdict cache: the same refusal
    assert (again.error_code, again.error_message) == (result.error_code, result.error_message)


def test_million_row_result_is_capped(backend: dict[str, Any]) -> None:
    # 165^3 = 4.5 million rows: the cap stops reading early and says so
    result = _run(
        backend["tools"],
        sql="SELECT a.cost_id FROM actual_costs a, actual_costs b, actual_costs c",
        limit=200,
    )
    assert result.success and result.truncated and result.data["row_count"] == 200


@pytest.mark.parametrize("limit", [0, -5, "all", 10**9])
def test_bad_limits(backend: dict[str, Any], limit: Any) -> None:
    result = _run(backend["tools"], sql="SELECT code FROM projects", limit=limit)
    if limit == 10**9:  # clamped to the configured cap, not an error
        assert result.success and result.data["row_count"] == 12
    else:
        assert result.error_code == ErrorCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM projects",
        "UPDATE vendors SET city = 'x'",
        "CREATE TABLE evil (a INT)",
        "DROP TABLE rfis",
    ],
)
def test_connection_is_read_only_without_the_parser(backend: dict[str, Any], sql: str) -> None:
    """Layer 2 on its own: the same writes sent straight to the guarded connection fail."""
    with pytest.raises(QueryFailed):
        backend["spec"].db.query(sql)


def test_zz_nothing_changed(backend: dict[str, Any]) -> None:
    after = _fingerprint(backend["name"], backend["spec"], backend["sqlite"])
    assert after == backend["before"]
