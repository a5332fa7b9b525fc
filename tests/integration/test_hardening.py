"""One test per finding of the hostile-caller review (issue 52), each failing on the code
before its fix: the table allow-list bypassed through a CTE's scope, memory bombs built in one
database step, argument redaction whose cost grew with the square of its input, keyless writes
whose derived key collided across sessions, and wrapper parameters a caller could set."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.cards.card import ToolCard
from toolrag.guard import AuditLog, IdempotencyStore, ToolGuard, redact
from toolrag.tools import ToolResult
from toolrag.tools.result import ErrorCode
from toolrag.tools.sql import SQLSpecConfig, SQLToolSpec
from toolrag.tools.sql.db import QueryFailed, ReadOnlyDatabase
from toolrag.tools.sql.guard import check_select


@pytest.fixture(scope="module")
def secret_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's database with a table left off the allow-list."""
    path = tmp_path_factory.mktemp("hardening") / "user.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT, tags TEXT);
        INSERT INTO orders VALUES (1, 'bolts', '["a","b"]'), (2, 'nuts', '["c"]');
        CREATE TABLE payroll (name TEXT, salary INTEGER);
        INSERT INTO payroll VALUES ('Ada', 250000);
        CREATE TABLE _toolrag_seed (digest TEXT);
        INSERT INTO _toolrag_seed VALUES ('seed-digest');
        CREATE VIEW order_items AS SELECT item FROM orders;
        CREATE VIEW payroll_view AS SELECT name, salary FROM payroll;
        """
    )
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def spec(secret_db: Path) -> Iterator[SQLToolSpec]:
    config = SQLSpecConfig(allow_tables=["orders", "order_items"], timeout_s=2.0)
    spec = SQLToolSpec.from_url(f"sqlite:///{secret_db}", config)
    yield spec
    spec.db.dispose()


def _run(spec: SQLToolSpec, sql: str) -> ToolResult:
    return spec.execute(sql, 50)


BYPASSES = [
    "SELECT * FROM sqlite_master WHERE EXISTS "
    "(WITH sqlite_master AS (SELECT 1) SELECT 1 FROM sqlite_master)",
    "SELECT * FROM _toolrag_seed WHERE EXISTS "
    "(WITH _toolrag_seed AS (SELECT 1) SELECT 1 FROM _toolrag_seed)",
    "SELECT * FROM payroll WHERE EXISTS (WITH payroll AS (SELECT 1) SELECT 1 FROM payroll)",
    "SELECT (SELECT salary FROM payroll) AS s FROM (WITH payroll AS (SELECT 1) SELECT 1)",
    "SELECT * FROM orders WHERE id IN (WITH payroll AS (SELECT 1) SELECT 1) "
    "UNION ALL SELECT name, salary, NULL FROM payroll",
    "WITH a AS (SELECT * FROM payroll), payroll AS (SELECT 1 AS x) SELECT * FROM a",
    "SELECT * FROM main.payroll",
    'SELECT * FROM "payroll"',
    "SELECT * FROM payroll_view",
]


@pytest.mark.parametrize("sql", BYPASSES)
def test_a_cte_in_another_scope_does_not_hide_a_real_table(spec: SQLToolSpec, sql: str) -> None:
    result = _run(spec, sql)
    assert not result.success, result.data
    assert result.error_code in (ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND)
    assert "250000" not in result.render() and "seed-digest" not in result.render()


def test_the_database_enforces_the_allow_list_a_second_time(spec: SQLToolSpec) -> None:
    """Layer 2 alone (layer 1 skipped): SQLite's authorizer refuses every read off the list."""
    for sql in (*BYPASSES[:4], "SELECT count(*) FROM payroll", "SELECT sql FROM sqlite_master"):
        with pytest.raises(QueryFailed, match=r"prohibited|not authorized"):
            spec.db.query(sql)
    # and what the allow-list permits still runs there: CTEs, recursion, views, json_each
    ok = [
        "WITH x AS (SELECT item FROM orders) SELECT count(*) FROM x",
        "WITH x AS (SELECT 1) SELECT 1 FROM x",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT count(*) FROM r",
        "SELECT item FROM order_items",
        "SELECT o.item, j.value FROM orders o, json_each(o.tags) j",
    ]
    for sql in ok:
        checked = check_select(sql, "sqlite", spec.tables, spec.known_tables)
        assert spec.db.query(checked.sql, ctes=checked.ctes).rows, sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT printf('%.*c', 200000000, 'x')",
        "SELECT length(printf('%200000000c', 'x'))",
        "SELECT format('%.*c', 100000000, 'x')",
        "SELECT printf(item, 200000000) FROM orders",
    ],
)
def test_a_format_width_that_builds_a_huge_string_is_refused(spec: SQLToolSpec, sql: str) -> None:
    result = _run(spec, sql)
    assert result.error_code == ErrorCode.TOO_LARGE, result.render()
    assert "printf()" in (result.error_message or "") or "format()" in (result.error_message or "")


def test_a_string_doubled_by_recursion_stops_at_the_length_limit(spec: SQLToolSpec) -> None:
    sql = (
        "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r "
        "WHERE n < 40) SELECT max(length(s)) FROM r"
    )
    result = _run(spec, sql)
    assert result.error_code == ErrorCode.TOO_LARGE, result.render()
    assert _run(spec, "SELECT printf('%5d|%-8s', id, item) FROM orders").success


def test_the_length_limit_holds_on_every_guarded_connection(secret_db: Path) -> None:
    db = ReadOnlyDatabase(f"sqlite:///{secret_db}")
    db.restrict(["orders"])
    with pytest.raises(QueryFailed, match="too big"):
        db.query("SELECT replace(printf('%.*c', 6000, 'x'), 'x', printf('%.*c', 1000, 'y'))")
    db.dispose()


def test_redaction_cost_is_bounded_by_the_cut_not_the_input() -> None:
    """A 64 KB argument of "a." took 5.6 s in the email pattern; the audit now cuts each string
    before any pattern runs and the patterns are linear (the bound is 20x the old figure)."""
    for text in ("a." * 32_768, "a@" * 32_768, "a" * 65_536 + "@x", " " * 65_536):
        started = time.thread_time()  # CPU time of this thread: other processes do not count
        out = redact({"sql": text})
        assert time.thread_time() - started < 1.0
        assert out["sql"].endswith("more characters not logged]")
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    assert "not logged" in str(redact({"a": deep}))
    assert redact({"to": "ada@example.com, call 555-123-4567"}) == {
        "to": "[REDACTED-EMAIL], call [REDACTED-PHONE]"
    }


class Notes:
    def __init__(self) -> None:
        self.written: list[str] = []

    def create_note(self, text: str, idempotency_key: str = "") -> ToolResult:
        """Create a note (a write)."""
        self.written.append(text)
        return ToolResult.ok({"note": len(self.written)})


@pytest.fixture
def guard(tmp_path: Path) -> tuple[ToolGuard, Notes]:
    notes = Notes()
    tool = FunctionTool.from_defaults(fn=notes.create_note, name="create_note")
    card = ToolCard(name="create_note", side_effect="write")
    guard = ToolGuard(
        [tool],
        [card],
        audit=AuditLog(tmp_path / "audit.sqlite"),
        store=IdempotencyStore(tmp_path / "keys.sqlite"),
    )
    return guard, notes


def test_keyless_writes_with_other_arguments_are_other_requests(
    guard: tuple[ToolGuard, Notes],
) -> None:
    """The MCP server once passed every call the same run id and step, so every keyless write
    got the key mcp:0:create_note and the second one ever was a CONFLICT."""
    g, notes = guard
    first = g.call("create_note", {"text": "one"}, run_id="mcp", step=0)
    second = g.call("create_note", {"text": "two"}, run_id="mcp", step=0)
    assert first.success and second.success, second.render()
    again = g.call("create_note", {"text": "two"}, run_id="mcp", step=0)
    assert again.idempotent_replay and notes.written == ["one", "two"]
    keyed = g.call("create_note", {"text": "three", "idempotency_key": "k1"})
    clash = g.call("create_note", {"text": "four", "idempotency_key": "k1"})
    assert keyed.success and clash.error_code == ErrorCode.CONFLICT


def test_unknown_arguments_are_refused_with_the_real_ones(
    guard: tuple[ToolGuard, Notes], spec: SQLToolSpec
) -> None:
    g, notes = guard
    result = g.call("create_note", {"text": "x", "colour": "red"})
    assert result.error_code == ErrorCode.INVALID_ARGUMENT
    assert "'colour'" in (result.error_message or "") and "text" in (result.error_message or "")
    assert notes.written == []
    run_sql = next(t for t in spec.to_tool_list() if t.metadata.name == "run_sql")
    for extra in ({"_schema": None}, {"_name": "x"}, {"_fn": None}, {"kwargs": {}}):
        output = run_sql(sql="SELECT 1", **extra)
        raw = output.raw_output
        assert isinstance(raw, ToolResult) and raw.error_code == ErrorCode.INVALID_ARGUMENT
        assert "sql" in (raw.error_message or "") and next(iter(extra)) in (raw.error_message or "")
    bad_type = run_sql(sql=["SELECT 1"], _schema=None).raw_output
    assert bad_type.error_code == ErrorCode.INVALID_ARGUMENT


def test_deep_or_huge_arguments_are_refused_before_anything_reads_them(
    guard: tuple[ToolGuard, Notes],
) -> None:
    g, notes = guard
    deep: Any = "x"
    for _ in range(10_000):
        deep = {"a": deep}
    assert g.call("create_note", {"text": deep}).error_code == ErrorCode.TOO_LARGE
    assert g.call("create_note", {"text": "a." * 2_500_000}).error_code == ErrorCode.TOO_LARGE
    huge_int = g.call("create_note", {"text": 10**5000})
    assert huge_int.error_code in (ErrorCode.TOO_LARGE, ErrorCode.INVALID_ARGUMENT)
    assert notes.written == []
    assert g.audit is not None and g.audit.count() == 3
    assert all(r.status == "refused" for r in g.audit.tail(3))


def test_postgresql_sessions_take_a_role_that_reads_only_the_listed_tables(
    construction_pg: str,
) -> None:
    """The allow-list enforced by PostgreSQL itself: a statement that got past layer 1 (here
    sent to the database directly) is refused by the role's privileges."""
    import psycopg
    from sqlalchemy.engine import make_url

    from toolrag.tools.sql.db import reader_role_sql

    dsn = make_url(construction_pg).set(drivername="postgresql")
    with psycopg.connect(dsn.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(
            "DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'toolrag_reader') "
            "THEN DROP OWNED BY toolrag_reader; DROP ROLE toolrag_reader; END IF; END $$"
        )
        for statement in reader_role_sql("toolrag_reader", ["projects", "vendors"]):
            conn.execute(statement)  # type: ignore[arg-type]
    config = SQLSpecConfig(allow_tables=["projects", "vendors"], role="toolrag_reader")
    spec = SQLToolSpec.from_url(construction_pg, config)
    try:
        assert spec.execute("SELECT count(*) AS n FROM projects").data["rows"] == [[12]]
        with pytest.raises(QueryFailed, match="permission denied"):
            spec.db.query("SELECT * FROM invoices")
        assert spec.db.query("SELECT current_setting('work_mem')").rows == [["16MB"]]
    finally:
        spec.db.dispose()
    with pytest.raises(Exception, match="valid PostgreSQL role"):
        reader_role_sql("x; DROP TABLE projects", ["projects"])
