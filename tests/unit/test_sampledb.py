"""The sample SQLite database is built from the committed seed script: every table filled,
every foreign key satisfied, facts agreeing with domain.yaml, rebuilt only when the script
changes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from toolrag.errors import InputError
from toolrag.tools.sql.seed import build_sqlite, built_sha, seed_sha

from ..conftest import DATA

SEED = DATA / "db" / "seed.sql"
COUNTS = {
    "projects": 12,
    "vendors": 10,
    "subcontracts": 58,
    "budgets": 95,
    "actual_costs": 165,
    "invoices": 84,
    "change_orders": 12,
    "rfis": 8,
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db") / "construction.sqlite"
    assert build_sqlite(SEED, path)
    return path


def test_tables_rows_and_foreign_keys(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        for table, n in COUNTS.items():
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == n, table
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_database_agrees_with_domain_yaml(db: Path) -> None:
    domain = yaml.safe_load((DATA / "domain.yaml").read_text())
    with sqlite3.connect(db) as conn:
        names = dict(conn.execute("SELECT code, name FROM projects").fetchall())
        cos = {r[0]: r[1] for r in conn.execute("SELECT co_number, amount FROM change_orders")}
    assert names == {p["code"]: p["name"] for p in domain["projects"]}
    for co in domain["change_orders"]:
        assert float(cos[co["number"]]) == pytest.approx(float(co["amount"]))


def test_rebuilds_only_when_the_script_changes(tmp_path: Path) -> None:
    seed = tmp_path / "seed.sql"
    shutil.copy(SEED, seed)
    db = tmp_path / "out" / "x.sqlite"
    assert build_sqlite(seed, db) is True
    assert build_sqlite(seed, db) is False
    assert built_sha(db) == seed_sha(seed)
    seed.write_text(
        seed.read_text() + "\nINSERT INTO vendors VALUES "
        "('V-999','New Co','test','A B','555','a@b.c','Salem');\n"
    )
    assert build_sqlite(seed, db) is True
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM vendors").fetchone()[0] == 11


def test_broken_script_keeps_the_old_database(tmp_path: Path) -> None:
    seed = tmp_path / "seed.sql"
    shutil.copy(SEED, seed)
    db = tmp_path / "x.sqlite"
    build_sqlite(seed, db)
    before = db.read_bytes()
    seed.write_text("CREATE TABLE t (a INT);\nINSERT INTO nowhere VALUES (1);\n")
    with pytest.raises(InputError, match="does not run"):
        build_sqlite(seed, db)
    assert db.read_bytes() == before
    assert list(tmp_path.glob(".build-*")) == []
    with pytest.raises(InputError, match="does not exist"):
        build_sqlite(tmp_path / "missing.sql", db)
