"""Names next to ids in run_sql results: a result column holding the key of a table with a label
column gets ``<column>_name``, found from the schema (no sample knowledge), looked up only in
allowed tables, never changing the rows' values and never failing the call."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from toolrag.tools.sql.db import QueryFailed, QueryTimeout
from toolrag.tools.sql.labels import LabelMap, Target, label_column, plan_labels
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

from ..conftest import REPO

CONFIG = SQLSpecConfig.load(REPO / "toolspecs" / "sql.yaml")
TOTALS = (
    "SELECT vendor_id, SUM(amount) AS total FROM invoices GROUP BY vendor_id ORDER BY vendor_id"
)


@pytest.fixture(scope="module")
def sample(construction_sqlite: Path) -> SQLToolSpec:
    return SQLToolSpec.from_url(f"sqlite:///{construction_sqlite}", CONFIG)


@pytest.fixture(scope="module")
def unlabelled(construction_sqlite: Path) -> SQLToolSpec:
    off = CONFIG.model_copy(update={"label_ids": False})
    return SQLToolSpec.from_url(f"sqlite:///{construction_sqlite}", off)


def _vendor_names(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT vendor_id, name FROM vendors").fetchall())


def test_a_vendor_id_column_gets_the_vendors_name(
    sample: SQLToolSpec, unlabelled: SQLToolSpec, construction_sqlite: Path
) -> None:
    plain = unlabelled.execute(TOTALS)
    result = sample.execute(TOTALS)
    assert result.success, result
    data = result.data
    assert data["columns"] == ["vendor_id", "total", "vendor_id_name"]
    assert data["labels_added"] == ["vendor_id_name"]
    assert "labels_added" not in plain.data
    # the existing values are untouched: the labelled rows are the plain rows plus one column
    assert [r[:2] for r in data["rows"]] == plain.data["rows"]
    names = _vendor_names(construction_sqlite)
    assert all(r[2] == names[r[0]] for r in data["rows"]) and data["rows"]
    assert '"vendor_id_name"' in result.render()


@pytest.mark.parametrize(
    ("sql", "added"),
    [
        # a primary key of a table with a label, an alias, a CTE, a USING join, a UNION
        ("SELECT code, contract_value FROM projects ORDER BY code", ["code_name"]),
        ("SELECT i.vendor_id AS who FROM invoices i LIMIT 3", ["who_name"]),
        (
            "WITH t AS (SELECT project_code AS p, SUM(amount) s FROM actual_costs GROUP BY 1) "
            "SELECT p, s FROM t ORDER BY s DESC LIMIT 2",
            ["p_name"],
        ),
        (
            "SELECT vendor_id FROM invoices JOIN vendors USING (vendor_id) LIMIT 2",
            ["vendor_id_name"],
        ),
        (
            "SELECT project_code FROM rfis UNION SELECT project_code FROM invoices",
            ["project_code_name"],
        ),
        ("SELECT * FROM invoices LIMIT 2", ["project_code_name", "vendor_id_name"]),
    ],
)
def test_the_result_column_is_mapped_back_to_its_table(
    sample: SQLToolSpec, sql: str, added: list[str]
) -> None:
    result = sample.execute(sql)
    assert result.success, result
    assert result.data.get("labels_added") == added


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT v.name, i.vendor_id FROM invoices i JOIN vendors v ON v.vendor_id = i.vendor_id",
        "SELECT vendor_id, name FROM vendors",
        "SELECT * FROM vendors",
        "SELECT SUM(amount) FROM invoices WHERE status = 'disputed'",
        "SELECT status, COUNT(*) FROM invoices GROUP BY status",
        "SELECT vendor_id FROM actual_costs WHERE vendor_id IS NULL",  # no ids at all
    ],
)
def test_nothing_is_added_when_the_name_is_there_or_there_is_no_id(
    sample: SQLToolSpec, unlabelled: SQLToolSpec, sql: str
) -> None:
    result = sample.execute(sql)
    assert result.success, result
    assert "labels_added" not in result.data
    assert result.data == unlabelled.execute(sql).data


def test_a_table_outside_allow_tables_is_never_read_for_labels(construction_sqlite: Path) -> None:
    spec = SQLToolSpec.from_url(
        f"sqlite:///{construction_sqlite}", SQLSpecConfig(allow_tables=["invoices"])
    )
    statements: list[str] = []
    event.listen(
        spec.db.engine,
        "before_cursor_execute",
        lambda _conn, _cur, statement, *_: statements.append(statement),
    )
    labels = spec.labels()
    assert labels is not None and labels.links == {}  # vendors and projects are not allowed
    result = spec.execute(TOTALS)
    assert result.success and result.data["columns"] == ["vendor_id", "total"]
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert not any("vendors" in s or "projects" in s for s in reads), reads


# --- another database: other table and column names -----------------------------------------
@pytest.fixture
def other_db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE suppliers (supplier_code TEXT PRIMARY KEY, title TEXT, city TEXT);
            CREATE TABLE warehouses (wh INTEGER PRIMARY KEY, warehouse_name TEXT);
            CREATE TABLE Customer (CustomerId INTEGER PRIMARY KEY, FullName TEXT);
            CREATE TABLE orders (
                order_id INTEGER PRIMARY KEY,
                supplier_code TEXT REFERENCES suppliers(supplier_code),
                stored_in INTEGER REFERENCES warehouses(wh),
                buyer INTEGER REFERENCES Customer(CustomerId),
                qty INTEGER
            );
            INSERT INTO suppliers VALUES ('S1', 'Acme Bolts', 'Tacoma'), ('S2', 'Birch', NULL);
            INSERT INTO warehouses VALUES (1, 'North Yard'), (2, 'South Yard');
            INSERT INTO Customer VALUES (10, 'Ada Park'), (11, 'Ben Ode');
            INSERT INTO orders VALUES
                (1, 'S1', 1, 10, 5), (2, 'S2', 2, 11, 7), (3, 'S1', 2, 10, 1),
                (4, 'S99', 9, 99, 2), (5, NULL, NULL, NULL, 3);
            """
        )
    return path


def test_another_schema_gets_names_from_its_own_label_columns(other_db: Path) -> None:
    spec = SQLToolSpec.from_url(f"sqlite:///{other_db}")
    result = spec.execute(
        "SELECT order_id, supplier_code, stored_in, buyer, qty FROM orders ORDER BY order_id"
    )
    assert result.success, result
    assert result.data["labels_added"] == ["supplier_code_name", "stored_in_name", "buyer_name"]
    assert result.data["rows"] == [
        [1, "S1", 1, 10, 5, "Acme Bolts", "North Yard", "Ada Park"],
        [2, "S2", 2, 11, 7, "Birch", "South Yard", "Ben Ode"],
        [3, "S1", 2, 10, 1, "Acme Bolts", "South Yard", "Ada Park"],
        [4, "S99", 9, 99, 2, None, None, None],  # no referenced row: no name, no failure
        [5, None, None, None, 3, None, None, None],
    ]
    grouped = spec.execute("SELECT supplier_code, SUM(qty) FROM orders GROUP BY supplier_code")
    assert grouped.data["labels_added"] == ["supplier_code_name"]
    assert spec.execute("SELECT supplier_code FROM suppliers").data["labels_added"] == [
        "supplier_code_name"
    ]
    titled = spec.execute(
        "SELECT o.supplier_code, s.title FROM orders o JOIN suppliers s USING (supplier_code)"
    )
    assert "labels_added" not in titled.data


def test_ids_without_a_referenced_row_get_no_name(other_db: Path) -> None:
    spec = SQLToolSpec.from_url(f"sqlite:///{other_db}")
    result = spec.execute("SELECT supplier_code, buyer FROM orders WHERE order_id = 4")
    assert result.success and result.data["rows"] == [["S99", 99]]
    assert "labels_added" not in result.data


@pytest.mark.parametrize("error", [QueryFailed("no such table"), QueryTimeout("late")])
def test_a_failed_lookup_returns_the_rows_as_they_were(
    other_db: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    spec = SQLToolSpec.from_url(f"sqlite:///{other_db}")
    calls: list[Any] = []

    def fail(*args: Any, **kwargs: Any) -> dict[Any, Any]:
        calls.append(args)
        if len(calls) == 2:  # the first column's names came back; the second fails
            raise error
        return {"S1": "Acme Bolts"}

    monkeypatch.setattr(spec.db, "lookup", fail)
    result = spec.execute("SELECT supplier_code, stored_in FROM orders ORDER BY order_id LIMIT 2")
    assert result.success and len(calls) == 2
    assert result.data["columns"] == ["supplier_code", "stored_in"]
    assert result.data["rows"] == [["S1", 1], ["S2", 2]] and "labels_added" not in result.data


def test_one_bounded_lookup_per_labelled_column(
    other_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SQLToolSpec.from_url(f"sqlite:///{other_db}", SQLSpecConfig(max_rows=3, timeout_s=2.0))
    seen: list[tuple[str, str, str, list[Any], float | None]] = []
    real = spec.db.lookup

    def spy(table: str, key: str, label: str, ids: Any, timeout_s: float | None = None) -> Any:
        seen.append((table, key, label, list(ids), timeout_s))
        return real(table, key, label, ids, timeout_s)

    monkeypatch.setattr(spec.db, "lookup", spy)
    result = spec.execute("SELECT supplier_code, buyer FROM orders ORDER BY order_id", limit=50)
    assert result.success and result.truncated and result.data["row_count"] == 3
    assert [s[:4] for s in seen] == [
        ("suppliers", "supplier_code", "title", ["S1", "S2"]),  # distinct ids of the rows read
        ("Customer", "CustomerId", "FullName", [10, 11]),
    ]
    assert all(s[4] is not None and 0 < s[4] <= 2.0 for s in seen)  # what is left of timeout_s


def test_label_columns_and_the_name_fallback() -> None:
    assert label_column("vendors", ["vendor_id", "name", "trade"]) == "name"
    assert label_column("albums", ["AlbumId", "Title"]) == "Title"
    assert label_column("companies", ["id", "company_name"]) == "company_name"
    assert label_column("Customer", ["CustomerId", "FullName"]) == "FullName"
    assert label_column("budgets", ["project_code", "cost_code", "category"]) is None
    # a person's title is a job title: not a label
    assert label_column("employee", ["id", "first_name", "last_name", "title"]) is None
    assert label_column("Person", ["BusinessEntityID", "Title", "FirstName", "LastName"]) is None
    vendors = Target("vendors", "vendor_id", "name")
    labels = LabelMap(links={("invoices", "vendor_id"): vendors, ("vendors", "vendor_id"): vendors})
    # sqlglot could not map the query: a result column named like a linked column of one of
    # the query's tables, unless a column of the label's name is there
    plan = plan_labels(["vendor_id", "total"], None, ["invoices"], labels)
    assert [(p.index, p.column, p.target) for p in plan] == [(0, "vendor_id_name", vendors)]
    assert plan_labels(["vendor_id", "name"], None, ["invoices", "vendors"], labels) == []
    assert plan_labels(["vendor_id"], None, ["projects"], labels) == []
