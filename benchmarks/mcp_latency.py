"""What MCP costs per call: ``tools/call`` round trips over stdio against the same tool called
in-process through the same guard.

The server is ``toolrag mcp serve`` (SQL + field API toolbox, no content indexes) started as a
subprocess and reached with the official ``mcp`` client over stdio; the in-process side is
``Toolbox.guard.call`` in this process. Both call ``run_sql`` (a one-row query on the sample
SQLite database) and ``get_site_status`` (an HTTP call to the field API on 127.0.0.1),
``--repeat`` times each after a warm-up. Writes ``runs/mcp_latency.json``.

    .venv/bin/python -m benchmarks.mcp_latency [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from benchmarks.mcp_load import serve_env
from benchmarks.results import result_name, write_result
from toolrag import Settings, Toolbox
from toolrag.sample import running_server
from toolrag.tools.sql import build_sqlite

ROOT = Path(__file__).resolve().parents[1]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("run_sql", {"sql": "SELECT code, name FROM projects WHERE code = 'GRB-107'"}),
    ("get_site_status", {"project": "GRB-107"}),
]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "mcp_latency.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name, running_server(ROOT / "data") as url:
        tmp = Path(tmp_name)
        db = tmp / "construction.sqlite"
        build_sqlite(ROOT / "data" / "db" / "seed.sql", db)
        env = serve_env(db, url, tmp)
        settings = Settings(
            collections_file=tmp / "no-collections.yaml",
            database_url=f"sqlite:///{db}",
            index_dir=tmp / "indexes",
            state_dir=tmp / "state-inproc",
            toolspecs_dir=ROOT / "toolspecs",
            llm_provider="scripted",
        )
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        guard = Toolbox(settings).guard
        results = []
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolrag.cli", "mcp", "serve"],
            env=env,
            cwd=ROOT,
        )

        async def over_mcp() -> dict[str, list[float]]:
            times: dict[str, list[float]] = {name: [] for name, _ in CALLS}
            async with Client(params, read_timeout_seconds=120) as client:
                for name, arguments in CALLS:
                    for i in range(args.repeat + 5):
                        t0 = time.perf_counter()
                        result = await client.call_tool(name, arguments)
                        elapsed = time.perf_counter() - t0
                        assert not result.is_error, result
                        if i >= 5:
                            times[name].append(elapsed)
            return times

        mcp_times = anyio.run(over_mcp)
        for name, arguments in CALLS:
            local: list[float] = []
            for i in range(args.repeat + 5):
                t0 = time.perf_counter()
                result = guard.call(name, arguments, run_id="bench")
                elapsed = time.perf_counter() - t0
                assert result.success, result.render()
                if i >= 5:
                    local.append(elapsed)
            over, here = percentiles(mcp_times[name]), percentiles(local)
            results.append(
                {
                    "tool": name,
                    "repeat": args.repeat,
                    "mcp_stdio": over,
                    "in_process": here,
                    "p50_ratio": round(over["p50_ms"] / here["p50_ms"], 2),
                    "p50_overhead_ms": round(over["p50_ms"] - here["p50_ms"], 3),
                }
            )
    report = {
        "benchmark": "mcp_latency",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "transport": "stdio",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    repeat = args.repeat if args.repeat != 200 else 0
    write_result(result_name("mcp_latency", repeat=repeat), report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
